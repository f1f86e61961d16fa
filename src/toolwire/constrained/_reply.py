"""Read a constrained reply back: the answer text, or `ToolCall`s checked against their tools.

A server that enforced the schema sends exactly `{"answer": ...}` or `{"tool_calls": [...]}`.
What else can arrive is read as well as it can be, never raised: a reply cut short by the token
limit is repaired (and says so), a lone call object is taken as one call, anything else stays
text. Each call's arguments are validated against its tool's own schema; a call that fails
carries `metadata["arguments_error"]`, so the agent answers the model with an error result
instead of running the tool (SPEC §2's rule for undecodable arguments).

Identical calls repeated in one reply (same tool, same arguments) are kept once: a small model
under a grammar tends to repeat its last call rather than close the list, and running the
same call twice is never what was asked.

Imports `toolwire.types`, `toolwire.codecs._shared` (call ids), this package's modules and the
standard library (plus `json_repair`, lazily, for a cut reply).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolwire.codecs._shared import new_call_id
from toolwire.constrained._schema import ANSWER_KEY, CALLS_KEY
from toolwire.constrained._validate import argument_errors
from toolwire.types import ToolCall, ToolDefinition

__all__ = ["ConstrainedReply", "parse_reply"]

logger = logging.getLogger("toolwire.constrained")


@dataclass(slots=True)
class ConstrainedReply:
    """What a constrained reply said.

    Attributes:
        text: The answer (or, when the reply had no known shape, the reply text as it came).
        calls: The calls, in order, duplicates removed.
        parsed: The reply was the JSON shape asked for, whole (not repaired).
        notes: What was done to read it (repaired, duplicates dropped, ...).
    """

    text: str
    calls: list[ToolCall] = field(default_factory=list)
    parsed: bool = False
    notes: list[str] = field(default_factory=list)


def parse_reply(text: str, tools: Sequence[ToolDefinition]) -> ConstrainedReply:
    """Read `text`, a reply written under `reply_schema(tools, ...)`."""
    value, repaired = _load(text)
    if isinstance(value, dict) and isinstance(value.get(ANSWER_KEY), str) and len(value) == 1:
        return ConstrainedReply(text=value[ANSWER_KEY], parsed=not repaired, notes=_repaired(repaired))
    items = value.get(CALLS_KEY) if isinstance(value, dict) and len(value) == 1 else None
    if isinstance(value, dict) and {"name", "arguments"} <= value.keys():
        items = [value]  # a lone call: the server did not hold the model to the schema
        repaired = True
    if not isinstance(items, list) or not items or not all(_is_call(item) for item in items):
        return ConstrainedReply(text=text, notes=["the reply is not the JSON shape asked for; kept as text"])
    calls, notes = _calls(items, {tool.name: tool for tool in tools})
    return ConstrainedReply(text="", calls=calls, parsed=not repaired, notes=_repaired(repaired) + notes)


def _load(text: str) -> tuple[Any, bool]:
    try:
        return json.loads(text), False
    except ValueError:
        pass
    if not text.lstrip().startswith("{"):
        return None, False
    import json_repair

    try:
        return json_repair.loads(text), True
    except Exception:  # json_repair's failures are not one documented type
        return None, False


def _repaired(repaired: bool) -> list[str]:
    return ["the reply was not whole JSON (cut by the token limit?) and was repaired"] if repaired else []


def _is_call(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("arguments"), dict)


def _calls(items: list[dict[str, Any]], tools: dict[str, ToolDefinition]) -> tuple[list[ToolCall], list[str]]:
    calls: list[ToolCall] = []
    seen: set[str] = set()
    notes: list[str] = []
    for item in items:
        key = json.dumps([item["name"], item["arguments"]], sort_keys=True)
        if key in seen:
            notes.append(f"a repeated call of {item['name']!r} with the same arguments dropped")
            continue
        seen.add(key)
        calls.append(_call(item["name"], item["arguments"], tools.get(item["name"])))
    for note in notes:
        logger.debug("constrained mode: %s", note)
    return calls, notes


def _call(name: str, arguments: dict[str, Any], tool: ToolDefinition | None) -> ToolCall:
    call = ToolCall(id=new_call_id(), name=name, arguments=arguments)
    error = f"There is no tool named {name!r}." if tool is None else argument_errors(arguments, tool.parameters)
    if error is not None:
        call.metadata["arguments_error"] = error
    return call
