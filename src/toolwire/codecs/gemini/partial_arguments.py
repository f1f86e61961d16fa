"""Vertex AI's streamed call arguments: `functionCall.partialArgs` pieces joined into one object.

With `toolConfig.functionCallingConfig.streamFunctionCallArguments`, Vertex sends a call's
arguments as pieces addressed by JSON Path; this room joins them.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from toolwire.codecs.common.wire import dumps

__all__ = ["PartialArguments", "parse_json_path"]


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


class PartialArguments:
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
        """Take one `partialArgs` piece: a value at its JSON Path, or a string continued."""
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
