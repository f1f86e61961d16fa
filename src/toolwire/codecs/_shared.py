"""Helpers every codec uses: argument parsing, ids, JSON text, and the stream accumulator.

Imports only `toolwire.types`, `toolwire.errors` and the standard library (`json_repair`
lazily, on the rare broken-JSON path). Never imports a codec module.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
import uuid
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from toolwire.errors import CodecError
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    Message,
    SystemMessage,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallDelta,
    ToolResult,
)

if TYPE_CHECKING:
    from toolwire.types import Request

__all__ = [
    "StreamAccumulator",
    "collect_degradations",
    "derived_call_id",
    "dumps",
    "error_payload",
    "new_call_id",
    "parse_arguments",
    "read_error_payload",
    "require_dict",
    "results_in_call_order",
    "sanitize_id",
    "sniff_image_type",
    "split_leading_system",
    "stop_list",
    "unique_call_ids",
    "warn_missing_options",
    "warn_once",
]

_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dumps(value: Any) -> str:
    """Compact JSON text with unicode kept readable: what codecs send as JSON strings."""
    return _compact.encode(value)


def split_leading_system(messages: list[Message]) -> tuple[list[str], list[Message]]:
    """The texts of the system messages that open the conversation, and the messages after them.

    For wires with one top-level system prompt (Anthropic `system`, Responses `instructions`)
    that also take system messages later on, in place.
    """
    leading = next((i for i, m in enumerate(messages) if not isinstance(m, SystemMessage)), len(messages))
    return [m.content for m in messages[:leading] if isinstance(m, SystemMessage)], messages[leading:]


def results_in_call_order(messages: list[Message]) -> list[Message]:
    """The conversation with each run of tool results sorted into the order of the calls they answer.

    For wires that pair results with calls by position or by name (Ollama's `tool_name`): results
    given out of order would otherwise be attached to the wrong call. Results that answer no call
    of the turn keep their place after the others.
    """
    out: list[Message] = []
    order: dict[str, int] = {}
    run: list[ToolResult] = []

    def flush() -> None:
        ordered: list[ToolResult] = sorted(run, key=lambda r: order.get(r.tool_call_id, len(order)))
        out.extend(ordered)
        run.clear()

    for message in messages:
        if isinstance(message, ToolResult):
            run.append(message)
            continue
        flush()
        if isinstance(message, AssistantMessage):
            order = {c.id: i for i, c in enumerate(message.tool_calls)}
        out.append(message)
    flush()
    return out


def unique_call_ids(messages: list[Message], wire_id: Callable[[str], str]) -> list[Message]:
    """The conversation with call ids made acceptable (`wire_id`) and unique, results rewritten to match.

    Some servers reuse ids across responses (Bedrock Mantle's `call_0`, PROVIDERS.md bug 15) or
    within one; providers that require unique ids (Anthropic: "tool_use ids must be unique")
    would reject such a history. A repeated id gets a deterministic `_t<message index>` suffix,
    and each result follows the call it answers in its turn. Unchanged messages are reused.
    """
    all_ids = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    unique = set(all_ids)
    if len(unique) == len(all_ids) and all(wire_id(i) == i for i in unique) and _results_known(messages, unique):
        return messages  # the common case: nothing to rewrite
    seen: set[str] = set()
    turn: dict[str, list[str]] = {}
    out: list[Message] = []
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            turn = {}
            parts = [
                _unique_call(p, index, wire_id, seen, turn) if isinstance(p, ToolCall) else p for p in message.parts
            ]
            if any(a is not b for a, b in zip(parts, message.parts, strict=True)):
                message = dataclasses.replace(message, parts=parts)
        elif isinstance(message, ToolResult):
            ids = turn.get(message.tool_call_id)
            new = (ids.pop(0) if len(ids) > 1 else ids[0]) if ids else wire_id(message.tool_call_id)
            if new != message.tool_call_id:
                message = dataclasses.replace(message, tool_call_id=new)
        out.append(message)
    return out


def _results_known(messages: list[Message], ids: set[str]) -> bool:
    return all(m.tool_call_id in ids for m in messages if isinstance(m, ToolResult))


def _unique_call(
    call: ToolCall, index: int, wire_id: Callable[[str], str], seen: set[str], turn: dict[str, list[str]]
) -> ToolCall:
    new = wire_id(call.id)
    if new in seen:
        new = f"{new}_t{index}"
        while new in seen:
            new += "x"
    seen.add(new)
    turn.setdefault(call.id, []).append(new)
    return call if new == call.id else dataclasses.replace(call, id=new)


_IMAGE_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


def sniff_image_type(data: bytes) -> str | None:
    """The media type of PNG, JPEG, GIF or WebP bytes, for wires that require one; else `None`."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _IMAGE_SIGNATURES if data.startswith(magic)), None)


def error_payload(message: str) -> str:
    """How an `error` result travels where the wire has no error flag: `{"error": message}` as JSON."""
    return dumps({"error": message})


def read_error_payload(content: str) -> str | None:
    """The message of content that is exactly an `error_payload`, else `None` (then it is text)."""
    if not content.startswith('{"error":'):
        return None
    try:
        value = json.loads(content)
    except ValueError:
        return None
    error = value.get("error") if isinstance(value, dict) and len(value) == 1 else None
    return error if isinstance(error, str) and error_payload(error) == content else None


MAX_ARGUMENT_DEPTH = 64
"""Deeper argument objects are refused: no tool needs them, and recursion over them can crash."""
MAX_REPAIR_CHARS = 64 * 1024
"""json-repair's cost grows faster than linearly; longer broken arguments are refused, not repaired."""


def parse_arguments(raw: Any, *, repair_cut: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parse a model's tool arguments; return `(arguments, metadata)` and never raise.

    `""`/`None` mean `{}`. Invalid JSON is repaired when possible (`metadata["raw_arguments"]`
    keeps the original); otherwise the arguments are `{}` and `metadata["arguments_error"]`
    says why, so the agent can tell the model instead of calling the tool. Arguments cut off
    before their end (`{"x": 12`) are not repaired either: completing them would guess values
    the model did not send. `repair_cut=True` repairs them anyway, for calls found in free text.
    """
    if isinstance(raw, dict):
        return _bounded(raw, raw)
    if raw is None:
        return {}, {}
    if not isinstance(raw, str):
        return {}, {"raw_arguments": raw, "arguments_error": _not_object(raw)}
    if not raw or raw.isspace():
        return {}, {}
    try:
        value = json.loads(raw)
    except RecursionError:
        return {}, {"raw_arguments": raw, "arguments_error": _too_deep()}
    except json.JSONDecodeError as exc:
        if exc.pos >= len(raw.rstrip()) and not repair_cut:
            return {}, {
                "raw_arguments": raw,
                "arguments_error": f"the arguments were cut off before their end (...{raw[-80:]!r}); "
                "send the whole call again",
            }
        return _repair_arguments(raw)
    if isinstance(value, dict):
        return _bounded(value, raw)
    return {}, {"raw_arguments": raw, "arguments_error": _not_object(value)}


def _bounded(value: dict[str, Any], raw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    if _depth_exceeds(value, MAX_ARGUMENT_DEPTH):
        return {}, {"raw_arguments": raw, "arguments_error": _too_deep()}
    return value, {}


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether containers nest deeper than `limit` (iterative: deep input cannot crash it)."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(current, dict):
            stack.extend((v, depth + 1) for v in current.values() if isinstance(v, dict | list))
        elif isinstance(current, list):
            stack.extend((v, depth + 1) for v in current if isinstance(v, dict | list))
    return False


def _too_deep() -> str:
    return f"the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels; send a flatter JSON object"


def _repair_arguments(raw: str) -> tuple[dict[str, Any], dict[str, Any]]:
    if len(raw) > MAX_REPAIR_CHARS:
        return {}, {
            "raw_arguments": raw,
            "arguments_error": f"the arguments are not valid JSON ({len(raw)} characters, too long to repair): "
            f"{raw[:200]!r}",
        }
    import json_repair  # rare path: keeps import time low

    try:
        value = json_repair.loads(raw)
    except Exception:  # the repairer must never break decoding (RecursionError included)
        value = None
    if (
        isinstance(value, dict)
        and (value or raw.strip().startswith("{"))
        and not _depth_exceeds(value, MAX_ARGUMENT_DEPTH)
    ):
        return value, {"raw_arguments": raw}
    return {}, {
        "raw_arguments": raw,
        "arguments_error": f"the arguments are not valid JSON and could not be repaired: {raw[:200]!r}",
    }


def _not_object(value: Any) -> str:
    return f"the arguments must be a JSON object, got {type(value).__name__}: {str(value)[:200]!r}"


def new_call_id(prefix: str = "call_") -> str:
    """A fresh random id, for calls whose wire format gives none and nothing to derive one from."""
    return prefix + uuid.uuid4().hex[:24]


def derived_call_id(seed: str, position: int, prefix: str = "call_") -> str:
    """A deterministic id for a call at `position` in a reply identified by `seed`.

    Used when the wire has no ids but the reply has an identity (a response id, a timestamp):
    streaming and non-streaming decodes of the same reply then agree, and identical calls in
    one reply still get different ids.
    """
    digest = hashlib.sha256(f"{seed}\x00{position}".encode()).hexdigest()
    return prefix + digest[:24]


_UNSAFE_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def sanitize_id(call_id: str, prefix: str = "call_") -> str:
    """Rewrite an id to `^[a-zA-Z0-9_-]+$`, deterministically and without collisions.

    Safe ids come back unchanged; others get their unsafe characters replaced and a short
    hash of the original appended, so two different ids never map to the same one.
    """
    if call_id and not _UNSAFE_ID_CHARS.search(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:10]
    cleaned = _UNSAFE_ID_CHARS.sub("_", call_id)
    return f"{cleaned}_{digest}" if cleaned else f"{prefix}{digest}"


def require_dict(body: Any, codec: str, what: str = "body") -> dict[str, Any]:
    """Return `body` if it is a JSON object, else raise a `CodecError` naming the codec."""
    if not isinstance(body, dict):
        raise CodecError(f"The {codec} {what} must be a JSON object, got {type(body).__name__}.", provider=codec)
    return body


_DEGRADATIONS: ContextVar[list[str] | None] = ContextVar("toolwire_degradations", default=None)


@contextmanager
def collect_degradations() -> Iterator[list[str]]:
    """Collect the key of every degradation `warn_once` reports inside the block, repeats included.

    The log says it once per process; a proxy also needs it per request (the gateway names
    what it dropped in a response header), so the keys land in the yielded list too.
    """
    found: list[str] = []
    token = _DEGRADATIONS.set(found)
    try:
        yield found
    finally:
        _DEGRADATIONS.reset(token)


def warn_missing_options(
    logger: logging.Logger, seen: set[str], codec: str, request: Request, missing: tuple[str, ...]
) -> None:
    """Say once per option that `codec` has no place for a sampling option the request sets."""
    for option in missing:
        if getattr(request, option) is not None:
            message = f"{codec} has no {option!r} option; toolwire leaves it out of the request."
            warn_once(logger, seen, f"{codec}:{option}", message)


def stop_list(value: Any) -> list[str] | None:
    """Stop sequences as a list (OpenAI also takes one string); `None` for anything else."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def warn_once(logger: logging.Logger, seen: set[str], key: str, message: str) -> None:
    """Log `message` as a warning the first time `key` is seen in `seen` (see `collect_degradations`)."""
    found = _DEGRADATIONS.get()
    if found is not None and key not in found:
        found.append(key)
    if key not in seen:
        seen.add(key)
        logger.warning(message)


class _TextSlot:
    __slots__ = ("chunks", "metadata")

    def __init__(self, metadata: dict[str, Any]) -> None:
        self.chunks: list[str] = []
        self.metadata = metadata


class _ThinkingSlot:
    __slots__ = ("chunks", "metadata", "provider", "redacted", "signature")

    def __init__(self, provider: str | None) -> None:
        self.chunks: list[str] = []
        self.signature: str | None = None
        self.redacted = False
        self.provider = provider
        self.metadata: dict[str, Any] = {}


class _CallSlot:
    __slots__ = ("arguments", "fragments", "id", "index", "metadata", "name")

    def __init__(self, index: int, call_id: str, name: str, metadata: dict[str, Any]) -> None:
        self.index = index
        self.id = call_id
        self.name = name
        self.metadata = metadata
        self.fragments: list[str] = []
        self.arguments: dict[str, Any] | None = None


_Slot = _TextSlot | _ThinkingSlot | _CallSlot
_S = TypeVar("_S", _TextSlot, _ThinkingSlot)


class StreamAccumulator:
    """Collects stream deltas into the ordered parts of one `AssistantMessage`.

    Decoders address parts by a provider key (an OpenAI index, an Anthropic block index, a
    Responses item id). Text and thinking without a key continue the last part of their kind
    when it is the most recent part. `ToolCallDelta.index` is dense over calls only.
    """

    __slots__ = ("_by_key", "_calls", "_parts")

    def __init__(self) -> None:
        self._parts: list[_Slot] = []
        self._by_key: dict[Hashable, _Slot] = {}
        self._calls: list[_CallSlot] = []

    # text and thinking

    def text(self, text: str, key: Hashable = None, metadata: dict[str, Any] | None = None) -> TextDelta:
        """Append reply text; a new key (or a non-text last part) starts a new text part."""
        slot = self._slot(key, _TextSlot)
        if slot is None:
            slot = _TextSlot(metadata if metadata is not None else {})
            self._add(key, slot)
        elif metadata:
            slot.metadata.update(metadata)
        slot.chunks.append(text)
        return TextDelta(text)

    def text_metadata(self, key: Hashable = None) -> dict[str, Any]:
        """The metadata dict of the current text part for `key`, created if needed."""
        slot = self._slot(key, _TextSlot)
        if slot is None:
            slot = _TextSlot({})
            self._add(key, slot)
        return slot.metadata

    def thinking(
        self,
        text: str = "",
        key: Hashable = None,
        *,
        provider: str | None = None,
        signature: str | None = None,
        redacted: bool | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ThinkingDelta | None:
        """Append reasoning text or set its signature; returns a delta when there was text."""
        slot = self._slot(key, _ThinkingSlot)
        if slot is None:
            slot = _ThinkingSlot(provider)
            self._add(key, slot)
        if signature is not None:
            slot.signature = (slot.signature or "") + signature
        if redacted is not None:
            slot.redacted = redacted
        if metadata:
            slot.metadata.update(metadata)
        if text:
            slot.chunks.append(text)
            return ThinkingDelta(text)
        return None

    # tool calls

    def start_call(
        self, key: Hashable, call_id: str, name: str, metadata: dict[str, Any] | None = None
    ) -> ToolCallDelta:
        """Open a new call under `key` (replacing any earlier call on that key)."""
        slot = _CallSlot(len(self._calls), call_id, name, metadata if metadata is not None else {})
        self._calls.append(slot)
        self._parts.append(slot)
        self._by_key[key] = slot
        return ToolCallDelta(slot.index, call_id, name, "")

    def call_arguments(self, key: Hashable, fragment: str) -> ToolCallDelta | None:
        """Append an argument fragment to the call under `key`; `None` if no call has that key."""
        slot = self._by_key.get(key)
        if type(slot) is not _CallSlot:
            return None
        slot.fragments.append(fragment)
        return ToolCallDelta(slot.index, None, None, fragment)

    def set_call_arguments(self, key: Hashable, arguments: dict[str, Any] | str) -> None:
        """Replace the call's arguments with a final value (a `.done` event's full text)."""
        slot = self._by_key.get(key)
        if type(slot) is _CallSlot:
            if isinstance(arguments, str):
                slot.fragments[:] = [arguments]  # in place: decoders may hold the list (see `sink`)
                slot.arguments = None
            else:
                slot.arguments = arguments

    def whole_call(self, call: ToolCall, key: Hashable = None) -> ToolCallDelta:
        """Append a call that arrived complete (Gemini, Ollama)."""
        slot = _CallSlot(len(self._calls), call.id, call.name, call.metadata)
        slot.arguments = call.arguments
        self._calls.append(slot)
        self._parts.append(slot)
        if key is not None:
            self._by_key[key] = slot
        return ToolCallDelta(slot.index, call.id, call.name, dumps(call.arguments))

    def sink(self, key: Hashable) -> tuple[list[str], int] | None:
        """The live chunk list of the text or call part under `key`, and the call's dense index.

        For a decoder's fast path: appending to the list extends the part exactly as
        `text`/`call_arguments` would. The index is -1 for text. `None` when nothing is there.
        """
        slot = self._by_key.get(key)
        if type(slot) is _CallSlot and slot.arguments is None:
            return slot.fragments, slot.index
        if type(slot) is _TextSlot:
            return slot.chunks, -1
        return None

    def call_id(self, key: Hashable) -> str | None:
        """The id of the call under `key`, or `None`."""
        slot = self._by_key.get(key)
        return slot.id if type(slot) is _CallSlot else None

    def call_metadata(self, key: Hashable) -> dict[str, Any] | None:
        """The metadata dict of the call under `key` (mutable), or `None`."""
        slot = self._by_key.get(key)
        return slot.metadata if type(slot) is _CallSlot else None

    @property
    def has_calls(self) -> bool:
        """Whether any tool call has started."""
        return bool(self._calls)

    def message(self, metadata: dict[str, Any] | None = None) -> AssistantMessage:
        """Build the message from everything accumulated so far (does not consume it)."""
        return AssistantMessage(parts=[_build(s) for s in self._parts], metadata=metadata or {})

    # internals

    def _slot(self, key: Hashable, kind: type[_S]) -> _S | None:
        slot = self._by_key.get(key) if key is not None else (self._parts[-1] if self._parts else None)
        if not isinstance(slot, kind):
            return None
        if key is None and any(s is slot for s in self._by_key.values()):
            return None  # a keyed part is continued only through its key
        return slot

    def _add(self, key: Hashable, slot: _Slot) -> None:
        self._parts.append(slot)
        if key is not None:
            self._by_key[key] = slot


def _build(slot: _Slot) -> AssistantPart:
    if type(slot) is _TextSlot:
        return TextPart(text="".join(slot.chunks), metadata=dict(slot.metadata))
    if type(slot) is _ThinkingSlot:
        return ThinkingPart(
            text="".join(slot.chunks),
            signature=slot.signature,
            redacted=slot.redacted,
            provider=slot.provider,
            metadata=dict(slot.metadata),
        )
    assert type(slot) is _CallSlot
    metadata = dict(slot.metadata)
    if slot.arguments is not None:
        arguments = slot.arguments
    else:
        arguments, extra = parse_arguments("".join(slot.fragments))
        metadata.update(extra)
    return ToolCall(id=slot.id, name=slot.name, arguments=arguments, metadata=metadata)
