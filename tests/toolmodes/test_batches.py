"""`toolmodes.stream_batches`: a stream's events in the lists the upstream delivered them in (the gateway's relay).

Native mode passes each upstream list on as it is; the modes that read events one by one give
the same events as `stream`, grouped again where an upstream list ended.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest

from toolwire import toolmodes
from toolwire.errors import StreamError
from toolwire.testing import ScriptedModel
from toolwire.types import (
    AssistantMessage,
    Done,
    Request,
    Response,
    StopReason,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    UserMessage,
)

WEATHER = ToolDefinition(
    name="get_weather",
    description="The weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
REQUEST = Request(model="scripted", messages=[UserMessage(content="Weather in Paris?")], tools=[WEATHER])
CALLED = Response(
    message=AssistantMessage(
        parts=[TextPart(text="Checking."), ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})]
    ),
    stop_reason=StopReason.TOOL_USE,
)


class Upstream:
    """An opener serving fixed lists of events, and what became of its stream."""

    def __init__(self, *batches: list[StreamEvent]) -> None:
        self.batches = batches
        self.closed = False
        self.requests: list[Request] = []

    async def __call__(self, request: Request) -> AsyncGenerator[list[StreamEvent], None]:
        self.requests.append(request)
        try:
            for batch in self.batches:
                yield list(batch)
        finally:
            self.closed = True


async def _lists(mode: str, upstream: Upstream) -> list[list[StreamEvent]]:
    state = toolmodes.ModeState(mode)  # type: ignore[arg-type]
    return [b async for b in toolmodes.stream_batches(ScriptedModel([]), REQUEST, state, opener=upstream)]


async def test_native_mode_passes_the_upstream_lists_on_as_they_are() -> None:
    lists: tuple[list[StreamEvent], ...] = (
        [TextDelta(""), TextDelta("Checking.")],
        [ToolCallDelta(0, "c1", "get_weather", "")],
        [ToolCallDelta(0, None, None, '{"city": '), ToolCallDelta(0, None, None, '"Paris"}'), Done(CALLED)],
        [TextDelta("never read")],
    )
    upstream = Upstream(*lists)
    written = toolmodes.Written()
    state = toolmodes.ModeState("native")
    got = [
        b async for b in toolmodes.stream_batches(ScriptedModel([]), REQUEST, state, opener=upstream, written=written)
    ]
    assert got == list(lists[:3])
    assert (written.text, upstream.closed, upstream.requests) == ("Checking.", True, [REQUEST])


async def test_native_mode_raises_for_a_stream_that_ends_without_its_done() -> None:
    upstream = Upstream([TextDelta("Check")], [TextDelta("ing.")])
    with pytest.raises(StreamError, match=r"^The model's stream ended without its reply's end \(no Done event\)"):
        await _lists("native", upstream)
    assert upstream.closed


@pytest.mark.parametrize("mode", ["native", "text"])
async def test_a_caller_that_stops_early_closes_the_upstream(mode: str) -> None:
    upstream = Upstream([TextDelta("Checking. ")], [TextDelta("Still checking. ")], [Done(CALLED)])
    state = toolmodes.ModeState(mode)  # type: ignore[arg-type]
    batches = toolmodes.stream_batches(ScriptedModel([]), REQUEST, state, opener=upstream)
    assert [type(e) for e in await anext(batches)] == [TextDelta]
    assert not upstream.closed
    await batches.aclose()
    assert upstream.closed


def _shape(event: StreamEvent) -> object:
    """The event without the call ids text mode makes up (new ones each stream)."""
    if isinstance(event, ToolCallDelta):
        return ("call", event.index, event.name, event.arguments_delta)
    if isinstance(event, Done):
        return ("done", event.response.text, [(c.name, c.arguments) for c in event.response.tool_calls])
    return event


async def _one_by_one(lists: list[list[StreamEvent]]) -> list[StreamEvent]:
    async def opener(request: Request) -> AsyncGenerator[StreamEvent, None]:
        for batch in lists:
            for event in batch:
                yield event

    return [e async for e in toolmodes.stream(ScriptedModel([]), REQUEST, toolmodes.ModeState("text"), opener=opener)]


async def test_text_mode_gives_the_events_of_stream() -> None:
    written = 'Checking. TOOL_CALL: {"name": "get_weather", "arguments": {"city": "Paris"}}'
    reply = Response(message=AssistantMessage(parts=[TextPart(text=written)]), stop_reason=StopReason.END_TURN)
    lists: list[list[StreamEvent]] = [
        [TextDelta(written[:10]), TextDelta(written[10:30])],
        [TextDelta(written[30:]), Done(reply)],
    ]
    got = await _lists("text", Upstream(*lists))
    expected = await _one_by_one(lists)
    assert [_shape(e) for batch in got for e in batch] == [_shape(e) for e in expected]
    assert all(got) and isinstance(expected[-1], Done)
    assert [c.name for c in expected[-1].response.tool_calls] == ["get_weather"]


async def test_text_mode_groups_what_one_upstream_list_gave() -> None:
    text = "Checking. Nothing to call. Done. "
    reply = Response(message=AssistantMessage(parts=[TextPart(text=text)]), stop_reason=StopReason.END_TURN)
    lists: list[list[StreamEvent]] = [
        [TextDelta("Checking. "), TextDelta("Nothing to call. ")],
        [TextDelta("Done. "), Done(reply)],
    ]
    got = await _lists("text", Upstream(*lists))
    expected = await _one_by_one(lists)
    assert [e for batch in got for e in batch] == expected
    assert all(got) and len(got) < len(expected)  # two events of the second list went on together
