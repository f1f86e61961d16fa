"""What a run produces: its result, one record per tool call, and the events `run_stream` yields."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from toolwire._serialize import dump_messages
from toolwire.reviewers import ReviewDecision
from toolwire.toolmodes import PartialOutput
from toolwire.types import Message, StreamEvent, ToolCall, ToolResult, Usage

__all__ = [
    "AgentEvent",
    "CallRecord",
    "RunFinished",
    "RunResult",
    "ToolFinished",
    "ToolRejected",
    "ToolStarted",
]


@dataclass(slots=True, kw_only=True)
class CallRecord:
    """One tool call of a run: what was asked, what came back, how long it took, whether it ran.

    `approved` is False when the reviewer rejected the call (it did not run); `review` keeps the
    reviewer's decision for high-risk calls.
    """

    call: ToolCall
    result: ToolResult
    duration_s: float
    approved: bool
    review: ReviewDecision | None = None


@dataclass(slots=True, kw_only=True)
class RunResult:
    """The outcome of `Agent.run`.

    `stop_reason` is one of `end_turn`, `done`, `max_turns`, `max_tokens`, `content_filter`,
    `error`, `cancelled`, `other`. With an `output_type`, `output` is the validated value and
    `text` the answer's JSON as the model wrote it; `output_attempts` holds each reply that did
    not validate, as `(text, errors)`.
    """

    text: str
    messages: list[Message]
    turns: int
    stop_reason: str
    usage: Usage
    calls: list[CallRecord] = field(default_factory=list)
    output: Any = None
    output_attempts: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (the CLI's `run --json`)."""
        return {
            "text": self.text,
            "stop_reason": self.stop_reason,
            "turns": self.turns,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "cache_read_tokens": self.usage.cache_read_tokens,
                "reasoning_tokens": self.usage.reasoning_tokens,
            },
            "calls": [
                {
                    "id": r.call.id,
                    "name": r.call.name,
                    "arguments": r.call.arguments,
                    "result_kind": r.result.kind,
                    "approved": r.approved,
                    "duration_s": round(r.duration_s, 6),
                }
                for r in self.calls
            ],
            "messages": dump_messages(self.messages),
            **({"output": _jsonable(self.output)} if self.output is not None else {}),
        }


def _jsonable(value: Any) -> Any:
    """A typed output as JSON values (a Pydantic model, a dataclass, or JSON already)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


@dataclass(slots=True)
class ToolStarted:
    """A tool call began running."""

    call: ToolCall


@dataclass(slots=True)
class ToolFinished:
    """A tool call finished (successfully or with an `error` result)."""

    call: ToolCall
    result: ToolResult
    duration_s: float


@dataclass(slots=True)
class ToolRejected:
    """The reviewer rejected a call; it did not run."""

    call: ToolCall
    reason: str


@dataclass(slots=True)
class RunFinished:
    """The last event of `run_stream`, carrying the same result `run` returns."""

    result: RunResult


AgentEvent: TypeAlias = StreamEvent | ToolStarted | ToolFinished | ToolRejected | PartialOutput | RunFinished
