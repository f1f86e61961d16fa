"""Gemini replies: a `GenerateContentResponse` read whole, read chunk by chunk, or rendered.

Targets the Gemini API (`v1beta` `generateContent` and `streamGenerateContent?alt=sse`) and
Vertex AI (same body). A streamed chunk is itself a whole `GenerateContentResponse`, so the
non-streaming decode is the stream decoder fed one chunk: both give the same `Response` by
construction. Vertex AI with `toolConfig.functionCallingConfig.streamFunctionCallArguments`
sends a call's arguments as `functionCall.partialArgs` pieces addressed by JSON Path; they are
assembled here (`_PartialArguments`). Imports only `toolwire.types`, `toolwire.errors` and
`toolwire.codecs._shared`.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, assert_never

from toolwire.codecs._shared import (
    StreamAccumulator,
    derived_call_id,
    dumps,
    new_call_id,
    parse_arguments,
    require_dict,
)
from toolwire.errors import ProviderError
from toolwire.types import (
    AssistantPart,
    Response,
    StopReason,
    StreamEvent,
    TextPart,
    ThinkingPart,
    ToolCall,
    Usage,
)

__all__ = ["NAME", "GeminiStreamDecoder", "decode_response", "encode_response"]

NAME = "gemini"

# Tables

_FINISH_REASONS: dict[str, StopReason] = {
    "MAX_TOKENS": StopReason.MAX_TOKENS,
    "SAFETY": StopReason.CONTENT_FILTER,
    "RECITATION": StopReason.CONTENT_FILTER,
    "BLOCKLIST": StopReason.CONTENT_FILTER,
    "PROHIBITED_CONTENT": StopReason.CONTENT_FILTER,
    "SPII": StopReason.CONTENT_FILTER,
    "IMAGE_SAFETY": StopReason.CONTENT_FILTER,
    "IMAGE_PROHIBITED_CONTENT": StopReason.CONTENT_FILTER,
    "IMAGE_RECITATION": StopReason.CONTENT_FILTER,
    "MODEL_ARMOR": StopReason.CONTENT_FILTER,
    # Model-side failures: never relabelled as a normal end (litellm #21744, pydantic-ai #1687).
    "MALFORMED_FUNCTION_CALL": StopReason.ERROR,
    "UNEXPECTED_TOOL_CALL": StopReason.ERROR,
    "TOO_MANY_TOOL_CALLS": StopReason.ERROR,
    "MISSING_THOUGHT_SIGNATURE": StopReason.ERROR,
    "MALFORMED_RESPONSE": StopReason.ERROR,
}
# For rendering a neutral reply that carries no raw value.
_WIRE_FINISH_REASONS: dict[StopReason, str] = {
    StopReason.END_TURN: "STOP",
    StopReason.TOOL_USE: "STOP",
    StopReason.MAX_TOKENS: "MAX_TOKENS",
    StopReason.CONTENT_FILTER: "SAFETY",
    StopReason.ERROR: "MALFORMED_FUNCTION_CALL",
    StopReason.OTHER: "OTHER",
}


def stop_reason(raw: str | None, has_calls: bool) -> StopReason:
    """Gemini ends tool turns with `STOP` too, so calls are recognised by their presence."""
    if raw is None or raw == "STOP":
        if has_calls:
            return StopReason.TOOL_USE
        return StopReason.END_TURN if raw == "STOP" else StopReason.OTHER
    return _FINISH_REASONS.get(raw, StopReason.OTHER)


# Encode (rendering replies, for the loopback server)


def encode_response(response: Response) -> dict[str, Any]:
    """Render a reply as one non-streaming `GenerateContentResponse`."""
    parts = [_encode_reply_part(part, _wire_call_id(response, part)) for part in response.message.parts]
    candidate: dict[str, Any] = {
        "content": {"role": "model", "parts": [p for p in parts if p is not None]},
        "finishReason": _wire_finish_reason(response),
        "index": 0,
    }
    if not candidate["content"]["parts"]:
        candidate["content"] = {}  # what Gemini sends for an empty turn (e.g. MALFORMED_FUNCTION_CALL)
    body: dict[str, Any] = {"candidates": [candidate]}
    return _with_reply_meta(body, response, usage=True)


def _encode_reply_part(part: AssistantPart, call_id: str | None) -> dict[str, Any] | None:
    match part:
        case TextPart():
            wire: dict[str, Any] = {"text": part.text}
            signature = gemini_metadata(part.metadata).get("thought_signature")
        case ThinkingPart():
            wire = {"text": part.text, "thought": True}
            signature = part.signature if part.provider in (NAME, None) else None
        case ToolCall():
            call: dict[str, Any] = {"name": part.name, "args": part.arguments}
            if call_id is not None:
                call["id"] = call_id
            wire = {"functionCall": call}
            signature = gemini_metadata(part.metadata).get("thought_signature")
        case _:
            assert_never(part)
    if isinstance(signature, str):
        wire["thoughtSignature"] = signature
    return wire


def _wire_call_id(response: Response, part: AssistantPart) -> str | None:
    """The `functionCall.id` to render: Gemini's own, or ours unless it is derivable on decode."""
    if not isinstance(part, ToolCall):
        return None
    issued = gemini_metadata(part.metadata).get("id")
    if isinstance(issued, str):
        return issued
    position = next(i for i, c in enumerate(response.tool_calls) if c is part)
    if response.id and part.id == derived_call_id(response.id, position):
        return None
    return part.id


