"""Calls written without a marker: bare JSON objects, fenced ```` ```json ```` blocks, pythonic lists.

Nothing announces these, so they are held to stricter rules than marked calls: a JSON object
needs a name and an arguments key and nothing unrelated; a pythonic list must fill its own
line; code fences in other languages are kept as text (and protect what they contain from
the other detectors here). The parser also drops them when they name a tool the caller did
not offer. Llama 3.x writes its calls this way when the `<|python_tag|>` marker is missing.
"""

from __future__ import annotations

import re

from toolwire.textcalls._detection import Context, Found, RawCall, calls_from_value
from toolwire.textcalls._pythonic import parse_pythonic
from toolwire.textcalls._scan import balanced_values, load_json

__all__ = ["find_bare_json", "find_fences", "find_pythonic_lines"]

_FENCE_OPEN = re.compile(r"^[ \t]*+(`{3,}+|~{3,}+)[ \t]*+([^\n]*+)\n", re.M)
_FENCE_CLOSE = {"`": re.compile(r"^[ \t]*+`{3,}+[ \t]*+$", re.M), "~": re.compile(r"^[ \t]*+~{3,}+[ \t]*+$", re.M)}
_JSON_LANGUAGES = frozenset({"", "json", "jsonc", "json5", "tool_call", "tool_calls", "function_call"})
_PYTHON_LANGUAGES = frozenset({"", "python", "py", "tool_code", "tool_call", "tool_calls"})
# Both patterns start with a literal character, which lets `re` skip ahead quickly.
_CODE = frozenset({"python", "py"})
_BARE_JSON = re.compile(r'\{\s*+"|\[\s*+\{\s*+"')
_PYTHONIC = re.compile(r"\n[ \t]*+(\[)[ \t]*+[A-Za-z_][\w.]*+[ \t]*+\(")
_FIRST_LINE_REACH = 200
_LINE_REST = re.compile(r"[ \t]*+(?:\n|$)")


def _fence_calls(ctx: Context, language: str, content: str) -> list[RawCall]:
    stripped = content.strip()
    if language in _JSON_LANGUAGES and stripped[:1] in ("{", "["):
        loaded = load_json(stripped, ctx.budget if '"name"' in stripped else None)
        calls = calls_from_value(loaded[0], "json-fence", loose=True) if loaded else []
        if calls and loaded and loaded[1]:
            for call in calls:
                call.metadata["raw_arguments"] = stripped
        if calls:
            return calls
    # A list of calls in a ```python block is as likely an example as a call: only offered tools count.
    if language in _PYTHON_LANGUAGES and stripped.startswith("[") and (ctx.tools is not None or language not in _CODE):
        return parse_pythonic(stripped)
    return []


def find_fences(ctx: Context) -> list[Found]:
    """Fenced blocks: calls when their whole content is calls, protected text otherwise."""
    text, found = ctx.text, []
    if "```" not in text and "~~~" not in text:
        return []
    pos = 0
    while opening := _FENCE_OPEN.search(text, pos):
        content_start = opening.end()
        closing = _FENCE_CLOSE[opening.group(1)[0]].search(text, content_start)
        content_end = closing.start() if closing else len(text)
        end = closing.end() if closing else len(text)
        language = opening.group(2).strip().split(" ", 1)[0].lower()
        calls = _fence_calls(ctx, language, text[content_start:content_end])
        found.append(Found(opening.start(), end, calls, explicit=False))
        pos = end
    return found


def find_bare_json(ctx: Context) -> list[Found]:
    """JSON call objects (or arrays of them) anywhere in the text, never nested in other JSON."""
    text, found = ctx.text, []
    candidates = [m.start() for m in _BARE_JSON.finditer(text)]
    for start, end in balanced_values(text, candidates):
        source = text[start:end]
        if '"name"' not in source:
            continue
        loaded = load_json(source, ctx.budget)
        calls = calls_from_value(loaded[0], "json", loose=True) if loaded else []
        if calls and loaded and loaded[1]:
            for call in calls:
                call.metadata["raw_arguments"] = source
        if calls:
            found.append(Found(start, end, calls, explicit=False))
    return found


def find_pythonic_lines(ctx: Context) -> list[Found]:
    """A pythonic call list that fills its own line: `[get_weather(city="SF")]`."""
    text, found = ctx.text, []
    if "(" not in text:
        return []
    first = _PYTHONIC.match("\n" + text[:_FIRST_LINE_REACH])  # the first line has no newline before it
    candidates = [first.start(1) - 1] if first else []
    candidates += [m.start(1) for m in _PYTHONIC.finditer(text)]
    for start, end in balanced_values(text, candidates, python=True):
        if _LINE_REST.match(text, end) is None:
            continue
        calls = parse_pythonic(text[start:end])
        if calls:
            found.append(Found(start, end, calls, explicit=False))
    return found
