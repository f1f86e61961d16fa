"""Per-tool time limits: a tool that never returns cannot hang the run."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys

import pytest

from toolwire import ToolCall
from toolwire.agent import Agent
from toolwire.testing import ScriptedModel, reply
from toolwire.tools import DEFAULT_TOOL_TIMEOUT, Tool, ToolContext, tool


@tool(risk="low")
async def hangs() -> str:
    """Never answers."""
    await asyncio.Event().wait()
    return "unreachable"


@tool(risk="low", timeout=0.2)
async def hangs_briefly() -> str:
    """Never answers either, but says how long to wait."""
    await asyncio.Event().wait()
    return "unreachable"


@tool(risk="low")
async def quick() -> str:
    """Answers at once."""
    return "quick answer"


def two_calls(*names: str) -> ScriptedModel:
    calls = [ToolCall(id=f"c{i}", name=name, arguments={}) for i, name in enumerate(names)]
    return ScriptedModel([reply("", calls), reply("finished")])


async def test_a_hanging_tool_is_stopped_and_the_model_told() -> None:
    result = await Agent(two_calls("hangs", "quick"), [hangs, quick], tool_timeout=0.2).run("go")
    assert (result.stop_reason, result.text) == ("end_turn", "finished")
    assert [(r.result.kind, r.result.value) for r in result.calls] == [
        ("error", "Tool 'hangs' did not finish within 0.2 s and was stopped; try smaller inputs or another approach."),
        ("text", "quick answer"),
    ]


async def test_a_tools_own_timeout_wins_over_the_agents() -> None:
    result = await Agent(two_calls("hangs_briefly"), [hangs_briefly], tool_timeout=3600).run("go")
    assert [r.result.value for r in result.calls] == [
        "Tool 'hangs_briefly' did not finish within 0.2 s and was stopped; try smaller inputs or another approach."
    ]


def test_the_default_is_on_and_settings_are_checked() -> None:
    assert Agent(ScriptedModel()).tool_timeout == DEFAULT_TOOL_TIMEOUT == 900.0
    assert Agent(ScriptedModel(), tool_timeout=None).tool_timeout is None
    with pytest.raises(ValueError, match=r"tool_timeout must be a positive number of seconds or None, got 0"):
        Agent(ScriptedModel(), tool_timeout=0)
    with pytest.raises(ValueError, match=r"Tool 'x': timeout must be a positive number of seconds, got -1"):
        tool(name="x", timeout=-1)(lambda: "x")


def test_a_sync_tool_that_outlives_its_limit_is_reported_and_the_process_still_exits() -> None:
    program = """
import logging, threading
from toolwire import ToolCall
from toolwire.agent import Agent
from toolwire.testing import ScriptedModel, reply
from toolwire.tools import tool

logging.basicConfig(level=logging.WARNING, format="%(message)s")

@tool(risk="low", timeout=0.2)
def stuck() -> str:
    \"\"\"Blocks forever in plain Python.\"\"\"
    threading.Event().wait()
    return "unreachable"

model = ScriptedModel([reply("", [ToolCall(id="c1", name="stuck", arguments={})]), reply("done anyway")])
result = Agent(model, [stuck]).run_sync("go")
print(result.text, "|", result.calls[0].result.value)
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "done anyway | Tool 'stuck' did not finish within 0.2 s and was stopped; "
        "try smaller inputs or another approach.\n"
    )
    assert done.stderr == (
        "Tool 'stuck' was stopped but its sync function is still running in thread 'toolwire-tool-stuck'; its result "
        "will be ignored. Make the tool async, or have it check ctx.cancelled.\n"
    )


async def test_sync_tools_still_run_in_threads_and_see_context_variables(caplog: pytest.LogCaptureFixture) -> None:
    import contextvars
    import threading

    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")

    @tool(risk="low")
    def where() -> str:
        """Which thread runs this."""
        return f"{threading.current_thread().name} {marker.get()}"

    marker.set("visible")
    with caplog.at_level(logging.WARNING):
        result = await where.execute_raw({})
    assert (result.value, caplog.records) == ("toolwire-tool-where visible", [])


def deaf_tool(released: asyncio.Event) -> Tool:
    """A tool that swallows every cancellation until the test releases it (or about a minute passes).

    Released at the end of the test: left running, it held the test's event loop open for its
    whole minute at teardown (the loop waits for the tasks it cancels).
    """

    @tool(risk="low", timeout=0.2)
    async def deaf() -> str:
        """Swallows every cancellation, retrying forever."""
        return await swallow_cancellation_until(released)

    return deaf


async def swallow_cancellation_until(released: asyncio.Event) -> str:
    for _ in range(600):
        if released.is_set():
            break
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.1)
    return "unreachable"


async def test_an_async_tool_that_swallows_cancellation_is_reported_and_left_behind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    released = asyncio.Event()
    with caplog.at_level(logging.WARNING):
        result = await Agent(two_calls("deaf", "quick"), [deaf_tool(released), quick]).run("go")
    released.set()
    assert (result.stop_reason, result.text) == ("end_turn", "finished")
    assert [(r.result.kind, r.result.value) for r in result.calls] == [
        ("error", "Tool 'deaf' did not finish within 0.2 s and was stopped; try smaller inputs or another approach."),
        ("text", "quick answer"),
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "Tool 'deaf' was stopped after 0.2 s but ignores cancellation and is still running; its result will be "
        "ignored. Let CancelledError propagate in the tool."
    ]


async def test_cancelling_a_run_does_not_wait_for_a_tool_that_swallows_cancellation() -> None:
    signal, released = asyncio.Event(), asyncio.Event()

    @tool(risk="low", timeout=3600)
    async def deaf_forever() -> str:
        """Swallows every cancellation (until the test ends)."""
        signal.set()
        return await swallow_cancellation_until(released)

    agent = Agent(two_calls("deaf_forever"), [deaf_forever], context=ToolContext(cancel=signal))
    result = await agent.run("go")
    released.set()
    assert result.stop_reason == "cancelled"
    assert [r.result.value for r in result.calls] == ["Cancelled before it finished: the run was stopped."]


def test_run_sync_returns_though_a_tool_swallows_cancellation() -> None:
    import threading

    released = threading.Event()

    @tool(risk="low", timeout=0.2)
    async def stubborn() -> str:
        """Swallows every cancellation until the test has its result."""
        while not released.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.05)
        return "unreachable"

    results = []
    runner = threading.Thread(target=lambda: results.append(Agent(two_calls("stubborn"), [stubborn]).run_sync("go")))
    runner.start()
    runner.join(120)  # before: asyncio.run waited for the stubborn tool at the end, forever
    finished = not runner.is_alive()
    released.set()
    runner.join(60)
    assert finished
    assert [r.result.kind for r in results[0].calls] == ["error"]
