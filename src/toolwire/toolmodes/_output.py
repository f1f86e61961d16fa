"""A typed reply, whole or streamed: ask in an output strategy, validate, re-ask with the errors.

The output strategy rewrites the request (`_output_strategies`); the tool mode then sends it as
any request (`complete` / `stream`), so a `tool` strategy on a text-mode client has its output
tool in the prompt like any other. A reply that does not validate goes back with the errors,
up to `retries` times; the last failure raises `OutputValidationError` with every attempt.

Streamed, `PartialOutput`s come as the answer's JSON arrives (each holds the fields complete so
far, a prefix of the final object's), then one `OutputResult` with the validated value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from toolwire.constrained import SchemaSupport
from toolwire.errors import OutputValidationError
from toolwire.toolmodes._engine import complete, stream
from toolwire.toolmodes._output_strategies import (
    OUTPUT_STRATEGIES,
    OUTPUT_TOOL,
    OutputReading,
    OutputStrategy,
    answer_messages,
    output_sent,
    read_output,
)
from toolwire.toolmodes._output_type import OutputType, partial_json
from toolwire.types import Done, Message, Request, Response, StreamEvent, TextDelta, ToolCallDelta, Usage

if TYPE_CHECKING:
    from toolwire.contract import ModelClient
    from toolwire.toolmodes._state import ModeState

__all__ = [
    "OutputResult",
    "PartialOutput",
    "PartialReader",
    "choose_strategy",
    "complete_output",
    "give_up",
    "stream_output",
]

T = TypeVar("T")


@dataclass(slots=True)
class OutputResult(Generic[T]):
    """A validated typed reply.

    Attributes:
        output: The validated value.
        text: The answer's JSON as the model wrote it (the output tool's arguments for `tool`).
        response: The reply that validated.
        messages: What the exchange added to the history, in order: each reply, each re-ask,
            the output tool's result.
        attempts: Every reply that did not validate, as `(text, errors)`.
        usage: The tokens of every attempt together.
    """

    output: T
    text: str
    response: Response
    messages: list[Message] = field(default_factory=list)
    attempts: list[tuple[str, str]] = field(default_factory=list)
    usage: Usage | None = None


@dataclass(slots=True, frozen=True)
class PartialOutput:
    """The answer so far, while it streams: the fields already complete (a dict), in order."""

    value: Any


async def complete_output(
    client: ModelClient,
    request: Request,
    state: ModeState,
    output: OutputType,
    *,
    strategy: OutputStrategy,
    retries: int = 1,
    support: SchemaSupport | None = None,
) -> OutputResult[Any]:
    """One typed reply to `request`, re-asked up to `retries` times.

    Raises:
        OutputValidationError: No reply validated; `.attempts` holds each.
    """
    support = support or client.schema_support
    messages: list[Message] = list(request.messages)
    added: list[Message] = []
    attempts: list[tuple[str, str]] = []
    usage: Usage | None = None
    for _ in range(retries + 1):
        sent = output_sent(dataclasses.replace(request, messages=messages), output, strategy, support)
        response = await complete(client, sent, state, support=support)
        usage = response.usage if usage is None else usage.plus(response.usage)
        reading = read_output(response, output, strategy)
        following = [response.message, *answer_messages(response, reading)]
        messages.extend(following)
        added.extend(following)
        if reading is not None and reading.errors is None:
            return OutputResult(reading.value, reading.text, response, added, attempts, usage)
        attempts.append(_attempt(response, reading))
    raise give_up(output, strategy, attempts)


async def stream_output(
    client: ModelClient,
    request: Request,
    state: ModeState,
    output: OutputType,
    *,
    strategy: OutputStrategy,
    retries: int = 1,
    support: SchemaSupport | None = None,
) -> AsyncGenerator[PartialOutput | OutputResult[Any], None]:
    """`complete_output` streamed: `PartialOutput`s as the JSON arrives, then the `OutputResult`.

    A re-ask streams again; its partial objects start over.
    """
    support = support or client.schema_support
    messages: list[Message] = list(request.messages)
    added: list[Message] = []
    attempts: list[tuple[str, str]] = []
    usage: Usage | None = None
    for _ in range(retries + 1):
        sent = output_sent(dataclasses.replace(request, messages=messages), output, strategy, support)
        reader = PartialReader(output, strategy)
        response: Response | None = None
        async for event in stream(client, dataclasses.replace(sent, stream=True), state, support=support):
            for partial in reader.feed(event):
                yield partial
            if isinstance(event, Done):
                response = event.response
        assert response is not None  # the engine's streams end with Done or raise
        usage = response.usage if usage is None else usage.plus(response.usage)
        reading = read_output(response, output, strategy)
        following = [response.message, *answer_messages(response, reading)]
        messages.extend(following)
        added.extend(following)
        if reading is not None and reading.errors is None:
            yield OutputResult(reading.value, reading.text, response, added, attempts, usage)
            return
        attempts.append(_attempt(response, reading))
    raise give_up(output, strategy, attempts)


class PartialReader:
    """Partial answers out of one reply's stream events: the text's JSON, or the output tool's arguments."""

    def __init__(self, output: OutputType, strategy: OutputStrategy) -> None:
        self.output = output
        self.strategy = strategy
        self._text: list[str] = []
        self._call_index: int | None = None
        self._last: Any = None

    def feed(self, event: StreamEvent) -> list[PartialOutput]:
        """The new partial answer this event makes (none when nothing new is complete)."""
        match event:
            case TextDelta(text=text) if text and self.strategy != "tool":
                self._text.append(text)
            case ToolCallDelta(index=index, name=name, arguments_delta=delta):
                if name == OUTPUT_TOOL:
                    self._call_index = index
                if index != self._call_index or not delta:
                    return []
                self._text.append(delta)
            case _:
                return []
        value = partial_json("".join(self._text))
        if self.output.wrapped or not value or value == self._last:
            return []
        self._last = value
        return [PartialOutput(value)]


def _attempt(response: Response, reading: OutputReading | None) -> tuple[str, str]:
    if reading is None:
        names = ", ".join(c.name for c in response.tool_calls)
        return response.text, f"The reply called tools ({names}) instead of giving the answer."
    return reading.text, reading.errors or ""


def give_up(output: OutputType, strategy: OutputStrategy, attempts: list[tuple[str, str]]) -> OutputValidationError:
    """The error for a typed reply that never validated."""
    last = attempts[-1][1].splitlines()[0] if attempts and attempts[-1][1] else "no answer"
    return OutputValidationError(
        f"No reply validated as {output.name} in {len(attempts)} attempt(s) with the {strategy!r} output strategy "
        f"(last: {last}); raise output_retries, or try another output_strategy.",
        attempts=attempts,
    )


def choose_strategy(client: ModelClient, wanted: str | None) -> OutputStrategy:
    """The output strategy to use with `client`: `wanted`, or the client's default.

    Raises:
        ValueError: `wanted` is not a strategy, or not one this client's server supports.
    """
    supported = [s for s in client.output_strategies if s in OUTPUT_STRATEGIES]
    if wanted is None:
        return supported[0] if supported else "prompted"
    if wanted not in OUTPUT_STRATEGIES:
        raise ValueError(f"output_strategy must be one of {', '.join(OUTPUT_STRATEGIES)}, got {wanted!r}.")
    if wanted not in supported:
        raise ValueError(
            f"{client.provider} does not support the {wanted!r} output strategy; use one of {', '.join(supported)}."
        )
    return next(s for s in OUTPUT_STRATEGIES if s == wanted)
