"""Agent scenarios, each run on the in-process scripted model and over real sockets (openai, anthropic)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from toolwire import Request, StopReason, ToolCall, ToolResult, Usage
from toolwire.agent import Agent, RunFinished, ToolFinished, ToolRejected, ToolStarted
from toolwire.reviewers import AutoApprove, DenyAll, QuorumReviewer
from toolwire.testing import ScriptedModel, ScriptedServer, reply
from toolwire.tools import ToolContext, tool
from toolwire.types import Done, TextDelta

SPANS: dict[str, tuple[float, float]] = {}

Make = Callable[[Any], Any]


@pytest.fixture(params=["in-process", "openai", "anthropic"])
async def make(request: pytest.FixtureRequest) -> AsyncIterator[Make]:
    """A factory of clients playing a script: in process, or through a loopback server in a wire protocol."""
    clients: list[Any] = []
    with contextlib.ExitStack() as stack:

        def build(script: Any) -> Any:
            if request.param == "in-process":
                return ScriptedModel(script)
            turns = [script] * 40 if callable(script) else script
            server = stack.enter_context(ScriptedServer(turns))
            clients.append(server.connect(f"{request.param}:m-1"))
            return clients[-1]

        yield build
        for client in clients:
            await client.aclose()


def call(name: str, i: int = 0, **arguments: object) -> ToolCall:
    return ToolCall(id=f"call_{name}_{i}", name=name, arguments=dict(arguments))


@tool(risk="low")
async def look(key: str) -> str:
    """Look something up (read-only)."""
    start = time.perf_counter()
    await asyncio.sleep(0.05)
    SPANS[f"look:{key}"] = (start, time.perf_counter())
    return f"value of {key}"


@tool(risk="high")
async def change(key: str) -> str:
    """Change something (side effects)."""
    start = time.perf_counter()
    await asyncio.sleep(0.05)
    SPANS[f"change:{key}"] = (start, time.perf_counter())
    return f"changed {key}"


@tool(risk="low")
def done(summary: str = "") -> str:
    """Finish the task."""
    return summary or "done"


def overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


async def test_low_risk_calls_overlap_high_risk_run_alone_results_in_model_order(make: Make) -> None:
    SPANS.clear()
    calls = [call("change", 0, key="a"), call("look", 1, key="b"), call("look", 2, key="c"), call("change", 3, key="d")]
    model = make([reply("working", calls), reply("all done")])
    result = await Agent(model, [look, change], reviewer=AutoApprove()).run("go")

    assert result.stop_reason == "end_turn" and result.text == "all done" and result.turns == 2
    assert overlaps(SPANS["look:b"], SPANS["look:c"])
    for high in ("change:a", "change:d"):
        assert not any(overlaps(SPANS[high], span) for name, span in SPANS.items() if name != high)
    results = [m for m in result.messages if isinstance(m, ToolResult)]
    assert [(r.tool_call_id, r.value) for r in results] == [
        ("call_change_0", "changed a"),
        ("call_look_1", "value of b"),
        ("call_look_2", "value of c"),
        ("call_change_3", "changed d"),
    ]
    assert [r.approved for r in result.calls] == [True, True, True, True]


async def test_rejection_unknown_tool_and_broken_arguments_become_error_results(make: Make) -> None:
    broken = ToolCall(
        id="call_b",
        name="look",
        arguments={},
        metadata={"raw_arguments": "key=oops", "arguments_error": "the arguments are not valid JSON"},
    )
    calls = [call("change", 0, key="x"), call("nope", 1), broken]
    model = make([reply("", calls), reply("ok")])
    events = [e async for e in Agent(model, [look, change], reviewer=DenyAll("read-only run")).run_stream("go")]
    result = events[-1].result if isinstance(events[-1], RunFinished) else None
    assert result is not None
    rejected, unknown, bad = (r.result for r in result.calls)
    assert rejected == ToolResult.error(
        calls[0], "The call was rejected by the reviewer and did not run: read-only run"
    )
    assert unknown == ToolResult.error(calls[1], "Unknown tool 'nope'. Available tools: change, look.")
    assert bad.kind == "error" and "not valid JSON" in bad.value
    assert [r.approved for r in result.calls] == [False, False, True]
    assert [type(e).__name__ for e in events if isinstance(e, ToolRejected | ToolStarted | ToolFinished)] == [
        "ToolStarted",
        "ToolFinished",
        "ToolRejected",
    ]


async def test_done_ends_the_run_with_its_summary(make: Make) -> None:
    model = make([reply("", [call("look", 0, key="k"), call("done", 1, summary="finished it")]), "unused"])
    result = await Agent(model, [look, done]).run("go")
    assert (result.stop_reason, result.text, result.turns) == ("done", "finished it", 1)


async def test_max_tool_turns_stops_and_answers_the_last_calls(make: Make) -> None:
    model = make(lambda request: reply("again", [call("look", len(request.messages), key="k")]))
    result = await Agent(model, [look], max_tool_turns=3).run("loop forever")
    assert (result.stop_reason, result.turns, len(result.calls)) == ("max_turns", 4, 3)
    last = result.messages[-1]
    assert isinstance(last, ToolResult) and last.value == "Not run: the agent reached its limit of 3 tool turns."


async def test_max_tokens_is_reported_not_looped_on(make: Make) -> None:
    cut = reply("partial", [call("look", 0, key="k")])
    cut.stop_reason = StopReason.MAX_TOKENS
    result = await Agent(make([cut]), [look]).run("go")
    assert (result.stop_reason, result.turns, result.calls) == ("max_tokens", 1, [])


async def test_usage_is_summed_over_turns(make: Make) -> None:
    model = make(
        [
            reply("", [call("look", 0, key="k")], usage=Usage(input_tokens=10, output_tokens=3)),
            reply("ok", usage=Usage(input_tokens=20, output_tokens=4, reasoning_tokens=1)),
        ]
    )
    result = await Agent(model, [look]).run("go")
    assert result.usage == Usage(input_tokens=30, output_tokens=7, reasoning_tokens=1)


async def test_task_cancellation_stops_running_tools(make: Make) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @tool(risk="low")
    async def slow() -> str:
        """Takes forever."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    agent = Agent(make([reply("", [call("slow")])]), [slow])
    task = asyncio.create_task(agent.run("go"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()


async def test_context_signal_cancels_the_run_cleanly(make: Make) -> None:
    signal = asyncio.Event()

    @tool(risk="low")
    async def slow() -> str:
        """Takes forever, but the run's signal stops it."""
        signal.set()
        await asyncio.sleep(30)
        return "never"

    model = make([reply("", [call("slow"), call("look", 1, key="k")]), "unused"])
    result = await Agent(model, [slow, look], context=ToolContext(cancel=signal)).run("go")
    assert result.stop_reason == "cancelled"
    assert [r.result.kind for r in result.calls] == ["error", "error"]
    assert result.calls[0].result.value == "Cancelled before it finished: the run was stopped."


async def test_run_stream_yields_model_deltas_then_tool_events_then_result(make: Make) -> None:
    model = make([reply("abc", [call("look", 0, key="k")]), reply("fin")])
    events = [e async for e in Agent(model, [look]).run_stream("go")]
    kinds = [type(e).__name__ for e in events]
    first_done = kinds.index("Done")
    assert kinds[first_done + 1 : first_done + 3] == ["ToolStarted", "ToolFinished"]
    assert kinds[-2:] == ["Done", "RunFinished"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "abcfin"
    assert sum(isinstance(e, Done) for e in events) == 2


async def test_cache_trims_outputs_and_both_cache_tools_read_them_back(make: Make) -> None:
    big = "\n".join(f"line {i} {'needle' if i == 77 else 'hay'}" for i in range(1, 301))

    @tool(risk="low")
    def dump() -> str:
        """Print a big log."""
        return big

    def script(request: Request) -> object:
        results = [m for m in request.messages if isinstance(m, ToolResult)]
        if len(results) == 0:
            return reply("", [call("dump", 0)])
        if len(results) == 1:
            return reply("", [call("dump", 1)])
        if len(results) == 2:
            assert results[0].value.startswith("[output out_1 trimmed: 300 lines")
            return reply(
                "",
                [
                    call("tool_output_cache", 2, ref_id="out_1", offset=2, limit=2),
                    call("tool_output_cache_grep", 3, ref_id="out_1", pattern="needle", before=1),
                    call("tool_output_cache_grep", 4, ref_id="out_9", pattern="x"),
                ],
            )
        return reply("read it")

    agent = Agent(make(script), [dump], output_budget_chars=5000)
    assert sorted(agent.tools) == ["dump", "tool_output_cache", "tool_output_cache_grep"]
    result = await agent.run("go")
    read, grep, unknown = (r.result for r in result.calls[2:])
    assert read.value == "     2\tline 2 hay\n     3\tline 3 hay\n[lines 2-3 of 300; use offset=4 for more]"
    assert grep.value == "    76-\tline 76 hay\n    77:\tline 77 needle"
    assert unknown.kind == "error" and "Unknown output reference 'out_9'" in unknown.value


async def test_quorum_reviewer_decides_by_threshold_and_records_votes(make: Make) -> None:
    def voter(approve: bool, why: str) -> ScriptedModel:
        return ScriptedModel(
            lambda _: reply("", [ToolCall(id="v", name="vote", arguments={"approve": approve, "reason": why})])
        )

    voters = [voter(True, "looks safe"), voter(False, "too risky"), voter(True, "fine")]
    model = make([reply("", [call("change", 0, key="k")]), reply("ok")])
    result = await Agent(model, [change], reviewer=QuorumReviewer(voters, threshold=2)).run("go")
    record = result.calls[0]
    assert record.approved and record.result.value == "changed k"
    assert record.review is not None
    assert [(v.approve, v.reason) for v in record.review.votes] == [
        (True, "looks safe"),
        (False, "too risky"),
        (True, "fine"),
    ]

    strict = QuorumReviewer(voters, threshold=1.0)
    model = make([reply("", [call("change", 0, key="k")]), reply("ok")])
    result = await Agent(model, [change], reviewer=strict).run("go")
    assert not result.calls[0].approved
    assert result.calls[0].result.value.startswith("The call was rejected by the reviewer and did not run: 2 of 3")


def test_run_sync_outside_and_inside_a_loop() -> None:
    agent = Agent(ScriptedModel(["one", "two"]), [look], reviewer=AutoApprove())
    assert agent.run_sync("hi").text == "one"

    async def inside() -> str:
        return agent.run_sync("hi").text

    assert asyncio.run(inside()) == "two"


def test_bad_settings_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="tool_mode must be one of native, text, auto, constrained, got 'magic'"):
        Agent(ScriptedModel(), [look], tool_mode="magic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Two tools are named 'look'"):
        Agent(ScriptedModel(), [look, look])


async def test_without_a_reviewer_a_tool_declared_high_risk_is_refused_and_an_undeclared_one_runs() -> None:
    @tool(risk="high")
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    @tool
    def note(text: str) -> str:
        """Keep a note."""
        return f"noted {text}"

    with pytest.raises(ValueError, match=r"^Tools \['delete'\] are declared risk='high' and the agent has no reviewer"):
        Agent(ScriptedModel(["unused"]), [note, delete])
    assert (note.risk, note.risk_declared, delete.risk_declared) == ("high", False, True)
    call = ToolCall(id="c1", name="note", arguments={"text": "hi"})
    result = await Agent(ScriptedModel([reply("", [call]), "Done."]), [note]).run("go")
    assert [(r.call.name, r.approved, r.result.value) for r in result.calls] == [("note", True, "noted hi")]
    approved = await Agent(ScriptedModel([reply("", [call]), "Done."]), [note, delete], reviewer=AutoApprove()).run(
        "go"
    )
    assert approved.text == "Done."