def _wire_finish_reason(response: Response) -> str:
    return response.raw_stop_reason or _WIRE_FINISH_REASONS[response.stop_reason]


def _with_reply_meta(body: dict[str, Any], response: Response, *, usage: bool = False) -> dict[str, Any]:
    if usage and response.usage is not None:
        body["usageMetadata"] = _encode_usage(response.usage)
    if response.model is not None:
        body["modelVersion"] = response.model
    if response.id is not None:
        body["responseId"] = response.id
    return body


def _encode_usage(usage: Usage) -> dict[str, Any]:
    wire: dict[str, Any] = {}
    if usage.input_tokens is not None:
        wire["promptTokenCount"] = usage.input_tokens
    if usage.output_tokens is not None:
        wire["candidatesTokenCount"] = max(0, usage.output_tokens - (usage.reasoning_tokens or 0))
    if usage.reasoning_tokens is not None:
        wire["thoughtsTokenCount"] = usage.reasoning_tokens
    if usage.cache_read_tokens is not None:
        wire["cachedContentTokenCount"] = usage.cache_read_tokens
    if usage.input_tokens is not None and usage.output_tokens is not None:
        wire["totalTokenCount"] = usage.input_tokens + usage.output_tokens
    return wire


# Decode


def gemini_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The Gemini-owned values in a part's metadata (never another codec's)."""
    value = metadata.get(NAME)
    return value if isinstance(value, dict) else {}


def call_metadata(call_id: Any, signature: Any) -> dict[str, Any]:
    """`metadata["gemini"]` for a call: the id Gemini issued and the part's thoughtSignature."""
    own: dict[str, Any] = {}
    if isinstance(call_id, str) and call_id:
        own["id"] = call_id
    if isinstance(signature, str):
        own["thought_signature"] = signature
    return {NAME: own} if own else {}


def decode_response(body: Any) -> Response:
    """Read a non-streaming body: the stream decoder fed it as its only chunk."""
    decoder = GeminiStreamDecoder()
    decoder.feed(require_dict(body, NAME, "response body"))
    return decoder.finish()


def provider_error(body: dict[str, Any]) -> ProviderError:
    """The `ProviderError` for a `{"error": {code, message, status}}` payload."""
    error = body.get("error")
    details = error if isinstance(error, dict) else {}
    message = details.get("message") if isinstance(details.get("message"), str) else str(error)
    code = details.get("code")
    return ProviderError(
        f"Gemini returned an error payload: {message!r}; see `body` for its status and details.",
        provider=NAME,
        status=code if isinstance(code, int) else None,
        body=body,
    )


