"""What a server's schema engine can enforce, and a tool schema loosened to fit it.

Constrained decoding turns a JSON Schema into a grammar; engines differ in what they can turn
(llama.cpp's converter has no numeric bounds, Ollama's none of `pattern`, several reject
recursive references). `SchemaSupport` says, as data, what one engine takes; `loosen` drops or
rewrites the rest and returns one note per change, for a debug line. Loosening only widens what
the engine accepts: the reply is still validated against the tool's own schema afterwards.

Where the engine's own string rule lets in what JSON forbids (llama-cpp-python's takes raw
newlines, so a small model can leave the structure through a string and write prose until the
token limit), free strings get the profile's `string_char_pattern`; every value stays writable.

Loosening also closes objects: an object schema that lists `properties` and says nothing about
`additionalProperties` gets `additionalProperties: false`, since a grammar left open lets a
small model invent parameters, and no tool wants parameters it never documented. A name listed
in `required` but not in `properties` gets a property of any value first (BFCL's
`{"type": "dict", "required": ["adults", ...]}`): left out, the grammar would let the model
write any object and the call would fail its own schema.

`SchemaSupport` itself lives in `toolwire.schema`, where the codecs' server profiles can name
it. Imports only `toolwire.schema` and the standard library.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.schema import PORTABLE, SchemaSupport, inline_refs

__all__ = ["PORTABLE", "SchemaSupport", "loosen"]

# Keywords whose value is a map of name -> schema, a list of schemas, or one schema.
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_ONE = frozenset({"items", "additionalProperties"})
# A string schema with one of these is already held to something narrower than free text.
_FIXED_STRING_KEYS = frozenset({"pattern", "enum", "const", "format"})


def loosen(schema: dict[str, Any], support: SchemaSupport = PORTABLE) -> tuple[dict[str, Any], list[str]]:
    """`schema` cut to what `support` can enforce, with one note per change (`path: what`).

    The input is left untouched.
    """
    notes: list[str] = []
    if '"$ref"' in json.dumps(schema):
        schema = inline_refs(schema)
        if "recursive reference omitted" in json.dumps(schema):
            notes.append("$: a recursive reference cut to any object")
    return _loosen_node(schema, support, "$", notes), notes


def _loosen_node(node: Any, support: SchemaSupport, path: str, notes: list[str]) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if support.drops(key, value):
            if key not in ("title", "default", "examples", "$comment", "optional"):
                notes.append(f"{path}: {key} {json.dumps(value, ensure_ascii=False)[:60]} dropped")
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _loosen_node(sub, support, f"{path}.{name}", notes) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_loosen_node(sub, support, f"{path}[{i}]", notes) for i, sub in enumerate(value)]
        elif key in _SCHEMA_ONE:
            out[key] = _loosen_node(value, support, f"{path}[]", notes)
        else:
            out[key] = value
    _name_required(out)
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    if support.string_char_pattern and _is_free_string(out):
        out["pattern"] = _string_pattern(support.string_char_pattern, out)
    return out


def _name_required(node: dict[str, Any]) -> None:
    """Give each required name a property: a grammar only writes the keys `properties` lists."""
    required, properties = node.get("required"), node.get("properties", {})
    if not isinstance(required, list) or not isinstance(properties, dict):
        return
    missing = [name for name in required if isinstance(name, str) and name not in properties]
    if missing:
        node["properties"] = {**properties, **{name: {} for name in missing}}


def _is_free_string(node: dict[str, Any]) -> bool:
    return node.get("type") == "string" and not _FIXED_STRING_KEYS & node.keys()


def _string_pattern(char: str, node: dict[str, Any]) -> str:
    low, high = node.get("minLength"), node.get("maxLength")
    if isinstance(low, int) or isinstance(high, int):
        bounds = f"{{{low if isinstance(low, int) else 0},{high if isinstance(high, int) else ''}}}"
        return f"^({char}){bounds}$"
    return f"^({char})*$"
