"""The stateful conversation: a history kept for you, one call per turn.

A `Session` wraps any client (a `ChatClient`, as every `toolwire.client.BaseClient` is: an
HTTP `Client`, a `CopilotClient` or a `toolwire.testing.ScriptedModel`). It never runs tools
itself — that is the agent's job — but it checks that tool results answer exactly the calls
the model made before anything is sent. Imports no client, no codec and no httpx2.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from toolwire._definitions import as_definitions
from toolwire.constrained import (
    PORTABLE,
    ReplyFilter,
    answer_request,
    calls_from_reply,
    constrained_request,
    with_usage_of,
)
from toolwire.errors import BadRequestError
from toolwire.textcalls import TOOL_MODES, ToolMode, calls_from_text, to_text_messages
from toolwire.types import (
    AssistantMessage,
    Done,
    Message,
    Request,
    Response,
    StreamEvent,
    SystemMessage,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

if TYPE_CHECKING:
    from toolwire._definitions import ToolLike

__all__ = ["ChatClient", "Session", "ask_model", "constrained_stream", "stream_reply"]

_T = TypeVar("_T")

logger = logging.getLogger("toolwire.session")


class ChatClient(Protocol):
    """What a session needs of a client; `toolwire.client.BaseClient` offers it (and builds sessions)."""

    async def complete(self, messages: Sequence[Message], *, tools: Sequence[ToolLike] | None = None) -> Response:
        """One reply to `messages`."""
        ...

    def stream(
        self, messages: Sequence[Message], *, tools: Sequence[ToolLike] | None = None
    ) -> AsyncIterator[StreamEvent]:
        """One reply as events, ending with one `Done`."""
        ...

    def run_sync(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run a coroutine of this client to completion from sync code."""
        ...

    def iterate_sync(self, iterator: AsyncIterator[_T]) -> Iterator[_T]:
        """Drive an async iterator of this client from sync code."""
        ...


def _rejects_tools(exc: BadRequestError) -> bool:
    # A 404 is a wrong address (a base URL without /v1), whatever the body says: never a reason
    # to fall back to text mode. Only the server's own words count: toolwire's hint in the
    # message names "tools" for every 400 (a context-length error is no tools problem).
    said = exc.body if exc.body is not None else exc.message
    return exc.status != 404 and "tool" in str(said).lower()


async def ask_model(
    client: Any,
    messages: Sequence[Message],
    tools: Sequence[Any],
    mode: ToolMode,
    emit: Callable[[StreamEvent], None] | None = None,
    tool_choice: ToolChoice | None = None,
) -> tuple[Response, ToolMode]:
    """One model call in a tool mode; returns the reply and the mode to use from now on.

    `native` sends the tools; `text` describes them in the system prompt and parses calls out
    of the reply; `auto` is native, parses the text when no native call came, and switches to
    text for good (logged once) when the server rejects the `tools` parameter; `constrained`
    has the server decode the reply under a JSON Schema built from the tools
    (`toolwire.constrained`). With `emit`, the reply is streamed and every event goes to
    `emit`. `tool_choice` goes with native tools, and shapes the constrained schema (text mode
    sends none).
    """
    definitions = as_definitions(tools)
    if mode == "constrained" and definitions:
        return await _ask_constrained(client, messages, definitions, emit, tool_choice), mode
    if mode == "text" or not definitions:
        sent = to_text_messages(messages, definitions) if definitions else list(messages)
        response = await _call(client, sent, None, emit)
        return (calls_from_text(response, definitions, "text") if definitions else response), mode
    try:
        response = await _call(client, list(messages), definitions, emit, tool_choice)
    except BadRequestError as exc:
        if mode != "auto" or not _rejects_tools(exc):
            raise
        logger.warning("The server rejected the tools parameter (%s); switching to text mode for this client.", exc)
        return await ask_model(client, messages, tools, "text", emit)
    if mode == "auto" and not response.tool_calls:
        return calls_from_text(response, definitions, "auto-text"), mode
    return response, mode


