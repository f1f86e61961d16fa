"""The AWS event stream: what toolwire writes, botocore reads; what arrives in pieces, toolwire reassembles."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire import ToolCall, ToolDefinition
from toolwire.codecs import get_codec
from toolwire.errors import RateLimitError, StreamError
from toolwire.http import (
    EVENTSTREAM_MEDIA_TYPE,
    EventStreamFormatError,
    EventStreamReader,
    HttpTransport,
    encode_event,
    encode_message,
    parsed_event,
)
from toolwire.http._eventstream import MAX_HEADERS_BYTES, MAX_PAYLOAD_BYTES
from toolwire.testing import RawReply, ScriptedServer, reply

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), _TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=10,
)
_NAMES = st.sampled_from(
    ["messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]
)
_EXCEPTIONS = st.sampled_from(["throttlingException", "modelStreamErrorException", "validationException"])
_KEYS = _TEXT.filter(lambda k: k != "p")  # `p` is the padding field, which a reader leaves out
_EVENTS = st.builds(
    lambda name, payload: {name: payload}, st.one_of(_NAMES, _EXCEPTIONS), st.dictionaries(_KEYS, _JSON)
)


def _botocore_reads(data: bytes) -> list[tuple[dict[str, Any], bytes]]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(message.headers, message.payload) for message in buffer]


@settings(max_examples=200)
@given(events=st.lists(_EVENTS, min_size=1, max_size=6))
def test_botocore_reads_every_frame_toolwire_writes(events: list[dict[str, Any]]) -> None:
    data = b"".join(encode_event(e) for e in events)
    read = _botocore_reads(data)
    assert len(read) == len(events)
    for (headers, payload), event in zip(read, events, strict=True):
        ((name, _),) = event.items()
        kind = "exception" if name.endswith("Exception") else "event"
        assert headers[":message-type"] == kind
        assert headers[":exception-type" if kind == "exception" else ":event-type"] == name
        assert headers[":content-type"] == "application/json"
        assert parsed_event(EventStreamReader().feed(encode_event(event))[0]) == event
        assert payload == encode_event(event)[-4 - len(payload) : -4]


def test_botocore_reads_every_frame_of_every_fixture_stream_the_encoder_writes() -> None:
    codec = get_codec("bedrock")
    call = ToolCall(id="tooluse_1", name="get_weather", arguments={"city": "Zürich"})
    for response in (reply("Grüezi 👋"), reply("Checking.", tool_calls=[call]), reply(tool_calls=[call, call])):
        events = codec.encode_stream(response)
        read = _botocore_reads(b"".join(encode_event(e) for e in events))
        assert [h[":event-type"] for h, _ in read] == [next(iter(e)) for e in events]


@settings(max_examples=100)
@given(events=st.lists(_EVENTS, min_size=1, max_size=5), data=st.data())
def test_frames_split_anywhere_are_reassembled(events: list[dict[str, Any]], data: st.DataObject) -> None:
    body = b"".join(encode_event(e) for e in events)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=10)))
    reader, read, start = EventStreamReader(), [], 0
    for cut in [*cuts, len(body)]:
        read += [parsed_event(m) for m in reader.feed(body[start:cut])]
        start = cut
    reader.close()
    assert read == events


def test_byte_by_byte() -> None:
    frame = encode_event({"contentBlockDelta": {"delta": {"text": "日本語"}, "contentBlockIndex": 0, "p": "abcdef"}})
    reader = EventStreamReader()
    read = [m for i in range(len(frame)) for m in reader.feed(frame[i : i + 1])]
    # The padding field `p` is left out, as botocore's parsed form has it.
    assert [parsed_event(m) for m in read] == [
        {"contentBlockDelta": {"delta": {"text": "日本語"}, "contentBlockIndex": 0}}
    ]


def _corrupt(frame: bytes, at: int) -> bytes:
    return frame[:at] + bytes([frame[at] ^ 0xFF]) + frame[at + 1 :]


FRAME = encode_event({"messageStart": {"role": "assistant"}})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_corrupt(FRAME, 9), "prelude CRC"),  # the prelude CRC itself
        (_corrupt(FRAME, 3), "prelude CRC"),  # the total length
        (_corrupt(FRAME, len(FRAME) - 8), "frame's CRC"),  # the payload
        (_corrupt(FRAME, len(FRAME) - 1), "frame's CRC"),  # the message CRC
    ],
)
def test_a_bad_crc_is_an_error(data: bytes, message: str) -> None:
    with pytest.raises(EventStreamFormatError, match=message):
        EventStreamReader().feed(data)


def _prelude(total: int, headers: int) -> bytes:
    head = struct.pack(">II", total, headers)
    return head + struct.pack(">I", zlib.crc32(head))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_prelude(16 + MAX_HEADERS_BYTES + 1, MAX_HEADERS_BYTES + 1), "bytes of headers; the limit is 131072"),
        (_prelude(16 + MAX_PAYLOAD_BYTES + 1, 0), "byte payload; the limit is 25165824"),
        (_prelude(8, 0), "cannot hold its 0 bytes of headers"),
    ],
)
def test_an_oversized_or_impossible_frame_is_refused_from_its_prelude(data: bytes, message: str) -> None:
    with pytest.raises(EventStreamFormatError, match=message):
        EventStreamReader().feed(data)


def test_a_truncated_frame_is_an_error_when_the_body_ends() -> None:
    reader = EventStreamReader()
    assert reader.feed(FRAME[:-3]) == []
    with pytest.raises(EventStreamFormatError, match=r"ended inside a frame \(\d+ bytes of it arrived\)"):
        reader.close()


def test_an_error_frame_and_a_frame_without_a_type() -> None:
    error = encode_message({":message-type": "error", ":error-code": "Boom", ":error-message": "it broke"}, b"")
    with pytest.raises(EventStreamFormatError, match="error frame: Boom: it broke"):
        parsed_event(EventStreamReader().feed(error)[0])
    untyped = encode_message({":message-type": "event"}, b"{}")
    with pytest.raises(EventStreamFormatError, match="names no event type"):
        parsed_event(EventStreamReader().feed(untyped)[0])


# Through the transport: a broken stream is an error at once, never a wait.


def _stream(server: ScriptedServer) -> list[Any]:
    client = server.connect("bedrock:amazon.nova-pro-v1:0")
    return list(client.stream_sync("hi", tools=[ToolDefinition(name="get_time")]))


def _body(*events: dict[str, Any]) -> bytes:
    return b"".join(encode_event(e) for e in events)


START = {"messageStart": {"role": "assistant"}}
TEXT = {"contentBlockDelta": {"delta": {"text": "Hel"}, "contentBlockIndex": 0}}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            _body(START, TEXT)[:-5],
            "The bedrock stream is not a valid event stream: The event stream ended inside a frame",
        ),
        (
            _corrupt(_body(START, TEXT), 30),
            "The bedrock stream is not a valid event stream: An event stream frame's CRC",
        ),
        (_body(START, TEXT), "The bedrock stream ended before its end marker"),
    ],
)
def test_the_client_reports_a_broken_stream(body: bytes, message: str) -> None:
    with ScriptedServer([RawReply(body=body, content_type=EVENTSTREAM_MEDIA_TYPE)]) as server:
        with pytest.raises(StreamError, match=message):
            _stream(server)


def test_an_exception_frame_mid_stream_is_the_typed_error() -> None:
    body = _body(START, TEXT, {"throttlingException": {"message": "Too many requests, please wait."}})
    with ScriptedServer([RawReply(body=body, content_type=EVENTSTREAM_MEDIA_TYPE)]) as server:
        with pytest.raises(RateLimitError, match="throttlingException mid-stream: Too many requests") as raised:
            _stream(server)
    assert (raised.value.status, raised.value.provider) == (429, "bedrock")


def test_a_stream_that_is_not_an_event_stream() -> None:
    with ScriptedServer([RawReply(body=b"data: {}\n\n")]) as server:
        with pytest.raises(StreamError, match="is not an AWS event stream: its content type is 'text/event-stream'"):
            _stream(server)


# InvokeModelWithResponseStream: the model's own events wrapped in `chunk` frames.


def _chunk(event: dict[str, Any]) -> bytes:
    raw = json.dumps(event).encode()
    return encode_event({"chunk": {"bytes": base64.b64encode(raw).decode()}})


async def _read_chunks(body: bytes) -> list[Any]:
    with ScriptedServer([RawReply(body=body, content_type=EVENTSTREAM_MEDIA_TYPE)]) as server:
        transport = HttpTransport(provider="bedrock-anthropic", headers={})
        url = server.base_url + "/model/anthropic.claude-3-haiku/converse-stream"
        try:
            async with transport.stream(url, {"messages": []}, "eventstream-chunks") as reply:
                return [frame async for batch in reply.frames for frame in batch]
        finally:
            await transport.aclose()


async def test_chunk_frames_hand_over_the_models_own_events() -> None:
    events = [{"type": "message_start", "message": {"id": "msg_1"}}, {"type": "message_stop"}]
    assert await _read_chunks(b"".join(_chunk(e) for e in events)) == events


async def test_an_exception_frame_among_chunks_is_the_typed_error() -> None:
    body = _chunk({"type": "message_start"}) + encode_event({"throttlingException": {"message": "Slow down."}})
    with pytest.raises(RateLimitError, match=r"bedrock-anthropic answered HTTP 429: 'Slow down\.'"):
        await _read_chunks(body)
