"""AnswerStream: the answer of a constrained reply streams as it is written, whatever the splits."""

from __future__ import annotations

import json
import random

import pytest

from toolwire.constrained import AnswerStream

ANSWER = 'Line one\nsaid "hi" \\ tab\t, café, \u00e9t\u00e9, emoji \U0001f600, done'


def answer_reply(text: str, ascii_only: bool = True) -> str:
    call = {"name": "no_tool_fits", "arguments": {"reply": text}}
    return json.dumps({"call_count": 1, "tool_calls": [call]}, ensure_ascii=ascii_only)


def feed_all(pieces: list[str]) -> tuple[str, bool]:
    stream = AnswerStream()
    text = "".join(stream.feed(piece) for piece in pieces)
    return text, stream.is_answer


def splits(text: str, rng: random.Random) -> list[str]:
    cuts = sorted(rng.sample(range(1, len(text)), k=min(len(text) - 1, rng.randint(1, 12))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


@pytest.mark.parametrize("ascii_only", [True, False])
def test_the_answer_comes_out_whole_for_any_split(ascii_only: bool) -> None:
    reply = answer_reply(ANSWER, ascii_only)
    rng = random.Random(7)
    for _ in range(300):
        assert feed_all(splits(reply, rng)) == (ANSWER, True)
    assert feed_all(list(reply)) == (ANSWER, True)


def test_text_streams_before_the_json_closes() -> None:
    stream = AnswerStream()
    opening = '{\n "call_count" : 1, "tool_calls": [ {"name": "no_tool_fits", "arguments": {"reply":'
    assert [stream.feed(p) for p in [opening, ' "It is', " sunny\\", 'n"}', "}]}"]] == [
        "",
        "It is",
        " sunny",
        "\n",
        "",
    ]


def test_calls_and_other_text_yield_nothing() -> None:
    assert feed_all(['{"call_count": 1, "tool_calls": [{"name": "a", "arguments": {"reply": "no"}}]}']) == ("", False)
    two = {"call_count": 2, "tool_calls": [{"name": "no_tool_fits", "arguments": {"reply": "x"}}] * 2}
    assert feed_all([json.dumps(two)]) == ("", False)
    assert feed_all(["The answer is 4."]) == ("", False)
    assert feed_all(['{"answer": "x"}']) == ("", False)


def test_a_renamed_pseudo_tool_streams_too() -> None:
    stream = AnswerStream(no_tool="no_tool_fits_")
    reply = json.dumps({"call_count": 1, "tool_calls": [{"name": "no_tool_fits_", "arguments": {"reply": "ok"}}]})
    assert (stream.feed(reply), stream.is_answer) == ("ok", True)
