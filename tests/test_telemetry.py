"""OpenTelemetry spans, collected by the SDK's in-memory exporter over real loopback runs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from tests.otel import collected_spans
from toolwire import ToolCall, Usage
from toolwire.agent import Agent
from toolwire.errors import BadRequestError
from toolwire.reviewers import DenyAll, QuorumReviewer
from toolwire.telemetry import CONTENT_ENV
from toolwire.testing import ErrorReply, ScriptedModel, ScriptedServer, reply
from toolwire.tools import tool


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    yield from collected_spans()


@tool(risk="low")
async def weather(city: str) -> str:
    """Current weather for a city."""
    await asyncio.sleep(0)  # let the other low-risk call start: they run concurrently
    return f"sunny in {city}"


@tool(risk="low")
async def clock(tz: str) -> str:
    """Current time in a time zone."""
    await asyncio.sleep(0)
    return f"12:00 in {tz}"


@tool(risk="high")
async def save(note: str) -> str:
    """Save a note."""
    return f"saved {note}"


def _script() -> list[Any]:
    usage = Usage(input_tokens=10, output_tokens=3)
    return [
        reply(
            "checking",
            [
                ToolCall(id="call_w", name="weather", arguments={"city": "Paris"}),
                ToolCall(id="call_c", name="clock", arguments={"tz": "CET"}),
            ],
            usage=usage,
            id="r1",
            model="m-1-2026",
        ),
        reply("saving", [ToolCall(id="call_s", name="save", arguments={"note": "secret plan"})], usage=usage),
        reply("all done", usage=usage),
    ]


def _by_name(finished: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    named: dict[str, list[ReadableSpan]] = {}
    for span in finished:
        named.setdefault(span.name, []).append(span)
    return named


def _parent(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


async def _three_turn_run(provider: str, *, stream: bool = False) -> None:
    with ScriptedServer(_script()) as server, ScriptedServer([reply("", [_vote()])]) as voters:
        client, voter = server.connect(f"{provider}:m-1"), voters.connect("openai:judge-1")
        async with client, voter:
            agent = Agent(client, [weather, clock, save], reviewer=QuorumReviewer([voter], threshold=1))
            if stream:
                async for _ in agent.run_stream("plan the day"):
                    pass
            else:
                result = await agent.run("plan the day")
                assert result.text == "all done"


def _vote() -> ToolCall:
    return ToolCall(id="call_v", name="vote", arguments={"approve": True, "reason": "fine"})


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
async def test_a_three_turn_run_has_the_documented_span_tree(provider: str, spans: InMemorySpanExporter) -> None:
    await _three_turn_run(provider)
    named = _by_name(spans.get_finished_spans())
    assert sorted((name, len(group)) for name, group in named.items()) == [
        ("chat judge-1", 1),
        ("chat m-1", 3),
        ("execute_tool clock", 1),
        ("execute_tool save", 1),
        ("execute_tool weather", 1),
        ("invoke_agent", 1),
        ("review save", 1),
    ]
    root = named["invoke_agent"][0]
    assert root.parent is None
    run_id = root.context.span_id
    for name in ("chat m-1", "execute_tool clock", "execute_tool save", "execute_tool weather", "review save"):
        assert [_parent(s) for s in named[name]] == [run_id] * len(named[name])
    assert _parent(named["chat judge-1"][0]) == named["review save"][0].context.span_id
    assert {s.context.trace_id for s in spans.get_finished_spans()} == {root.context.trace_id}
    # the two low-risk calls ran concurrently: each started before the other ended
    weather_span, clock_span = named["execute_tool weather"][0], named["execute_tool clock"][0]
    assert weather_span.start_time < clock_span.end_time and clock_span.start_time < weather_span.end_time


async def test_chat_spans_carry_the_genai_attributes(spans: InMemorySpanExporter) -> None:
    await _three_turn_run("anthropic")
    first = next(s for s in spans.get_finished_spans() if s.name == "chat m-1")
    attributes = dict(first.attributes or {})
    port = attributes.pop("server.port")
    assert isinstance(port, int) and port > 0
    assert first.kind == SpanKind.CLIENT
    assert attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "m-1",
        "toolwire.provider": "anthropic",
        "toolwire.stream": False,
        "server.address": "127.0.0.1",
        "gen_ai.response.finish_reasons": ("tool_use",),
        "toolwire.stop_reason": "tool_use",
        "toolwire.tool_calls": 2,
        "gen_ai.response.id": "r1",
        "gen_ai.response.model": "m-1-2026",
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 3,
    }


async def test_agent_tool_and_review_attributes(spans: InMemorySpanExporter) -> None:
    await _three_turn_run("openai")
    named = _by_name(spans.get_finished_spans())
    assert dict(named["invoke_agent"][0].attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "m-1",
        "toolwire.agent.max_tool_turns": 10,
        "toolwire.agent.tool_mode": "native",
        "toolwire.agent.turns": 3,
        "toolwire.agent.stop_reason": "end_turn",
        "toolwire.agent.tool_calls": 3,
        "gen_ai.usage.input_tokens": 30,
        "gen_ai.usage.output_tokens": 9,
    }
    assert dict(named["execute_tool save"][0].attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "save",
        "gen_ai.tool.call.id": "call_s",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Save a note.",
        "toolwire.tool.risk": "high",
        "toolwire.tool.approved": True,
        "toolwire.tool.result_kind": "text",
    }
    assert dict(named["review save"][0].attributes or {}) == {
        "gen_ai.tool.name": "save",
        "gen_ai.tool.call.id": "call_s",
        "toolwire.reviewer": "QuorumReviewer",
        "toolwire.review.approved": True,
        "toolwire.review.votes": 1,
        "toolwire.review.approvals": 1,
    }


async def test_no_content_is_recorded_unless_opted_in(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CONTENT_ENV, raising=False)
    await _three_turn_run("gemini")
    dumped = json.dumps([dict(s.attributes or {}) for s in spans.get_finished_spans()])
    for secret in ("plan the day", "secret plan", "sunny in Paris", "all done"):
        assert secret not in dumped


async def test_content_is_recorded_when_opted_in(spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONTENT_ENV, "true")
    await _three_turn_run("openai")
    named = _by_name(spans.get_finished_spans())
    first_chat = dict(named["chat m-1"][0].attributes or {})
    assert json.loads(str(first_chat["gen_ai.input.messages"])) == [{"role": "user", "content": "plan the day"}]
    assert [t["name"] for t in json.loads(str(first_chat["gen_ai.tool.definitions"]))] == ["weather", "clock", "save"]
    assert "checking" in str(first_chat["gen_ai.output.messages"])
    tool_attributes = dict(named["execute_tool weather"][0].attributes or {})
    assert json.loads(str(tool_attributes["gen_ai.tool.call.arguments"])) == {"city": "Paris"}
    assert json.loads(str(tool_attributes["gen_ai.tool.call.result"])) == "sunny in Paris"


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "ollama"])
async def test_streamed_runs_record_the_reply_on_the_chat_span(provider: str, spans: InMemorySpanExporter) -> None:
    await _three_turn_run(provider, stream=True)
    chats = [dict(s.attributes or {}) for s in spans.get_finished_spans() if s.name == "chat m-1"]
    assert [(a["toolwire.stream"], a["toolwire.tool_calls"], a["toolwire.stop_reason"]) for a in chats] == [
        (True, 2, "tool_use"),
        (True, 1, "tool_use"),
        (True, 0, "end_turn"),
    ]
    assert [a["gen_ai.usage.input_tokens"] for a in chats] == [10, 10, 10]


async def test_failed_model_calls_and_rejected_tools_are_marked(spans: InMemorySpanExporter) -> None:
    with ScriptedServer([ErrorReply(status=400, message="bad request")]) as server:
        async with server.connect("openai:m-1") as client:
            with pytest.raises(BadRequestError):
                await client.complete("hi")
    (failed,) = spans.get_finished_spans()
    assert (failed.name, failed.status.status_code) == ("chat m-1", StatusCode.ERROR)
    assert dict(failed.attributes or {})["error.type"] == "BadRequestError"
    spans.clear()

    calls = [ToolCall(id="c1", name="save", arguments={"note": "x"}), ToolCall(id="c2", name="nope", arguments={})]
    with ScriptedServer([reply("", calls), reply("ok")]) as server:
        async with server.connect("openai:m-1") as client:
            await Agent(client, [save], reviewer=DenyAll()).run("go")
    tools = {s.name: s for s in spans.get_finished_spans() if s.name.startswith("execute_tool")}
    assert {name: dict(s.attributes or {})["error.type"] for name, s in tools.items()} == {
        "execute_tool save": "rejected",
        "execute_tool nope": "unknown_tool",
    }
    assert [dict(s.attributes or {})["toolwire.tool.approved"] for s in tools.values()] == [False, False]


async def test_the_scripted_model_is_traced_like_a_real_client(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel([reply("", [ToolCall(id="c", name="weather", arguments={"city": "Oslo"})]), "bye"])
    await Agent(model, [weather]).run("go")
    assert [(s.name, _parent(s) is not None) for s in spans.get_finished_spans()] == [
        ("chat scripted", True),
        ("execute_tool weather", True),
        ("chat scripted", True),
        ("invoke_agent", False),
    ]
    assert dict(spans.get_finished_spans()[0].attributes or {})["gen_ai.provider.name"] == "scripted"


async def test_batch_tasks_are_spans_around_their_agent_runs(spans: InMemorySpanExporter) -> None:
    from toolwire.batch import Task, run_batch

    def make_agent(task: Task) -> Agent:
        return Agent(ScriptedModel([reply(f"answer {task.id}")]))

    results = [r async for r in run_batch([Task(id="a", prompt="x"), Task(id="b", prompt="y")], make_agent)]
    assert sorted(r.text for r in results) == ["answer a", "answer b"]
    named = {s.name: s for s in spans.get_finished_spans() if s.name.startswith("batch_task")}
    assert sorted(named) == ["batch_task a", "batch_task b"]
    runs = [s for s in spans.get_finished_spans() if s.name == "invoke_agent"]
    assert sorted(_parent(s) for s in runs) == sorted(s.context.span_id for s in named.values())
    assert dict(named["batch_task a"].attributes or {}) == {"toolwire.batch.task_id": "a"}


def test_everything_works_without_opentelemetry_installed() -> None:
    program = """