def _decode_usage(usage: dict[str, Any]) -> Usage:
    def count(key: str) -> int | None:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    candidates, thoughts = count("candidatesTokenCount"), count("thoughtsTokenCount")
    # SPEC: output_tokens counts everything generated, reasoning included (candidates + thoughts).
    output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    return Usage(
        input_tokens=count("promptTokenCount"),
        output_tokens=output,
        cache_read_tokens=count("cachedContentTokenCount"),
        reasoning_tokens=thoughts,
    )


def _first_candidate(body: dict[str, Any]) -> dict[str, Any] | None:
    """Only the first candidate is read (`candidateCount` > 1 is not modelled)."""
    candidates = body.get("candidates")
    if not isinstance(candidates, list):
        return None
    for candidate in candidates:
        if isinstance(candidate, dict) and candidate.get("index", 0) == 0:
            return candidate
    return None


# Stream decoder


@dataclass(slots=True)
class _OpenPart:
    """The text or thought part later chunks continue, until a signature closes it."""

    key: Hashable
    thought: bool
    signed: bool = False


@dataclass(slots=True)
class _StreamedCall:
    key: Hashable
    arguments: _PartialArguments


class GeminiStreamDecoder:
    """Reads `streamGenerateContent` chunks; the client emits `Done(finish())` at the stream's end.

    Text and thought pieces continue the open part of their kind until a piece carries a
    `thoughtSignature`: the signature attaches to that part and closes it, so a signed part is
    never merged with what follows (PROVIDERS §2.4). Calls arrive whole, except Vertex AI's
    `partialArgs` pieces, which are assembled by JSON Path.
    """

    def __init__(self) -> None:
        self._acc = StreamAccumulator()
        self._open: _OpenPart | None = None
        self._streamed: _StreamedCall | None = None
        self._parts = 0
        self._calls = 0
        self._finish: str | None = None
        self._block: str | None = None
        self._usage: dict[str, Any] | None = None
        self._model: str | None = None
        self._id: str | None = None

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Take one chunk (a whole `GenerateContentResponse`); raise `ProviderError` on an error payload."""
        body = require_dict(event, NAME, "stream chunk")
        if "error" in body:
            raise provider_error(body)
        self._read_meta(body)
        candidate = _first_candidate(body)
        if candidate is None:
            return []
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        events: list[StreamEvent] = []
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict):
                events.extend(self._part(part))
        if isinstance(candidate.get("finishReason"), str):
            self._finish = candidate["finishReason"]
            if self._streamed is not None:  # the candidate is complete even if a call's closing marker never came
                events.extend(self._close_call())
        return events

    def finish(self) -> Response:
        """The reply so far; a `partialArgs` call whose closing marker never came keeps its arguments."""
        if self._streamed is not None:
            self._acc.set_call_arguments(self._streamed.key, copy.deepcopy(self._streamed.arguments.value))
        raw = self._finish or self._block
        if self._finish is None and self._block is not None:
            reason = StopReason.CONTENT_FILTER  # the prompt itself was blocked (promptFeedback)
        else:
            reason = stop_reason(self._finish, self._acc.has_calls)
        return Response(
            message=self._acc.message(),
            stop_reason=reason,
            raw_stop_reason=raw,
            usage=_decode_usage(self._usage) if self._usage is not None else None,
            model=self._model,
            id=self._id,
        )

    def _read_meta(self, body: dict[str, Any]) -> None:
        if isinstance(body.get("usageMetadata"), dict):
            self._usage = body["usageMetadata"]  # every chunk may carry it; the last one is complete
        if isinstance(body.get("modelVersion"), str):
            self._model = body["modelVersion"]
        if isinstance(body.get("responseId"), str):
            self._id = body["responseId"]
        feedback = body.get("promptFeedback")
        if isinstance(feedback, dict) and isinstance(feedback.get("blockReason"), str):
            self._block = feedback["blockReason"]

    def _part(self, part: dict[str, Any]) -> list[StreamEvent]:
        signature = part.get("thoughtSignature") if isinstance(part.get("thoughtSignature"), str) else None
        if isinstance(part.get("functionCall"), dict):
            self._open = None
            return self._function_call(part["functionCall"], signature)
        text = part.get("text")
        if isinstance(text, str) or signature is not None:
            return self._text(text if isinstance(text, str) else "", part.get("thought") is True, signature)
        self._open = None  # a part toolwire does not model (inlineData, executableCode, ...) sits between
        return []

    def _text(self, text: str, thought: bool, signature: str | None) -> list[StreamEvent]:
        if not text and signature is None:
            return []
        open_ = self._open
        if open_ is None or open_.thought != thought or open_.signed:
            open_ = self._open = _OpenPart(key=("part", self._parts), thought=thought)
            self._parts += 1
        events: list[StreamEvent] = []
        if thought:
            delta = self._acc.thinking(text, open_.key, provider=NAME, signature=signature)
            events.extend([delta] if delta is not None else [])
        else:
            events.extend([self._acc.text(text, open_.key)] if text else [])
            if signature is not None:
                self._acc.text_metadata(open_.key)[NAME] = {"thought_signature": signature}
        open_.signed = signature is not None
        return events

    def _next_call_id(self, wire_id: Any) -> str:
        position, self._calls = self._calls, self._calls + 1
        if isinstance(wire_id, str) and wire_id:
            return wire_id
        # Derived from responseId so the streamed and the non-streamed decode agree.
        return derived_call_id(self._id, position) if self._id else new_call_id()

    def _function_call(self, call: dict[str, Any], signature: str | None) -> list[StreamEvent]:
        name = call.get("name")
        if self._streamed is not None and not name:
            return self._continue_call(call)
        events = self._close_call() if self._streamed is not None else []
        if not isinstance(name, str) or not name:
            return events  # a stray terminal marker with no call open
        call_id = self._next_call_id(call.get("id"))
        metadata = call_metadata(call.get("id"), signature)
        if call.get("willContinue") is True or "partialArgs" in call:
            key = ("call", self._calls)
            self._streamed = _StreamedCall(key=key, arguments=_PartialArguments())
            events.append(self._acc.start_call(key, call_id, name, metadata))
            return events + self._continue_call(call)
        arguments, problems = parse_arguments(call.get("args"))  # no-arg calls may omit `args`
        events.append(
            self._acc.whole_call(ToolCall(id=call_id, name=name, arguments=arguments, metadata=metadata | problems))
        )
        return events

    def _continue_call(self, call: dict[str, Any]) -> list[StreamEvent]:
        streamed = self._streamed
        assert streamed is not None
        pieces = call.get("partialArgs")
        for piece in pieces if isinstance(pieces, list) else []:
            if isinstance(piece, dict):
                streamed.arguments.apply(piece)
        events: list[StreamEvent] = []
        fragment = streamed.arguments.fragment()
        delta = self._acc.call_arguments(streamed.key, fragment) if fragment else None
        events.extend([delta] if delta is not None else [])
        if call.get("willContinue") is not True:
            events.extend(self._close_call())
        return events

    def _close_call(self) -> list[StreamEvent]:
        streamed = self._streamed
        assert streamed is not None
        self._streamed = None
        closing = streamed.arguments.closing()
        delta = self._acc.call_arguments(streamed.key, closing) if closing else None
        self._acc.set_call_arguments(streamed.key, copy.deepcopy(streamed.arguments.value))
        return [delta] if delta is not None else []


# Vertex AI partialArgs: {jsonPath, stringValue|numberValue|boolValue|nullValue, willContinue}

_PATH_SEGMENT = re.compile(r"""\.([^.\[\]'"]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]""")
_Path = tuple[str | int, ...]


def parse_json_path(path: Any) -> _Path | None:
    """`$.a.b[0]['c d']` → `("a", "b", 0, "c d")`; `None` for what is not such a path."""
    if not isinstance(path, str) or not path.startswith("$"):
        return None
    segments: list[str | int] = []
    position = 1
    while position < len(path):
        match = _PATH_SEGMENT.match(path, position)
        if match is None:
            return None
        name, index, single, double = match.groups()
        if index is not None:
            segments.append(int(index))
        else:
            quoted = single if single is not None else double
            segments.append(name if quoted is None else re.sub(r"\\(.)", r"\1", quoted))
        position = match.end()
    return tuple(segments) or None


class _PartialArguments:
    """Builds a call's arguments from `partialArgs` pieces, and the JSON text streamed so far.

    The text given out is always a prefix of `dumps(value)`: pieces arrive in document order,
    so the last-written leaf is the last entry of every open container and the text so far is
    the full text minus those containers' closing brackets (and the quote of an open string).
    """

    __slots__ = ("_diverged", "_last", "_string_open", "emitted", "value")

    def __init__(self) -> None:
        self.value: dict[str, Any] = {}
        self.emitted = ""
        self._last: _Path | None = None
        self._string_open = False
        self._diverged = False

    def apply(self, piece: dict[str, Any]) -> None:
        path = parse_json_path(piece.get("jsonPath"))
        if path is None:
            return
        if isinstance(piece.get("stringValue"), str):
            text = piece["stringValue"]
            previous = _get(self.value, path) if self._string_open and path == self._last else None
            _set(self.value, path, previous + text if isinstance(previous, str) else text)
            self._string_open = piece.get("willContinue") is True
        elif "numberValue" in piece or "boolValue" in piece or "nullValue" in piece:
            value = piece.get("numberValue", piece.get("boolValue"))  # nullValue ("NULL_VALUE") → None
            _set(self.value, path, value)
            self._string_open = False
        else:
            return
        self._last = path

    def fragment(self) -> str:
        """The JSON text added since the last call (empty once the pieces left document order)."""
        if self._last is None or self._diverged:
            return ""
        text = dumps(self.value)
        if not _is_last_leaf(self.value, self._last):
            self._diverged = True
            return ""
        prefix = text[: len(text) - len(self._last) - (1 if self._string_open else 0)]
        return self._advance(prefix)

    def closing(self) -> str:
        """The rest of the JSON text once the call is complete."""
        return "" if self._diverged else self._advance(dumps(self.value))

    def _advance(self, prefix: str) -> str:
        if not prefix.startswith(self.emitted):
            self._diverged = True
            return ""
        fragment, self.emitted = prefix[len(self.emitted) :], prefix
        return fragment


def _get(root: Any, path: _Path) -> Any:
    node = root
    for segment in path:
        if isinstance(segment, int) and isinstance(node, list) and segment < len(node):
            node = node[segment]
        elif isinstance(segment, str) and isinstance(node, dict) and segment in node:
            node = node[segment]
        else:
            return None
    return node


def _set(root: dict[str, Any], path: _Path, value: Any) -> None:
    node: Any = root
    for segment, following in itertools.pairwise(path):
        child = _child(node, segment)
        wanted = list if isinstance(following, int) else dict
        if not isinstance(child, wanted):
            child = wanted()
            _put(node, segment, child)
        node = child
    _put(node, path[-1], value)


def _child(node: Any, segment: str | int) -> Any:
    if isinstance(node, list) and isinstance(segment, int):
        return node[segment] if segment < len(node) else None
    return node.get(segment) if isinstance(node, dict) else None


def _put(node: Any, segment: str | int, value: Any) -> None:
    if isinstance(node, list) and isinstance(segment, int):
        node.extend([None] * (segment + 1 - len(node)))  # a skipped index becomes null
        node[segment] = value
    elif isinstance(node, dict):
        node[str(segment)] = value


def _is_last_leaf(root: Any, path: _Path) -> bool:
    node = root
    for segment in path:
        if isinstance(node, dict):
            if not node or next(reversed(node)) != segment:
                return False
        elif not isinstance(node, list) or segment != len(node) - 1:
            return False
        node = node[segment]
    return True
