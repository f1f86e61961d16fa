"""Property tests (prose never yields a call; rendered calls parse back) and adversarial inputs.

The adversarial inputs assert results, not timings: the suite's total time is the guard
against anything slower than linear.
"""

from __future__ import annotations

import json
import logging
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.codecs.common.wire import dumps
from toolwire.textcalls import TOOL_CALL_PREFIX, parse_tool_calls

# Prose: any text without the characters that start a marker or a JSON/pythonic value.
prose = st.text(st.characters(exclude_characters="{[<`~|\uff5c", exclude_categories=("Cs",)), max_size=300).filter(
    lambda s: "TOOL_CALL" not in s and "to=functions." not in s
)
names = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=64)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
arguments = st.dictionaries(st.text(max_size=12), json_values, max_size=5)


@given(prose)
def test_prose_never_yields_a_call(text: str) -> None:
    assert parse_tool_calls(text) == (text, [])


@given(json_values.filter(lambda v: not (isinstance(v, dict) and "name" in v)))
def test_json_that_is_not_call_shaped_stays_text(value: Any) -> None:
    text = "Here it is: " + json.dumps(value)
    assert parse_tool_calls(text) == (text, [])


@given(names, arguments)
def test_rendered_call_parses_back(name: str, args: dict[str, Any]) -> None:
    text = TOOL_CALL_PREFIX + dumps({"name": name, "args": args})
    rest, calls = parse_tool_calls(text)
    assert rest == ""
    assert [(c.name, c.arguments, c.metadata) for c in calls] == [(name, args, {"textcalls": {"format": "toolwire"}})]


@settings(max_examples=50)
@given(st.lists(st.tuples(prose, names, arguments), min_size=1, max_size=4))
def test_rendered_calls_between_prose_lines_parse_back_in_order(items: list[tuple[str, str, dict[str, Any]]]) -> None:
    lines = []
    for line, name, args in items:
        line = line.replace("\n", " ").strip()
        # A line of nothing but `;`/`,` between two calls separates them (`f(); g()`): not prose.
        line = line if line.strip(";, \t\r") else "ok"
        lines += [line, TOOL_CALL_PREFIX + dumps({"name": name, "args": args})]
    rest, calls = parse_tool_calls("\n".join(lines))
    assert [(c.name, c.arguments) for c in calls] == [(name, args) for _, name, args in items]
    assert rest == "\n".join(line for line in lines if not line.startswith(TOOL_CALL_PREFIX))


MARKERS = [
    "TOOL_CALL: ",
    "<tool_call>",
    "</tool_call>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "<|tool_call|>",
    "<function=",
    "<parameter=",
    "<arg_key>",
    "<arg_value>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<\uff5ctool\u2581call\u2581begin\uff5c>",
    "<\uff5ctool\u2581sep\uff5c>",
    "to=functions.f",
    "<|message|>",
    "<|call|>",
    "```json\n",
    "```\n",
    '{"name": "f", "arguments": ',
    "[f(a=",
    "{",
    "}",
    "[",
    "]",
    '"',
    "\n",
]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(MARKERS) | st.text(max_size=8), max_size=40))
def test_marker_soup_never_raises(parts: list[str]) -> None:
    text = "".join(parts)
    rest, calls = parse_tool_calls(text)
    assert isinstance(rest, str)
    assert len({c.id for c in calls}) == len(calls)
    assert all(isinstance(c.arguments, dict) for c in calls)


MB = 1_000_000
ADVERSARIAL = {
    "open-braces": "{" * MB,
    "quotes": '"' * MB,
    "open-brackets": "[" * MB,
    "unclosed-tool-call-tags": "<tool_call>" * 100_000,
    "tool-call-tags-with-brace": "<tool_call>{" * 80_000,
    "repeated-mistral-marker": "[TOOL_CALLS]" * 80_000,
    "repeated-mistral-marker-bracket": "[TOOL_CALLS][" * 80_000,
    "marker-then-open-braces": "TOOL_CALL: " + "{" * MB,
    "marker-then-unclosed-string": 'TOOL_CALL: {"name": "x", "args": {"a": "' + "x" * MB,
    "marker-then-quotes": 'TOOL_CALL: {"name": "x", "args": ' + '"' * MB,
    "name-keys": '{"name": ' * 100_000,
    "brace-quote-pairs": '{"' * 400_000,
    "empty-objects": "{}" * 400_000,
    "pythonic-opens": "[f(" * 300_000,
    "fence-openers-with-spaces": "```" + " " * MB,
    "python-tag-braces": "<|python_tag|>{" * 60_000,
    "deepseek-call-begins": "<\uff5ctool\u2581call\u2581begin\uff5c>" * 50_000,
    "kimi-call-begins": "<|tool_call_begin|>" * 50_000,
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_input_yields_no_call(text: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="toolwire.textcalls"):
        assert parse_tool_calls(text) == (text, [])
    assert caplog.records == []


def test_many_unclosed_calls_are_bounded_in_repairs() -> None:
    line = 'TOOL_CALL: {"name": "f", "args": {"a": 1}\n'
    rest, calls = parse_tool_calls(line * 20_000)
    # json_repair runs at most 16 times per reply; the other broken calls stay text.
    assert [(c.name, c.arguments) for c in calls] == [("f", {"a": 1})] * 16
    assert rest == line * (20_000 - 16)


def test_megabytes_of_prose_around_calls() -> None:
    chunk = 'Some prose with {braces}, [brackets] and "quotes".\n' * 200
    call = '<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>\n'
    text = (chunk + call) * 100
    rest, calls = parse_tool_calls(text)
    assert len(calls) == 100
    assert rest == (chunk * 100).rstrip("\n")
