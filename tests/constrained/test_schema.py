"""The reply schema: its exact shape per tool_choice, what loosening does, and that it accepts what it should."""

from __future__ import annotations

import logging
import re

import jsonschema
import pytest

from tests.constrained._shapes import AREA, AREA_ARGUMENTS, WEATHER, WEATHER_ARGUMENTS, call_schema, listed
from toolwire.codecs.openai.profiles import PROFILES
from toolwire.constrained import PORTABLE, SchemaSupport, loosen, reply_schema
from toolwire.types import NamedToolChoice


def test_auto_asks_for_a_list_of_calls_of_the_tools_which_may_be_empty() -> None:
    reply = reply_schema([AREA, WEATHER], max_calls=2)
    assert reply is not None
    items = {"anyOf": [call_schema("triangle_area", AREA_ARGUMENTS), call_schema("weather", WEATHER_ARGUMENTS)]}
    assert reply.schema == listed(items, 0, 2)
    assert (reply.answer_allowed, reply.max_calls) == (True, 2)
    assert [t.name for t in reply.tools] == ["triangle_area", "weather"]
    default = reply_schema([AREA])
    assert default is not None and default.schema == listed(call_schema("triangle_area", AREA_ARGUMENTS), 0, 4)


def test_none_constrains_nothing_required_asks_for_a_call_a_name_keeps_one_tool() -> None:
    assert reply_schema([AREA, WEATHER], "none") is None
    assert reply_schema([], "auto") is None
    required = reply_schema([AREA], "required", parallel_tool_calls=False)
    assert required is not None and required.schema == listed(call_schema("triangle_area", AREA_ARGUMENTS), 1, 1)
    assert not required.answer_allowed
    named = reply_schema([AREA, WEATHER], NamedToolChoice("weather"))
    assert named is not None and named.schema == listed(call_schema("weather", WEATHER_ARGUMENTS), 1, 4)
    assert not named.answer_allowed


def test_a_named_tool_that_is_not_offered_is_a_clear_error() -> None:
    with pytest.raises(
        ValueError, match=r"tool_choice names 'search', which is not among the tools \('triangle_area'\)"
    ):
        reply_schema([AREA], NamedToolChoice("search"))


def test_the_schema_accepts_no_call_and_valid_calls_and_nothing_else() -> None:
    reply = reply_schema([AREA, WEATHER])
    assert reply is not None
    validator = jsonschema.Draft202012Validator(reply.schema)
    paris = {"name": "weather", "arguments": {"city": "Paris"}}
    area = {"name": "triangle_area", "arguments": {"base": 2, "height": 1.5}}
    good = [[], [paris], [area, paris], [paris] * 4]
    bad = [
        [paris] * 5,
        {"tool_calls": [paris]},
        paris,
        [{"name": "search", "arguments": {}}],
        [{"name": "weather", "arguments": {"city": "Paris", "unit": "C"}}],
        [{"name": "triangle_area", "arguments": {"base": "2", "height": 1}}],
        [{"name": "weather"}],
        {"answer": "x"},
    ]
    assert [validator.is_valid(v) for v in good] == [True] * 4
    assert [validator.is_valid(v) for v in bad] == [False] * 8


