"""`BaseClient`: everything a model client offers, written once over two methods.

A subclass implements `complete_request` and `stream_request` (a whole neutral `Request` in, a
reply or its events out); `complete`, `stream`, their sync twins, `build_request`, sessions and
context managers come from here, so the HTTP `Client`, `toolwire.testing.ScriptedModel`,
`toolwire.copilot.CopilotClient` and a user's own model all meet the one client contract
(`toolwire.contract.ModelClient`). Imports the neutral types, `toolwire.schema` and
`toolwire.session`; no codec, no transport.
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast, overload

from toolwire._definitions import ToolLike, as_definitions
from toolwire.schema import PORTABLE, SchemaSupport
from toolwire.session import Session
from toolwire.toolmodes import (
    ModeState,
    OutputResult,
    OutputStrategy,
    PartialOutput,
    as_output_type,
    choose_strategy,
    complete_output,
    stream_output,
)
from toolwire.types import Message, NamedToolChoice, Request, Response, StreamEvent, ToolChoice, UserMessage

if TYPE_CHECKING:
    from toolwire.textcalls import ToolMode

__all__ = ["BaseClient", "build_request"]

_T = TypeVar("_T")
_STOP = object()


class _Portal:
    """A private event loop in a daemon thread, so sync twins work inside a running loop too.

    One portal per client keeps the client's pooled connections on one loop across calls.
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="toolwire-sync", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("A toolwire sync method was called from its own worker loop; await the async method.")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


async def _anext(iterator: AsyncIterator[_T]) -> _T | object:
    try:
        return await anext(iterator)
    except StopAsyncIteration:
        return _STOP


def _as_messages(messages: str | Sequence[Message]) -> list[Message]:
    return [UserMessage(content=messages)] if isinstance(messages, str) else list(messages)


_CHOICES: dict[str, ToolChoice] = {"auto": "auto", "none": "none", "required": "required"}


def _as_choice(choice: ToolChoice | str | None) -> ToolChoice | None:
    """A str other than auto/none/required names the one tool to force."""
    if choice is None or isinstance(choice, NamedToolChoice):
        return choice
    return _CHOICES.get(choice) or NamedToolChoice(choice)


