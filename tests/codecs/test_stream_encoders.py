"""Stream encoders: neutral events in, a provider's stream out, and that provider's decoder agrees.

The property: a reply streamed as neutral events, cut into pieces anywhere, then encoded by a
codec's `stream_encoder()` and decoded by the same codec's `stream_decoder()`, gives the same
`Response` as that codec's non-streaming body (`decode_response(encode_response(reply))`).
"""

from __future__ import annotations

import base64
import itertools
import string
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.sdk_types import assert_sdk_exact
from tests.strategies import CODECS, json_objects, names, texts
from toolwire import AssistantMessage, Response, StopReason, TextPart, ThinkingPart, ToolCall, Usage
from toolwire.codecs import get_codec
from toolwire.codecs.common.wire import dumps, dumps_string
from toolwire.types import AssistantPart, Done, StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta

call_ids = st.builds("call_{}".format, st.text(string.ascii_letters + string.digits, min_size=4, max_size=12))
parts = st.one_of(
    st.builds(lambda t: TextPart(text=t), texts),
    st.builds(lambda t: ThinkingPart(text=t), texts),
    st.builds(lambda i, n, a: ToolCall(id=i, name=n, arguments=a), call_ids, names, json_objects),
)


signatures = st.binary(min_size=4, max_size=30).map(lambda b: base64.b64encode(b).decode())
SIGNED = ("anthropic", "gemini")  # codecs whose streams carry their own signatures


def _signed(codec: str, part: AssistantPart, signature: str, last: bool) -> AssistantPart:
    """The part with the opaque context its own provider would have given it.

    Gemini signs a text or thought part on its last piece, but a neutral stream tells the
    signature only at `Done`: the encoder can attach it to the part still open then (the
    last), and sends it for an earlier part as an empty signed piece of its own.
    """
    if codec == "gemini" and not last and not isinstance(part, ToolCall):
        return part
    if isinstance(part, ThinkingPart):
        return replace(part, signature=signature, provider=codec)
    if codec == "gemini":
        return replace(part, metadata={"gemini": {"thought_signature": signature}})
    return part


def _no_neighbours_of_a_kind(items: list[AssistantPart]) -> bool:
    """Two text (or two thinking) parts in a row are one part in a stream of deltas."""
    kinds = [type(p) for p in items]
    return all(a is not b or a is ToolCall for a, b in itertools.pairwise(kinds))


@st.composite
def replies(draw: st.DrawFn, codec: str) -> Response:
    items = draw(st.lists(parts, max_size=5).filter(_no_neighbours_of_a_kind))
    if codec == "ollama":  # one message: thinking, then text, then calls
        order = {ThinkingPart: 0, TextPart: 1, ToolCall: 2}
        items = sorted(items, key=lambda p: order[type(p)])
        items = [
            p for i, p in enumerate(items) if isinstance(p, ToolCall) or type(items[i - 1]) is not type(p) or i == 0
        ]
    if codec == "gemini":  # Gemini sends calls after the text
        items = [p for p in items if not isinstance(p, ToolCall)] + [p for p in items if isinstance(p, ToolCall)]
        items = [
            p for n, p in enumerate(items) if n == 0 or type(items[n - 1]) is not type(p) or isinstance(p, ToolCall)
        ]
    items = [replace(p, id=f"{p.id}x{n}") if isinstance(p, ToolCall) else p for n, p in enumerate(items)]
    if codec in SIGNED and draw(st.booleans()):
        last = len(items) - 1
        items = [_signed(codec, p, draw(signatures), n == last) for n, p in enumerate(items)]
    has_calls = any(isinstance(p, ToolCall) for p in items)
    usage = draw(st.builds(Usage, input_tokens=st.integers(0, 10**6), output_tokens=st.integers(0, 10**6)))
    return Response(
        message=AssistantMessage(parts=items),
        stop_reason=StopReason.TOOL_USE if has_calls else StopReason.END_TURN,
        usage=usage,
        model="model-x",
        id="reply_123",
    )


def _cut(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=4))) if len(text) > 1 else []
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if text[a:b]]


