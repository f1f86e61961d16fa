"""Responses API items both ways: assistant parts to output items and back.

Used by request history (`input`) and whole and streamed replies alike. A `function_call`'s
`call_id` is the neutral `ToolCall.id`; its item `id` lives in metadata, never joined to it.
"""

from __future__ import annotations

import logging
from typing import Any, assert_never

from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.degradations import warn_once
from toolwire.codecs.common.ids import derived_call_id
from toolwire.codecs.common.wire import dumps
from toolwire.types import (
    TextPart,
    ThinkingPart,
    ToolCall,
)

__all__ = [
    "NAME",
    "SUMMARY_SEPARATOR",
    "as_int",
    "as_str",
    "content_text",
    "decode_call",
    "decode_item",
    "decode_message",
    "decode_reasoning",
    "encode_parts",
    "namespaced",
    "reasoning_metadata",
    "reasoning_text",
    "text_metadata",
    "warned",
]

NAME = "openai-responses"
_log = logging.getLogger("toolwire.codecs.openai_responses")
warned: set[str] = set()

# Tables

SUMMARY_SEPARATOR = "\n\n"


# Assistant parts to output items


def _own(metadata: dict[str, Any]) -> dict[str, Any]:
    """The opaque values this codec keeps in a part's metadata (never another codec's)."""
    value = metadata.get(NAME)
    return value if isinstance(value, dict) else {}


def encode_parts(parts: list[TextPart | ThinkingPart | ToolCall], seed: str | None) -> list[dict[str, Any]]:
    """Assistant parts as output items; with a `seed` (rendering a reply) missing ids are derived."""
    items: list[dict[str, Any]] = []
    for part in parts:
        match part:
            case TextPart():
                _append_text(items, part, seed)
            case ThinkingPart():
                items.extend(_encode_thinking(part, seed, len(items)))
            case ToolCall():
                items.append(_encode_call(part, seed, len(items)))
            case _:
                assert_never(part)
    for item in items:
        item.pop("_key", None)
    return items


def _append_text(items: list[dict[str, Any]], part: TextPart, seed: str | None) -> None:
    own = _own(part.metadata)
    content = (
        {"type": "refusal", "refusal": part.text}
        if own.get("refusal")
        else {"type": "output_text", "text": part.text, "annotations": []}
    )
    item_id, phase = own.get("item_id"), own.get("phase")
    if item_id is None and seed is None and not own.get("refusal"):
        # Text with no Responses item id (another provider's, or built by hand) goes as an easy input
        # message: the SDK types an id-less `output_text` message as ResponseOutputMessageParam, whose
        # `id` and `status` are required.
        easy: dict[str, Any] = {"type": "message", "role": "assistant", "content": part.text}
        if isinstance(phase, str):
            easy["phase"] = phase
        items.append(easy)
        return
    last = items[-1] if items else None
    if last is not None and last["type"] == "message" and last.get("_key") == (item_id, phase):
        last["content"].append(content)
        return
    item: dict[str, Any] = {"type": "message", "role": "assistant", "content": [content], "_key": (item_id, phase)}
    if item_id is None and seed is not None:
        item_id = derived_call_id(seed, len(items), "msg_")
    if isinstance(item_id, str):
        # With an id the item is a ResponseOutputMessageParam, whose `status` is required.
        item.update(id=item_id, status="completed")
    if isinstance(phase, str):
        item["phase"] = phase  # gpt-5.3-codex+: "preserve and resend phase" (SDK docstring)
    items.append(item)


def _encode_thinking(part: ThinkingPart, seed: str | None, position: int) -> list[dict[str, Any]]:
    foreign = part.provider != NAME
    if foreign and seed is None:
        return []  # foreign reasoning cannot be replayed to the Responses API
    # Rendering a reply (a test server, a proxy): any reasoning text shows as a summary.
    item_id = part.metadata.get("id")
    if not isinstance(item_id, str):
        if seed is None:
            warn_once(
                _log,
                warned,
                "reasoning-id",
                "openai-responses: dropped a reasoning part with no item id in metadata['id']; only reasoning "
                "decoded from the Responses API can be replayed.",
            )
            return []
        item_id = derived_call_id(seed, position, "rs_")
    item: dict[str, Any] = {"type": "reasoning", "id": item_id, "summary": _summary(part)}
    if part.metadata.get("content"):
        item["content"] = part.metadata["content"]
    if part.signature is not None and not foreign:
        item["encrypted_content"] = part.signature
    return [item]


def _summary(part: ThinkingPart) -> list[dict[str, str]]:
    stored = part.metadata.get("summary")
    if isinstance(stored, list) and SUMMARY_SEPARATOR.join(map(str, stored)) == part.text:
        texts = [str(t) for t in stored]
    else:
        texts = [part.text] if part.text else []
    return [{"type": "summary_text", "text": t} for t in texts]


