"""Pieces that arrive in one network read go out as one chunk: the same text and arguments, fewer events."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest

from tests.gateway._clients import GATEWAY_KEY
from tests.gateway.conftest import Gateway, routes_to
from toolwire.codecs import get_codec
from toolwire.gateway import create_app
from toolwire.gateway._protocols import PROTOCOLS
from toolwire.gateway._relay import Relay, coalesced
from toolwire.testing import RawReply, ScriptedServer
from toolwire.types import (
    AssistantMessage,
    Done,
    Response,
    StopReason,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)


@pytest.fixture(scope="module")
def gateway(upstreams: dict[str, ScriptedServer], upstream_key: str) -> Iterator[Gateway]:
    with Gateway(create_app(routes_to(upstreams), keys=[GATEWAY_KEY])) as running:
        yield running


_DONE = Done(Response(message=AssistantMessage(), stop_reason=StopReason.END_TURN))

CASES: dict[str, tuple[list[StreamEvent], list[StreamEvent]]] = {
    "nothing": ([], []),
    "one piece": ([TextDelta("a")], [TextDelta("a")]),
    "a run of text": ([TextDelta("a"), TextDelta("b"), TextDelta("c")], [TextDelta("abc")]),
    "a run of thinking, then text": (
        [ThinkingDelta("x"), ThinkingDelta("y"), TextDelta("a"), TextDelta("b")],
        [ThinkingDelta("xy"), TextDelta("ab")],
    ),
    "a call's header and its fragments": (
        [ToolCallDelta(0, "c0", "f", ""), ToolCallDelta(0, None, None, '{"a"'), ToolCallDelta(0, None, None, ": 1}")],
        [ToolCallDelta(0, "c0", "f", '{"a": 1}')],
    ),
    "interleaved calls stay interleaved": (
        [ToolCallDelta(0, None, None, "{"), ToolCallDelta(1, None, None, "["), ToolCallDelta(0, None, None, "}")],
        [ToolCallDelta(0, None, None, "{"), ToolCallDelta(1, None, None, "["), ToolCallDelta(0, None, None, "}")],
    ),
    "a second call's header starts a new event": (
        [ToolCallDelta(0, None, None, "{}"), ToolCallDelta(1, "c1", "g", "{"), ToolCallDelta(1, None, None, "}")],
        [ToolCallDelta(0, None, None, "{}"), ToolCallDelta(1, "c1", "g", "{}")],
    ),
    "a header with a name only is not a fragment": (
        [ToolCallDelta(0, "c0", "f", "{"), ToolCallDelta(0, None, "f", "}")],
        [ToolCallDelta(0, "c0", "f", "{"), ToolCallDelta(0, None, "f", "}")],
    ),
    "text around a call, and the end": (
        [TextDelta("a"), TextDelta("b"), ToolCallDelta(0, "c0", "f", "{}"), TextDelta("c"), _DONE],
        [TextDelta("ab"), ToolCallDelta(0, "c0", "f", "{}"), TextDelta("c"), _DONE],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_neighbouring_pieces_of_one_text_or_call_become_one_event(case: str) -> None:
    events, expected = CASES[case]
    given = list(events)
    assert coalesced(events) == expected
    assert events == given  # the events passed in are left as they were (the reader keeps them)


def _contents(data: bytes) -> list[str]:
    chunks = [json.loads(line[6:]) for line in data.decode().split("\n") if line.startswith("data: {")]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    return [d["content"] for d in deltas if d.get("content")]


def test_pieces_that_arrive_apart_go_out_apart_and_together_go_out_together() -> None:
    apart = Relay(PROTOCOLS["openai"], "m", get_codec("anthropic").stream_decoder(), foreign=True)
    together = Relay(PROTOCOLS["openai"], "m", get_codec("anthropic").stream_decoder(), foreign=True)
    pieces = [TextDelta("Hel"), TextDelta("lo"), TextDelta("!")]
    assert _contents(b"".join(apart.feed([piece]) for piece in pieces)) == ["Hel", "lo", "!"]
    assert _contents(together.feed(pieces)) == ["Hello!"]


def test_a_stream_that_arrives_in_one_write_reaches_the_client_whole_in_fewer_chunks(
    gateway: Gateway, upstreams: dict[str, ScriptedServer]
) -> None:
    """An Anthropic upstream's text and its two calls' fragments, all in one write, to an OpenAI client."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "up", "content": [],
               "stop_reason": None, "usage": {"input_tokens": 3, "output_tokens": 0}}  # fmt: skip
    events: list[dict[str, object]] = [{"type": "message_start", "message": message}]
    events.append({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}} for t in "abc"]
    events.append({"type": "content_block_stop", "index": 0})
    for n, fragments in ((1, ['{"city"', ': "Oslo"}']), (2, ["{", '"city": "Rome"', "}"])):
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": "get_weather", "input": {}}
        events.append({"type": "content_block_start", "index": n, "content_block": block})
        for fragment in fragments:
            delta = {"type": "input_json_delta", "partial_json": fragment}
            events.append({"type": "content_block_delta", "index": n, "delta": delta})
        events.append({"type": "content_block_stop", "index": n})
    events.append({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}})
    events.append({"type": "message_stop"})
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    upstreams["anthropic"].add(RawReply(body=body))
    request = {"model": "to-anthropic", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"authorization": f"Bearer {GATEWAY_KEY}"}
    reply = httpx2.post(gateway.url + "/v1/chat/completions", json=request, headers=headers, timeout=30)
    assert reply.status_code == 200, reply.text
    chunks = [json.loads(line[6:]) for line in reply.text.split("\n") if line.startswith("data: {")]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert [d["content"] for d in deltas if d.get("content")] == ["abc"]
    calls = [entry for d in deltas for entry in d.get("tool_calls", [])]
    assert [(c["index"], c.get("id"), c["function"]["arguments"]) for c in calls] == [
        (0, "toolu_1", ""),
        (0, None, '{"city": "Oslo"}'),
        (1, "toolu_2", ""),
        (1, None, '{"city": "Rome"}'),
    ]
