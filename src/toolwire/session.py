"""The stateful conversation: a history kept for you, one call per turn.

A `Session` wraps any `ModelClient` (an HTTP `Client`, a `CopilotClient`, a
`toolwire.testing.ScriptedModel`, a model of your own). It never runs tools itself — that is
the agent's job — but it checks that tool results answer exactly the calls the model made
before anything is sent. Each turn goes through the tool-mode engine (`toolwire.toolmodes`).
Imports no client, no codec and no httpx2.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from toolwire import toolmodes
from toolwire.contract import ModelClient
from toolwire.toolmodes import (
    ModeState,
    OutputResult,
    OutputStrategy,
    PartialOutput,
    ToolMode,
    as_output_type,
    choose_strategy,
)
from toolwire.types import (
    AssistantMessage,
    Done,
    Message,
    Response,
    StreamEvent,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)

if TYPE_CHECKING:
    from toolwire._definitions import ToolLike

__all__ = ["ChatClient", "Session"]

_T = TypeVar("_T")
Strategy = OutputStrategy

ChatClient = ModelClient
"""The client a session takes: the one client contract (`toolwire.contract.ModelClient`)."""


class Session:
    """A conversation with one model whose history grows with every exchange.

    Args:
        client: The model to talk to.
        system: Instructions placed first in the history.
        tools: Tools offered on every turn (`ToolDefinition`s or `Tool`s).
        tool_mode: `native`, `text`, `auto` or `constrained` (`toolwire.toolmodes`); `auto` turns
            to `text` for good when the server refuses the tools parameter.

    Attributes:
        messages: The whole history, in order (read it; append to it only between turns).
        tools: The tools offered on each turn.
    """

    def __init__(
        self,
        client: ModelClient,
        *,
        system: str | None = None,
        tools: Sequence[ToolLike] | None = None,
        tool_mode: ToolMode = "native",
    ) -> None:
        self.client = client
        self._modes = ModeState(tool_mode)
        self.tools: list[ToolLike] = list(tools or ())
        self.messages: list[Message] = [SystemMessage(content=system)] if system else []
        self._turn_tools: list[ToolLike] | None = None

    def __repr__(self) -> str:
        return f"Session({self.client!r}, messages={len(self.messages)})"

    @property
    def tool_mode(self) -> ToolMode:
        """The tool mode of the next turn."""
        return self._modes.mode

    @tool_mode.setter
    def tool_mode(self, mode: ToolMode) -> None:
        self._modes = ModeState(mode)

    @property
    def pending_calls(self) -> list[ToolCall]:
        """The tool calls of the last reply that still need results (empty when none)."""
        last = self.messages[-1] if self.messages else None
        return last.tool_calls if isinstance(last, AssistantMessage) else []

    @overload
    async def send(
        self, text: str, *, output_type: None = None, output_strategy: Strategy | None = None, output_retries: int = 1
    ) -> str: ...

    @overload
    async def send(
        self, text: str, *, output_type: type[_T], output_strategy: Strategy | None = None, output_retries: int = 1
    ) -> OutputResult[_T]: ...

    async def send(
        self, text: str, *, output_type: Any = None, output_strategy: Strategy | None = None, output_retries: int = 1
    ) -> str | OutputResult[Any]:
        """Say `text`; return the reply's text (the reply, tool calls included, joins the history).

        With `output_type`, the reply is asked for in `output_strategy` (default: the client's),
        validated and re-asked up to `output_retries` times; the `OutputResult` comes back and
        every attempt joins the history (`OutputValidationError` when none validated, and then
        nothing does).
        """
        if output_type is None:
            return (await self._turn([self._user(text)], self.tools)).text
        added: list[Message] = [self._user(text)]
        self.messages.extend(added)
        try:
            request = self.client.build_request(self.messages, tools=self.tools or None)
            strategy = choose_strategy(self.client, output_strategy)
            wanted = as_output_type(output_type)
            result = await toolmodes.complete_output(
                self.client, request, self._modes, wanted, strategy=strategy, retries=output_retries
            )
        except BaseException:
            self._rollback(added)
            raise
        self.messages.extend(result.messages)
        return result

    async def send_typed_streaming(
        self, text: str, output_type: Any, *, output_strategy: Strategy | None = None, output_retries: int = 1
    ) -> AsyncIterator[PartialOutput | OutputResult[Any]]:
        """Say `text` and stream the typed answer: `PartialOutput`s, then the validated `OutputResult`."""
        added: list[Message] = [self._user(text)]
        self.messages.extend(added)
        try:
            request = self.client.build_request(self.messages, tools=self.tools or None, stream=True)
            strategy = choose_strategy(self.client, output_strategy)
            wanted = as_output_type(output_type)
            async for item in toolmodes.stream_output(
                self.client, request, self._modes, wanted, strategy=strategy, retries=output_retries
            ):
                if isinstance(item, OutputResult):
                    self.messages.extend(item.messages)
                yield item
        except BaseException:
            self._rollback(added)
            raise

    async def send_with_tools(self, text: str, tools: Sequence[ToolLike]) -> Response:
        """Say `text` offering `tools` (for this exchange and its tool results); return the reply."""
        self._turn_tools = list(tools)
        return await self._turn([self._user(text)], self._turn_tools)

    async def send_tool_results(self, results: Sequence[ToolResult]) -> Response:
        """Answer every pending call; return the model's next reply.

        Raises:
            ValueError: When `results` miss a pending call, repeat one, or answer an unknown id;
                nothing is sent then.
        """
        ordered = self._check_results(results)
        tools = self._turn_tools if self._turn_tools is not None else self.tools
        return await self._turn(list(ordered), tools)

    async def send_streaming(self, text: str) -> AsyncIterator[StreamEvent]:
        """Say `text` and stream the reply; it joins the history when the stream's `Done` arrives."""
        added: list[Message] = [self._user(text)]
        self.messages.extend(added)
        request = self.client.build_request(self.messages, tools=self.tools or None, stream=True)
        try:
            async for event in toolmodes.stream(self.client, request, self._modes):
                if isinstance(event, Done):
                    self._record(event.response)
                yield event
        except BaseException:
            self._rollback(added)
            raise

    # sync twins

    def send_sync(self, text: str, **output: Any) -> Any:
        """`send` for sync code (`output_type=` and the other output options as `send` takes them)."""
        return self.client.run_sync(self.send(text, **output))

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

    async def _turn(self, added: list[Message], tools: Sequence[ToolLike]) -> Response:
        self.messages.extend(added)
        try:
            request = self.client.build_request(self.messages, tools=tools or None)
            response = await toolmodes.complete(self.client, request, self._modes)
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
