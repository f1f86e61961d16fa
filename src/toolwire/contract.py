"""The client contract: what every model client offers, whatever carries its replies.

`toolwire.client.Client` (HTTP), `toolwire.testing.ScriptedModel`, `toolwire.copilot.CopilotClient`
and a user's own model all offer it, by subclassing `toolwire.client.BaseClient`, which writes
everything here but `complete_request` and `stream_request` once. The tool-mode engine
(`toolwire.toolmodes`), sessions, the agent, reviewers and the gateway take a `ModelClient` and
nothing more. Imports only the neutral types and `toolwire.schema`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from toolwire._definitions import ToolLike
from toolwire.schema import SchemaSupport
from toolwire.types import Message, Request, Response, StreamEvent, ToolChoice

__all__ = ["ModelClient"]

_T = TypeVar("_T")


@runtime_checkable
class ModelClient(Protocol):
    """A model to ask: whole requests in, replies or their events out, plus the conveniences over them.

    Attributes:
        provider: Who serves the model (`openai`, `scripted`, `copilot`, ...), for logs and traces.
        model: The model every request built by `build_request` names.
    """

    provider: str
    model: str

    @property
    def schema_support(self) -> SchemaSupport:
        """What the server's constrained decoding enforces of a JSON Schema (constrained tool mode)."""
        ...

    @property
    def output_strategies(self) -> tuple[str, ...]:
        """How a typed reply can be asked of this model (`tool`, `native`, `prompted`, `constrained`), default first."""
        ...

    def build_request(
        self,
        messages: str | Sequence[Message],
        *,
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        stream: bool = False,
        **params: Any,
    ) -> Request:
        """The neutral request a call would send, the client's defaults filled in."""
        ...

    async def complete_request(self, request: Request) -> Response:
        """Send a whole neutral request as it is and return the reply."""
        ...

    def stream_request(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Stream a whole neutral request as it is; the last event is exactly one `Done`."""
        ...

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
    ) -> Response:
        """One reply to `messages` (a str is one user message)."""
        ...

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
    ) -> AsyncIterator[StreamEvent]:
        """One reply as events, ending with exactly one `Done`."""
        ...

    def run_sync(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run a coroutine of this client to completion from sync code."""
        ...

    def iterate_sync(self, iterator: AsyncIterator[_T]) -> Iterator[_T]:
        """Drive an async iterator of this client from sync code."""
        ...
