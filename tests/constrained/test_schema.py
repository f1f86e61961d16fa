"""The reply schema: its exact shape per tool_choice, what loosening does, and that it accepts what it should."""

from __future__ import annotations

import logging
from typing import Any

import jsonschema
import pytest

from toolwire.constrained import PORTABLE, SchemaSupport, loosen, reply_schema
from toolwire.types import NamedToolChoice, ToolDefinition

AREA = ToolDefinition(
    name="triangle_area",
    description="Area of a triangle.",
    parameters={
        "type": "object",
        "properties": {"base": {"type": "integer"}, "height": {"type": "number"}},
        "required": ["base", "height"],
    },
)
WEATHER = ToolDefinition(
    name="weather",
    description="Weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "pattern": "^[A-Z]"}},
        "required": ["city"],
    },
)


def call_schema(tool: ToolDefinition, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"name": {"const": tool.name}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


AREA_ARGUMENTS = {**(AREA.parameters or {}), "additionalProperties": False}
WEATHER_ARGUMENTS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
ANSWER = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def calls(items: dict[str, Any], **bounds: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"tool_calls": {"type": "array", "items": items, "minItems": 1, **bounds}},
        "required": ["tool_calls"],
        "additionalProperties": False,
    }


def test_auto_allows_an_answer_or_calls_of_any_tool_with_its_own_arguments() -> None:
    reply = reply_schema([AREA, WEATHER])
    assert reply is not None
    items = {"anyOf": [call_schema(AREA, AREA_ARGUMENTS), call_schema(WEATHER, WEATHER_ARGUMENTS)]}
    assert reply.schema == {"anyOf": [ANSWER, calls(items)]}
    assert (reply.answer_allowed, reply.max_calls, [t.name for t in reply.tools]) == (
        True,
        None,
        ["triangle_area", "weather"],
    )


def test_none_constrains_nothing_required_drops_the_answer_a_name_keeps_one_tool() -> None:
    assert reply_schema([AREA, WEATHER], "none") is None
    assert reply_schema([], "auto") is None
    required = reply_schema([AREA], "required")
    assert required is not None and required.schema == calls(call_schema(AREA, AREA_ARGUMENTS))
    named = reply_schema([AREA, WEATHER], NamedToolChoice("weather"))
    assert named is not None and named.schema == calls(call_schema(WEATHER, WEATHER_ARGUMENTS))
    assert not named.answer_allowed


def test_no_parallel_calls_means_at_most_one_call() -> None:
    reply = reply_schema([AREA], parallel_tool_calls=False)
    assert reply is not None
    assert reply.schema["anyOf"][1] == calls(call_schema(AREA, AREA_ARGUMENTS), maxItems=1)
    assert reply.max_calls == 1


def test_a_named_tool_that_is_not_offered_is_a_clear_error() -> None:
    with pytest.raises(
        ValueError, match=r"tool_choice names 'search', which is not among the tools \('triangle_area'\)"
    ):
        reply_schema([AREA], NamedToolChoice("search"))


def test_the_schema_accepts_answers_and_valid_calls_and_nothing_else() -> None:
    reply = reply_schema([AREA, WEATHER])
    assert reply is not None
    validator = jsonschema.Draft202012Validator(reply.schema)
    good = [
        {"answer": "It is sunny."},
        {"tool_calls": [{"name": "weather", "arguments": {"city": "Paris"}}]},
        {
            "tool_calls": [
                {"name": "triangle_area", "arguments": {"base": 2, "height": 1.5}},
                {"name": "weather", "arguments": {"city": "Rome"}},
            ]
        },
    ]
    bad = [
        {"tool_calls": []},
        {"tool_calls": [{"name": "search", "arguments": {}}]},
        {"tool_calls": [{"name": "weather", "arguments": {"city": "Paris", "unit": "C"}}]},
        {"tool_calls": [{"name": "triangle_area", "arguments": {"base": "2", "height": 1}}]},
        {"answer": "x", "tool_calls": []},
    ]
    assert [validator.is_valid(v) for v in good] == [True, True, True]
    assert [validator.is_valid(v) for v in bad] == [False, False, False, False, False]


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
