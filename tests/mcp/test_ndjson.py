"""The stdio transport's line splitter and the id of a dropped message: plain bytes in, no server."""

from __future__ import annotations

import pytest

from toolwire.mcp._ndjson import EDGE_BYTES, LineSplitter, Oversize, answered_id


def split(chunks: list[bytes], limit: int = 10) -> list[bytes | Oversize]:
    splitter = LineSplitter(limit)
    return [line for chunk in chunks for line in splitter.feed(chunk)]


def test_lines_split_across_any_chunks_come_out_whole_and_in_order() -> None:
    stream = b'{"a":1}\n\n{"b":"\xc3\xa9"}\nrest'
    whole = split([stream])
    assert whole == [b'{"a":1}', b"", b'{"b":"\xc3\xa9"}']
    assert split([stream[i : i + 1] for i in range(len(stream))]) == whole  # one byte at a time, é split too


def test_a_line_over_the_limit_is_dropped_to_its_newline_keeping_only_its_edges() -> None:
    assert split([b"0123456789\n"]) == [b"0123456789"]  # exactly the limit
    long = b"a" * EDGE_BYTES + b"b" * 50_000 + b"c" * EDGE_BYTES
    lines = split([b"short\n" + long[:7], long[7:30_000], long[30_000:] + b"\nnext\n"])
    assert lines == [b"short", Oversize(len(long), b"a" * EDGE_BYTES, b"c" * EDGE_BYTES), b"next"]


def test_the_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1 byte"):
        LineSplitter(0)


def test_a_dropped_answer_is_matched_to_the_waiting_request_by_the_id_at_either_end() -> None:
    first = Oversize(10**8, b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"id":3,"text":"', b'xx"}]}}')
    last = Oversize(10**8, b'{"result":{"content":[{"id":3,"text":"', b'xx"}]},"jsonrpc":"2.0","id":"r-9"}')
    assert answered_id(first, {3, 7, 8}) is None  # 3 and 7 both wait: no guessing
    assert answered_id(first, {7, 8}) == 7
    assert answered_id(last, {"r-9", 5}) == "r-9"
    assert answered_id(Oversize(10**8, b'{"result":"x', b'x"}'), {4}) == 4  # the only one waiting
    assert answered_id(Oversize(10**8, b'{"result":"x', b'x"}'), {4, 5}) is None
