"""BFCL's own files, read from the installed bfcl-eval package (the Makefile installs it with --no-deps)."""

from __future__ import annotations

import re

from toolwire.evals import CATEGORIES, DEFAULT_CATEGORIES, load_cases, to_json_schema
from toolwire.types import UserMessage


def test_the_first_cases_of_each_category_load_with_api_safe_tools() -> None:
    cases = list(load_cases(DEFAULT_CATEGORIES, limit=2))
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


def test_every_single_turn_category_loads_and_the_others_are_refused_by_name() -> None:
    import pytest

    from toolwire.evals import BfclDataError

    loaded = {c.category: c for c in load_cases(CATEGORIES, limit=1)}
    assert list(loaded) == list(CATEGORIES)
    assert loaded["live_relevance"].possible_answer == []  # no answer file: a call is the answer
    java = loaded["simple_java"].tools[0]
    assert java.parameters is not None
    assert {p["type"] for p in java.parameters["properties"].values()} == {"string"}  # as BFCL asks
    assert java.parameters["properties"]["controller"]["description"].endswith(
        " This parameter can be of any type of Java object in string representation."
    )
    kinds = [("multi_turn_base", "multi-turn (several user turns against tools with state)"), ("web_search", "")]
    for category, kind in kinds:
        kind = kind or "multi-turn with a live web search"
        with pytest.raises(
            BfclDataError, match=re.escape(f"BFCL category '{category}' is {kind}, which toolwire eval")
        ):
            list(load_cases([category]))
    with pytest.raises(BfclDataError, match=r"^Unknown BFCL category 'simple'; the categories are simple_python, "):
        list(load_cases(["simple"]))
