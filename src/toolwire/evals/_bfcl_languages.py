"""BFCL's Java and JavaScript categories: parameters asked as strings, values read back by their type.

BFCL asks function-calling models for every Java or JavaScript argument as a string holding the
value in that language's syntax (`"new ArrayList<>(Arrays.asList(1, 2))"`, `"42L"`, `"true"`),
with a hint in each description, and its checker turns the string back into a value by the
documented type before comparing (`bfcl_eval/utils.py` `_func_doc_language_specific_pre_processing`,
`eval_checker/ast_eval/type_convertor/`, bfcl-eval 2026.3.23). These are the same rules, decision
for decision, so scores stay comparable with the leaderboard's. Imports only the standard library.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

__all__ = ["JAVA_TYPES", "JS_TYPES", "Language", "language_of", "string_typed", "to_value"]

Language = Literal["python", "java", "javascript"]

JAVA_TYPES: dict[str, type] = {
    "byte": int,
    "short": int,
    "integer": int,
    "float": float,
    "double": float,
    "long": int,
    "boolean": bool,
    "char": str,
    "Array": list,
    "ArrayList": list,
    "Set": set,
    "HashMap": dict,
    "Hashtable": dict,
    "Queue": list,
    "Stack": list,
    "String": str,
    "any": str,
}
JS_TYPES: dict[str, type] = {
    "String": str,
    "integer": int,
    "float": float,
    "Bigint": int,
    "Boolean": bool,
    "dict": dict,
    "array": list,
    "any": str,
}
_NAMES = {"java": "Java", "javascript": "JavaScript"}
_INT = re.compile(r"^-?\d+$")
_JAVA_FLOAT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_JAVA_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_JAVA_LONG = re.compile(r"^-?\d+[lL]$")


def language_of(category: str) -> Language:
    """`java` for `simple_java`, `javascript` for `simple_javascript`, else `python` (live ones too)."""
    if category.endswith("javascript"):
        return "javascript"
    return "java" if category.endswith("java") else "python"


def string_typed(function: Mapping[str, Any], language: Language) -> dict[str, Any]:
    """A Java/JavaScript function document as BFCL offers it to a model: each parameter a string."""
    document = copy.deepcopy(dict(function))
    if language == "python":
        return document
    name = _NAMES[language]
    document["description"] = f"{document.get('description', '')} Note that the provided function is in {name} syntax."
    for schema in document["parameters"]["properties"].values():
        kind = schema["type"]
        hint = f" This is {name} {kind} type parameter in string representation."
        if kind == "any":
            hint = f" This parameter can be of any type of {name} object in string representation."
        schema["description"] = schema.get("description", "") + hint
        if kind in ("ArrayList", "Array", "array"):
            item = schema.pop("items")["type"]
            schema["description"] += f" The list elements are of type {item}; they are not in string representation."
        if language == "javascript" and kind == "dict" and "properties" in schema:
            shape = json.dumps(schema.pop("properties"))
            schema["description"] += (
                f" The dictionary entries have the following schema; they are not in string representation. {shape}"
            )
        schema["type"] = "string"
    return document


def to_value(value: str, kind: str, nested: str | None, language: Language) -> Any:
    """The string a model gave for a `kind` parameter, read as BFCL reads it (unreadable: the string)."""
    return _java(value, kind, nested) if language == "java" else _js(value, kind, nested)


def _java(value: str, kind: str, nested: str | None = None) -> Any:
    readers: dict[str, Callable[[str], Any]] = {
        "byte": lambda v: int(v) if _INT.match(v) else v,
        "short": lambda v: int(v) if _INT.match(v) else v,
        "integer": lambda v: int(v) if _INT.match(v) else v,
        "float": lambda v: float(v.rstrip("fF")) if _JAVA_FLOAT.match(v) else v,
        "double": lambda v: float(v) if _JAVA_DOUBLE.match(v) else v,
        "long": lambda v: int(v[:-1]) if _JAVA_LONG.match(v) else v,
        "boolean": lambda v: v == "true" if v in ("true", "false") else v,
        "ArrayList": lambda v: _java_arraylist(v, nested),
        "Array": lambda v: _java_array(v, nested),
        "HashMap": _java_hashmap,
    }
    return readers.get(kind, str)(value)


def _java_element(text: str, nested: str | None) -> Any:
    if nested in ("char", "String"):
        return text[1:-1]
    return _java(text, nested) if nested else _java_literal(text)


def _java_arraylist(text: str, nested: str | None) -> Any:
    if match := re.search(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)", text):
        return [_java_element(item.strip(), nested) for item in match.group(1).split(",")]
    if match := re.search(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", text, re.DOTALL):
        return [_java_element(item.strip(), nested) for item in re.findall(r"add\((.+?)\)", match.group(1))]
    return [] if re.search(r"new\s+ArrayList<\w*>\(\)", text) else text


def _java_array(text: str, nested: str | None) -> Any:
    match = re.search(r"new\s+\w+\[\]\s*\{(.*?)\}", text)
    if match is None:
        return text
    items = [item.strip() for item in match.group(1).split(",") if item.strip()]
    return [_java(item, nested) if nested else _java_literal(item) for item in items]


def _java_hashmap(text: str) -> Any:
    if match := re.search(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", text, re.DOTALL):
        puts = re.findall(r"put\(\"(.*?)\",\s*(.*?)\)", match.group(1)) if match.group(1).strip() else []
        return {key: _java_literal(item.strip()) for key, item in puts}
    return {} if re.search(r"new\s+HashMap<.*?>\s*\(\)", text) else text


def _java_literal(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _JAVA_LONG.match(text):
        return int(text[:-1])
    if _JAVA_FLOAT.match(text):
        return float(text.rstrip("fF"))
    return _number(text)


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _quoted(text: str) -> bool:
    return len(text) >= 1 and text[0] == text[-1] and text[0] in "'\""


def _js(value: str, kind: str, nested: str | None = None) -> Any:
    readers: dict[str, Callable[[str], Any]] = {
        "String": lambda v: v[1:-1] if _quoted(v) else v,
        "integer": lambda v: int(v) if _INT.match(v) else v,
        "float": lambda v: float(v) if re.match(r"^-?\d+(\.\d+)?$", v) else v,
        "Bigint": lambda v: int(v[:-1]) if re.match(r"^-?\d+n$", v) else v,
        "Boolean": lambda v: v == "true" if v in ("true", "false") else v,
        "dict": _js_dict,
        "array": lambda v: _js_array(v, nested),
    }
    return readers.get(kind, str)(value)


def _js_array(text: str, nested: str | None) -> Any:
    code = text.strip()
    two_d = re.match(r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)", code)
    if two_d:
        rows = re.findall(r"\[(.*?)\]", two_d.group(0))
        rows = [
            row.strip()[1:] if i == 0 and row.strip().startswith("[") else row.strip() for i, row in enumerate(rows)
        ]
        return [[_js_literal(item.strip()) for item in row.split(",")] for row in rows]
    match = re.match(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)", code)
    if match is None:
        return code
    inner = (match.group(1) if match.group(1) is not None else match.group(2) or "").strip()
    items = inner.split(",") if inner else []
    if not nested:
        return [_js_literal(item.strip()) for item in items]
    try:
        return [_js(item.strip(), nested) for item in items]
    except (ValueError, IndexError):
        return code


def _js_dict(text: str) -> Any:
    code = text.strip()
    if code == "{}":
        return {}
    match = re.match(r"\{(.*?)\}", code)
    if match is None:
        return code
    entries: dict[str, Any] = {}
    for key, item in re.findall(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)", match.group(1)):
        item = item.strip()
        if item.startswith("[") and item.endswith("]"):
            entries[key.strip().strip("'\"")] = _js_array(item, None)
        elif item.startswith("{") and item.endswith("}"):
            entries[key.strip().strip("'\"")] = _js_dict(item)
        else:
            entries[key.strip().strip("'\"")] = _js_literal(item.strip("'\""))
    return entries


def _js_literal(text: str) -> Any:
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if len(text) >= 2 and _quoted(text):
        return text[1:-1]
    return _number(text)
