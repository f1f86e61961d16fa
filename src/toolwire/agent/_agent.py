"""The multi-turn agent loop: ask the model, run the tools it asks for, repeat.

Each turn the model answers; no tool calls (or the `done` tool) ends the run; otherwise the
calls run (low-risk together, high-risk one by one after review) and all results go back in
the order the model asked. The agent talks to any `toolwire.contract.ModelClient` through the
tool-mode engine (`toolwire.toolmodes`); it never imports a codec or httpx2.

`tool_choice` (`auto`, `none`, `required` or a tool's name) is sent with the tools. A forcing
choice (`required`, a name) applies to the first turn only unless `tool_choice_turns="every"`:
forced on every turn, a model could never answer, so later turns send `auto` (which some
servers, llama-cpp-python's among them, need before they put the tools in the prompt at all).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolwire import telemetry, toolmodes
from toolwire.agent._execute import STOP_GRACE_SECONDS, AgentTool, Cancelled, TurnExecutor, race_signal
from toolwire.agent._records import AgentEvent, CallRecord, RunFinished, RunResult
from toolwire.agent._state import RUN_STATE, RunState
from toolwire.cache import CACHE, ToolOutputCache, cache_tools, trim_history
from toolwire.contract import ModelClient
from toolwire.reviewers import Reviewer
from toolwire.toolmodes import (
    ModeState,
    OutputReading,
    OutputStrategy,
    OutputType,
    PartialOutput,
    PartialReader,
    ToolMode,
    answer_messages,
    as_output_type,
    choose_strategy,
    give_up,
    output_sent,
    read_output,
)
from toolwire.tools import DEFAULT_TOOL_TIMEOUT, ToolContext
from toolwire.types import (
    AssistantMessage,
    Done,
    Message,
    NamedToolChoice,
    Response,
    StopReason,
    SystemMessage,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    Usage,
    UserMessage,
)

__all__ = ["Agent", "ModelClient", "PartialOutput", "ToolChoiceTurns"]

logger = logging.getLogger("toolwire.agent")

_STOP_NAMES = {
    StopReason.END_TURN: "end_turn",
    StopReason.TOOL_USE: "end_turn",
    StopReason.MAX_TOKENS: "max_tokens",
    StopReason.CONTENT_FILTER: "content_filter",
    StopReason.ERROR: "error",
    StopReason.OTHER: "other",
}


ToolChoiceTurns = Literal["first", "every"]
"""Which turns an agent's `tool_choice` applies to; later turns send `auto`."""

_PLAIN_CHOICES: dict[str, ToolChoice] = {"auto": "auto", "none": "none", "required": "required"}


@dataclass(slots=True)
class _Run:
    messages: list[Message]
    emit: Callable[[AgentEvent], None]
    stream: bool
    turns: int = 0
    tool_turns: int = 0
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=0, output_tokens=0))
    calls: list[CallRecord] = field(default_factory=list)
    final_text: str | None = None
    output: Any = None
    output_attempts: list[tuple[str, str]] = field(default_factory=list)


def _run_to_end(run: Coroutine[Any, Any, RunResult]) -> RunResult:
    """`asyncio.run`, less its last wait: a tool left running because it swallows cancellation.

    `asyncio.run` cancels what is left on the loop and waits for it, forever for such a tool (the
    run had already reported it and moved on). Here what is left gets `STOP_GRACE_SECONDS` to end
    and is then abandoned with the loop.
    """
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(run)
    finally:
        try:
            left = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in left:
                task.cancel()
            if left:
                loop.run_until_complete(asyncio.wait(left, timeout=STOP_GRACE_SECONDS))
            for task in left:  # reported when the run left it behind: not again as "destroyed but pending"
                task._log_destroy_pending = False  # type: ignore[attr-defined]
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


