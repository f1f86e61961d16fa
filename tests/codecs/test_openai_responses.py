"""The openai-responses codec: golden bodies, tables, reasoning replay, streams, rendering."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from openai.types.responses import Response as SDKResponse
from openai.types.responses import ResponseStreamEvent
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

from tests.sdk_types import assert_sdk_exact
from toolwire import (
    AssistantMessage,
    Done,
    ImagePart,
    NamedToolChoice,
    Request,
    Response,
    StopReason,
    SystemMessage,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    ToolResult,
    Usage,
    UserMessage,
)
from toolwire.codecs import get_codec
from toolwire.errors import CodecError, ProviderError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openai-responses"
CODEC = get_codec("openai-responses")
NAME = "openai-responses"
DONE_NAME = frozenset({"$.name"})  # on function_call_arguments.done, as the API sends it; the SDK type lacks it
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
PNG_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def load_stream(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / f"{name}.stream.jsonl").read_text(encoding="utf-8").splitlines()]


def feed_all(events: list[dict[str, Any]]) -> tuple[list[Any], Response]:
    decoder = CODEC.stream_decoder()
    out = [e for event in events for e in decoder.feed(copy.deepcopy(event))]
    return out, decoder.finish()


def own(**values: Any) -> dict[str, Any]:
    return {NAME: values}


# The stateless tool loop the request fixtures record.

WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
    strict=True,
)
CHART = ToolDefinition(
    name="render_chart",
    description="Render a line chart as a PNG.",
    parameters={
        "type": "object",
        "properties": {"title": {"type": "string"}, "values": {"type": "array", "items": {"type": "number"}}},
        "required": ["values"],
    },
)
STATELESS = {
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "reasoning": {"effort": "medium", "summary": "auto"},
}


def loop_requests() -> list[Request]:
    history: list[Any] = [
        SystemMessage(content="You are a weather assistant."),
        SystemMessage(content="Answer briefly."),
        UserMessage(content=[TextPart(text="Compare Paris and Berlin and chart it, like this:"), ImagePart(data=PNG)]),
    ]
    requests = []

    def snapshot() -> None:
        requests.append(
            Request(
                model="gpt-5-mini",
                messages=list(history),
                tools=[WEATHER, CHART],
                tool_choice="auto",
                parallel_tool_calls=True,
                max_tokens=2048,
                extra=STATELESS,
            )
        )

    snapshot()
    first = CODEC.decode_response(load("reasoning_call.response.json"))
    history += [first.message, ToolResult.data(first.tool_calls[0], {"temp_c": 21, "sky": "sunny"})]
    snapshot()
    second = CODEC.decode_response(load("parallel_calls.response.json"))
    berlin, chart = second.tool_calls
    history += [
        second.message,
        ToolResult.error(berlin, "Weather service timed out; try again."),
        ToolResult.multimodal(chart, [TextPart(text="Chart rendered."), ImagePart(data=PNG, media_type="image/png")]),
    ]
    snapshot()
    return requests


LOOP = ["loop_turn1", "loop_turn2", "loop_turn3"]


# Requests: golden bodies


@pytest.mark.parametrize(("name", "index"), [(n, i) for i, n in enumerate(LOOP)])
def test_tool_loop_request_bodies_are_golden_and_valid(name: str, index: int) -> None:
    body = CODEC.encode_request(loop_requests()[index])
    assert body == load(f"{name}.request.json")
    assert_sdk_exact(ResponseCreateParamsNonStreaming, body)
    assert CODEC.encode_request(CODEC.decode_request(copy.deepcopy(body))) == body


def test_turn_two_replays_reasoning_right_before_its_call() -> None:
    body = load("loop_turn2.request.json")
    assert [(i["type"], i.get("id")) for i in body["input"]] == [
        ("message", None),
        ("reasoning", "rs_68f9c0020000cafe"),
        ("function_call", "fc_68f9c0020000beef"),
        ("function_call_output", None),
    ]
    reasoning = body["input"][1]
    assert reasoning["encrypted_content"] == "gAAAAABo-aZ1_kQ2" + "x" * 40 + "Ryq9ZLw=="
    assert [s["text"] for s in reasoning["summary"]] == [
        "**Checking the weather**\n\nThe user wants Paris weather; call get_weather.",
        "Use Celsius.",
    ]
    assert body["input"][2]["call_id"] == "call_Pa9fK2nVx1"


def minimal(*messages: Any, **fields: Any) -> dict[str, Any]:
    return CODEC.encode_request(Request(model="m", messages=list(messages), **fields))


CALL = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})


@pytest.mark.parametrize(
    ("result", "output"),
    [
        (ToolResult.text(CALL, "21 °C"), "21 °C"),
        (ToolResult.data(CALL, {"temp": 21, "city": "Zürich"}), '{"temp":21,"city":"Zürich"}'),
        (ToolResult.data(CALL, [1, "a"]), '[1,"a"]'),
        (ToolResult.data(CALL, None), "null"),
        (ToolResult.error(CALL, "city not found"), '{"error":"city not found"}'),
        (
            ToolResult.multimodal(CALL, [TextPart(text="map:"), ImagePart(url="https://x.test/m.png")]),
            [
                {"type": "input_text", "text": "map:"},
                {"type": "input_image", "image_url": "https://x.test/m.png", "detail": "auto"},
            ],
        ),
    ],
)
def test_every_result_kind(result: ToolResult, output: Any) -> None:
    body = minimal(AssistantMessage(parts=[CALL]), result)
    assert body["input"] == [
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": output},
    ]
    assert_sdk_exact(ResponseCreateParamsNonStreaming, body)


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        (NamedToolChoice("get_weather"), {"type": "function", "name": "get_weather"}),
    ],
)
def test_tool_choice_table(choice: Any, wire: Any) -> None:
    body = minimal(UserMessage(content="hi"), tools=[WEATHER], tool_choice=choice)
    assert body["tool_choice"] == wire
    assert CODEC.decode_request(body).tool_choice == choice


def test_tools_are_flat_with_strict_and_parameters_always_present() -> None:
    bare = ToolDefinition(name="now")
    loose = ToolDefinition(
        name="find", description="Find.", parameters={"type": "object", "properties": {}}, strict=False
    )
    body = minimal(UserMessage(content="hi"), tools=[bare, loose, WEATHER], parallel_tool_calls=False)
    assert body["tools"][:2] == [
        {"type": "function", "name": "now", "parameters": {"type": "object", "properties": {}}, "strict": False},
        {
            "type": "function",
            "name": "find",
            "description": "Find.",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        },
    ]
    assert body["tools"][2]["strict"] is True
    assert body["tools"][2]["parameters"]["additionalProperties"] is False
    assert body["tools"][2]["parameters"]["required"] == ["city", "unit"]
    assert body["parallel_tool_calls"] is False
    assert_sdk_exact(ResponseCreateParamsNonStreaming, body)


def test_scalar_options_and_extra_merged_last() -> None:
    body = minimal(
        UserMessage(content="hi"), max_tokens=50, temperature=0.2, stream=True, extra={"temperature": 0.7, "top_p": 1}
    )
    assert body == {
        "model": "m",
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "max_output_tokens": 50,
        "temperature": 0.7,
        "stream": True,
        "top_p": 1,
    }


def test_user_images_inline_and_by_url() -> None:
    jpeg = ImagePart(data=b"\xff\xd8\xff\xe0jfif")
    body = minimal(UserMessage(content=[TextPart(text="look"), jpeg, ImagePart(url="https://x.test/a.png")]))
    assert body["input"][0]["content"] == [
        {"type": "input_text", "text": "look"},
        {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4GpmaWY=", "detail": "auto"},
        {"type": "input_image", "image_url": "https://x.test/a.png", "detail": "auto"},
    ]
    assert_sdk_exact(ResponseCreateParamsNonStreaming, body)
    decoded = CODEC.decode_request(body).messages[0]
    assert decoded == UserMessage(
        content=[
            TextPart(text="look"),
            ImagePart(data=b"\xff\xd8\xff\xe0jfif", media_type="image/jpeg"),
            ImagePart(url="https://x.test/a.png"),
        ]
    )


def test_assistant_text_keeps_its_item_id_and_phase_only_when_known() -> None:
    known = TextPart(text="Hello", metadata=own(item_id="msg_1", phase="final_answer"))
    body = minimal(AssistantMessage(parts=[known, TextPart(text="Bye", metadata={"gemini": {"x": 1}})]))
    assert body["input"] == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
            "id": "msg_1",
            "status": "completed",
            "phase": "final_answer",
        },
        {"type": "message", "role": "assistant", "content": "Bye"},  # id-less: the SDK's EasyInputMessageParam
    ]
    assert_sdk_exact(ResponseCreateParamsNonStreaming, body)


def test_foreign_and_unidentified_reasoning_is_never_sent() -> None:
    parts: list[Any] = [
        ThinkingPart(text="anthropic thoughts", signature="sig", provider="anthropic"),
        ThinkingPart(text="no id", signature="enc", provider=NAME),
        ThinkingPart(text="", signature=None, provider=NAME, metadata={"id": "rs_stateful"}),
        ToolCall(id="call_9", name="f", arguments={}, metadata={"gemini": {"thought_signature": "abc"}}),
    ]
    body = minimal(AssistantMessage(parts=parts))
    assert body["input"] == [
        {"type": "reasoning", "id": "rs_stateful", "summary": []},
        {"type": "function_call", "call_id": "call_9", "name": "f", "arguments": "{}"},
    ]


def test_decode_request_recovers_names_roles_and_unknown_keys() -> None:
    body = {
        "model": "gpt-5",
        "input": [
            {"role": "developer", "content": "Be terse."},
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q":"x"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "found"},
            {"type": "item_reference", "id": "msg_old"},
        ],
        "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "lookup"}]},
        "tools": [{"type": "web_search"}],
        "previous_response_id": "resp_1",
    }
    request = CODEC.decode_request(body)
    assert request.messages == [
        SystemMessage(content="Be terse."),
        UserMessage(content="hi"),
        AssistantMessage(parts=[ToolCall(id="c1", name="lookup", arguments={"q": "x"})]),
        ToolResult(tool_call_id="c1", name="lookup", kind="text", value="found"),
    ]
    assert request.tools == []
    assert request.tool_choice is None
    assert request.extra == {
        "tool_choice": body["tool_choice"],
        "previous_response_id": "resp_1",
        "tools": body["tools"],
    }


def test_decode_request_rejects_non_bodies() -> None:
    with pytest.raises(CodecError):
        CODEC.decode_request([])  # type: ignore[arg-type]
    with pytest.raises(CodecError):
        CODEC.decode_request({"input": []})


# Responses


def test_decode_text_reply() -> None:
    assert CODEC.decode_response(load("text.response.json")) == Response(
        message=AssistantMessage(
            parts=[
                TextPart(
                    text="Paris is sunny and 21 °C; Berlin is cloudy with rain, 14 °C. "
                    "Here is the chart you asked for.",
                    metadata=own(item_id="msg_68f9a1c2b3d4e5f60011aa"),
                )
            ]
        ),
        stop_reason=StopReason.END_TURN,
        raw_stop_reason="completed",
        usage=Usage(input_tokens=1320, output_tokens=31, cache_read_tokens=1024, reasoning_tokens=0),
        model="gpt-5-mini-2025-08-07",
        id="resp_68f9a1c2b3d4e5f6text01",
    )


def test_decode_parallel_calls_keep_call_id_and_item_id_apart() -> None:
    response = CODEC.decode_response(load("parallel_calls.response.json"))
    assert response.tool_calls == [
        ToolCall(
            id="call_Wk3pQ8xYb2",
            name="get_weather",
            arguments={"city": "Berlin", "unit": "c"},
            metadata=own(item_id="fc_68f9b0010000aaaa"),
        ),
        ToolCall(
            id="call_Z7mRt4Lc9d",
            name="render_chart",
            arguments={"title": "Temps", "values": [21, 14]},
            metadata=own(item_id="fc_68f9b0010000bbbb"),
        ),
    ]
    assert (response.stop_reason, response.raw_stop_reason) == (StopReason.TOOL_USE, "completed")


def test_decode_reasoning_item() -> None:
    response = CODEC.decode_response(load("reasoning_call.response.json"))
    assert response.message.parts[0] == ThinkingPart(
        text="**Checking the weather**\n\nThe user wants Paris weather; call get_weather.\n\nUse Celsius.",
        signature="gAAAAABo-aZ1_kQ2" + "x" * 40 + "Ryq9ZLw==",
        provider=NAME,
        metadata={
            "id": "rs_68f9c0020000cafe",
            "summary": ["**Checking the weather**\n\nThe user wants Paris weather; call get_weather.", "Use Celsius."],
        },
    )
    assert response.usage == Usage(input_tokens=310, output_tokens=212, cache_read_tokens=0, reasoning_tokens=128)


def test_decode_empty_and_broken_arguments() -> None:
    calls = CODEC.decode_response(load("broken_arguments.response.json")).tool_calls
    assert [c.arguments for c in calls] == [{}, {}, {}]
    assert calls[0].metadata == own(item_id="fc_68f9e0040000empty")
    assert calls[1].metadata == {  # cut off before its end: never guessed at
        "raw_arguments": '{"city": "Lyon", "unit": "c"',
        "arguments_error": "the arguments were cut off before their end "
        """(...'{"city": "Lyon", "unit": "c"'); send the whole call again""",
        **own(item_id="fc_68f9e0040000broke"),
    }
    assert calls[2].metadata["raw_arguments"] == "not json at all"
    assert "not valid JSON" in calls[2].metadata["arguments_error"]


def test_decode_unicode() -> None:
    response = CODEC.decode_response(load("unicode.response.json"))
    assert response.text == "東京は晴れ、気温は23℃です 🌤️ — naïve café “quotes”"
    assert response.tool_calls[0].arguments == {"city": "Zürich", "note": "雪 ❄️"}


def reply(status: str, reason: str | None = None, calls: bool = False) -> dict[str, Any]:
    output = [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}] if calls else []
    return {"id": "r", "status": status, "output": output, "incomplete_details": {"reason": reason} if reason else None}


@pytest.mark.parametrize(
    ("body", "stop", "raw"),
    [
        (reply("completed"), StopReason.END_TURN, "completed"),
        (reply("completed", calls=True), StopReason.TOOL_USE, "completed"),
        (reply("incomplete", "max_output_tokens"), StopReason.MAX_TOKENS, "max_output_tokens"),
        (reply("incomplete", "max_output_tokens", calls=True), StopReason.MAX_TOKENS, "max_output_tokens"),
        (reply("incomplete", "content_filter"), StopReason.CONTENT_FILTER, "content_filter"),
        (reply("incomplete", "steered"), StopReason.OTHER, "steered"),
        (reply("incomplete"), StopReason.OTHER, "incomplete"),
        (reply("failed"), StopReason.ERROR, "failed"),
        (reply("cancelled"), StopReason.OTHER, "cancelled"),
    ],
)
def test_stop_reason_table(body: dict[str, Any], stop: StopReason, raw: str) -> None:
    response = CODEC.decode_response(body)
    assert (response.stop_reason, response.raw_stop_reason) == (stop, raw)


def test_incomplete_and_failed_fixtures() -> None:
    cut = CODEC.decode_response(load("incomplete.response.json"))
    assert (cut.stop_reason, cut.raw_stop_reason, cut.text) == (
        StopReason.MAX_TOKENS,
        "max_output_tokens",
        "The forecast for the next ten days in Paris starts with",
    )
    failed = CODEC.decode_response(load("failed_status.response.json"))
    assert (failed.stop_reason, failed.raw_stop_reason, failed.message.parts) == (StopReason.ERROR, "failed", [])


def test_error_payloads_and_non_bodies() -> None:
    with pytest.raises(ProviderError) as caught:
        CODEC.decode_response(load("error_body.response.json"))
    assert caught.value.provider == NAME
    assert "Invalid 'input[2].call_id': empty string." in caught.value.message
    with pytest.raises(CodecError):
        CODEC.decode_response("nope")  # type: ignore[arg-type]
    with pytest.raises(CodecError):
        CODEC.decode_response({"id": "r", "status": "completed"})


def test_missing_call_id_gets_a_stable_derived_id() -> None:
    body = {"id": "r1", "status": "completed", "output": [{"type": "function_call", "name": "f", "arguments": "{}"}]}
    first = CODEC.decode_response(body).tool_calls[0].id
    assert first == CODEC.decode_response(copy.deepcopy(body)).tool_calls[0].id
    assert first.startswith("call_")


# Streams


def test_stream_parallel_calls_are_keyed_by_item_id() -> None:
    events, final = feed_all(load_stream("parallel_calls"))
    assert events[:-1] == [
        ToolCallDelta(0, "call_Wk3pQ8xYb2", "get_weather", ""),
        ToolCallDelta(1, "call_Z7mRt4Lc9d", "render_chart", ""),
        ToolCallDelta(0, None, None, '{"city":'),
        ToolCallDelta(1, None, None, '{"title":"Te'),
        ToolCallDelta(0, None, None, '"Berlin",'),
        ToolCallDelta(1, None, None, 'mps","values":'),
        ToolCallDelta(0, None, None, '"unit":"c"}'),
        ToolCallDelta(1, None, None, "[21,14]}"),
    ]
    assert events[-1] == Done(final)
    assert final == CODEC.decode_response(load("parallel_calls.response.json"))
    assert final.usage == Usage(input_tokens=402, output_tokens=58, cache_read_tokens=0, reasoning_tokens=0)


def test_stream_reasoning_takes_encrypted_content_from_item_done() -> None:
    events, final = feed_all(load_stream("reasoning_call"))
    thinking = [e.text for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(thinking) == final.message.parts[0].text  # type: ignore[union-attr]
    assert "\n\n" in thinking
    part = final.message.parts[0]
    assert isinstance(part, ThinkingPart)
    assert part.signature == "gAAAAABo-aZ1_kQ2" + "x" * 40 + "Ryq9ZLw=="
    assert final == CODEC.decode_response(load("reasoning_call.response.json"))


def test_stream_text_and_incomplete() -> None:
    events, _ = feed_all(load_stream("text"))
    assert [e for e in events if isinstance(e, TextDelta)] == [
        TextDelta("Paris is "),
        TextDelta("sunny and 21 °C; Berl"),
        TextDelta("in is cloudy with rain, 14 °C. Her"),
        TextDelta("e is the chart you asked for."),
    ]
    _, cut = feed_all(load_stream("incomplete"))
    assert (cut.stop_reason, cut.raw_stop_reason) == (StopReason.MAX_TOKENS, "max_output_tokens")


@pytest.mark.parametrize(
    ("name", "text"), [("failed", "The server had an error"), ("error_event", "Rate limit reached")]
)
def test_stream_failures_raise_provider_error(name: str, text: str) -> None:
    with pytest.raises(ProviderError) as caught:
        feed_all(load_stream(name))
    assert text in caught.value.message
    assert caught.value.provider == NAME


def test_item_done_fills_in_text_whose_deltas_went_missing() -> None:
    events = [
        e
        for e in load_stream("text")
        if e["type"] != "response.output_text.delta"
        or e["delta"] not in ("in is cloudy with rain, 14 °C. Her", "e is the chart you asked for.")
    ]
    out, final = feed_all(events)
    deltas = [e.text for e in out if isinstance(e, TextDelta)]
    assert "".join(deltas) == final.text == CODEC.decode_response(load("text.response.json")).text


def test_calls_that_only_arrive_as_done_items_and_unknown_events() -> None:
    decoder = CODEC.stream_decoder()
    assert decoder.feed({"type": "response.web_search_call.searching", "item_id": "ws_1"}) == []
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": '{"a":1}'}
    assert decoder.feed({"type": "response.output_item.done", "output_index": 0, "item": item}) == [
        ToolCallDelta(0, "call_1", "f", ""),
        ToolCallDelta(0, None, None, '{"a":1}'),
    ]
    assert decoder.finish().tool_calls == [
        ToolCall(id="call_1", name="f", arguments={"a": 1}, metadata=own(item_id="fc_1"))
    ]
    assert decoder.finish() == decoder.finish()
    with pytest.raises(CodecError):
        decoder.feed("data")  # type: ignore[arg-type]


def test_arguments_done_is_the_final_value() -> None:
    decoder = CODEC.stream_decoder()
    added = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""}
    decoder.feed({"type": "response.output_item.added", "output_index": 0, "item": added})
    decoder.feed(
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": '{"a":'}
    )
    decoder.feed(
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0, "arguments": '{"a":2}'}
    )
    assert decoder.finish().tool_calls[0].arguments == {"a": 2}


# Rendering replies


def rendered_reply() -> Response:
    return Response(
        message=AssistantMessage(
            parts=[
                ThinkingPart(text="think", signature="enc", provider=NAME),
                TextPart(text="Checking."),
                ToolCall(id="call_a", name="f", arguments={"x": "ü"}),
                ToolCall(id="call_b", name="g", arguments={}),
            ]
        ),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="completed",
        usage=Usage(input_tokens=10, output_tokens=20, cache_read_tokens=3, reasoning_tokens=5),
        model="gpt-5-mini",
        id="resp_r",
    )


def test_encode_response_is_a_valid_response_object_that_decodes_back() -> None:
    body = CODEC.encode_response(rendered_reply())
    SDKResponse.model_validate(body)  # what the API sends: it may hold more than the SDK models
    assert [(i["type"], i["id"]) for i in body["output"]] == [
        ("reasoning", "rs_" + body["output"][0]["id"][3:]),
        ("message", body["output"][1]["id"]),
        ("function_call", body["output"][2]["id"]),
        ("function_call", body["output"][3]["id"]),
    ]
    decoded = CODEC.decode_response(body)
    assert [c.id for c in decoded.tool_calls] == ["call_a", "call_b"]
    assert decoded.usage == rendered_reply().usage
    assert CODEC.decode_response(CODEC.encode_response(decoded)) == decoded


@pytest.mark.parametrize(
    "stop", [StopReason.END_TURN, StopReason.MAX_TOKENS, StopReason.CONTENT_FILTER, StopReason.OTHER]
)
def test_encode_stream_events_are_valid_and_decode_back(stop: StopReason) -> None:
    response = CODEC.decode_response(CODEC.encode_response(rendered_reply()))
    response.stop_reason = stop
    response.message.parts = response.message.parts[:2] if stop is not StopReason.TOOL_USE else response.message.parts
    response.raw_stop_reason = CODEC.decode_response(CODEC.encode_response(response)).raw_stop_reason
    events = CODEC.encode_stream(response)
    for event in events:
        assert_sdk_exact(ResponseStreamEvent, event, extensions=DONE_NAME)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    _, final = feed_all(events)
    assert final == response


def test_encode_stream_of_a_failed_reply_ends_in_response_failed() -> None:
    response = Response(message=AssistantMessage(), stop_reason=StopReason.ERROR, raw_stop_reason="failed", id="r")
    events = CODEC.encode_stream(response)
    assert events[-1]["type"] == "response.failed"
    assert CODEC.decode_response(CODEC.encode_response(response)) == response


def test_a_stream_with_only_the_final_response_still_gives_the_reply() -> None:
    final = load("parallel_calls.response.json")
    events, response = feed_all([{"type": "response.completed", "sequence_number": 0, "response": final}])
    assert response == CODEC.decode_response(final)
    assert [type(e).__name__ for e in events] == ["ToolCallDelta"] * 4 + ["Done"]


def test_every_fixture_matches_the_sdk_types() -> None:
    for path in sorted(FIXTURES.glob("*.response.json")):
        if path.name != "error_body.response.json":
            SDKResponse.model_validate(load(path.name))  # what the API sends: it may hold more than the SDK models
    for path in sorted(FIXTURES.glob("*.stream.jsonl")):
        for event in load_stream(path.name.removesuffix(".stream.jsonl")):
            # the API's response object has `store`, which openai-python 3.57's model lacks
            assert_sdk_exact(ResponseStreamEvent, event, extensions=DONE_NAME | {"$.response.store"})
    for path in sorted(FIXTURES.glob("*.request.json")):
        assert_sdk_exact(ResponseCreateParamsNonStreaming, load(path.name))