@st.composite
def neutral_streams(draw: st.DrawFn, reply: Response) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    index = 0
    for part in reply.message.parts:
        match part:
            case TextPart():
                events += [TextDelta(piece) for piece in _cut(draw, part.text)]
            case ThinkingPart():
                events += [ThinkingDelta(piece) for piece in _cut(draw, part.text)]
            case ToolCall():
                events.append(ToolCallDelta(index, part.id, part.name, ""))
                arguments = dumps(part.arguments) if part.arguments else ""
                events += [ToolCallDelta(index, None, None, piece) for piece in _cut(draw, arguments)]
                index += 1
    return [*events, Done(reply)]


@st.composite
def interleaved_streams(draw: st.DrawFn, reply: Response) -> list[StreamEvent]:
    """A stream whose parallel calls' fragments interleave, as deltas keyed by `index` may.

    Within each run of consecutive calls, every call keeps its own order and headers come in
    index order, but a later call's header and fragments may arrive before an earlier call's
    arguments are complete (docs/wire-formats.md, OpenAI Chat Completions; seen from OpenAI-compatible servers).
    """
    events = draw(neutral_streams(reply))
    out: list[StreamEvent] = []
    run: list[list[ToolCallDelta]] = []

    def flush() -> None:
        queues = [list(q) for q in run]
        while any(queues):
            # a call may go next once every earlier call's header is out
            ready = [
                n for n, q in enumerate(queues) if q and all(not queues[m] or queues[m][0].id is None for m in range(n))
            ]
            pick = draw(st.sampled_from(ready))
            out.append(queues[pick].pop(0))
        run.clear()

    for event in events:
        if isinstance(event, ToolCallDelta):
            if event.id is not None:
                run.append([])
            run[-1].append(event)
            continue
        flush()
        out.append(event)
    flush()
    return out


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_parallel_calls_whose_fragments_interleave_arrive_whole(codec: str, data: st.DataObject) -> None:
    reply = data.draw(replies(codec))
    events = data.draw(interleaved_streams(reply))
    expected = get_codec(codec).decode_response(get_codec(codec).encode_response(reply))
    wire = _encode(codec, events, reply)
    assert _late_pieces(wire) == []
    assert _decode_stream(codec, wire) == expected


