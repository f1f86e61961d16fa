"""The stream accumulator: provider deltas in, one ordered `AssistantMessage` out.

Every stream decoder feeds it text, thinking and call fragments keyed by index; it copes with
the index quirks of docs/wire-formats.md (a new id on a used index starts a new call).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypeVar

from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.wire import dumps
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallDelta,
)

__all__ = ["StreamAccumulator"]


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

    def plain(self) -> bool:
        """Whether every part so far is text or a call with no metadata: nothing a relay would carry along.

        A relay packing provider context into call ids (the gateway) asks this before building the
        reply so far, which costs a parse of every earlier call's arguments.
        """
        return all(type(slot) is not _ThinkingSlot and not slot.metadata for slot in self._parts)

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
