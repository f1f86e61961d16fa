"""Reading constrained replies: calls validated against their tools, "no call", and what else can arrive."""

from __future__ import annotations

import json

from toolwire.constrained import argument_errors, parse_reply
from toolwire.types import ToolDefinition

AREA = ToolDefinition(
    name="triangle_area",
    description="Area of a triangle.",
    parameters={
        "type": "object",
        "properties": {
            "base": {"type": "integer"},
            "height": {"type": "number"},
            "unit": {"type": "string", "pattern": "^[a-z]+$"},
        },
        "required": ["base", "height"],
    },
)
TOOLS = [AREA]


def shaped(*calls: dict[str, object]) -> str:
    return json.dumps(list(calls))


def area(base: object, height: object, **more: object) -> dict[str, object]:
    return {"name": "triangle_area", "arguments": {"base": base, "height": height, **more}}


def test_an_empty_list_is_no_call_with_the_answer_due() -> None:
    reply = parse_reply(" [ ] ", TOOLS)
    assert (reply.text, reply.calls, reply.parsed, reply.answer_due, reply.notes) == ("", [], True, True, [])


def test_calls_become_tool_calls_with_fresh_ids() -> None:
    reply = parse_reply(shaped(area(10, 5), area(3, 4.5)), TOOLS)
    assert reply.parsed and reply.text == "" and not reply.answer_due
    assert [(c.name, c.arguments, c.metadata) for c in reply.calls] == [
        ("triangle_area", {"base": 10, "height": 5}, {}),
        ("triangle_area", {"base": 3, "height": 4.5}, {}),
    ]
    assert len({c.id for c in reply.calls}) == 2 and all(c.id.startswith("call_") for c in reply.calls)


def test_arguments_are_validated_against_the_tools_own_schema() -> None:
    # The pattern was loosened out of the grammar; the tool's own schema still holds it.
    (call,) = parse_reply(shaped(area(10, 5, unit="CM")), TOOLS).calls
    assert call.arguments == {"base": 10, "height": 5, "unit": "CM"}
    assert call.metadata["arguments_error"] == (
        "The arguments do not match the tool's schema: at 'unit': 'CM' does not match '^[a-z]+$'."
    )


def test_an_unknown_tool_is_kept_with_an_error() -> None:
    (call,) = parse_reply(shaped({"name": "search", "arguments": {"q": "x"}}), TOOLS).calls
    assert (call.name, call.metadata["arguments_error"]) == ("search", "There is no tool named 'search'.")


def test_a_list_ends_before_its_first_repeated_call() -> None:
    # Key order and spacing aside, the third call repeats the first: the model is looping.
    again = {"name": "triangle_area", "arguments": {"height": 5, "base": 10}}
    reply = parse_reply(shaped(area(10, 5), area(3, 4), again, area(7, 7)), TOOLS)
    assert [c.arguments for c in reply.calls] == [{"base": 10, "height": 5}, {"base": 3, "height": 4}]
    assert reply.notes == ["the model began to repeat a call; the list ends before the repeat"]
    assert reply.parsed


def test_a_reply_cut_by_the_token_limit_after_a_repeat_is_whole() -> None:
    cut = shaped(area(10, 5), area(3, 4))[:-1] + ", " + json.dumps(area(10, 5)) + ', {"name": "triangle_a'
    reply = parse_reply(cut, TOOLS)
    assert [c.arguments for c in reply.calls] == [{"base": 10, "height": 5}, {"base": 3, "height": 4}]
    assert (reply.parsed, reply.notes) == (True, ["the model began to repeat a call; the list ends before the repeat"])


def test_repeated_calls_in_another_shape_are_kept_once() -> None:
    reply = parse_reply(json.dumps({"tool_calls": [area(10, 5), area(10, 5)]}), TOOLS)
    assert [c.arguments for c in reply.calls] == [{"base": 10, "height": 5}]
    assert reply.notes == [
        "the calls came in another shape than the list asked for",
        "a repeated call of 'triangle_area' with the same arguments dropped",
    ]


def test_a_reply_cut_by_the_token_limit_is_repaired_and_not_counted_as_parsed() -> None:
    reply = parse_reply('[{"name": "triangle_area", "arguments": {"base": 10, "height": 5', TOOLS)
    assert [(c.name, c.arguments) for c in reply.calls] == [("triangle_area", {"base": 10, "height": 5})]
    assert not reply.parsed
    assert reply.notes == ["the reply was not whole JSON (cut by the token limit?) and was repaired"]


def test_other_shapes_are_read_but_not_counted_as_parsed_and_prose_stays_text() -> None:
    wrapped = parse_reply(json.dumps({"tool_calls": [area(1, 2)]}), TOOLS)
    assert ([c.name for c in wrapped.calls], wrapped.parsed) == (["triangle_area"], False)
    assert wrapped.notes == ["the calls came in another shape than the list asked for"]
    lone = parse_reply(json.dumps(area(1, 2)), TOOLS)
    assert ([c.name for c in lone.calls], lone.parsed) == (["triangle_area"], False)
    prose = parse_reply("The area is 25.", TOOLS)
    assert (prose.text, prose.calls, prose.parsed, prose.answer_due) == ("The area is 25.", [], False, False)
    other = parse_reply('{"answer": "4"}', TOOLS)
    assert (other.text, other.calls, other.parsed, other.answer_due) == ('{"answer": "4"}', [], False, False)
    numbers = parse_reply("[10, 5]", TOOLS)
    assert (numbers.text, numbers.calls, numbers.answer_due) == ("[10, 5]", [], False)
    assert numbers.notes == ["the reply is not the JSON shape asked for; kept as text"]


def test_argument_errors_name_each_problem_and_pass_a_schema_that_is_not_json_schema() -> None:
    schema = AREA.parameters
    assert argument_errors({"base": 1, "height": 2}, schema) is None
    assert argument_errors({"base": "1"}, schema) == (
        "The arguments do not match the tool's schema: 'height' is a required property; "
        "at 'base': '1' is not of type 'integer'."
    )
    assert argument_errors({"x": 1}, {"type": "dict"}) is None  # BFCL's dialect is not JSON Schema
