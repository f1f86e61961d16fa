"""A request's own JSON output format (`response_format`) carried to a model by an output strategy.

The gateway decodes an OpenAI client's `response_format: json_schema` (a Responses client's
`text.format`, a Gemini client's `responseJsonSchema`) into `Request.response_format`. An
upstream whose default output strategy is `native` gets it as it is, in its own field; any other
upstream gets it through its strategy (`tool`, `prompted`, `constrained`), and the reply comes
back as the JSON text the client asked for, whole or streamed:

- `tool`: the output tool's call becomes the reply's text; streamed, its argument deltas
  become text deltas as they arrive. Calls of the client's own tools pass through.
- `prompted`: the JSON found in the reply (fenced, after prose) is the text; streamed, the text
  is held and goes out as that JSON once the reply is over.
- `constrained`: the reply is the JSON already; it streams as it is.

No re-ask: the client validates (and a stream cannot take back what it sent).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from toolwire.codecs.common.wire import dumps
from toolwire.constrained import SchemaSupport
from toolwire.toolmodes._engine import BatchOpener, Opener, complete, regrouped, stream
from toolwire.toolmodes._output import choose_strategy
from toolwire.toolmodes._output_strategies import OUTPUT_TOOL, OutputStrategy, output_sent
from toolwire.toolmodes._output_type import OutputType, find_json
from toolwire.types import (
    AssistantMessage,
    Done,
    Request,
    Response,
    StopReason,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolCallDelta,
)

if TYPE_CHECKING:
    from toolwire.contract import ModelClient
    from toolwire.toolmodes._state import ModeState

__all__ = ["complete_formatted", "format_strategy", "stream_formatted", "stream_formatted_batches"]

_ANY_OBJECT = {"type": "object"}


def format_strategy(client: ModelClient, request: Request) -> OutputStrategy | None:
    """The strategy that carries `request`'s response format to `client`; None: it goes as it is.

    Raises:
        ValueError: The format's schema is not a valid JSON Schema (the client's 400).
    """
    if request.response_format is None:
        return None
    _output_type(request)
    strategy = choose_strategy(client, None)
    return None if strategy == "native" else strategy


async def complete_formatted(
    client: ModelClient,
    request: Request,
    state: ModeState,
    strategy: OutputStrategy,
    *,
    support: SchemaSupport | None = None,
    runnable_only: bool = False,
) -> Response:
    """The whole reply to `request`, asked in `strategy`, with the answer's JSON as its text.

    `runnable_only` as for `complete`.
    """
    support = support or client.schema_support
    sent = output_sent(dataclasses.replace(request, response_format=None), _output_type(request), strategy, support)
    response = await complete(client, sent, state, support=support, runnable_only=runnable_only)
    call = _output_call(response)
    if call is not None:
        raw = call.metadata.get("raw_arguments")
        return _as_text(response, raw if isinstance(raw, str) else dumps(call.arguments))
    if strategy == "prompted" and not response.tool_calls:
        found = find_json(response.text)
        return _as_text(response, dumps(found)) if found is not None else response
    return response


def stream_formatted(
    client: ModelClient,
    request: Request,
    state: ModeState,
    strategy: OutputStrategy,
    *,
    support: SchemaSupport | None = None,
    opener: Opener | None = None,
    runnable_only: bool = False,
) -> AsyncGenerator[StreamEvent, None]:
    """`complete_formatted` as events: the answer's JSON as text deltas, ending with one `Done`."""
    support = support or client.schema_support
    sent = output_sent(dataclasses.replace(request, response_format=None), _output_type(request), strategy, support)
    events = stream(client, sent, state, support=support, opener=opener, runnable_only=runnable_only)
    if strategy == "tool":
        return _tool_as_text(events)
    if strategy == "prompted":
        return _held_json(events)
    return events


def stream_formatted_batches(
    client: ModelClient,
    request: Request,
    state: ModeState,
    strategy: OutputStrategy,
    *,
    opener: BatchOpener,
    support: SchemaSupport | None = None,
    runnable_only: bool = False,
) -> AsyncGenerator[list[StreamEvent], None]:
    """`stream_formatted`'s events in lists, each ending where an upstream list ended (a relay)."""
    return regrouped(
        lambda flat: stream_formatted(
            client, request, state, strategy, support=support, opener=flat, runnable_only=runnable_only
        ),
        opener,
    )


async def _tool_as_text(events: AsyncGenerator[StreamEvent, None]) -> AsyncGenerator[StreamEvent, None]:
    """The output tool's argument deltas as text deltas; the client's own calls as they are."""
    index: int | None = None
    written: list[str] = []
    try:
        async for event in events:
            if isinstance(event, ToolCallDelta) and (event.name == OUTPUT_TOOL or event.index == index):
                index = event.index
                if event.arguments_delta:
                    written.append(event.arguments_delta)
                    yield TextDelta(event.arguments_delta)
            elif isinstance(event, Done) and _output_call(event.response) is not None:
                yield Done(_as_text(event.response, "".join(written)))
            else:
                yield event
    finally:
        await events.aclose()


async def _held_json(events: AsyncGenerator[StreamEvent, None]) -> AsyncGenerator[StreamEvent, None]:
    """Text held until the reply is over, then the JSON found in it (or the text, when there is none)."""
    try:
        async for event in events:
            if isinstance(event, TextDelta):
                if not event.text:
                    yield event  # an empty delta opens the client's stream
                continue
            if not isinstance(event, Done):
                yield event
                continue
            found = find_json(event.response.text) if not event.response.tool_calls else None
            response = _as_text(event.response, dumps(found)) if found is not None else event.response
            if response.text:
                yield TextDelta(response.text)
            yield Done(response)
    finally:
        await events.aclose()


def _output_type(request: Request) -> OutputType:
    wanted = request.response_format
    schema = wanted.schema if wanted is not None and wanted.schema is not None else _ANY_OBJECT
    return OutputType.from_schema(schema, wanted.name if wanted is not None else None)


def _output_call(response: Response) -> ToolCall | None:
    return next((c for c in response.tool_calls if c.name == OUTPUT_TOOL), None)


def _as_text(response: Response, text: str) -> Response:
    """`response` with `text` as its one text part, the output tool's call gone, ended as an answer."""
    thinking = [p for p in response.message.parts if isinstance(p, ThinkingPart)]
    calls = [c for c in response.tool_calls if c.name != OUTPUT_TOOL]
    parts: list[TextPart | ThinkingPart | ToolCall] = [*thinking, TextPart(text=text), *calls]
    stop = response.stop_reason
    if stop == StopReason.TOOL_USE and not calls:
        stop = StopReason.END_TURN
    message = AssistantMessage(parts=parts, metadata=response.message.metadata)
    return dataclasses.replace(response, message=message, stop_reason=stop)