def build_request(
    model: str,
    messages: str | Sequence[Message],
    *,
    tools: Sequence[ToolLike] | None = None,
    tool_choice: ToolChoice | str | None = None,
    stream: bool = False,
    max_tokens: int | None = None,
    temperature: float | None = None,
    parallel_tool_calls: bool | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Request:
    """The neutral `Request` for a call: a str is one user message, tools may be `Tool`s."""
    return Request(
        model=model,
        messages=_as_messages(messages),
        tools=as_definitions(tools),
        tool_choice=_as_choice(tool_choice),
        parallel_tool_calls=parallel_tool_calls,
        max_tokens=max_tokens,
        temperature=temperature,
        stream=stream,
        extra=dict(extra or {}),
    )


class BaseClient(ABC):
    """The interface every toolwire model client offers: async calls, sync twins, sessions.

    Subclasses implement only `complete_request` and `stream_request` (a whole neutral
    `Request` in, a reply or its events out); `complete`, `stream`, their sync twins and
    `session` are written here once.

    Attributes:
        defaults: Call options (`max_tokens`, `temperature`, ...) every request starts from.
    """

    provider: str
    model: str

    def __init__(self) -> None:
        self.defaults: dict[str, Any] = {}
        self._portal: _Portal | None = None
        self._portal_lock = threading.Lock()
        self._on_close: list[Callable[[], None]] = []

    def close_with(self, release: Callable[[], None]) -> None:
        """Have `release` called (once) when the client closes: what it was built on, such as a local server."""
        self._on_close.append(release)

    @overload
    async def complete(
        self,
        messages: str | Sequence[Message],
        *,
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        parallel_tool_calls: bool | None = None,
        extra: Mapping[str, Any] | None = None,
        output_type: None = None,
        output_strategy: OutputStrategy | None = None,
        output_retries: int = 1,
    ) -> Response: ...

    @overload
    async def complete(
        self,
        messages: str | Sequence[Message],
        *,
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        parallel_tool_calls: bool | None = None,
        extra: Mapping[str, Any] | None = None,
        output_type: type[_T],
        output_strategy: OutputStrategy | None = None,
        output_retries: int = 1,
    ) -> OutputResult[_T]: ...

    async def complete(
        self,
        messages: str | Sequence[Message],
        *,
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        parallel_tool_calls: bool | None = None,
        extra: Mapping[str, Any] | None = None,
        output_type: Any = None,
        output_strategy: OutputStrategy | None = None,
        output_retries: int = 1,
    ) -> Response | OutputResult[Any]:
        """Ask for one reply to `messages`.

        A str is one user message; a `tool_choice` str other than auto/none/required names the
        tool to force. With `output_type` (a Pydantic model, dataclass, TypedDict, scalar, union,
        or a JSON Schema dict) the reply is asked for in `output_strategy` (default: the one
        this client's server does best), validated, and re-asked with the validation errors
        up to `output_retries` times: an `OutputResult` comes back, or `OutputValidationError`
        is raised.
        """
        request = self.build_request(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            max_tokens=max_tokens,
            temperature=temperature,
            parallel_tool_calls=parallel_tool_calls,
            extra=extra,
        )
        if output_type is None:
            return await self.complete_request(request)
        strategy = choose_strategy(self, output_strategy)
        wanted = as_output_type(output_type)
        return await complete_output(
            self, request, ModeState("native"), wanted, strategy=strategy, retries=output_retries
        )

    @overload
    def stream(
        self,
        messages: str | Sequence[Message],
        *,
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        parallel_tool_calls: bool | None = None,
        extra: Mapping[str, Any] | None = None,
        output_type: None = None,
        output_strategy: OutputStrategy | None = None,
        output_retries: int = 1,
    ) -> AsyncIterator[StreamEvent]: ...

    @overload
    def stream(
        self,
        messages: str | Sequence[Message],
        *,
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        parallel_tool_calls: bool | None = None,
        extra: Mapping[str, Any] | None = None,
        output_type: type[_T],
        output_strategy: OutputStrategy | None = None,
        output_retries: int = 1,
    ) -> AsyncIterator[PartialOutput | OutputResult[_T]]: ...

    def stream(
        self,
        messages: str | Sequence[Message],
        *,
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        parallel_tool_calls: bool | None = None,
        extra: Mapping[str, Any] | None = None,
        output_type: Any = None,
        output_strategy: OutputStrategy | None = None,
        output_retries: int = 1,
    ) -> AsyncIterator[StreamEvent] | AsyncIterator[PartialOutput | OutputResult[Any]]:
        """Stream one reply as events; the last event is exactly one `Done`. Arguments as `complete`.

        With `output_type`, `PartialOutput`s come as the answer's JSON arrives (the fields
        complete so far), then one `OutputResult` with the validated value.
        """
        request = self.build_request(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            stream=True,
            max_tokens=max_tokens,
            temperature=temperature,
            parallel_tool_calls=parallel_tool_calls,
            extra=extra,
        )
        if output_type is None:
            return self.stream_request(request)
        strategy = choose_strategy(self, output_strategy)
        wanted = as_output_type(output_type)
        return stream_output(self, request, ModeState("native"), wanted, strategy=strategy, retries=output_retries)

    @property
    def output_strategies(self) -> tuple[OutputStrategy, ...]:
        """How a typed reply can be asked of this model, the default first.

        A model toolwire knows nothing about gets the schema in the prompt by default (`prompted`,
        which works on any model); an HTTP client's codec and server profile say better.
        """
        return ("prompted", "tool", "native", "constrained")

    @property
    def schema_support(self) -> SchemaSupport:
        """What the server's constrained decoding enforces of a JSON Schema (constrained tool mode).

        `PORTABLE` unless the client knows its server (an HTTP client's codec profile says).
        """
        return PORTABLE

    @property
    def preferred_tool_mode(self) -> ToolMode:
        """The tool mode an `Agent` or session takes unless told (`native` unless the client knows its server)."""
        return "native"

    def build_request(
        self,
        messages: str | Sequence[Message],
        *,
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        stream: bool = False,
        **params: Any,
    ) -> Request:
        """The neutral request a call would send (the client's defaults filled in)."""
        merged = self.defaults | {k: v for k, v in params.items() if v is not None}
        return build_request(self.model, messages, tools=tools, tool_choice=tool_choice, stream=stream, **merged)

    @abstractmethod
    async def complete_request(self, request: Request) -> Response:
        """Send a whole neutral `Request` as it is (its `model` included) and return the reply.

        For callers that already hold a whole request, such as the gateway translating one.
        """

    @abstractmethod
    def stream_request(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Stream a whole neutral `Request` as it is; the last event is exactly one `Done`."""

    @overload
    def complete_sync(
        self, messages: str | Sequence[Message], *, output_type: None = None, **kwargs: Any
    ) -> Response: ...

    @overload
    def complete_sync(
        self, messages: str | Sequence[Message], *, output_type: type[_T], **kwargs: Any
    ) -> OutputResult[_T]: ...

    def complete_sync(
        self, messages: str | Sequence[Message], *, output_type: Any = None, **kwargs: Any
    ) -> Response | OutputResult[Any]:
        """`complete` for code without an event loop (also safe inside a running loop's thread).

        A `Response`, or with `output_type=` an `OutputResult`.
        """
        reply: Response | OutputResult[Any] = self.run_sync(self.complete(messages, output_type=output_type, **kwargs))
        return reply

    def stream_sync(self, messages: str | Sequence[Message], **kwargs: Any) -> Iterator[Any]:
        """`stream` as a plain iterator."""
        return self.iterate_sync(self.stream(messages, **kwargs))

    def run_sync(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run a coroutine of this client to completion on the client's worker loop."""
        with self._portal_lock:
            if self._portal is None:
                self._portal = _Portal()
            portal = self._portal
        return portal.run(coro)

    def iterate_sync(self, iterator: AsyncIterator[_T]) -> Iterator[_T]:
        """Drive an async iterator of this client from sync code, closing it when abandoned."""
        try:
            while True:
                item = self.run_sync(_anext(iterator))
                if item is _STOP:
                    return
                yield cast(_T, item)
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                self.run_sync(aclose())

    def session(
        self, system: str | None = None, tools: Sequence[ToolLike] | None = None, tool_mode: ToolMode | None = None
    ) -> Session:
        """Start a stateful conversation (see `toolwire.session.Session`; mode: `preferred_tool_mode`)."""
        return Session(self, system=system, tools=tools, tool_mode=tool_mode or self.preferred_tool_mode)

    async def _aclose_resources(self) -> None:
        """Release what the subclass holds on the running loop (nothing by default)."""
        return None

    async def aclose(self) -> None:
        """Close connections (those of the running loop and of the sync worker)."""
        await self._aclose_resources()
        portal, self._portal = self._portal, None
        if portal is not None:
            await asyncio.to_thread(self._close_portal, portal)
        self._release()

    def close(self) -> None:
        """Close the connections the sync twins opened and stop their worker thread."""
        portal, self._portal = self._portal, None
        if portal is not None:
            self._close_portal(portal)
        self._release()

    def _release(self) -> None:
        releases, self._on_close = self._on_close, []
        for release in releases:
            release()

    def _close_portal(self, portal: _Portal) -> None:
        portal.run(self._aclose_resources())
        portal.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.provider}:{self.model})"