import sys
sys.modules["opentelemetry"] = None  # as if the extra were not installed
from toolwire import ToolCall
from toolwire.agent import Agent
from toolwire.testing import ScriptedServer, reply
from toolwire.tools import tool

@tool(risk="low")
def echo(text: str) -> str:
    \"\"\"Echo.\"\"\"
    return text

with ScriptedServer([reply("", [ToolCall(id="c", name="echo", arguments={"text": "hi"})]), reply("bye")]) as server:
    result = Agent(server.connect("anthropic:m"), [echo]).run_sync("go")
print(result.text, result.calls[0].result.value)
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "bye hi\n", "")


_TRACED_LATER = """
import os
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from toolwire.telemetry import chat_span

def traced() -> bool:
    with chat_span(provider="openai", model="m") as call:
        return call.recording

seen = []
if not os.environ.get("OTEL_PYTHON_TRACER_PROVIDER"):
    seen.append(traced())  # no provider yet: no span, and nothing fails
    trace.set_tracer_provider(TracerProvider())
seen.append(traced())
print(seen)
"""


@pytest.mark.parametrize("named", [False, True])
def test_a_provider_set_after_the_first_calls_or_named_in_the_environment_records_spans(named: bool) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    if named:
        env["OTEL_PYTHON_TRACER_PROVIDER"] = "sdk_tracer_provider"  # the SDK's entry point name
    done = subprocess.run(
        [sys.executable, "-c", _TRACED_LATER], capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "[True]\n" if named else "[False, True]\n", "")
