"""What detectors hand back (raw calls and the spans they cover) and the rules they share.

A detector finds one family of formats in the reply text and returns `Found` spans; the parser
in `_parse` resolves overlaps, builds `ToolCall`s and removes the spans from the text. Imports
only `toolwire.types`, this package's `_scan` and the standard library.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from toolwire.textcalls._scan import Finder, RepairBudget, load_json, value_end
from toolwire.types import ToolDefinition

__all__ = [
    "Context",
    "Found",
    "HasDefinition",
    "MarkerValues",
    "RawCall",
    "ToolLike",
    "bounded_end",
    "calls_from_value",
    "coerce",
    "definitions",
    "marker_positions",
    "rstrip_end",
    "skip_ws",
    "valid_name",
]

_NAME = re.compile(r"[\w.:-]{1,128}", re.ASCII)
_WS = re.compile(r"\s*+")
_ARGUMENT_KEYS = ("arguments", "parameters", "args")
# Keys a marker-less JSON object may carry besides its name and arguments and still be a call.
_LOOSE_EXTRA_KEYS = frozenset({"name", "type", "id", *_ARGUMENT_KEYS})
# How a JSON object or array of calls can begin; anything else after a marker is not worth a scan.
_PLAUSIBLE = re.compile(r"""\{\s*+["'}]|\[\s*+[{\]]""")
# An unclosed value with more open brackets than this is noise, not a truncated call.
_MAX_UNCLOSED_DEPTH = 16


class HasDefinition(Protocol):
    """Anything that carries a tool definition, such as a `toolwire.tools` tool."""

    @property
    def definition(self) -> ToolDefinition:
        """The definition the model sees."""
        ...


ToolLike: TypeAlias = ToolDefinition | HasDefinition


def definitions(tools: Iterable[ToolLike] | Mapping[str, ToolLike]) -> list[ToolDefinition]:
    """The definitions of `tools` (definitions, objects with `.definition`, or a name -> tool mapping)."""
    items = tools.values() if isinstance(tools, Mapping) else tools
    found = []
    for tool in items:
        definition = tool if isinstance(tool, ToolDefinition) else getattr(tool, "definition", None)
        if isinstance(definition, ToolDefinition):
            found.append(definition)
    return found


@dataclass(slots=True)
class RawCall:
    """One call as found in the text, before its arguments are parsed."""

    name: str
    arguments: Any
    format: str
    native_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Found:
    """A span of the text holding calls; `calls == []` marks a span that must stay text."""

    start: int
    end: int
    calls: list[RawCall]
    explicit: bool = True


class Context:
    """The text being parsed, the tools it may call, and the shared repair budget."""

    __slots__ = ("budget", "text", "tools")

    def __init__(self, text: str, tools: dict[str, ToolDefinition] | None) -> None:
        self.text = text
        self.tools = tools
        self.budget = RepairBudget()

    def param_schema(self, tool: str, param: str) -> dict[str, Any] | None:
        """The JSON Schema of one parameter, or `None` when unknown."""
        definition = self.tools.get(tool) if self.tools else None
        if definition is None or not definition.parameters:
            return None
        properties = definition.parameters.get("properties")
        schema = properties.get(param) if isinstance(properties, dict) else None
        return schema if isinstance(schema, dict) else None


def skip_ws(text: str, pos: int) -> int:
    """The first non-whitespace position at or after `pos`."""
    match = _WS.match(text, pos)
    return match.end() if match else pos


def rstrip_end(text: str, start: int, end: int) -> int:
    """`end` moved back over trailing whitespace, not before `start` (costs only that span)."""
    return start + len(text[start:end].rstrip())


def valid_name(name: Any) -> bool:
    """Whether `name` looks like a tool name (no spaces, no markup, not an ellipsis)."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None and bool(name.strip(".:"))


def _call_from_object(value: Any, fmt: str, loose: bool) -> RawCall | None:
    """Read `{"name", "arguments"|"parameters"|"args"}` or OpenAI's `{"function": {...}}`.

    `loose` (no marker around the JSON) demands an arguments key and no unrelated keys, so
    ordinary JSON such as `{"name": "Ada", "age": 36}` stays text.
    """
    if not isinstance(value, dict):
        return None
    inner = value.get("function") if isinstance(value.get("function"), dict) else value
    assert isinstance(inner, dict)
    name = inner.get("name")
    if not isinstance(name, str) or not valid_name(name):
        return None
    key = next((k for k in _ARGUMENT_KEYS if k in inner), None)
    if loose and (
        key is None or not _LOOSE_EXTRA_KEYS.issuperset(inner) or value.get("type", "function") != "function"
    ):
        return None
    call_id = value.get("id")
    return RawCall(name, inner.get(key) if key else None, fmt, call_id if isinstance(call_id, str) else None)


def calls_from_value(value: Any, fmt: str, *, loose: bool = False) -> list[RawCall]:
    """The calls in a parsed JSON value: one call object, or a non-empty array of them."""
    if not isinstance(value, dict | list):
        return []
    items = value if isinstance(value, list) else [value]
    calls = [_call_from_object(item, fmt, loose) for item in items]
    if not calls or any(call is None for call in calls):
        return []
    return [call for call in calls if call is not None]


class MarkerValues:
    """Reads the JSON value after each marker of one format, in linear total time.

    Values are scanned to the end of the text, so a marker quoted inside a string of an
    earlier call is skipped. The first value that never closes makes every later scan stop
    at the next marker, so no region is scanned twice.
    """

    __slots__ = ("_bounded", "_ctx")

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._bounded = False

    def source(self, start: int, limit: int) -> tuple[str, int, bool]:
        """Return `(source, end, closed)` for the value opening at `start`; `limit` is the next marker.

        An unclosed value yields the text up to `limit` (trailing whitespace dropped), or `""`
        when it is too deeply nested to be a truncated call.
        """
        text = self._ctx.text
        if not _PLAUSIBLE.match(text, start):
            return "", start, False
        stop = limit if self._bounded else len(text)
        end, depth = value_end(text, start, stop)
        if end >= 0:
            return text[start:end], end, True
        self._bounded = True
        if depth > _MAX_UNCLOSED_DEPTH:
            return "", start, False
        end = rstrip_end(text, start, limit)
        return text[start:end], end, False

    def load(self, start: int, limit: int) -> tuple[Any, int, str | None]:
        """Return `(value, end, raw)` for the value at `start`; `raw` is set when it was repaired.

        A value that never closes is first repaired from its own line, so prose on the lines
        after a call with a missing brace stays text.
        """
        source, end, closed = self.source(start, limit)
        if not source:
            return None, end, None
        budget = self._ctx.budget
        if not closed:
            newline = source.find("\n")
            if newline > 0:
                loaded = load_json(source[:newline].rstrip(), budget, closed=False)
                if loaded is not None and isinstance(loaded[0], dict | list) and loaded[0]:
                    return loaded[0], start + len(source[:newline].rstrip()), source[:newline].rstrip()
        loaded = load_json(source, budget, closed=closed)
        if loaded is None:
            return None, end, None
        value, repaired = loaded
        return value, end, source if repaired or not closed else None


def marker_positions(text: str, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """`(start, end)` of every marker matching `pattern`."""
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def bounded_end(finder: Finder, start: int, limit: int) -> tuple[int, int]:
    """Where the closing token found by `finder` sits, if before `limit`: `(start, end)` or `(-1, -1)`."""
    at, end = finder.next(start)
    return (at, end) if 0 <= at < limit else (-1, -1)


# Coercion of raw XML-ish parameter values (Qwen3-Coder, GLM) to the types in the tool schema.


def _schema_types(schema: dict[str, Any]) -> list[str]:
    kinds = schema.get("type")
    types = (
        [kinds]
        if isinstance(kinds, str)
        else [k for k in kinds if isinstance(k, str)]
        if isinstance(kinds, list)
        else []
    )
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            types += [t for option in options if isinstance(option, dict) for t in _schema_types(option)]
    return types


def _as_number(raw: str, integer: bool) -> int | float | None:
    try:
        value = json.loads(raw.strip())
    except (ValueError, RecursionError):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    if integer:
        return int(value) if isinstance(value, int) or value.is_integer() else None
    return value


def _convert(raw: str, kind: str, budget: RepairBudget) -> tuple[bool, Any]:
    lowered = raw.strip().lower()
    if kind == "null":
        return lowered in ("null", "none"), None
    if kind == "boolean":
        return lowered in ("true", "false"), lowered == "true"
    if kind in ("integer", "number"):
        number = _as_number(raw, kind == "integer")
        return number is not None, number
    if kind in ("object", "array"):
        loaded = load_json(raw.strip(), budget)
        expected = dict if kind == "object" else list
        return loaded is not None and isinstance(loaded[0], expected), loaded[0] if loaded else None
    return False, None


def coerce(raw: str, schema: dict[str, Any] | None, budget: RepairBudget) -> Any:
    """Convert a raw string value to the type its schema asks for; keep the string otherwise."""
    if not schema:
        return raw
    for kind in ("null", "boolean", "integer", "number", "object", "array"):
        if kind in _schema_types(schema):
            ok, value = _convert(raw, kind, budget)
            if ok:
                return value
    return raw
