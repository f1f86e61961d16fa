"""Output types: schemas as sent (objects, scalars wrapped), JSON found in replies, partial objects."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.toolmodes import InvalidOutput, OutputType, find_json, partial_json


def test_an_object_type_goes_as_it_is_and_a_scalar_wrapped() -> None:
    assert OutputType.of(int).schema == {
        "type": "object",
        "properties": {"value": {"type": "integer"}},
        "required": ["value"],
        "additionalProperties": False,
    }
    bare = OutputType.from_schema({"type": "object"})
    assert (bare.wrapped, bare.name) == (False, "response")
    assert OutputType.of(int).validate({"value": 3}) == 3
    assert OutputType.of(int).validate(3) == 3


def test_validation_errors_name_each_field() -> None:
    output = OutputType.from_schema(
        {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"enum": ["a"]}}, "required": ["n"]}
    )
    with pytest.raises(InvalidOutput) as caught:
        output.validate({"n": "x", "s": "b"})
    assert caught.value.errors.splitlines() == ["n: 'x' is not of type 'integer'", "s: 'b' is not one of ['a']"]
    with pytest.raises(ValueError, match="The output schema is not a valid JSON Schema"):
        OutputType.from_schema({"type": 3})


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"a": 1}', {"a": 1}),
        ('Sure:\n```json\n{"a": 1}\n```\nDone.', {"a": 1}),
        ('The answer is {"a": 1, "b": [2', {"a": 1, "b": [2]}),
        ("{'a': True}", {"a": True}),
        ("no JSON here", None),
    ],
)
def test_json_is_found_whole_fenced_after_prose_and_repaired(text: str, found: Any) -> None:
    assert find_json(text) == found


@pytest.mark.parametrize(
    ("prefix", "partial"),
    [
        ('{"name": "Al', {}),
        ('{"name": "Alice", "age": 3', {"name": "Alice"}),
        ('{"name": "Alice", "age": 34}\n```', {"name": "Alice", "age": 34}),
        ("nothing yet", None),
    ],
)
def test_a_partial_object_holds_only_the_fields_already_complete(prefix: str, partial: Any) -> None:
    assert partial_json(prefix) == partial
