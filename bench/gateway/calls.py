"""The tool calls in a reply as a client would assemble them, to count corrupted calls.

For OpenAI Chat Completions and Anthropic Messages replies, whole or streamed (SSE): argument
fragments are joined per call index (OpenAI) or content block (Anthropic) and parsed, as the
official SDKs do. Standard library only; run on replies after they were timed, never while.
"""

from __future__ import annotations

import json
from typing import Any

Calls = list[tuple[str, Any]]


def calls_in(protocol: str, stream: bool, body: bytes) -> Calls | None:
    """`[(name, arguments), ...]` in order, or `None` when the reply cannot be read."""
    try:
        if not stream:
            reply = json.loads(body)
            if protocol == "openai":
                found = reply["choices"][0]["message"]["tool_calls"]
                return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in found]
            return [(b["name"], b["input"]) for b in reply["content"] if b["type"] == "tool_use"]
        events = [json.loads(line[6:]) for line in body.split(b"\n") if line.startswith(b"data: {")]
        return _openai_stream(events) if protocol == "openai" else _anthropic_stream(events)
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _openai_stream(events: list[dict[str, Any]]) -> Calls:
    calls: dict[int, list[str]] = {}
    for event in events:
        for choice in event.get("choices") or []:
            for call in choice.get("delta", {}).get("tool_calls") or []:
                function = call.get("function") or {}
                slot = calls.setdefault(call["index"], ["", ""])
                slot[0] += function.get("name") or ""
                slot[1] += function.get("arguments") or ""
    return [(name, json.loads(arguments)) for name, arguments in (calls[i] for i in sorted(calls))]


def _anthropic_stream(events: list[dict[str, Any]]) -> Calls:
    blocks: dict[int, list[str]] = {}
    for event in events:
        if event["type"] == "content_block_start" and event["content_block"]["type"] == "tool_use":
            blocks[event["index"]] = [event["content_block"]["name"], ""]
        elif event["type"] == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
            blocks[event["index"]][1] += event["delta"]["partial_json"]
    return [(name, json.loads(arguments)) for name, arguments in (blocks[i] for i in sorted(blocks))]
