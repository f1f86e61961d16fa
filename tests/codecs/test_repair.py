"""The linear JSON repairer: valid JSON unchanged, the usual breakages read as meant."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.repair import Repaired, repair_json

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=25,
)
objects = st.dictionaries(st.text(max_size=8), values, max_size=5)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(value=values, indent=st.sampled_from([None, 2]))
def test_valid_json_comes_back_as_json_loads_reads_it(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=indent is None)
    assert repair_json(text) == Repaired(json.loads(text), cut=False)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(value=objects)
def test_valid_arguments_are_parsed_unchanged(value: dict[str, Any]) -> None:
    assert parse_arguments(json.dumps(value)) == (value, {})


@settings(max_examples=150, deadline=None, derandomize=True)
@given(value=objects)
def test_a_python_dict_repr_reads_as_the_dict(value: dict[str, Any]) -> None:
    # Single quotes (or double, where the text has a quote), True/False/None, \x and \U escapes.
    assert repair_json(repr(value)) == Repaired(value, cut=False)


def _with_trailing_commas(value: Any) -> str:
    if isinstance(value, dict):
        inner = "".join(f"{json.dumps(k)}: {_with_trailing_commas(v)}, " for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + "".join(_with_trailing_commas(v) + ", " for v in value) + "]"
    return json.dumps(value)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(value=objects)
def test_trailing_commas_are_dropped(value: dict[str, Any]) -> None:
    assert repair_json(_with_trailing_commas(value)) == Repaired(value, cut=False)


plain_text = st.text(alphabet=st.characters(blacklist_characters="\\"), max_size=20)  # no escapes to confuse
no_backslash = st.recursive(
    plain_text | st.integers(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(plain_text, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(value=st.dictionaries(plain_text, no_backslash, max_size=4))
def test_raw_newlines_and_tabs_in_strings_are_read(value: dict[str, Any]) -> None:
    text = json.dumps(value, ensure_ascii=False).replace("\\n", "\n").replace("\\t", "\t")
    assert repair_json(text) == Repaired(value, cut=False)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(value=objects.filter(bool))
def test_a_value_cut_before_its_closing_brackets_is_completed_and_said_cut(value: dict[str, Any]) -> None:
    text = json.dumps(value)
    cut = re.sub(r"[\]}\s]+$", "", text)
    assert repair_json(cut) == Repaired(value, cut=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{'a': True, 'b': None, 'c': False}", ({"a": True, "b": None, "c": False}, False)),
        ('{"a": [1, 2,], "b": {"c": 3,},}', ({"a": [1, 2], "b": {"c": 3}}, False)),
        ("{'q': 'it\\'s \"x\"'}", ({"q": 'it\'s "x"'}, False)),
        ('{"s": "line\nnext\tcol"}', ({"s": "line\nnext\tcol"}, False)),
        ('{path: "a.py", n: 2}', ({"path": "a.py", "n": 2}, False)),
        ('{"a": "\\d+ \\x41"}', ({"a": "\\d+ A"}, False)),
        ("{'a': '\\U00000022\\U0001f600\\U00110000'}", ({"a": '"\U0001f600\\U00110000'}, False)),
        ('{"x": [1, 2', ({"x": [1, 2]}, True)),
        ('{"a": 1, "b"', ({"a": 1}, True)),
        ('{"a": 1, "b": ', ({"a": 1}, True)),
        ('{"a": 1,', ({"a": 1}, True)),
        ('{"a": "unfinished', ({"a": "unfinished"}, True)),
        ('{"a": "ends in \\', ({"a": "ends in "}, True)),
        ("{'a': {'b': [", ({"a": {"b": []}}, True)),
    ],
)
def test_known_breakages_read_as_meant(text: str, expected: tuple[Any, bool]) -> None:
    assert repair_json(text) == Repaired(*expected)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "hello",
        '{"a": 1 "b": 2}',  # a missing comma: not guessed at
        '{"a": "he said "hi""}',  # an unescaped quote inside a string
        '{"a": [1,,2]}',
        '{"a":}',
        "[1] [2]",
        "{'a': 1}} trailing",
        "```json\n{}\n```",
        "[" * 100_000,  # nested past the parser: no value, and no crash
    ],
)
def test_other_breakages_are_not_guessed_at(text: str) -> None:
    assert repair_json(text) is None


@settings(max_examples=500, deadline=None, derandomize=True)
@given(text=st.text(alphabet=st.sampled_from(list("{}[]:,'\"\\ \n\tatrueTFNonl01.e-xuU")), max_size=40) | st.text())
def test_any_text_is_repaired_or_refused_never_raises(text: str) -> None:
    repaired = repair_json(text)
    assert repaired is None or isinstance(repaired, Repaired)
    arguments, metadata = parse_arguments(text)
    assert isinstance(arguments, dict) and isinstance(metadata, dict)


def test_a_long_broken_argument_string_is_repaired_not_refused() -> None:
    content = "def f(x):\n    return 'x'\n" * 3000  # 75 KB: json-repair was refused past 8 KiB
    raw = "{'path': 'a.py', 'content': " + repr(content) + ", 'overwrite': True,}"
    assert parse_arguments(raw) == ({"path": "a.py", "content": content, "overwrite": True}, {"raw_arguments": raw})
    cut = '{"path": "a.py", "content": ' + json.dumps(content) + ', "overwrite": '
    assert parse_arguments(cut)[1]["arguments_error"].startswith("the arguments were cut off before their end")
    assert parse_arguments(cut, repair_cut=True)[0] == {"path": "a.py", "content": content}
