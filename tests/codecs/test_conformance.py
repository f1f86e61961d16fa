"""One conformance suite for every codec: the rules of docs/wire-formats.md that hold whatever the provider.

Per-provider details (exact bodies, tables) live in `test_<codec>.py`; this file checks the
properties: request round trips, reply round trips, stream == non-stream for every fixture pair,
random re-chunkings of every stream, deltas that add up, exactly one `Done`.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import CODECS, assistant_turns, requests
from toolwire import Done, Response, StopReason, TextDelta, ThinkingPart, ToolCallDelta, Usage
from toolwire.codecs import Codec, get_codec

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _available(name: str) -> bool:
    module = "toolwire.codecs." + name.replace("-", "_")
    return importlib.util.find_spec(module) is not None


AVAILABLE = [c for c in CODECS if _available(c)]
# End markers that are events of their own: the decoder emits Done itself (docs/wire-formats.md).
SELF_ENDING = {"anthropic", "bedrock", "ollama", "openai-responses"}


def _stream_pairs() -> list[tuple[str, str]]:
    pairs = []
    for codec in AVAILABLE:
        for stream in sorted((FIXTURES / codec).glob("*.stream.jsonl")):
            case = stream.name.removesuffix(".stream.jsonl")
            if (FIXTURES / codec / f"{case}.response.json").exists():
                pairs.append((codec, case))
    return pairs


def _load_stream(codec: str, case: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / codec / f"{case}.stream.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _load_response(codec: str, case: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((FIXTURES / codec / f"{case}.response.json").read_text(encoding="utf-8"))
    return result


def _run_stream(codec: Codec, events: list[dict[str, Any]]) -> tuple[list[Any], Response]:
    decoder = codec.stream_decoder()
    out: list[Any] = []
    for event in events:
        out.extend(decoder.feed(copy.deepcopy(event)))
    if not any(isinstance(e, Done) for e in out):
        out.append(Done(decoder.finish()))
    return out, decoder.finish()


PAIRS = _stream_pairs()


def _bare(response: Response) -> bool:
    """No thinking and no provider metadata on any part (what a parse of the arguments adds aside)."""
    parts = response.message.parts
    return all(
        not isinstance(p, ThinkingPart) and not set(p.metadata) - {"raw_arguments", "arguments_error"} for p in parts
    )


@pytest.mark.parametrize(("codec_name", "case"), PAIRS, ids=[f"{c}:{k}" for c, k in PAIRS])
def test_a_plain_reply_so_far_is_one_with_nothing_but_text_and_calls(codec_name: str, case: str) -> None:
    """`plain()`, which the gateway asks before packing provider context into a call id, at every event.

    Plain means nothing but text and calls: never a reply with thinking or provider metadata
    (it may say no for one without, which only costs building the reply so far).
    """
    decoder = get_codec(codec_name).stream_decoder()
    for number, event in enumerate(_load_stream(codec_name, case)):
        decoder.feed(copy.deepcopy(event))
        assert not decoder.plain() or _bare(decoder.finish()), number


@pytest.mark.parametrize(
    ("codec_name", "case", "plain"),
    [
        ("openai", "parallel_calls", True),
        ("anthropic", "parallel_tool_use", True),
        ("anthropic", "thinking_tool_use", False),
        ("anthropic", "redacted_thinking", False),
        ("openai", "reasoning_content", False),
    ],
)
def test_a_reply_with_thinking_is_not_plain_and_one_of_calls_is(codec_name: str, case: str, plain: bool) -> None:
    decoder = get_codec(codec_name).stream_decoder()
    for event in _load_stream(codec_name, case):
        decoder.feed(copy.deepcopy(event))
    assert (decoder.plain(), _bare(decoder.finish())) == (plain, plain)


@pytest.mark.parametrize(("codec_name", "case"), PAIRS, ids=[f"{c}:{k}" for c, k in PAIRS])
def test_stream_equals_non_stream(codec_name: str, case: str) -> None:
    codec = get_codec(codec_name)
    events, final = _run_stream(codec, _load_stream(codec_name, case))
    expected = codec.decode_response(_load_response(codec_name, case))
    assert final == expected
    dones = [e for e in events if isinstance(e, Done)]
    assert len(dones) == 1 and events[-1] is dones[0] and dones[0].response == expected
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == expected.text
    _check_call_deltas(events, expected)


@pytest.mark.parametrize(("codec_name", "case"), PAIRS, ids=[f"{c}:{k}" for c, k in PAIRS])
def test_self_ending_streams_emit_done_from_feed(codec_name: str, case: str) -> None:
    codec = get_codec(codec_name)
    decoder = codec.stream_decoder()
    events = [e for ev in _load_stream(codec_name, case) for e in decoder.feed(ev)]
    dones = [e for e in events if isinstance(e, Done)]
    assert len(dones) == (1 if codec_name in SELF_ENDING else 0)
    assert decoder.finish() == decoder.finish()


def _check_call_deltas(events: list[Any], expected: Response) -> None:
    deltas: dict[int, list[ToolCallDelta]] = {}
    for event in events:
        if isinstance(event, ToolCallDelta):
            deltas.setdefault(event.index, []).append(event)
    assert sorted(deltas) == list(range(len(expected.tool_calls)))
    for index, call in enumerate(expected.tool_calls):
        first = deltas[index][0]
        assert (first.id, first.name) == (call.id, call.name)
        assert all(d.id is None and d.name is None for d in deltas[index][1:])
        if "arguments_error" not in call.metadata and "raw_arguments" not in call.metadata:
            text = "".join(d.arguments_delta for d in deltas[index])
            assert (json.loads(text) if text.strip() else {}) == call.arguments


# Random re-chunkings: split one string fragment of an event into two events.


def _split_string(event: dict[str, Any], path: list[Any], at: int) -> list[dict[str, Any]] | None:
    """Copies of `event` with the string at `path` cut at `at` (first half, second half)."""
    node: Any = event
    for key in path[:-1]:
        node = node[key]
    value = node[path[-1]]
    if not isinstance(value, str) or len(value) < 2:
        return None
    cut = 1 + at % (len(value) - 1)
    first, second = copy.deepcopy(event), copy.deepcopy(event)
    for copy_, piece in ((first, value[:cut]), (second, value[cut:])):
        target = copy_
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = piece
    return [first, second]


def _splittable_paths(codec: str, event: dict[str, Any]) -> list[list[Any]]:  # noqa: C901 - one table per codec
    """Where each provider streams a string in pieces; splitting there keeps the stream valid."""
    paths: list[list[Any]] = []
    if codec == "openai":
        for i, choice in enumerate(event.get("choices") or []):
            delta = choice.get("delta") or {}
            alone = not choice.get("finish_reason") and not delta.get("tool_calls") and not delta.get("reasoning")
            if isinstance(delta.get("content"), str) and alone and not delta.get("reasoning_content"):
                paths.append(["choices", i, "delta", "content"])
    elif codec == "anthropic" and event.get("type") == "content_block_delta":
        kind = event["delta"].get("type")
        field = {"text_delta": "text", "input_json_delta": "partial_json", "thinking_delta": "thinking"}.get(kind)
        if field:
            paths.append(["delta", field])
    elif codec == "openai-responses" and event.get("type") in (
        "response.output_text.delta",
        "response.function_call_arguments.delta",
    ):
        paths.append(["delta"])
    elif codec == "ollama" and not event.get("done"):
        message = event.get("message") or {}
        if isinstance(message.get("content"), str) and not message.get("tool_calls") and not message.get("thinking"):
            paths.append(["message", "content"])
    elif codec == "bedrock" and "contentBlockDelta" in event:
        delta = event["contentBlockDelta"]["delta"]
        if "text" in delta:
            paths.append(["contentBlockDelta", "delta", "text"])
        elif "toolUse" in delta:
            paths.append(["contentBlockDelta", "delta", "toolUse", "input"])
        elif "text" in delta.get("reasoningContent", {}):
            paths.append(["contentBlockDelta", "delta", "reasoningContent", "text"])
    elif codec == "gemini":
        candidates = event.get("candidates") or []
        parts = ((candidates[0].get("content") or {}).get("parts") or []) if len(candidates) == 1 else []
        if len(parts) == 1 and set(parts[0]) == {"text"} and not candidates[0].get("finishReason"):
            paths.append(["candidates", 0, "content", "parts", 0, "text"])
    return paths


def _rechunk(codec: str, events: list[dict[str, Any]], cuts: list[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, event in enumerate(events):
        paths = _splittable_paths(codec, event)
        cut = cuts[index % len(cuts)] if cuts else 0
        split = _split_string(event, paths[cut % len(paths)], cut) if paths and cut % 3 else None
        out.extend(split or [event])
    return out


@pytest.mark.parametrize(("codec_name", "case"), PAIRS, ids=[f"{c}:{k}" for c, k in PAIRS])
@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=20))
def test_random_rechunkings_give_the_same_response(codec_name: str, case: str, cuts: list[int]) -> None:
    codec = get_codec(codec_name)
    events = _load_stream(codec_name, case)
    _, expected = _run_stream(codec, events)
    _, final = _run_stream(codec, _rechunk(codec_name, events, cuts))
    assert final == expected


# Request round trips: encode(decode(encode(r))) == encode(r).


@pytest.mark.parametrize("codec_name", AVAILABLE)
def test_request_round_trip_on_random_conversations(codec_name: str) -> None:
    codec = get_codec(codec_name)

    @settings(max_examples=150, deadline=None)
    @given(requests(provider=codec_name))
    def check(request: Any) -> None:
        body = codec.encode_request(request)
        json.dumps(body)  # the body is JSON as it stands
        again = codec.encode_request(codec.decode_request(copy.deepcopy(body)))
        assert again == body

    check()


@pytest.mark.parametrize("codec_name", AVAILABLE)
def test_request_fixtures_round_trip(codec_name: str) -> None:
    codec = get_codec(codec_name)
    fixtures = sorted((FIXTURES / codec_name).glob("*.request.json"))
    for path in fixtures:
        body = json.loads(path.read_text(encoding="utf-8"))
        if path.name == "reasoning_replay.request.json":  # a compatible server's body: its profile
            from toolwire.codecs import guarded
            from toolwire.codecs.openai import OpenAICodec
            from toolwire.codecs.openai.profiles import PROFILES

            codec = guarded(OpenAICodec(PROFILES["openai-compatible"]))
        assert codec.encode_request(codec.decode_request(copy.deepcopy(body))) == body, path.name
        codec = get_codec(codec_name)


# Reply round trips: a Response rendered by the codec decodes back to itself.


@st.composite
def responses(draw: st.DrawFn, codec: str) -> Response:
    message, calls = draw(assistant_turns(codec))
    return Response(
        message=message,
        stop_reason=StopReason.TOOL_USE if calls else StopReason.END_TURN,
        usage=Usage(input_tokens=draw(st.integers(0, 9999)), output_tokens=draw(st.integers(0, 9999))),
        model="test-model",
        id=None if codec == "ollama" else "resp_1",
    )


def _essence(response: Response) -> tuple[Any, ...]:
    calls = tuple((c.name, json.dumps(c.arguments, sort_keys=True)) for c in response.tool_calls)
    return response.text, calls, response.stop_reason


@pytest.mark.parametrize("codec_name", AVAILABLE)
def test_rendered_replies_decode_back(codec_name: str) -> None:
    codec = get_codec(codec_name)

    @settings(max_examples=100, deadline=None)
    @given(responses(codec_name))
    def check(response: Response) -> None:
        decoded = codec.decode_response(codec.encode_response(response))
        assert _essence(decoded) == _essence(response)
        # Once in the provider's own terms, rendering is a fixpoint, ids and metadata included.
        assert codec.decode_response(codec.encode_response(decoded)) == decoded
        _, streamed = _run_stream(codec, codec.encode_stream(decoded))
        assert streamed == decoded

    check()
