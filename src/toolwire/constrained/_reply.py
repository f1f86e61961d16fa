"""Read a constrained reply back: `ToolCall`s checked against their tools, or the model's "no call".

A server that enforced the schema sends exactly a JSON list of calls, `[]` when the model calls
nothing (its answer then comes from `answer_request`). What else can arrive is read as well as it
can be, never raised: a reply cut short by the token limit is repaired (and says so), a lone call
object or `{"tool_calls": [...]}` are read too (not counted as parsed), anything else stays text.

Each call's arguments are validated against its tool's own schema; a call that fails carries
`metadata["arguments_error"]`, so the agent answers the model with an error result instead of
running the tool (the rule for unreadable arguments, docs/wire-formats.md). A list ends before its first
repeated call (same tool, same arguments: the model is looping, `_repeats`), which also reads a
reply the token limit cut during the loop as whole; in the other shapes a repeated call is kept
once. Running the same call twice is never what was asked.

A reply nested deeper than any call needs (a `[[[[...` megabyte, 5,000 levels inside arguments)
stays text, as text and auto modes leave it: nothing recurses into it. A repaired reply's last
call keeps the reply in `metadata["raw_arguments"]`, so the tool-mode engine can tell a call cut
inside a string (which never runs) from one that only lacked its closing brackets.

Imports `toolwire.types`, `toolwire.codecs.common` (call ids, argument bounds and repair), this
package's modules and the standard library (plus `json_repair`, lazily, for a small cut reply).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolwire.codecs.common.arguments import MAX_ARGUMENT_DEPTH, MAX_REPAIR_CHARS, depth_exceeds
from toolwire.codecs.common.ids import new_call_id
from toolwire.codecs.common.repair import repair_json
from toolwire.constrained._repeats import close_at_repeat
from toolwire.constrained._validate import argument_errors
from toolwire.types import ToolCall, ToolDefinition

__all__ = ["ConstrainedReply", "parse_reply"]

logger = logging.getLogger("toolwire.constrained")


@dataclass(slots=True)
class ConstrainedReply:
    """What a constrained reply said.

    Attributes:
        text: The reply text as it came, when it had no known shape ("" otherwise).
        calls: The calls, in order, duplicates removed.
        parsed: The reply was the JSON shape asked for, whole (not repaired).
        answer_due: The model called nothing (`[]`): its answer is still to be asked for.
        notes: What was done to read it (repaired, duplicates dropped, ...).
    """

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    parsed: bool = False
    answer_due: bool = False
    notes: list[str] = field(default_factory=list)


def parse_reply(text: str, tools: Sequence[ToolDefinition], *, answer_allowed: bool = True) -> ConstrainedReply:
    """Read `text`, a reply written under `reply_schema(tools, ...)`.

    Without `answer_allowed` (`tool_choice` asked for a call), an empty list is noted, not answered:
    the server did not enforce `minItems`.
    """
    closed = close_at_repeat(text)
    value, repaired = _load(closed if closed is not None else text)
    if depth_exceeds(value, _MAX_REPLY_DEPTH):
        note = f"the reply nests deeper than {_MAX_REPLY_DEPTH} levels; kept as text"
        return ConstrainedReply(text=text, notes=[note])
    items, shaped = _items(value)
    if items is None or not all(_is_call(item) for item in items):
        return ConstrainedReply(text=text, notes=["the reply is not the JSON shape asked for; kept as text"])
    if not items:
        refused = [] if answer_allowed else ["no call, where tool_choice asked for one"]
        return ConstrainedReply(
            parsed=shaped and not repaired, answer_due=answer_allowed, notes=_repaired(repaired) + refused
        )
    calls, notes = _calls(items, {t.name: t for t in tools})
    if repaired:  # only the last call can have been cut; the engine decides whether it may run
        calls[-1].metadata["raw_arguments"] = text
    shape = [] if shaped else ["the calls came in another shape than the list asked for"]
    looped = [] if closed is None else ["the model began to repeat a call; the list ends before the repeat"]
    notes = _repaired(repaired) + shape + looped + notes
    return ConstrainedReply(calls=calls, parsed=shaped and not repaired, notes=notes)


def _items(value: Any) -> tuple[list[Any] | None, bool]:
    """The call objects in a reply (None: no calls shape at all) and whether it was a plain list."""
    if isinstance(value, list):
        return value, True
    if isinstance(value, dict) and {"name", "arguments"} <= value.keys():
        return [value], False  # a lone call: the server did not hold the model to the schema
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        return value["tool_calls"], False
    return None, False


def _load(text: str) -> tuple[Any, bool]:
    try:
        return json.loads(text), False
    except ValueError:
        pass
    except RecursionError:  # nested past the parser's stack: no call list is
        return None, False
    if not text.lstrip().startswith(("[", "{")):
        return None, False
    repaired = repair_json(text)  # linear, whatever the size
    if repaired is not None:
        return repaired.value, True
    if len(text) > MAX_REPAIR_CHARS:
        return None, False
    import json_repair

    try:
        return json_repair.loads(text), True
    except Exception:  # json_repair's failures are not one documented type
        return None, False


_MAX_REPLY_DEPTH = MAX_ARGUMENT_DEPTH + 3
"""A call list, a call, its arguments: three levels above the deepest arguments accepted."""


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