def test_loosening_drops_what_the_engine_cannot_enforce_and_says_where(caplog: pytest.LogCaptureFixture) -> None:
    schema = {
        "type": "object",
        "title": "Args",
        "properties": {
            "when": {"type": "string", "format": "date"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$", "minLength": 3},
            "count": {"type": "integer", "minimum": 1, "default": 1},
        },
    }
    loosened, notes = loosen(schema, PORTABLE)
    assert loosened == {
        "type": "object",
        "properties": {
            "when": {"type": "string"},
            "code": {"type": "string", "minLength": 3},
            "count": {"type": "integer"},
        },
        "additionalProperties": False,
    }
    assert notes == [
        '$.when: format "date" dropped',
        '$.code: pattern "^[A-Z]{3}$" dropped',
        "$.count: minimum 1 dropped",
    ]
    rich = SchemaSupport(pattern=True, formats=frozenset({"date"}), numeric_bounds=True)
    assert loosen(schema, rich)[1] == []
    with caplog.at_level(logging.DEBUG, logger="toolwire.constrained"):
        reply_schema([WEATHER])
    assert [r.getMessage() for r in caplog.records] == [
        "constrained mode: tool 'weather': $.city: pattern \"^[A-Z]\" dropped "
        "(its calls are still validated against its own schema)"
    ]


def test_references_are_inlined_and_recursion_cut_to_any_object() -> None:
    tree = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
        },
    }
    loosened, notes = loosen(tree)
    children = loosened["properties"]["root"]["properties"]["children"]["items"]
    assert children == {"type": "object", "description": "(recursive reference omitted: 'Node')"}
    assert "$defs" not in loosened
    assert notes == ["$: a recursive reference cut to any object"]


def test_an_explicit_additional_properties_is_kept_and_the_input_is_untouched() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}}}
    before = repr(schema)
    loosened, _ = loosen(schema)
    assert loosened["properties"]["tags"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert repr(schema) == before


def test_free_strings_get_the_engines_string_pattern_with_their_lengths_folded_in() -> None:
    # llama-cpp-python's string rule lets raw newlines in; its profile names JSON's own string
    # character, which every free string then gets as its pattern (the converter reads it as text).
    support = PROFILES["llama-cpp-python"].schema_support
    char = support.string_char_pattern
    assert char == r'[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}'
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "code": {"type": "string", "minLength": 3, "maxLength": 5},
            "word": {"type": "string", "maxLength": 9},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
            "day": {"type": "string", "format": "date"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    loosened, notes = loosen(schema, support)
    props = loosened["properties"]
    assert notes == []
    assert props["query"] == {"type": "string", "pattern": f"^({char})*$"}
    assert props["code"]["pattern"] == f"^({char}){{3,5}}$"
    assert props["word"]["pattern"] == f"^({char}){{0,9}}$"
    assert props["tags"]["items"] == {"type": "string", "pattern": f"^({char})*$"}
    assert [props[k] for k in ("unit", "zip", "day")] == [schema["properties"][k] for k in ("unit", "zip", "day")]  # type: ignore[index]
    # As the engine reads it (the string's JSON text): escapes yes, raw control characters no.
    text = re.compile(props["query"]["pattern"])
    assert [bool(text.match(t)) for t in ['say \\"hi\\"\\n', "caf\\u00e9", "two\nlines", 'a"b', "tab\there"]] == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert loosen(schema, PORTABLE)[0]["properties"]["query"] == {"type": "string"}
    reply = reply_schema([WEATHER], support=support)
    assert reply is not None
    assert reply.schema["items"]["properties"]["arguments"]["properties"]["city"] == {
        "type": "string",
        "pattern": "^[A-Z]",
    }


def test_required_names_without_properties_become_properties_so_the_grammar_writes_them() -> None:
    schema = {
        "type": "object",
        "properties": {
            "population": {"type": "object", "required": ["adults", "children"]},
            "home": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city", "zip"]},
        },
        "required": ["population"],
    }
    loosened, notes = loosen(schema)
    props = loosened["properties"]
    assert props["population"] == {
        "type": "object",
        "required": ["adults", "children"],
        "properties": {"adults": {}, "children": {}},
        "additionalProperties": False,
    }
    assert props["home"]["properties"] == {"city": {"type": "string"}, "zip": {}}
    assert notes == []
    validator = jsonschema.Draft202012Validator(loosened)
    assert validator.is_valid({"population": {"adults": 2, "children": 1}})
    assert not validator.is_valid({"population": {"type": "number", "value": 10}})  # what SmolLM2 wrote