async def _ask_constrained(
    client: Any,
    messages: Sequence[Message],
    tools: list[ToolDefinition],
    emit: Callable[[StreamEvent], None] | None,
    tool_choice: ToolChoice | None,
) -> Response:
    """One reply in constrained mode: the schema in the form the client's server takes, calls read back."""
    if emit is not None:
        final: Response | None = None
        async for event in constrained_stream(client, messages, tools, tool_choice):
            if isinstance(event, Done):
                final = event.response
            else:
                emit(event)
        assert final is not None  # constrained_stream ends with Done or raises
        return final
    request = client.build_request(messages, tools=tools, tool_choice=tool_choice)
    sent, reply = constrained_request(request, getattr(client, "schema_support", PORTABLE))
    raw: Response = await client.complete_request(sent)
    if reply is None:  # no reply schema: tool_choice "none"
        return raw
    response, found = calls_from_reply(raw, reply)
    if found.answer_due:
        answer: Response = await client.complete_request(answer_request(request))
        return with_usage_of(answer, raw.usage)
    return response


async def constrained_stream(
    client: Any, messages: Sequence[Message], tools: Sequence[Any], tool_choice: ToolChoice | None = None
) -> AsyncIterator[StreamEvent]:
    """One constrained reply streamed: calls whole at the end, then `Done`.

    When the model called nothing, the answer's stream (`answer_request`) follows, as it is written.
    """
    request = client.build_request(messages, tools=as_definitions(tools), tool_choice=tool_choice, stream=True)
    sent, reply = constrained_request(request, getattr(client, "schema_support", PORTABLE))
    if reply is None:  # no reply schema: tool_choice "none"
        async for event in client.stream_request(sent):
            yield event
        return
    async for event in stream_reply(client, sent, ReplyFilter(reply), answer_request(request)):
        yield event


async def stream_reply(client: Any, sent: Request, held: ReplyFilter, answer: Request) -> AsyncIterator[StreamEvent]:
    """`sent` (a `constrained_request`) streamed through `held`; when the model called nothing, `answer`'s stream.

    The upstream stream is closed as soon as `held` has the reply, which stops a model that
    began to repeat a call (its server stops generating when the stream is closed).
    """
    done = False
    events = client.stream_request(sent)
    try:
        async for event in events:
            for out in held.feed(event):
                done = done or isinstance(out, Done)
                yield out
            if held.ended:
                break
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
    if held.answer_due:
        async for event in client.stream_request(answer):
            done = done or isinstance(event, Done)
            yield held.answer_event(event)
    if not done:
        raise RuntimeError("The client's stream ended without a Done event.")


async def _call(
    client: Any,
    messages: list[Message],
    tools: list[ToolDefinition] | None,
    emit: Callable[[StreamEvent], None] | None,
    tool_choice: ToolChoice | None = None,
) -> Response:
    # Only when set: a client without the keyword still works without a choice.
    options = {"tool_choice": tool_choice} if tool_choice is not None else {}
    if emit is None:
        response: Response = await client.complete(messages, tools=tools, **options)
        return response
    final: Response | None = None
    async for event in client.stream(messages, tools=tools, **options):
        if isinstance(event, Done):
            final = event.response
        else:
            emit(event)
    if final is None:
        raise RuntimeError("The client's stream ended without a Done event.")
    return final