def _encode_call(call: ToolCall, seed: str | None, position: int) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": dumps(call.arguments),
    }
    namespace = _own(call.metadata).get("namespace")
    if isinstance(namespace, str) and call.name.startswith(prefix := namespaced(namespace, "")):
        item.update(name=call.name.removeprefix(prefix), namespace=namespace)
    item_id = _own(call.metadata).get("item_id")
    if item_id is None and seed is not None:
        item_id = derived_call_id(seed, position, "fc_")
    if isinstance(item_id, str):
        item["id"] = item_id
    return item


# Output items to parts


def as_str(value: Any) -> str | None:
    """`value` if it is a str, else `None`."""
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    """`value` if it is an int (not a bool), else `None`."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def decode_item(item: Any, seed: str, index: int) -> list[TextPart | ThinkingPart | ToolCall]:
    """The assistant parts of one output item; unknown item types give none."""
    if not isinstance(item, dict):
        return []
    match item.get("type"):
        case "reasoning":
            return [decode_reasoning(item)]
        case "message":
            return list(decode_message(item))
        case "function_call":
            return [decode_call(item, seed, index)]
    return []  # hosted-tool items (web_search_call, ...) have no neutral form


def reasoning_text(item: dict[str, Any]) -> str:
    """The visible text of a reasoning item: its summaries joined."""
    return SUMMARY_SEPARATOR.join(_summary_texts(item))


def _summary_texts(item: dict[str, Any]) -> list[str]:
    summary = item.get("summary")
    return [str(s.get("text", "")) for s in summary if isinstance(s, dict)] if isinstance(summary, list) else []


def reasoning_metadata(item: dict[str, Any]) -> dict[str, Any]:
    """What a reasoning item needs to go back as it came (id, encrypted content, summary form)."""
    metadata: dict[str, Any] = {}
    if isinstance(item.get("id"), str):
        metadata["id"] = item["id"]
    texts = _summary_texts(item)
    if len(texts) > 1:
        metadata["summary"] = texts
    if item.get("content"):
        metadata["content"] = item["content"]  # raw reasoning_text (open-weight models), replayed as is
    return metadata


def decode_reasoning(item: dict[str, Any]) -> ThinkingPart:
    """A `reasoning` item as a `ThinkingPart` signed by this codec."""
    return ThinkingPart(
        text=reasoning_text(item),
        signature=as_str(item.get("encrypted_content")),
        provider=NAME,
        metadata=reasoning_metadata(item),
    )


def text_metadata(item: dict[str, Any], refusal: bool) -> dict[str, Any]:
    """What an output `message` needs to go back as it came (item id, phase, refusal flag)."""
    own: dict[str, Any] = {}
    if isinstance(item.get("id"), str):
        own["item_id"] = item["id"]
    if isinstance(item.get("phase"), str):
        own["phase"] = item["phase"]
    if refusal:
        own["refusal"] = True
    return {NAME: own} if own else {}


def content_text(content: Any) -> tuple[str, bool] | None:
    """A message content entry as `(text, is_refusal)`, or `None` if it holds no text."""
    if not isinstance(content, dict):
        return None
    if content.get("type") == "refusal":
        return str(content.get("refusal", "")), True
    if content.get("type") in ("output_text", "input_text"):
        return str(content.get("text", "")), False
    return None


def decode_message(item: dict[str, Any]) -> list[TextPart]:
    """An output `message` item as text parts (a refusal included, flagged)."""
    content = item.get("content")
    if isinstance(content, str):
        return [TextPart(text=content, metadata=text_metadata(item, False))]
    entries = [content_text(c) for c in content] if isinstance(content, list) else []
    return [TextPart(text=e[0], metadata=text_metadata(item, e[1])) for e in entries if e is not None]


def namespaced(namespace: str | None, name: str) -> str:
    """The neutral name of a function in a `namespace` tool: `crm` + `lookup` is `crm__lookup`.

    Function calls name such a function by `name` and `namespace` apart (openai-python
    `ResponseFunctionToolCall.namespace`); other providers know one flat name, and `__` is the
    separator Codex has long used for MCP tools (`mcp__server__tool`).
    """
    return f"{namespace}__{name}" if namespace else name


def decode_call(item: dict[str, Any], seed: str, index: int) -> ToolCall:
    """A `function_call` item as a `ToolCall`: `call_id` is its id, the item id goes to metadata."""
    arguments, metadata = parse_arguments(item.get("arguments"))
    own: dict[str, Any] = {}
    if isinstance(item.get("id"), str):
        own["item_id"] = item["id"]
    namespace = as_str(item.get("namespace"))
    if namespace:
        own["namespace"] = namespace
    if own:
        metadata[NAME] = own
    call_id = as_str(item.get("call_id")) or as_str(item.get("id")) or derived_call_id(seed, index)
    name = namespaced(namespace, str(item.get("name", "")))
    return ToolCall(id=call_id, name=name, arguments=arguments, metadata=metadata)


# Stream decoder


# Rendering replies (test servers, proxies)
