"""Turn a tool's JSON Schema into what each provider accepts.

Three pure functions, one per provider dialect:

- `openai_strict_schema`: OpenAI Structured Outputs strict form (`function.strict: true`).
- `anthropic_input_schema`: Anthropic `input_schema` (an object schema; everything else passes).
- `gemini_schema`: Gemini's OpenAPI-3.0 `Schema` subset (`functionDeclarations[].parameters`).
- `inline_refs`: every local `$ref` replaced by what it points to (Ollama, whose server silently
  drops nested `$ref`s while decoding the schema into Go structs: docs/wire-formats.md, Ollama).
- `SchemaSupport`: what one server's constrained-decoding engine enforces, as data (the
  codecs' server profiles name it; `toolwire.constrained.loosen` cuts a schema to it).

Every function leaves its input untouched, may share unchanged subtrees with it (treat the
output as read-only), and is idempotent: `f(f(x)) == f(x)`, because a request decoded from the
wire is encoded again. Keywords a provider rejects are moved into the `description` text
rather than silently lost, except where the target has no use for them (Gemini drops
`additionalProperties`, `title`, `$schema`, exclusive bounds and the like).
This module imports only the standard library (and `_schema_support`, re-exported here).
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolwire._schema_support import PORTABLE, SchemaSupport

__all__ = [
    "PORTABLE",
    "SchemaSupport",
    "anthropic_input_schema",
    "from_openapi_schema",
    "gemini_schema",
    "inline_refs",
    "openai_strict_format",
    "openai_strict_schema",
]

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated", "$comment"})
_COMPOSITION = ("type", "anyOf", "oneOf", "allOf", "$ref", "enum", "const", "properties", "items", "prefixItems")


def _note(node: dict[str, Any], notes: list[tuple[str, Any]]) -> None:
    """Append keywords the target cannot enforce to the description, so the model still reads them."""
    if not notes:
        return
    text = ", ".join(f"{key}: {json.dumps(value, ensure_ascii=False, default=str)}" for key, value in notes)
    description = node.get("description")
    node["description"] = f"{description} ({text})" if isinstance(description, str) and description else f"({text})"


def _resolve_pointer(root: dict[str, Any], ref: Any) -> Any:
    """Follow a local `#/...` JSON pointer inside `root`; `None` when it does not resolve."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    target: Any = root
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or token not in target:
            return None
        target = target[token]
    return target


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1] or ref


# OpenAI strict mode
#
# Rules from OpenAI's Structured Outputs guide and openai-python `lib/_pydantic.py`; rejected
# keywords from pydantic-ai `_STRICT_INCOMPATIBLE_KEYS`.

_STRICT_UNSUPPORTED = frozenset(
    {
        "minLength",
        "maxLength",
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
    }
)
_STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
_LOOKAROUND = re.compile(r"\(\?<?[=!]")
# Strict mode rejects untyped values (`list` → `items: {}`; pydantic-ai #4425). Rather than
# failing the whole tool, an untyped value accepts any JSON scalar: the tool keeps working and
# the model can still send strings, numbers, booleans and null.
_ANY_SCALAR = ("string", "number", "boolean", "null")


