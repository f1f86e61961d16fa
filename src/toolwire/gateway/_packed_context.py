"""Stateless carriage of provider context through clients whose protocol has no field for it.

A Gemini `thoughtSignature`, an Anthropic thinking signature or a Responses reasoning item
must go back to the provider that issued it on the next turn, but an Anthropic or OpenAI
client has nowhere to keep another provider's tokens. The gateway keeps no conversation
state (any worker may serve the next turn), so the context travels with the client: packed
into something that client's protocol echoes back unchanged, and unpacked (and removed)
when the next request comes in.

Carriers, one per client protocol:

- `anthropic`: a `redacted_thinking` block whose `data` is the packed context, after the
  calls. Anthropic clients must return thinking blocks unchanged in the next request (the
  API rejects a tool-use turn whose thinking was edited), and they show nothing for a
  redacted one. Only on a turn with calls, as with the id carriers: a block after the final
  text would become the answer of clients that take the last block's text (Claude Code's
  `-p` prints nothing then), and no provider requires context back from a turn without
  calls (Gemini validates signatures on calls only), so there it is dropped and named.
- `openai`, `openai-responses`: the tool call id (`<id>.twctx1.<packed>`). The id is the one
  field these clients must echo (every tool result names it). LiteLLM also smuggles Gemini
  signatures in ids, and it breaks because it leaves them there: the long ids reach other
  providers (OpenAI caps ids at 40 characters, Anthropic allows only `[a-zA-Z0-9_-]`) and its
  separator collides with ids that contain it. Here the id is restored to the original
  before anything is forwarded, and the packed part is base64url, so no separator clash.
  A reply without calls has no id: its context (a signature on plain text) is dropped and
  named in `x-toolwire-dropped`.
- `gemini`: the `thoughtSignature` of the first call (of the first text part in a reply
  without calls), which Gemini clients return with the part; as standard base64 of
  `twctx1.` + JSON, since google-genai holds signatures as bytes.
- `ollama`, `bedrock`: none (Ollama's messages carry no opaque field; Bedrock's `toolUseId`
  is capped at 64 characters and its reasoning blocks are signed by Bedrock); the context is
  dropped and named.

The packed form is `twctx1.` + base64url(JSON) of: `c` call id → that call's foreign
metadata, `x` text-part index → foreign text metadata, `k` [part index, signed foreign
thinking]. Imports only the neutral types and the standard library.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from toolwire.codecs import CODEC_NAMES
from toolwire.codecs.common.wire import dumps
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    Request,
    Response,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
)

__all__ = [
    "CARRIERS",
    "MARK",
    "SIGNATURE_MARK",
    "has_context",
    "pack_id",
    "pack_response",
    "pack_stream_reply",
    "packed",
    "unpack_request",
]

MARK = "twctx1."
SIGNATURE_MARK = base64.b64encode(MARK.encode()).decode()[:8]  # how a packed thoughtSignature starts
_ID_MARK = "." + MARK
CARRIERS = {"anthropic": "thinking", "openai": "id", "openai-responses": "id", "gemini": "signature"}


# what is foreign


def _foreign(metadata: dict[str, Any], client: str) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if k in CODEC_NAMES and k != client}


def _carried_thinking(part: AssistantPart, client: str) -> bool:
    return isinstance(part, ThinkingPart) and bool(part.signature) and part.provider not in (None, client)


def _context(message: AssistantMessage, client: str, calls: Iterable[ToolCall]) -> dict[str, Any]:
    """The foreign context of `message`: of the given calls, and of its text and thinking."""
    context: dict[str, Any] = {}
    found = {c.id: meta for c in calls if (meta := _foreign(c.metadata, client))}
    if found:
        context["c"] = found
    texts = [p for p in message.parts if isinstance(p, TextPart)]
    text_meta = {str(n): meta for n, p in enumerate(texts) if (meta := _foreign(p.metadata, client))}
    if text_meta:
        context["x"] = text_meta
    thinking = [
        [n, {"text": p.text, "signature": p.signature, "redacted": p.redacted, "provider": p.provider}]
        for n, p in enumerate(message.parts)
        if isinstance(p, ThinkingPart) and _carried_thinking(p, client)
    ]
    if thinking:
        context["k"] = thinking
    return context


def packed(context: dict[str, Any]) -> str:
    """The carrier text for a context."""
    return MARK + base64.urlsafe_b64encode(dumps(context).encode()).decode().rstrip("=")


def packed_signature(context: dict[str, Any]) -> str:
    """The carrier as a Gemini `thoughtSignature`: standard base64 (the SDK decodes it to bytes)."""
    return base64.b64encode(MARK.encode() + dumps(context).encode()).decode()


def _unpacked(text: str) -> dict[str, Any] | None:
    try:
        if text.startswith(MARK):
            raw = text[len(MARK) :]
            data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        elif text.startswith(SIGNATURE_MARK):
            data = base64.b64decode(text)[len(MARK) :]
        else:
            return None
        value = json.loads(data)
    except (binascii.Error, ValueError):
        return None
    return value if isinstance(value, dict) else None


def has_context(message: AssistantMessage, client: str) -> bool:
    """Whether a reply holds context the client's protocol cannot carry by itself."""
    return bool(_context(message, client, message.tool_calls))


