from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolwire.errors import StreamError
from toolwire.http._failures import Failures
from toolwire.http._frames import _parse_frame
from toolwire.http._sse import SseEventTooLarge, SseReader

_VALUE = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=12)
_FIELD = st.one_of(
    st.tuples(st.just("data"), _VALUE),
    st.tuples(st.sampled_from(["event", "id", "retry", ""]), _VALUE),  # "" is a comment line
)
_EVENT = st.lists(_FIELD, min_size=1, max_size=4)


def _read(body: bytes, cuts: list[int], limit: int = 1 << 20) -> list[str]:
    reader, events, start = SseReader(limit), [], 0
    for cut in [*sorted(cuts), len(body)]:
        events += reader.feed(body[start:cut])
        start = cut
    return events


@given(
    events=st.lists(_EVENT, max_size=5),
    ending=st.sampled_from(["\n", "\r\n", "\r"]),
    spaced=st.booleans(),
    bom=st.booleans(),
    data=st.data(),
)
def test_any_stream_cut_anywhere_gives_each_events_data(
    events: list[list[tuple[str, str]]], ending: str, spaced: bool, bom: bool, data: st.DataObject
) -> None:
    lines = [[f"{name}:{' ' if spaced else ''}{value}" for name, value in fields] for fields in events]
    text = "".join("".join(line + ending for line in event) + ending for event in lines)
    body = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=8))

    def read_back(value: str) -> str:  # one space after the colon is the separator, not the value
        return value if spaced or not value.startswith(" ") else value[1:]

    expected = [
        "\n".join(read_back(value) for name, value in fields if name == "data")
        for fields in events
        if any(name == "data" for name, _ in fields)
    ]
    assert _read(body, cuts) == expected


def test_the_wire_forms_providers_send() -> None:
    body = (
        b'event: message_start\ndata: {"a": 1}\n\n'
        b": keep-alive\n\n"
        b'data:{"b": 2}\r\n\r\n'
        b"data: line one\ndata\ndata:  two\n\n"
        b"event: ping\n\n"
        b"data: [DONE]\n\n"
    )
    assert _read(body, []) == ['{"a": 1}', '{"b": 2}', "line one\n\n two", "[DONE]"]
    assert _read(body, list(range(len(body)))) == _read(body, [])


def test_an_event_without_its_blank_line_at_the_end_is_discarded() -> None:
    assert _read(b"data: a\n\ndata: b\n", []) == ["a"]


def test_a_carriage_return_then_a_line_feed_in_the_next_chunk_is_one_line_end() -> None:
    assert _read(b"data: a\r\n\r\ndata: b\r\r", [8, 9, 10]) == ["a", "b"]
    assert _read(b"data: a\r\n\n", [8, 9]) == ["a"]  # that LF ends the CR's line; the next is the blank line
    assert _read(b"data\r\ndata:\n\n", [5, 5]) == ["\n"]  # an empty chunk between CR and LF changes nothing


_PIECES = st.sampled_from(["data:", "data: ", "data", "event: x", ":c", "id: 1", "\n", "\r", "\r\n", "x", " ", "é"])


@settings(max_examples=500)
@given(pieces=st.lists(_PIECES, max_size=30), data=st.data())
def test_the_same_events_as_httpx2s_own_parser(pieces: list[str], data: st.DataObject) -> None:
    """The reader replaced httpx2's `EventSource`: on any stream, the same non-empty data, in order."""
    sse = pytest.importorskip("httpx2._sse", reason="httpx2's own SSE parser, the reference, is not importable")
    body = ("".join(pieces) + "\n\n").encode()  # ended: httpx2 dispatches an event cut after a CR, the spec does not
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=6))
    reference = sse._SSEParser(1 << 20)
    expected = [event.data for event in [*reference.decode(body.decode()), *reference.flush()]]
    assert [d for d in _read(body, cuts) if d] == [d for d in expected if d]


def test_an_event_past_the_limit_is_refused_finished_or_not() -> None:
    with pytest.raises(SseEventTooLarge, match="exceeded the 16 byte limit"):
        _read(b"data: 0123456789abcdef\n\n", [], limit=16)
    with pytest.raises(SseEventTooLarge, match="exceeded the 16 byte limit"):
        _read(b"data: 0123456789abcdef", [4], limit=16)  # refused before its end arrives: memory stays bounded


_JSON_TEXTS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
).map(json.dumps)


@given(
    st.one_of(
        _JSON_TEXTS,
        st.tuples(st.sampled_from(["", " ", "\t", "\n "]), _JSON_TEXTS, st.sampled_from(["", " ", "x", "}", ",1"])).map(
            "".join
        ),
        st.text(max_size=12),
    )
)
@example('{"a": }')
@example('{"a" 1}')
@example('"abc')
@example(" {}")
@example("{} {}")
@example("[" * 3000)
def test_an_event_is_read_as_json_loads_reads_it(text: str) -> None:
    """The scanner alone reads most events; whatever it is given, the result is `json.loads`'s, or refused."""
    try:
        expected = json.loads(text)
    except (ValueError, RecursionError):
        expected = None
    failures = Failures(provider="openai", secrets=(), timeout=None, deadline=None)
    if isinstance(expected, dict):
        assert _parse_frame(text, failures) == expected
    else:
        with pytest.raises(StreamError, match="sent an event that is not a JSON object"):
            _parse_frame(text, failures)


_RAW = st.binary(max_size=10).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b""))  # any bytes but line ends


@settings(max_examples=300)
@given(events=st.lists(st.tuples(st.none() | _RAW, _RAW), max_size=6), data=st.data())
@example(events=[(b"\xc3", b"\xe2\x82"), (None, b"\xff a")], data=None)
def test_plain_events_read_at_once_give_each_events_data_decoded_alone(
    events: list[tuple[bytes | None, bytes]], data: st.DataObject | None
) -> None:
    """One-line events (named or not) are read in one pass; bytes that are not UTF-8 end as they would alone."""
    body = b"".join(
        (b"" if name is None else b"event: " + name + b"\n") + b"data: " + value + b"\n\n" for name, value in events
    )
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=4)) if data is not None else []
    assert _read(body, cuts) == [value.decode("utf-8", "replace") for _, value in events]