def openai_strict_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """Rewrite a tool's parameters into OpenAI's strict (Structured Outputs) form.

    Every object gets `additionalProperties: false` and lists all its properties in `required`;
    properties that were optional become nullable, so the model sends `null` for "not given".
    `oneOf` becomes `anyOf`, a one-element `allOf` is merged, `default: null` is dropped, a
    `$ref` with sibling keys is wrapped as `anyOf: [{"$ref": ...}]` (recursive `$defs` stay
    references), and keywords strict mode rejects (`minLength`, unsupported `format`s, ...) move
    into `description`. Untyped values (`{}`, `items: {}`) accept any JSON scalar. Free-form
    dicts (`additionalProperties: {...}`) become closed objects, as strict mode demands.

    Args:
        schema: A JSON Schema describing an object, or `None` for a tool without arguments.

    Returns:
        A new schema; unchanged subtrees may be shared with `schema`.

    Raises:
        ValueError: If the root does not describe an object (strict mode requires one).
    """
    if schema is None:
        return {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    root = _strict_root(schema)
    result = _strict_node(root)
    if not isinstance(result, dict) or result.get("type") != "object":
        raise ValueError(
            f"OpenAI strict mode needs an object schema at the root, got {schema!r}; "
            "wrap the value in an object property or send the tool with strict=False."
        )
    return result


def openai_strict_format(schema: dict[str, Any]) -> dict[str, Any]:
    """A response format's schema in OpenAI's strict form; a schema with none (not an object) as it is."""
    try:
        return openai_strict_schema(schema)
    except ValueError:
        return schema


def _strict_root(schema: dict[str, Any]) -> dict[str, Any]:
    root = schema
    seen: set[str] = set()
    # Pydantic renders a recursive model as `{"$defs": ..., "$ref": "#/$defs/Model"}`.
    while isinstance(root.get("$ref"), str) and root["$ref"] not in seen:
        seen.add(root["$ref"])
        target = _resolve_pointer(schema, root["$ref"])
        if not isinstance(target, dict):
            break
        root = {**target, **{k: v for k, v in root.items() if k != "$ref"}}
    kind = root.get("type")
    if isinstance(kind, list) and "object" in kind:
        root = {**root, "type": "object"}
    elif kind is None and not any(k in root for k in _COMPOSITION if k not in ("properties", "type")):
        root = {**root, "type": "object"}
    return root


def _strict_node(node: Any) -> Any:
    if node is True:
        return {"type": list(_ANY_SCALAR)}
    if not isinstance(node, dict):
        return node
    out, notes = _strict_composition(node)
    _strict_unsupported(out, notes)
    if not any(k in out for k in _COMPOSITION):
        out["type"] = list(_ANY_SCALAR)
    elif "type" not in out and "properties" in out:
        out["type"] = "object"
    elif "type" not in out and ("items" in out or "prefixItems" in out):
        out["type"] = "array"
    _strict_children(out)
    if out.get("type") == "object":
        _strict_object(out)
    _note(out, notes)
    return out


def _strict_unsupported(out: dict[str, Any], notes: list[tuple[str, Any]]) -> None:
    for key in [k for k in out if k in _STRICT_UNSUPPORTED]:
        notes.append((key, out.pop(key)))
    if isinstance(out.get("pattern"), str) and _LOOKAROUND.search(out["pattern"]):
        notes.append(("pattern", out.pop("pattern")))
    if "format" in out and not (isinstance(out["format"], str) and out["format"] in _STRICT_FORMATS):
        notes.append(("format", out.pop("format")))
    if "default" in out and out["default"] is None:
        del out["default"]


def _strict_composition(node: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """Rewrite `allOf`/`oneOf`/`$ref`-with-siblings into what strict mode accepts."""
    out = dict(node)
    notes: list[tuple[str, Any]] = []
    while isinstance(all_of := out.get("allOf"), list) and len(all_of) == 1 and all_of[0] is not False:
        del out["allOf"]
        out = {**(all_of[0] if isinstance(all_of[0], dict) else {}), **out}
    if "oneOf" in out:
        one_of = out.pop("oneOf")
        if "anyOf" in out or not isinstance(one_of, list):
            notes.append(("oneOf", one_of))
        else:
            out["anyOf"] = one_of
    if "$ref" in out and len(out) > 1:
        ref = out.pop("$ref")
        constraints = {k: v for k, v in out.items() if k not in _ANNOTATIONS}
        if constraints:
            # `$ref` plus constraints means "both"; strict mode has no intersection to say it.
            notes.append(("$ref", ref))
        else:
            out["anyOf"] = [{"$ref": ref}]
    return out, notes


def _strict_children(out: dict[str, Any]) -> None:
    items = out.get("items")
    if isinstance(items, list):
        out.setdefault("prefixItems", items)
        del out["items"]
    prefix = out.pop("prefixItems", None)
    if isinstance(prefix, list) and "items" not in out:
        # Tuples are not supported; accept any of the positions' types instead.
        out["items"] = prefix[0] if len(prefix) == 1 else {"anyOf": prefix}
    if out.get("type") == "array" and out.get("items", True) in (True, {}):
        out["items"] = True
    if "items" in out:
        out["items"] = _strict_node(out["items"])
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [_strict_node(branch) for branch in out["anyOf"]]
    if isinstance(out.get("allOf"), list):
        out["allOf"] = [_strict_node(branch) for branch in out["allOf"]]
    for defs_key in ("$defs", "definitions"):
        if isinstance(out.get(defs_key), dict):
            out[defs_key] = {name: _strict_node(sub) for name, sub in out[defs_key].items()}


def _strict_object(out: dict[str, Any]) -> None:
    properties = out.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = out.get("required")
    required = {n for n in required if isinstance(n, str)} if isinstance(required, list) else set()
    strict_properties = {}
    for name, sub in properties.items():
        converted = _strict_node(sub)
        strict_properties[name] = converted if name in required else _strict_nullable(converted)
    out["properties"] = strict_properties
    out["required"] = list(strict_properties)
    out["additionalProperties"] = False


def _accepts_null(node: Any) -> bool:
    if not isinstance(node, dict):
        return node is True
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "const" in node and node["const"] is None:
        return True
    branches = node.get("anyOf")
    return isinstance(branches, list) and any(_accepts_null(b) for b in branches)


def _strict_nullable(node: Any) -> Any:
    """Make an optional property accept `null`, without wrapping one that already does."""
    if not isinstance(node, dict) or _accepts_null(node):
        return node
    kind = node.get("type")
    if isinstance(kind, str | list) and "const" not in node:
        out = {**node, "type": [*kind, "null"] if isinstance(kind, list) else [kind, "null"]}
        if isinstance(node.get("enum"), list) and None not in node["enum"]:
            out["enum"] = [*node["enum"], None]
        return out
    if isinstance(node.get("anyOf"), list) and all(k == "anyOf" or k in _ANNOTATIONS for k in node):
        return {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    return {"anyOf": [node, {"type": "null"}]}


# Anthropic


def anthropic_input_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """Make a tool's parameters a valid Anthropic `input_schema` (its root must be `type: object`).

    Anthropic accepts full JSON Schema below the root, so a conforming schema comes back as the
    very same object (cheap enough to call for every tool of every request).

    Args:
        schema: A JSON Schema describing an object, or `None` for a tool without arguments.

    Returns:
        `schema` itself when it conforms, else a shallow copy with `type: object`.

    Raises:
        ValueError: If the root declares a type other than `object`.
    """
    if schema is None:
        return {"type": "object", "properties": {}}
    kind = schema.get("type")
    if kind == "object":
        return schema
    if kind is None or (isinstance(kind, list) and "object" in kind):
        return {**schema, "type": "object"}
    raise ValueError(
        f"Anthropic needs an object schema for tool input, got type {kind!r}; wrap the value in an object property."
    )


# Gemini
#
# The `Schema` fields of google-genai `types.py`. Types are written in
# upper case: the proto enum names, which is what the SDK itself serialises and what both the
# Developer API and Vertex accept.

_GEMINI_COPY = (
    "description",
    "nullable",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "pattern",
    "example",
)
_GEMINI_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_GEMINI_FORMATS = {"STRING": {"enum", "date-time"}, "NUMBER": {"float", "double"}, "INTEGER": {"int32", "int64"}}


def gemini_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """Rewrite a JSON Schema into Gemini's OpenAPI-3.0 `Schema` subset.

    `$ref`s are inlined from `$defs`/`definitions` (a recursive reference is cut off as
    `{"type": "OBJECT"}` with a note in its description), `oneOf` becomes `anyOf`, `allOf` is
    merged, `null` alternatives (`["string", "null"]`, `anyOf [X, null]`) become `nullable`,
    a string `const` becomes a one-value `enum`, and non-string enums, non-string `const`s and
    formats Gemini lacks move into `description`. Other keywords (`additionalProperties`,
    `title`, `$schema`, `exclusiveMinimum`, `multipleOf`, ...) are dropped. Types are upper
    case (`"OBJECT"`), as google-genai serialises them.

    Args:
        schema: A JSON Schema, or `None` for a tool without arguments.

    Returns:
        A new schema that `google.genai.types.Schema` validates.
    """
    if schema is None:
        return {"type": "OBJECT", "properties": {}}
    result = _GeminiConverter(schema).convert(schema)
    if "type" not in result and "anyOf" not in result:
        result["type"] = "OBJECT"
    return result


class _GeminiConverter:
    __slots__ = ("_root", "_stack")

    def __init__(self, root: dict[str, Any]) -> None:
        self._root = root
        self._stack: list[str] = []

    def convert(self, node: Any) -> dict[str, Any]:
        if not isinstance(node, dict):
            return {}
        if "$ref" in node:
            return self._ref(node)
        node = self._flatten(node)
        out: dict[str, Any] = {}
        notes: list[tuple[str, Any]] = []
        for key in _GEMINI_COPY:
            if key in node:
                out[key] = node[key]
        if node.get("default") is not None:
            out["default"] = node["default"]
        self._type(node, out)
        self._values(node, out, notes)
        self._children(node, out)
        if "anyOf" in node:
            self._any_of(node["anyOf"], out)
        self._format(node, out, notes)
        _note(out, notes)
        return out

    def _ref(self, node: dict[str, Any]) -> dict[str, Any]:
        ref = node["$ref"]
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        target = _resolve_pointer(self._root, ref)
        if not isinstance(target, dict):
            return self.convert(siblings)
        if ref in self._stack:
            out = self.convert({k: v for k, v in siblings.items() if k == "description"})
            out["type"] = "OBJECT"
            _note(out, [("recursive reference omitted", _ref_name(ref))])
            return out
        self._stack.append(ref)
        try:
            return self.convert({**target, **siblings})
        finally:
            self._stack.pop()

    def _flatten(self, node: dict[str, Any]) -> dict[str, Any]:
        """Fold `allOf` into the node and `oneOf` into `anyOf` (Gemini has neither)."""
        out = {k: v for k, v in node.items() if k not in ("oneOf", "allOf")}
        one_of = node.get("oneOf")
        if isinstance(one_of, list):
            existing = out.get("anyOf")
            out["anyOf"] = [*existing, *one_of] if isinstance(existing, list) else one_of
        all_of = node.get("allOf")
        for part in all_of if isinstance(all_of, list) else []:
            out = _merge_gemini(out, self.convert(part))
        return out

    def _type(self, node: dict[str, Any], out: dict[str, Any]) -> None:
        kind = node.get("type")
        kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
        names = [k.lower() for k in kinds if isinstance(k, str) and k.lower() in _GEMINI_TYPES]
        concrete = list(dict.fromkeys(k for k in names if k != "null"))
        if "null" in names and concrete:
            out["nullable"] = True
        if len(concrete) == 1:
            out["type"] = concrete[0].upper()
        elif len(concrete) > 1 and "anyOf" not in node:
            out["anyOf"] = [{"type": k.upper()} for k in concrete]
        elif names and not concrete:
            out["type"] = "NULL"

    def _values(self, node: dict[str, Any], out: dict[str, Any], notes: list[tuple[str, Any]]) -> None:
        if "const" in node:
            value = node["const"]
            if isinstance(value, str):
                out["enum"] = [value]
                out.setdefault("type", "STRING")
            else:
                notes.append(("const", value))
        enum = node.get("enum")
        if isinstance(enum, list) and "enum" not in out:
            strings = [v for v in enum if v is not None]
            if strings and all(isinstance(v, str) for v in strings):
                out["enum"] = strings
                out.setdefault("type", "STRING")
                if len(strings) < len(enum):
                    out["nullable"] = True
            else:
                notes.append(("enum", enum))

    def _children(self, node: dict[str, Any], out: dict[str, Any]) -> None:
        properties = node.get("properties")
        if isinstance(properties, dict):
            out["properties"] = {name: self.convert(sub) for name, sub in properties.items()}
            out.setdefault("type", "OBJECT")
            names = [n for n in node.get("required", []) if isinstance(n, str) and n in properties]
            if names:
                out["required"] = list(dict.fromkeys(names))
            ordering = node.get("propertyOrdering")
            if isinstance(ordering, list):
                out["propertyOrdering"] = [n for n in ordering if isinstance(n, str) and n in properties]
        items = node.get("items")
        if not isinstance(items, dict | bool):
            items = node.get("prefixItems", items)
            # Tuples do not exist in the subset; widen them to "any of the positions' types".
            if isinstance(items, list) and items:
                items = items[0] if len(items) == 1 else {"anyOf": items}
        if isinstance(items, dict | bool):
            out["items"] = self.convert(items)
            out.setdefault("type", "ARRAY")

    def _any_of(self, branches: Any, out: dict[str, Any]) -> None:
        if not isinstance(branches, list):
            return
        converted = [self.convert(b) for b in branches]
        concrete = [b for b in converted if not _is_gemini_null(b)]
        if len(concrete) < len(converted):
            out["nullable"] = True
        if len(concrete) == 1:
            merged = {**concrete[0], **{k: v for k, v in out.items() if k != "anyOf"}}
            out.clear()
            out.update(merged)
        elif concrete:
            out["anyOf"] = concrete
        elif "type" not in out:
            out["type"] = "NULL"
            out.pop("nullable", None)

    def _format(self, node: dict[str, Any], out: dict[str, Any], notes: list[tuple[str, Any]]) -> None:
        value = node.get("format")
        if value is None:
            return
        if value in _GEMINI_FORMATS.get(out.get("type", ""), ()):
            out["format"] = value
        else:
            notes.append(("format", value))


def _is_gemini_null(node: dict[str, Any]) -> bool:
    return node.get("type") == "NULL" and not (set(node) - {"type", "description"})


def _merge_gemini(base: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """Merge an `allOf` member into its node: the node's own keys win, properties add up."""
    merged = {**part, **base}
    if isinstance(part.get("properties"), dict) and isinstance(base.get("properties"), dict):
        merged["properties"] = {**base["properties"]}
        for name, sub in part["properties"].items():
            merged["properties"].setdefault(name, sub)
    if isinstance(part.get("required"), list) and isinstance(base.get("required"), list):
        names = [n for n in [*base["required"], *part["required"]] if isinstance(n, str)]
        merged["required"] = list(dict.fromkeys(names))
    return merged


# Inlined references (Ollama)


def inline_refs(schema: dict[str, Any] | None) -> dict[str, Any]:
    """The schema with every local `$ref` replaced by its target and `$defs`/`definitions` dropped.

    A reference back into itself (a recursive model) is cut to a plain object that says so, and
    keywords beside a `$ref` are kept over the target's. Returns `schema` itself when it has no
    `$ref` at all.
    """
    if schema is None:
        return {"type": "object", "properties": {}}
    if '"$ref"' not in json.dumps(schema):
        return schema
    inlined: dict[str, Any] = _inline(schema, schema, ())
    inlined.pop("$defs", None)
    inlined.pop("definitions", None)
    return inlined


def _inline(node: Any, root: dict[str, Any], active: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, root, active) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if ref is None:
        return {k: _inline(v, root, active) for k, v in node.items() if k not in ("$defs", "definitions")}
    siblings = {k: _inline(v, root, active) for k, v in node.items() if k != "$ref"}
    target = _resolve_pointer(root, ref)
    if ref in active or not isinstance(target, dict):
        why = "recursive reference" if ref in active else "unresolved reference"
        return {"type": "object", "description": f"({why} omitted: {_ref_name(str(ref))!r})", **siblings}
    return {**_inline(target, root, (*active, ref)), **siblings}


def from_openapi_schema(schema: Any) -> Any:
    """An OpenAPI 3.0 schema (Gemini's `parameters`: `OBJECT`, `nullable`) as plain JSON Schema.

    Types are lower-cased and `nullable: true` becomes a `null` alternative, at every depth; the
    rest is kept as it is. The inverse of what `gemini_schema` sends, for `decode_request`.
    """
    if isinstance(schema, list):
        return [from_openapi_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: from_openapi_schema(value) for key, value in schema.items() if key != "nullable"}
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = kind.lower()
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    for keyword in ("properties", "$defs", "definitions"):  # maps of names to schemas: names kept as they are
        if isinstance(schema.get(keyword), dict):
            out[keyword] = {name: from_openapi_schema(value) for name, value in schema[keyword].items()}
    return out