class Session:
    """A conversation with one model whose history grows with every exchange.

    Args:
        client: The model to talk to.
        system: Instructions placed first in the history.
        tools: Tools offered on every turn (`ToolDefinition`s or `Tool`s).
        tool_mode: `native`, `text`, `auto` or `constrained` (see `ask_model`).

    Attributes:
        messages: The whole history, in order (read it; append to it only between turns).
        tools: The tools offered on each turn.
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        system: str | None = None,
        tools: Sequence[ToolLike] | None = None,
        tool_mode: ToolMode = "native",
    ) -> None:
        if tool_mode not in TOOL_MODES:
            raise ValueError(f"tool_mode must be one of {', '.join(TOOL_MODES)}, got {tool_mode!r}.")
        self.client = client
        self.tool_mode: ToolMode = tool_mode
        self.tools: list[ToolLike] = list(tools or ())
        self.messages: list[Message] = [SystemMessage(content=system)] if system else []
        self._turn_tools: list[ToolLike] | None = None

    def __repr__(self) -> str:
        return f"Session({self.client!r}, messages={len(self.messages)})"

    @property
    def pending_calls(self) -> list[ToolCall]:
        """The tool calls of the last reply that still need results (empty when none)."""
        last = self.messages[-1] if self.messages else None
        return last.tool_calls if isinstance(last, AssistantMessage) else []

    async def send(self, text: str) -> str:
        """Say `text`; return the reply's text (the reply, tool calls included, joins the history)."""
        return (await self._exchange([self._user(text)], self.tools)).text

    async def send_with_tools(self, text: str, tools: Sequence[ToolLike]) -> Response:
        """Say `text` offering `tools` (for this exchange and its tool results); return the reply."""
        self._turn_tools = list(tools)
        return await self._exchange([self._user(text)], self._turn_tools)

    async def send_tool_results(self, results: Sequence[ToolResult]) -> Response:
        """Answer every pending call; return the model's next reply.

        Raises:
            ValueError: When `results` miss a pending call, repeat one, or answer an unknown id;
                nothing is sent then.
        """
        ordered = self._check_results(results)
        tools = self._turn_tools if self._turn_tools is not None else self.tools
        return await self._exchange(list(ordered), tools)

    async def send_streaming(self, text: str) -> AsyncIterator[StreamEvent]:
        """Say `text` and stream the reply; it joins the history when the stream's `Done` arrives."""
        added: list[Message] = [self._user(text)]
        self.messages.extend(added)
        events: list[StreamEvent] = []
        try:
            if self.tool_mode in ("native", "constrained") or not self.tools:
                live = (
                    constrained_stream(self.client, self.messages, self.tools)
                    if self.tool_mode == "constrained" and self.tools
                    else self.client.stream(self.messages, tools=self.tools or None)
                )
                async for event in live:
                    if isinstance(event, Done):
                        self._record(event.response)
                    yield event
                return
            # text/auto: the reply's text must be complete before calls can be parsed out of it
            response, self.tool_mode = await ask_model(
                self.client, self.messages, self.tools, self.tool_mode, events.append
            )
        except BaseException:
            self._rollback(added)
            raise
        self._record(response)
        for event in events:
            yield event
        yield Done(response)

    # sync twins

    def send_sync(self, text: str) -> str:
        """`send` for sync code."""
        return self.client.run_sync(self.send(text))

    def send_with_tools_sync(self, text: str, tools: Sequence[ToolLike]) -> Response:
        """`send_with_tools` for sync code."""
        return self.client.run_sync(self.send_with_tools(text, tools))

    def send_tool_results_sync(self, results: Sequence[ToolResult]) -> Response:
        """`send_tool_results` for sync code."""
        return self.client.run_sync(self.send_tool_results(results))

    def send_streaming_sync(self, text: str) -> Iterator[StreamEvent]:
        """`send_streaming` as a plain iterator."""
        return self.client.iterate_sync(self.send_streaming(text))

    # internals

    def _user(self, text: str) -> UserMessage:
        if self.pending_calls:
            ids = ", ".join(repr(c.id) for c in self.pending_calls)
            raise ValueError(
                f"The model is waiting for results of tool call(s) {ids}; "
                "answer them with send_tool_results() before sending more text."
            )
        return UserMessage(content=text)

    def _check_results(self, results: Sequence[ToolResult]) -> list[ToolResult]:
        """Return `results` in the order of the calls, or raise before anything is sent."""
        pending = {c.id: c for c in self.pending_calls}
        if not pending:
            raise ValueError("No tool calls are pending; use send() or send_with_tools() to start a turn.")
        given = [r.tool_call_id for r in results]
        unknown = [i for i in given if i not in pending]
        repeated = sorted({i for i in given if given.count(i) > 1})
        missing = [i for i in pending if i not in given]
        if unknown or repeated or missing:
            problems = [
                f"{label}: {', '.join(map(repr, ids))}"
                for label, ids in (("missing", missing), ("unknown", unknown), ("repeated", repeated))
                if ids
            ]
            raise ValueError(
                f"Tool results must answer each pending call exactly once ({'; '.join(problems)}); "
                f"pending calls are {', '.join(map(repr, pending))}."
            )
        by_id = {r.tool_call_id: r for r in results}
        return [by_id[i] for i in pending]

    async def _exchange(self, added: list[Message], tools: Sequence[ToolLike]) -> Response:
        self.messages.extend(added)
        try:
            response, self.tool_mode = await ask_model(self.client, self.messages, tools, self.tool_mode)
        except BaseException:
            self._rollback(added)
            raise
        self._record(response)
        return response

    def _record(self, response: Response) -> None:
        self.messages.append(response.message)
        if not response.tool_calls:
            self._turn_tools = None

    def _rollback(self, added: list[Message]) -> None:
        """Undo a failed exchange so the session can be retried as if it never happened."""
        tail = self.messages[-len(added) :]
        if len(tail) == len(added) and all(a is b for a, b in zip(tail, added, strict=True)):
            del self.messages[-len(added) :]
