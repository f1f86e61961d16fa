"""The neutral format: tool definitions, calls, results, messages, responses, stream events.

Plain data with no I/O and no provider knowledge; codecs translate it to and from each
wire format. This module imports only the standard library.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypeAlias

__all__ = [
    "AssistantMessage",
    "Done",
    "ImagePart",
    "Message",
    "NamedToolChoice",
    "Request",
    "Response",
    "ResponseFormat",
    "ResultKind",
    "StopReason",
    "StreamEvent",
    "SystemMessage",
    "TextDelta",
    "TextPart",
    "ThinkingDelta",
    "ThinkingPart",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "ToolDefinition",
    "ToolResult",
    "Usage",
    "UserMessage",
]

_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


@dataclass(slots=True, kw_only=True)
class ToolDefinition:
    """A tool as the model sees it: a name, a description and a JSON Schema for its arguments.

    `parameters` is the JSON Schema of an object; `None` means the tool takes no arguments.
    `strict` asks providers that support it to enforce the schema exactly.
    """

    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _TOOL_NAME.fullmatch(self.name):
            raise ValueError(
                f"Tool name {self.name!r} is invalid: use 1-64 characters from a-z, A-Z, 0-9, '_' "
                "and '-' (the rule every provider accepts)."
            )
        if self.parameters is not None and not isinstance(self.parameters, dict):
            raise ValueError(
                f"Tool {self.name!r}: parameters must be a JSON Schema object (a dict) or None, "
                f"got {type(self.parameters).__name__}."
            )


@dataclass(slots=True, frozen=True)
class NamedToolChoice:
    """Force the model to call this one tool."""

    name: str


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | NamedToolChoice


@dataclass(slots=True, kw_only=True)
class TextPart:
    """Plain text; `metadata` keeps provider-opaque values such as a Gemini thoughtSignature."""

    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class ImagePart:
    """An image given inline (`data`, raw bytes) or by `url` — exactly one of the two."""

    data: bytes | None = None
    url: str | None = None
    media_type: str | None = None

    def __post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise ValueError("ImagePart needs exactly one of data (bytes) or url (str).")


@dataclass(slots=True, kw_only=True)
class ThinkingPart:
    """A reasoning block, replayed unchanged to the provider that produced it.

    `signature` holds the provider's opaque token (Anthropic signature or redacted data,
    Gemini thoughtSignature, Responses encrypted_content). `provider` names the codec that
    produced it, so other providers never receive it. `metadata` keeps other
    provider-opaque values (a Responses reasoning item id, the field name a server used).
    """

    text: str
    signature: str | None = None
    redacted: bool = False
    provider: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class ToolCall:
    """A call the model asked for; `arguments` is always a parsed object, never a JSON string.

    `metadata` carries context that must go back next turn: provider-opaque values under the
    codec's name (`metadata["gemini"]["thought_signature"]`), toolwire's own under plain keys
    (`raw_arguments`, `arguments_error` when the model's arguments could not be parsed).
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


ResultKind: TypeAlias = Literal["text", "data", "error", "multimodal"]
_RESULT_KINDS = ("text", "data", "error", "multimodal")


@dataclass(slots=True, kw_only=True)
class ToolResult:
    """The outcome of one tool call, sent back to the model.

    Kinds: `text` (a str shown as is), `data` (any JSON value, serialized by the codec),
    `error` (a str telling the model what went wrong), `multimodal` (a list of
    `TextPart`/`ImagePart`).
    """

    tool_call_id: str
    name: str
    kind: ResultKind
    value: Any
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in _RESULT_KINDS:
            raise ValueError(f"ToolResult kind {self.kind!r} is not one of {', '.join(_RESULT_KINDS)}.")
        if self.kind in ("text", "error") and not isinstance(self.value, str):
            raise ValueError(f"A {self.kind!r} ToolResult needs a str value, got {type(self.value).__name__}.")
        if self.kind == "multimodal" and not (
            isinstance(self.value, list) and all(isinstance(p, TextPart | ImagePart) for p in self.value)
        ):
            raise ValueError("A 'multimodal' ToolResult needs a list of TextPart and ImagePart values.")

    @classmethod
    def text(cls, call: ToolCall, text: str) -> ToolResult:
        """A plain-text result for `call`."""
        return cls(tool_call_id=call.id, name=call.name, kind="text", value=text)

    @classmethod
    def data(cls, call: ToolCall, value: Any) -> ToolResult:
        """A structured (JSON-able) result for `call`."""
        return cls(tool_call_id=call.id, name=call.name, kind="data", value=value)

    @classmethod
    def error(cls, call: ToolCall, message: str) -> ToolResult:
        """A failure of `call`, explained so the model can correct itself."""
        return cls(tool_call_id=call.id, name=call.name, kind="error", value=message)

    @classmethod
    def multimodal(cls, call: ToolCall, parts: Sequence[TextPart | ImagePart]) -> ToolResult:
        """A result of text and images for `call`."""
        return cls(tool_call_id=call.id, name=call.name, kind="multimodal", value=list(parts))


@dataclass(slots=True, kw_only=True)
class SystemMessage:
    """Instructions for the model; codecs put them where each provider wants them."""

    content: str


@dataclass(slots=True, kw_only=True)
class UserMessage:
    """What the person said: text, or a list of text and image parts."""

    content: str | list[TextPart | ImagePart]


AssistantPart: TypeAlias = TextPart | ThinkingPart | ToolCall


@dataclass(slots=True, kw_only=True)
class AssistantMessage:
    """What the model said, its parts in the order it produced them."""

    parts: list[AssistantPart] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The text parts joined."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls, in order."""
        return [p for p in self.parts if isinstance(p, ToolCall)]


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResult


@dataclass(slots=True, kw_only=True)
class ResponseFormat:
    """The reply must be JSON: any JSON object (`schema` None), or one that matches `schema`.

    `name` and `strict` are what OpenAI asks of a schema; providers without them ignore them.
    """

    schema: dict[str, Any] | None = None
    name: str | None = None
    strict: bool | None = None


@dataclass(slots=True, kw_only=True)
class Request:
    """Everything needed to ask a model for one reply; `extra` is merged into the wire body last.

    `extra` holds provider options toolwire does not model. `extra_codec` names the codec they
    came from (set by `decode_request`): another codec leaves them out, since one provider's keys
    are noise or an error to another. The common sampling options (`top_p`, `stop`, `seed`,
    `user`) are fields, so they reach every provider that has them (each in its own spelling); one
    that lacks an option leaves it out with a warning.
    """

    model: str
    messages: list[Message]
    tools: list[ToolDefinition] = field(default_factory=list)
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    seed: int | None = None
    user: str | None = None
    response_format: ResponseFormat | None = None
    stream: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    extra_codec: str | None = None


@dataclass(slots=True, kw_only=True)
class Usage:
    """Token counts; `output_tokens` includes reasoning, `reasoning_tokens` is its share."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_write_tokens: int | None = None

    def plus(self, other: Usage | None) -> Usage:
        """These counts and `other`'s summed: two requests paid for one reply, or a run's turns.

        A count neither side reported stays None.
        """
        if other is None:
            return dataclasses.replace(self)
        return Usage(**{f.name: _sum(getattr(self, f.name), getattr(other, f.name)) for f in dataclasses.fields(self)})


class StopReason(StrEnum):
    """Why the model stopped, in neutral terms; `Response.raw_stop_reason` keeps the wire value."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    CONTENT_FILTER = "content_filter"
    ERROR = "error"
    OTHER = "other"


@dataclass(slots=True, kw_only=True)
class Response:
    """One model reply."""

    message: AssistantMessage
    stop_reason: StopReason
    raw_stop_reason: str | None = None
    usage: Usage | None = None
    model: str | None = None
    id: str | None = None

    @property
    def text(self) -> str:
        """The reply's text."""
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The reply's tool calls, in order."""
        return self.message.tool_calls


@dataclass(slots=True)
class TextDelta:
    """A piece of reply text."""

    text: str


@dataclass(slots=True)
class ThinkingDelta:
    """A piece of reasoning text."""

    text: str


@dataclass(slots=True)
class ToolCallDelta:
    """A piece of a tool call; `index` counts tool calls only (0 = the reply's first call).

    `id` and `name` are set on a call's first delta and `None` afterwards.
    """

    index: int
    id: str | None
    name: str | None
    arguments_delta: str


@dataclass(slots=True)
class Done:
    """The end of a stream, with the reply the non-streaming call would have returned."""

    response: Response


StreamEvent: TypeAlias = TextDelta | ThinkingDelta | ToolCallDelta | Done


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)
