"""Read a constrained reply back: the answer text, or `ToolCall`s checked against their tools.

A server that enforced the schema sends exactly `{"call_count": n, "tool_calls": [n calls]}`,
where a call of the `no_tool_fits` pseudo-tool is a final answer (its `reply`). What else can
arrive is read as well as it can be, never raised: a reply cut short by the token limit is
repaired (and says so), a count that does not match, a list without a count, a lone call object
or `{"answer": ...}` are read too (not counted as parsed), anything else stays text.

Each call's arguments are validated against its tool's own schema; a call that fails carries
`metadata["arguments_error"]`, so the agent answers the model with an error result instead of
running the tool (SPEC §2's rule for undecodable arguments). Identical calls repeated in one
reply (same tool, same arguments) are kept once: running the same call twice is never what
was asked.

Imports `toolwire.types`, `toolwire.codecs.common` (call ids), this package's modules and the
standard library (plus `json_repair`, lazily, for a cut reply).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolwire.codecs.common.ids import new_call_id
from toolwire.constrained._schema import ANSWER_ARGUMENT, CALLS_KEY, COUNT_KEY, NO_TOOL
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


def parse_reply(text: str, tools: Sequence[ToolDefinition], *, no_tool: str = NO_TOOL) -> ConstrainedReply:
    """Read `text`, a reply written under `reply_schema(tools, ...)` (whose pseudo-tool is `no_tool`)."""
    value, repaired = _load(text)
    if isinstance(value, dict) and isinstance(value.get("answer"), str) and len(value) == 1:
        return ConstrainedReply(text=value["answer"], notes=["an answer object instead of the shape asked for"])
    items, shaped = _items(value)
    if not items or not all(_is_call(item) for item in items):
        return ConstrainedReply(text=text, notes=["the reply is not the JSON shape asked for; kept as text"])
    answers = [str(item["arguments"].get(ANSWER_ARGUMENT, "")) for item in items if item["name"] == no_tool]
    calls, notes = _calls([item for item in items if item["name"] != no_tool], {t.name: t for t in tools})
    notes = _repaired(repaired) + ([] if shaped else ["the call count is missing or does not match"]) + notes
    return ConstrainedReply(text="\n".join(answers), calls=calls, parsed=shaped and not repaired, notes=notes)


def _items(value: Any) -> tuple[list[Any], bool]:
    """The call objects in a reply and whether it had exactly the shape asked for."""
    if isinstance(value, dict) and {"name", "arguments"} <= value.keys():
        return [value], False  # a lone call: the server did not hold the model to the schema
    items = value.get(CALLS_KEY) if isinstance(value, dict) else None
    if not isinstance(items, list):
        return [], False
    assert isinstance(value, dict)
    return items, value.get(COUNT_KEY) == len(items) and set(value) == {COUNT_KEY, CALLS_KEY}


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