# packing a reply


def _visible(parts: list[AssistantPart], client: str) -> list[AssistantPart]:
    """Foreign signed thinking stays readable, without the signature the client cannot hold."""
    out: list[AssistantPart] = []
    for part in parts:
        if isinstance(part, ThinkingPart) and _carried_thinking(part, client):
            if part.text:
                out.append(ThinkingPart(text=part.text, signature=None, redacted=False, provider=None))
        else:
            out.append(part)
    return out


def pack_id(call: ToolCall, message: AssistantMessage, client: str, first: bool) -> str:
    """The id `call` gets in an `openai`/`openai-responses` reply: its own, plus packed context.

    The first call also carries the message's text and thinking context.
    """
    context = _context(message, client, [call])
    if not first:
        context = {k: v for k, v in context.items() if k == "c"}
    return call.id + _ID_MARK + packed(context)[len(MARK) :] if context else call.id


def pack_response(response: Response, client: str) -> tuple[Response, list[str]]:
    """The reply with its foreign context packed into the client's carrier; and what was dropped."""
    message = response.message
    context = _context(message, client, message.tool_calls)
    if not context:
        return response, []
    carrier = CARRIERS.get(client)
    parts = _visible(list(message.parts), client)
    dropped: list[str] = []
    if carrier == "thinking" and message.tool_calls:
        parts.append(ThinkingPart(text="", signature=packed(context), redacted=True, provider=client))
    elif carrier == "id" and message.tool_calls:
        ids = {c.id: pack_id(c, message, client, n == 0) for n, c in enumerate(message.tool_calls)}
        parts = [replace(p, id=ids[p.id]) if isinstance(p, ToolCall) else p for p in parts]
    elif carrier == "signature" and (slot := _signature_slot(parts)) is not None:
        parts[slot] = _with_signature(parts[slot], client, packed_signature(context))
    else:
        dropped = sorted({f"context:{provider}" for provider in _providers(context)})
    new = AssistantMessage(parts=parts, metadata=message.metadata)
    return replace(response, message=new), dropped


def pack_stream_reply(response: Response, client: str, ids: dict[str, str]) -> tuple[Response, str | None, list[str]]:
    """The end of a stream: the reply for the client's encoder, a token to add, what was dropped.

    `ids` are the packed ids the calls already streamed with (`pack_id`); the token is the
    `redacted_thinking` data for an Anthropic client, to go out as one more content block.
    """
    carrier = CARRIERS.get(client)
    if carrier == "signature" or carrier is None:
        packed_response, lost = pack_response(response, client)
        return packed_response, None, lost
    context = _context(response.message, client, response.message.tool_calls)
    if not context:
        return response, None, []
    parts = _visible(list(response.message.parts), client)
    token: str | None = None
    dropped: list[str] = []
    if not response.message.tool_calls:
        dropped = sorted({f"context:{provider}" for provider in _providers(context)})
    elif carrier == "thinking":
        token = packed(context)
    else:
        parts = [replace(p, id=ids.get(p.id, p.id)) if isinstance(p, ToolCall) else p for p in parts]
    message = AssistantMessage(parts=parts, metadata=response.message.metadata)
    return replace(response, message=message), token, dropped


def _providers(context: dict[str, Any]) -> set[str]:
    names = {k for meta in (*context.get("c", {}).values(), *context.get("x", {}).values()) for k in meta}
    return names | {t[1]["provider"] for t in context.get("k", [])}