class Agent:
    """A multi-turn tool-using agent over one client.

    Args:
        client: The model (any `toolwire.contract.ModelClient`).
        tools: The tools the model may call (`toolwire.tools.Tool` objects).
        system: A system prompt, put first in every run's conversation.
        max_tool_turns: How many turns of tool calls a run may make before it stops with `max_turns`.
        reviewer: Approves high-risk calls. `None` (the default) runs every call of a tool whose
            risk its author left undeclared (the caller chose the tools), and refuses to start
            with a tool declared `risk="high"` (the standard `exec`, `write`, `edit`; an MCP tool
            not marked read-only): pass `ConsoleReviewer()` to ask a person, or `AutoApprove()`
            to run them unreviewed.
        tool_mode: `native` (API tool calling), `text` (tools in the prompt, calls parsed from
            text), `auto` (native, falling back to text parsing and to text mode when the
            server rejects the `tools` parameter), or `constrained` (the server decodes the
            reply under a JSON Schema built from the tools; `toolwire.constrained`). Default:
            the client's `preferred_tool_mode`, `native` unless its server profile names
            another (`llamacpp`: `constrained`).
        output_budget_chars: When set, old tool outputs beyond this many characters are trimmed
            from the history into a cache the model can read back through two cache tools.
        context: The `ToolContext` whose deps, overrides, logger, clock and cancel signal every
            call gets (a fresh per-call child each time).
        tool_timeout: Seconds a tool call may run before it is stopped and answered with an
            `error` result, for tools that set no `timeout` of their own; `None`: no limit.
        tool_choice: What the model may do with the tools: `auto` (call them or answer), `none`
            (answer), `required` (call at least one) or a tool's name (call that one); `None`
            sends no choice (the provider's default). Not sent in text mode.
        tool_choice_turns: `first` (the default for `required` and a name) forces the choice on
            the first turn of each run and sends `auto` after it, so the model can answer once it has the
            results; `every` (the default for `auto` and `none`) sends it on every turn — with
            `required`, pair it with a `done` tool or the run ends only at `max_tool_turns`.
        output_type: The type of the run's answer (a Pydantic model, dataclass, TypedDict, scalar,
            union, or a JSON Schema dict): `RunResult.output` is the validated value.
        output_strategy: How the answer is asked for: `tool`, `native`, `prompted` or
            `constrained` (`toolwire.toolmodes`); default: what the client's server does best.
        output_retries: How many times an answer that does not validate is sent back with its
            errors before the run raises `OutputValidationError`.
    """

    def __init__(
        self,
        client: ModelClient,
        tools: Sequence[AgentTool] = (),
        *,
        system: str | None = None,
        max_tool_turns: int = 10,
        reviewer: Reviewer | None = None,
        tool_mode: ToolMode | None = None,
        output_budget_chars: int | None = None,
        context: ToolContext | None = None,
        tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT,
        tool_choice: ToolChoice | str | None = None,
        tool_choice_turns: ToolChoiceTurns | None = None,
        output_type: Any = None,
        output_strategy: OutputStrategy | None = None,
        output_retries: int = 1,
    ) -> None:
        # A client that knows its server names the mode that works there (llama-server: constrained).
        preferred: ToolMode = getattr(client, "preferred_tool_mode", "native")
        self._modes = ModeState(tool_mode or preferred)
        if not isinstance(output_retries, int) or output_retries < 0:
            raise ValueError(f"output_retries must be an int >= 0, got {output_retries!r}.")
        self.output_type: OutputType | None = as_output_type(output_type) if output_type is not None else None
        self.output_strategy: OutputStrategy = (
            choose_strategy(client, output_strategy) if output_type is not None else output_strategy or "prompted"
        )
        self.output_retries = output_retries
        if not isinstance(max_tool_turns, int) or max_tool_turns < 0:
            raise ValueError(f"max_tool_turns must be an int >= 0, got {max_tool_turns!r}.")
        if output_budget_chars is not None and output_budget_chars < 1:
            raise ValueError(f"output_budget_chars must be positive or None, got {output_budget_chars!r}.")
        self.client = client
        self.system = system
        self.max_tool_turns = max_tool_turns
        self.reviewer = reviewer
        self.output_budget_chars = output_budget_chars
        if tool_timeout is not None and not tool_timeout > 0:
            raise ValueError(f"tool_timeout must be a positive number of seconds or None, got {tool_timeout!r}.")
        self.tool_timeout = tool_timeout
        self.context = context if context is not None else ToolContext()
        self.tools: dict[str, AgentTool] = {}
        extra = list(cache_tools()) if output_budget_chars is not None else []
        for tool in [*tools, *extra]:
            if tool.name in self.tools:
                if tool in extra:
                    continue
                raise ValueError(f"Two tools are named {tool.name!r}; tool names must be unique.")
            self.tools[tool.name] = tool
        if reviewer is None:
            _refuse_declared_high_risk(self.tools.values())
        self.tool_choice = self._checked_choice(tool_choice)
        if tool_choice_turns not in (None, "first", "every"):
            raise ValueError(f"tool_choice_turns must be 'first', 'every' or None, got {tool_choice_turns!r}.")
        forcing = self.tool_choice is not None and self.tool_choice not in ("auto", "none")
        self.tool_choice_turns: ToolChoiceTurns = tool_choice_turns or ("first" if forcing else "every")

    def _checked_choice(self, choice: ToolChoice | str | None) -> ToolChoice | None:
        if choice is None:
            return None
        if isinstance(choice, str) and choice in _PLAIN_CHOICES:
            return _PLAIN_CHOICES[choice]
        name = choice.name if isinstance(choice, NamedToolChoice) else choice
        if not isinstance(name, str) or name not in self.tools:
            raise ValueError(
                f"tool_choice must be auto, none, required or the name of one of the agent's tools "
                f"({', '.join(self.tools) or 'it has none'}), got {choice!r}."
            )
        return NamedToolChoice(name)

    def _choice_for_turn(self, turn: int) -> ToolChoice | None:
        """The choice sent on turn `turn` (0 is the first of a run)."""
        if self.tool_choice is None or turn == 0 or self.tool_choice_turns == "every":
            return self.tool_choice
        return "auto"

    @property
    def tool_mode(self) -> ToolMode:
        """The tool mode of the next turn (`auto` turns to `text` when the server refuses tools)."""
        return self._modes.mode

    @tool_mode.setter
    def tool_mode(self, mode: ToolMode) -> None:
        self._modes = ModeState(mode)

    @property
    def definitions(self) -> list[ToolDefinition]:
        """The tool definitions sent to the model."""
        return [t.definition for t in self.tools.values()]

    async def run(self, prompt: str | Sequence[Message]) -> RunResult:
        """Run until the model answers without tools, calls `done`, or a limit is reached."""
        return await self._run(prompt, lambda _: None, stream=False)

    def run_sync(self, prompt: str | Sequence[Message]) -> RunResult:
        """`run` for code without an event loop (or inside one's thread: runs in a worker thread)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return _run_to_end(self.run(prompt))
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(_run_to_end, self.run(prompt)).result()

    async def run_stream(self, prompt: str | Sequence[Message]) -> AsyncIterator[AgentEvent]:
        """Run, yielding model deltas, tool events and finally `RunFinished(result)`."""
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        task = asyncio.create_task(self._run(prompt, queue.put_nowait, stream=True))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            yield RunFinished(task.result())
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _run(
        self, prompt: str | Sequence[Message], emit: Callable[[AgentEvent], None], stream: bool
    ) -> RunResult:
        run = _Run(messages=self._start(prompt), emit=emit, stream=stream)
        cache = ToolOutputCache()
        executor = TurnExecutor(self.tools, self.reviewer, self._context_for(cache), emit, self.tool_timeout)
        with telemetry.span("invoke_agent", self._span_attributes()) as span:
            try:
                stop = await self._loop(run, executor, cache)
            except Cancelled as cancelled:
                _record(run, cancelled.records)
                stop = "cancelled"
            result = self._result(run, stop)
            if span is not None:
                span.set_attributes(_run_attributes(result))
        return result

    def _span_attributes(self) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "toolwire.agent.max_tool_turns": self.max_tool_turns,
            "toolwire.agent.tool_mode": self.tool_mode,
        }
        attributes["gen_ai.provider.name"] = telemetry.provider_name(self.client.provider)
        attributes["gen_ai.request.model"] = self.client.model
        return attributes

    async def _loop(self, run: _Run, executor: TurnExecutor, cache: ToolOutputCache) -> str:
        while True:
            response = await race_signal(self._ask(run), self.context.cancel)
            calls = response.tool_calls
            reading = read_output(response, self.output_type, self.output_strategy) if self.output_type else None
            if reading is not None:
                if self._take_output(run, response, reading):
                    return "end_turn"
                continue
            if not calls:
                return _STOP_NAMES[response.stop_reason]
            if response.stop_reason == StopReason.MAX_TOKENS:
                _answer_unrun(run, response, "Not run: the reply was cut off at the token limit.")
                return "max_tokens"
            if run.tool_turns >= self.max_tool_turns:
                _answer_unrun(
                    run, response, f"Not run: the agent reached its limit of {self.max_tool_turns} tool turns."
                )
                return "max_turns"
            run.tool_turns += 1
            records = await executor.run(calls)
            _record(run, records)
            done = next((r for r in records if r.call.name == "done" and r.approved and r.result.kind != "error"), None)
            if done is not None:
                summary = done.call.arguments.get("summary")
                run.final_text = summary if isinstance(summary, str) and summary else response.text
                return "done"
            if self.output_budget_chars is not None:
                trim_history(run.messages, cache, self.output_budget_chars)

    def _take_output(self, run: _Run, response: Response, reading: OutputReading) -> bool:
        """Whether the answer validated; one that did not is sent back, or the run gives up."""
        run.messages.extend(answer_messages(response, reading))
        if reading.errors is None:
            run.output, run.final_text = reading.value, reading.text
            return True
        run.output_attempts.append((reading.text, reading.errors))
        if len(run.output_attempts) > self.output_retries:
            assert self.output_type is not None  # only an agent with an output type reads answers
            raise give_up(self.output_type, self.output_strategy, run.output_attempts)
        return False

    async def _ask(self, run: _Run) -> Response:
        response = await self._model_turn(run)
        run.turns += 1
        run.usage = run.usage.plus(response.usage)
        run.messages.append(response.message)
        return response

    async def _model_turn(self, run: _Run) -> Response:
        request = self.client.build_request(
            run.messages, tools=self.definitions, tool_choice=self._choice_for_turn(run.turns), stream=run.stream
        )
        if self.output_type is not None:
            request = output_sent(request, self.output_type, self.output_strategy, self.client.schema_support)
        if not run.stream:
            return await toolmodes.complete(self.client, request, self._modes)
        response: Response | None = None
        partials = PartialReader(self.output_type, self.output_strategy) if self.output_type else None
        async for event in toolmodes.stream(self.client, request, self._modes):
            run.emit(event)
            for partial in partials.feed(event) if partials is not None else ():
                run.emit(partial)
            if isinstance(event, Done):
                response = event.response
        assert response is not None  # the engine's streams end with Done or raise
        # Let a `run_stream` consumer show the turn before its tools run: a reviewer writes to
        # the terminal too, and a stream that ends without suspending would let it go first.
        await asyncio.sleep(0)
        return response

    def _start(self, prompt: str | Sequence[Message]) -> list[Message]:
        messages: list[Message] = [UserMessage(content=prompt)] if isinstance(prompt, str) else list(prompt)
        if self.system and not (messages and isinstance(messages[0], SystemMessage)):
            messages.insert(0, SystemMessage(content=self.system))
        return messages

    def _context_for(self, cache: ToolOutputCache) -> ToolContext:
        base = self.context
        deps = {**base.deps, CACHE.id: cache, RUN_STATE.id: RunState()}
        return ToolContext(deps=deps, overrides=base.overrides, logger=base.logger, now=base.now, cancel=base.cancel)

    def _result(self, run: _Run, stop: str) -> RunResult:
        text = run.final_text
        if text is None:
            last = next((m for m in reversed(run.messages) if isinstance(m, AssistantMessage)), None)
            text = last.text if last is not None else ""
        return RunResult(
            text=text,
            messages=run.messages,
            turns=run.turns,
            stop_reason=stop,
            usage=run.usage,
            calls=run.calls,
            output=run.output,
            output_attempts=run.output_attempts,
        )


def _record(run: _Run, records: Sequence[CallRecord]) -> None:
    run.calls.extend(records)
    run.messages.extend(r.result for r in records)


def _answer_unrun(run: _Run, response: Response, message: str) -> None:
    """Answer calls that will not run, so the history stays valid for a next run."""
    run.messages.extend(ToolResult.error(call, message) for call in response.tool_calls)


def _run_attributes(result: RunResult) -> dict[str, Any]:
    return {
        "toolwire.agent.turns": result.turns,
        "toolwire.agent.stop_reason": result.stop_reason,
        "toolwire.agent.tool_calls": len(result.calls),
        **telemetry.usage_attributes(result.usage),
    }


def _refuse_declared_high_risk(tools: Iterable[AgentTool]) -> None:
    """No reviewer and a tool declared high risk: the caller must say who approves its calls.

    A tool that is not a `toolwire.tools.Tool` (an MCP tool, a class of the user's) counts as
    declared: its risk came from somewhere other than a default.
    """
    high = [tool.name for tool in tools if tool.risk == "high" and getattr(tool, "risk_declared", True)]
    if high:
        raise ValueError(
            f"Tools {high!r} are declared risk='high' and the agent has no reviewer: pass "
            "reviewer=ConsoleReviewer() to have a person approve each call, or reviewer=AutoApprove() "
            "to run them unreviewed (toolwire.reviewers)."
        )
