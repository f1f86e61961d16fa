"""BFCL's own files, read from the installed bfcl-eval package (the Makefile installs it with --no-deps)."""

from __future__ import annotations

from toolwire.evals import CATEGORIES, load_cases, to_json_schema
from toolwire.types import UserMessage


def test_the_first_cases_of_each_category_load_with_api_safe_tools() -> None:
    cases = list(load_cases(CATEGORIES, limit=2))
    assert [c.id for c in cases] == [
        "simple_python_0",
        "simple_python_1",
        "multiple_0",
        "multiple_1",
        "parallel_0",
        "parallel_1",
        "irrelevance_0",
        "irrelevance_1",
    ]
    first = cases[0]
    assert first.messages == [
        UserMessage(content="Find the area of a triangle with a base of 10 units and height of 5 units.")
    ]
    assert first.tools[0].name == "calculate_triangle_area"
    assert first.tools[0].parameters == {
        "type": "object",
        "properties": {
            "base": {"type": "integer", "description": "The base of the triangle."},
            "height": {"type": "integer", "description": "The height of the triangle."},
            "unit": {"type": "string", "description": "The unit of measure (defaults to 'units' if not specified)"},
        },
        "required": ["base", "height"],
    }
    assert first.possible_answer == [{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]
    factorial = cases[1]
    assert (factorial.tools[0].name, factorial.bfcl_name("math_factorial")) == ("math_factorial", "math.factorial")
    assert cases[-1].possible_answer == []


def test_the_bfcl_dialect_becomes_json_schema() -> None:
    bfcl = {
        "type": "dict",
        "properties": {
            "ratio": {"type": "float"},
            "pair": {"type": "tuple", "items": {"type": "any"}},
            "opts": {"type": "dict", "properties": {}},
        },
        "required": ["ratio"],
        "optional": ["pair"],
    }
    assert to_json_schema(bfcl) == {
        "type": "object",
        "properties": {
            "ratio": {"type": "number"},
            "pair": {"type": "array", "items": {"type": "string"}},
            "opts": {"type": "object", "properties": {}},
        },
        "required": ["ratio"],
    }