def _late_pieces(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Argument pieces sent for a call after its block or item ended: SDKs drop or misplace them.

    (A thinking signature known only at the end is another matter: Anthropic's SDK adds a
    `signature_delta` to its block by index, whenever it comes.)
    """
    closed: set[Any] = set()
    late = []
    for event in wire:
        kind = event.get("type")
        if kind == "content_block_stop":  # Anthropic
            closed.add(event["index"])
        elif kind == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
            late += [event] if event["index"] in closed else []
        elif kind == "response.output_item.done":  # Responses
            closed.add(event["output_index"])
        elif kind == "response.function_call_arguments.delta" and event["output_index"] in closed:
            late.append(event)
    return late


def test_an_interleaved_second_call_waits_for_the_first_in_a_responses_stream() -> None:
    """Interleaved chunks: call 0 id+name, `{"ci`, call 1 id+name, `ty": "Paris"}`, call 1's args."""
    first = ToolCall(id="call_a", name="get_weather", arguments={"city": "Paris"})
    second = ToolCall(id="call_b", name="get_time", arguments={"tz": "CET"})
    reply = Response(message=AssistantMessage(parts=[first, second]), stop_reason=StopReason.TOOL_USE, id="resp_1")
    events: list[StreamEvent] = [
        ToolCallDelta(0, "call_a", "get_weather", ""),
        ToolCallDelta(0, None, None, '{"ci'),
        ToolCallDelta(1, "call_b", "get_time", ""),
        ToolCallDelta(0, None, None, 'ty": "Paris"}'),
        ToolCallDelta(1, None, None, '{"tz": "CET"}'),
        Done(reply),
    ]
    wire = _encode("openai-responses", events, reply)
    done = [e["item"] for e in wire if e["type"] == "response.output_item.done"]
    assert [(d["call_id"], d["arguments"]) for d in done] == [
        ("call_a", '{"city": "Paris"}'),
        ("call_b", '{"tz": "CET"}'),
    ]
    added = [e["item"]["call_id"] for e in wire if e["type"] == "response.output_item.added"]
    assert added == ["call_a", "call_b"]  # the second call opens only after the first closed


def _decode_stream(codec: str, wire: list[dict[str, Any]]) -> Response:
    decoder = get_codec(codec).stream_decoder()
    done = [e for data in wire for e in decoder.feed(data) if isinstance(e, Done)]
    return done[0].response if done else decoder.finish()


def _encode(codec: str, events: list[StreamEvent], reply: Response) -> list[dict[str, Any]]:
    encoder = get_codec(codec).stream_encoder(reply.model, reply.id)
    wire = [w.data for event in events for w in encoder.feed(event)]
    return wire + [w.data for w in encoder.finish()]


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_neutral_stream_encodes_to_what_the_decoder_reads_back(codec: str, data: st.DataObject) -> None:
    reply = data.draw(replies(codec))
    events = data.draw(neutral_streams(reply))
    expected = get_codec(codec).decode_response(get_codec(codec).encode_response(reply))
    assert _decode_stream(codec, _encode(codec, events, reply)) == expected


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_an_events_text_is_its_data_as_dumps_writes_it(codec: str, data: st.DataObject) -> None:
    """An encoder that writes its events' repeated fields once (`WireEvent.text`) writes the same bytes."""
    reply = data.draw(replies(codec))
    encoder = get_codec(codec).stream_encoder(reply.model, reply.id)
    wire = [w for event in data.draw(neutral_streams(reply)) for w in encoder.feed(event)] + encoder.finish()
    assert [w.text for w in wire if w.text is not None] == [dumps(w.data) for w in wire if w.text is not None]
    assert codec != "openai" or all(w.text is not None for w in wire if w.data.get("choices"))


@given(st.text())
@example('"\\\n\x00\u2028é\ud800\udfff')
def test_a_string_alone_is_written_as_dumps_writes_it(text: str) -> None:
    """Deltas are written by `dumps_string`: quotes, controls and lone surrogates escaped as `dumps` does."""
    assert dumps_string(text) == dumps(text)


def _sdk_stream_types() -> dict[str, Any]:
    from anthropic.types import RawMessageStreamEvent
    from google.genai import types as genai
    from openai.types.chat import ChatCompletionChunk
    from openai.types.responses import ResponseStreamEvent

    return {
        "anthropic": RawMessageStreamEvent,
        "openai": ChatCompletionChunk,
        "openai-responses": ResponseStreamEvent,
        "gemini": genai.GenerateContentResponse,
    }


SDK_STREAM_TYPES = _sdk_stream_types()
EXTENSIONS = frozenset(
    {
        "$.choices[0].delta.reasoning_content",  # vLLM's and DeepSeek's; OpenAI's chat API streams none
        "$.name",  # on function_call_arguments.done, as the API reference shows; openai-python 3.57 lacks it
    }
)


@pytest.mark.parametrize("codec", sorted(SDK_STREAM_TYPES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_streamed_event_is_exactly_an_official_sdk_type(codec: str, data: st.DataObject) -> None:
    """What a relay sends (no reply known in advance) has no key the SDK does not know, and none missing."""
    reply = data.draw(replies(codec))
    encoder = get_codec(codec).stream_encoder("model-x")
    wire = [w.data for event in data.draw(neutral_streams(reply)) for w in encoder.feed(event)]
    for event in wire:
        if event.get("type") != "ping":  # a documented keep-alive the SDK's event union leaves out
            assert_sdk_exact(SDK_STREAM_TYPES[codec], event, extensions=EXTENSIONS, same_values=codec != "gemini")


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@given(
    value=_JSON_VALUES,
    cut=st.integers(min_value=0, max_value=60),
    head=st.sampled_from(["", " ", "\n", "\xa0"]),
    tail=st.sampled_from(["", " ", "\n", "\xa0", "x"]),
)
@example(value=float("nan"), cut=60, head="", tail="")
@example(value=float("-inf"), cut=60, head="", tail=" ")
@example(value="a", cut=60, head="", tail="\xa0")
@example(value={"city": "Paris"}, cut=16, head="", tail="")  # `{"city": "Paris"`: an object cut after a string
@example(value=[1], cut=60, head="\xa0", tail="")
def test_a_call_text_is_whole_exactly_when_json_reads_it(value: Any, cut: int, head: str, tail: str) -> None:
    """The held-call check answers some texts without parsing them: always as the parser would."""
    import json

    from toolwire.codecs.common.stream_encoding import _whole_json

    text = head + json.dumps(value)[:cut] + tail  # NaN and Infinity included, as json.loads takes them
    try:
        json.loads(text)
        whole = True
    except ValueError:
        whole = False
    assert _whole_json(text) is whole