def _signature_slot(parts: list[AssistantPart]) -> int | None:
    """The first call, else the first text: where Gemini itself signs, and what clients keep.

    Gemini CLI sends back the signatures of `functionCall` parts only (the ones the API
    checks); a signature on the text before a call was lost with everything it carried.
    """
    calls = (n for n, p in enumerate(parts) if isinstance(p, ToolCall))
    return next(calls, next((n for n, p in enumerate(parts) if isinstance(p, TextPart)), None))


def _with_signature(part: AssistantPart, client: str, token: str) -> AssistantPart:
    assert isinstance(part, ToolCall | TextPart)
    own = dict(part.metadata.get(client) or {})
    own["thought_signature"] = token
    return replace(part, metadata=part.metadata | {client: own})


# unpacking a request


def unpack_request(request: Request, client: str) -> bool:
    """Restore packed context in `request` (in place) and remove its carriers; whether any was found."""
    renamed: dict[str, str] = {}
    found = False
    for n, message in enumerate(request.messages):
        if isinstance(message, AssistantMessage):
            restored = _unpack_message(message, client, renamed)
            if restored is not None:
                request.messages[n] = restored
                found = True
    if renamed:
        request.messages = [
            replace(m, tool_call_id=renamed[m.tool_call_id])
            if isinstance(m, ToolResult) and m.tool_call_id in renamed
            else m
            for m in request.messages
        ]
    return found


def _unpack_message(message: AssistantMessage, client: str, renamed: dict[str, str]) -> AssistantMessage | None:
    parts: list[AssistantPart] = []
    context: dict[str, Any] = {}
    for part in message.parts:
        token = _token_of(part, client)
        found = _unpacked(token) if token is not None else None
        if found is None:
            parts.append(part)
            continue
        _merge(context, found)
        if isinstance(part, ToolCall) and _ID_MARK in part.id:
            original = part.id.split(_ID_MARK, 1)[0]
            renamed[part.id] = original
            parts.append(replace(part, id=original))
        elif isinstance(part, ToolCall | TextPart):
            parts.append(replace(part, metadata=_without_signature(part.metadata, client)))
    if not context:
        return None
    return AssistantMessage(parts=_restore(parts, context), metadata=message.metadata)


def _token_of(part: AssistantPart, client: str) -> str | None:
    if isinstance(part, ThinkingPart) and part.redacted and part.signature and part.signature.startswith(MARK):
        return part.signature
    if isinstance(part, ToolCall) and _ID_MARK in part.id:
        return MARK + part.id.split(_ID_MARK, 1)[1]
    if isinstance(part, ToolCall | TextPart):
        signature = (part.metadata.get(client) or {}).get("thought_signature")
        if isinstance(signature, str) and signature.startswith(SIGNATURE_MARK):
            return signature
    return None


def _without_signature(metadata: dict[str, Any], client: str) -> dict[str, Any]:
    own = {k: v for k, v in (metadata.get(client) or {}).items() if k != "thought_signature"}
    rest = {k: v for k, v in metadata.items() if k != client}
    return rest | ({client: own} if own else {})


def _merge(context: dict[str, Any], found: dict[str, Any]) -> None:
    for key in ("c", "x"):
        if isinstance(found.get(key), dict):
            context.setdefault(key, {}).update(found[key])
    if isinstance(found.get("k"), list):
        context.setdefault("k", []).extend(found["k"])


def _restore(parts: list[AssistantPart], context: dict[str, Any]) -> list[AssistantPart]:
    calls, texts = context.get("c", {}), context.get("x", {})
    out: list[AssistantPart] = []
    text_index = 0
    for part in parts:
        if isinstance(part, ToolCall) and isinstance(calls.get(part.id), dict):
            part = replace(part, metadata=part.metadata | calls[part.id])
        elif isinstance(part, TextPart):
            meta = texts.get(str(text_index))
            text_index += 1
            if isinstance(meta, dict):
                part = replace(part, metadata=part.metadata | meta)
        elif isinstance(part, ThinkingPart) and not part.signature:
            continue  # the readable copy of carried thinking; the signed original comes back below
        out.append(part)
    for position, fields in sorted(context.get("k", []), key=lambda t: t[0]):
        thinking = ThinkingPart(
            text=str(fields.get("text") or ""),
            signature=fields.get("signature"),
            redacted=bool(fields.get("redacted")),
            provider=fields.get("provider"),
        )
        out.insert(min(int(position), len(out)), thinking)
    return out
