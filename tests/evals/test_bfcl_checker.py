"""BFCL's AST rules on hand-made cases, one rule per test (bench/bfcl/crosscheck.py compares with BFCL's own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolwire.evals import check_calls, standardize

AREA = {
    "name": "geometry.area",
    "parameters": {
        "type": "dict",
        "properties": {
            "base": {"type": "integer"},
            "height": {"type": "float"},
            "unit": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "options": {"type": "dict", "properties": {"round": {"type": "boolean"}}},
        },
        "required": ["base", "height"],
    },
}
AREA_ANSWER = {
    "geometry.area": {
        "base": [10],
        "height": [5.0, 5.5],
        "unit": ["cm", "centimeters", ""],
        "tags": [["a", "b"], ""],
        "options": [{"round": [True]}, ""],
    }
}
PLAY = {
    "name": "play",
    "parameters": {
        "type": "dict",
        "properties": {"artist": {"type": "string"}, "minutes": {"type": "integer"}},
        "required": ["artist", "minutes"],
    },
}


def simple(*calls: dict[str, Any]) -> tuple[bool, str]:
    verdict = check_calls("simple_python", [AREA], list(calls), [AREA_ANSWER])
    return verdict.valid, verdict.kind


def test_a_right_call_with_optional_parameters_left_out_is_valid() -> None:
    assert simple({"geometry.area": {"base": 10, "height": 5.5}}) == (True, "")


def test_an_int_is_accepted_for_a_float_but_not_a_float_for_an_int() -> None:
    assert simple({"geometry.area": {"base": 10, "height": 5}}) == (True, "")
    assert simple({"geometry.area": {"base": 10.0, "height": 5.0}}) == (False, "type")


def test_a_bool_is_not_an_int() -> None:
    verdict = check_calls(
        "simple_python",
        [PLAY],
        [{"play": {"artist": "x", "minutes": True}}],
        [{"play": {"artist": ["x"], "minutes": [1]}}],
    )
    assert (verdict.valid, verdict.kind) == (False, "type")


def test_the_name_must_match_exactly() -> None:
    assert simple({"geometry_area": {"base": 10, "height": 5.5}}) == (False, "wrong_name")


def test_a_missing_required_parameter_fails() -> None:
    assert simple({"geometry.area": {"base": 10}}) == (False, "missing_required")


def test_a_parameter_outside_the_document_or_the_answer_fails() -> None:
    assert simple({"geometry.area": {"base": 10, "height": 5.5, "color": "red"}}) == (False, "unexpected_param")


def test_a_value_outside_the_possible_answers_fails() -> None:
    assert simple({"geometry.area": {"base": 11, "height": 5.5}}) == (False, "value")


def test_strings_compare_without_case_spaces_and_punctuation() -> None:
    assert simple({"geometry.area": {"base": 10, "height": 5.5, "unit": " Centi-Meters."}}) == (True, "")
    assert simple({"geometry.area": {"base": 10, "height": 5.5, "unit": "meters"}}) == (False, "value:string")
    assert standardize("New York, N.Y.'s") == 'newyorkny"s'


def test_lists_compare_in_order_with_their_strings_standardized() -> None:
    assert simple({"geometry.area": {"base": 10, "height": 5.5, "tags": ["A", "b "]}}) == (True, "")
    assert simple({"geometry.area": {"base": 10, "height": 5.5, "tags": ["b", "a"]}}) == (False, "value:list")
    assert simple({"geometry.area": {"base": 10, "height": 5.5, "tags": ["a", 2]}}) == (False, "value:list")


def test_array_items_are_type_checked_one_level_deep() -> None:
    tags = {
        "name": "f",
        "parameters": {
            "type": "dict",
            "properties": {"xs": {"type": "array", "items": {"type": "float"}}},
            "required": ["xs"],
        },
    }
    answer = [{"f": {"xs": [[1.5, 2.5]]}}]
    assert check_calls("simple_python", [tags], [{"f": {"xs": [1.5, 2.5]}}], answer).valid
    assert check_calls("simple_python", [tags], [{"f": {"xs": [1, 2.5]}}], answer).kind == "type:nested"


def test_dicts_compare_key_by_key() -> None:
    assert simple({"geometry.area": {"base": 10, "height": 5.5, "options": {"round": True}}}) == (True, "")
    assert simple({"geometry.area": {"base": 10, "height": 5.5, "options": {"round": False}}}) == (
        False,
        "value:dict_value",
    )
    assert simple({"geometry.area": {"base": 10, "height": 5.5, "options": {}}}) == (False, "value:dict_key")


def test_a_value_typed_like_the_possible_answer_counts_as_a_variable() -> None:
    # The documented type is integer, the answer holds a string (a variable name): a string passes.
    answer = [{"play": {"artist": ["x"], "minutes": ["duration"]}}]
    assert check_calls("simple_python", [PLAY], [{"play": {"artist": "x", "minutes": "duration"}}], answer).valid
    assert not check_calls("simple_python", [PLAY], [{"play": {"artist": "x", "minutes": "Duration"}}], answer).valid


def test_an_optional_parameter_the_answer_requires_must_be_given() -> None:
    answer = [{"play": {"artist": ["x"], "minutes": [3]}}]
    loose = {**PLAY, "parameters": {**PLAY["parameters"], "required": ["artist"]}}
    assert check_calls("simple_python", [loose], [{"play": {"artist": "x"}}], answer).kind == "missing_optional"


def test_simple_wants_exactly_one_call() -> None:
    right = {"geometry.area": {"base": 10, "height": 5.5}}
    assert simple(right, right) == (False, "wrong_count")
    assert simple() == (False, "wrong_count")


PARALLEL_ANSWER = [
    {"play": {"artist": ["Taylor Swift"], "minutes": [20]}},
    {"play": {"artist": ["Maroon 5"], "minutes": [15]}},
]


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        (
            [{"play": {"artist": "Maroon 5", "minutes": 15}}, {"play": {"artist": "taylor swift", "minutes": 20}}],
            (True, ""),
        ),
        ([{"play": {"artist": "Taylor Swift", "minutes": 20}}], (False, "wrong_count")),
        ([{"play": {"artist": "Taylor Swift", "minutes": 20}}] * 2, (False, "no_match")),
        (
            [{"play": {"artist": "Taylor Swift", "minutes": 15}}, {"play": {"artist": "Maroon 5", "minutes": 20}}],
            (False, "no_match"),
        ),
    ],
)
def test_parallel_calls_match_in_any_order(calls: list[dict[str, Any]], expected: tuple[bool, str]) -> None:
    verdict = check_calls("parallel", [PLAY], calls, PARALLEL_ANSWER)
    assert (verdict.valid, verdict.kind) == expected


def test_multiple_wants_the_expected_tool_among_several() -> None:
    answer = [{"play": {"artist": ["x"], "minutes": [3]}}]
    assert check_calls("multiple", [AREA, PLAY], [{"play": {"artist": "X", "minutes": 3}}], answer).valid
    wrong = check_calls("multiple", [AREA, PLAY], [{"geometry.area": {"base": 10, "height": 5.5}}], answer)
    assert (wrong.valid, wrong.kind) == (False, "wrong_name")


def test_irrelevance_wants_no_call() -> None:
    assert check_calls("irrelevance", [PLAY], [], []).valid
    assert check_calls("irrelevance", [PLAY], [{}], []).valid  # BFCL reads [{}] as no call
    verdict = check_calls("irrelevance", [PLAY], [{"play": {}}], [])
    assert (verdict.valid, verdict.kind) == (False, "irrelevance:called")


def test_the_crosscheck_checks_every_recorded_category_and_refuses_unknown_ones(tmp_path: Path) -> None:
    """`bench/bfcl/crosscheck.py --from` against BFCL's own checker, live, Java and JavaScript cases included."""
    import json
    import subprocess
    import sys

    def crosscheck(results: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
        path = tmp_path / "recorded.json"
        path.write_text(json.dumps({"results": results}), encoding="utf-8")
        return subprocess.run(
            [sys.executable, "-m", "bench.bfcl.crosscheck", "--limit", "1", "--from", str(path)],
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            timeout=300,
        )

    java = {"GeometryPresentation.createPresentation": {"controller": "mapController", "parent": "mapArea"}}
    js = {"validateUserInput": {"inputField": "userInputField", "isComplete": "true"}}
    done = crosscheck(
        [
            {"category": "live_simple", "id": "live_simple_0-0-0", "calls": []},
            {"category": "simple_java", "id": "simple_java_0", "calls": [java]},
            {"category": "simple_javascript", "id": "simple_javascript_0", "calls": [js]},
            {"category": "live_relevance", "id": "live_relevance_0-0-0", "calls": [{"any": {}}]},
        ]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line.split() for line in done.stdout.splitlines() if line.startswith("recorded ")]
    assert lines == [
        ["recorded", "live_relevance", "valid", "1"],
        ["recorded", "live_simple", "invalid", "1"],
        ["recorded", "simple_java", "valid", "1"],
        ["recorded", "simple_javascript", "valid", "1"],
    ]
    refused = crosscheck([{"category": "multi_turn_base", "id": "multi_turn_base_0", "calls": []}])
    assert refused.returncode == 2
    assert refused.stderr.splitlines()[-1] == (
        "crosscheck.py: error: --from holds categories toolwire eval does not score: multi_turn_base"
    )
