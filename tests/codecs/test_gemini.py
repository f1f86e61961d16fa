"""The Gemini codec: golden bodies, every result kind, signatures, ids, stop reasons, usage, streams."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from google.genai import types as genai

from toolwire import (
    AssistantMessage,
    Done,
    ImagePart,
    NamedToolChoice,
    ProviderError,
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
from toolwire.codecs.common.ids import derived_call_id
from toolwire.codecs.gemini import CODEC, SKIP_THOUGHT_SIGNATURE, GeminiCodec
from toolwire.codecs.gemini.partial_arguments import parse_json_path
from toolwire.errors import CodecError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
PNG_B64 = "iVBORw0KGgoAAAANSUhEUg=="
SIG_A = "CiQBjz1rX8ZqV3m0kq2W9rXhQ1w0yJm5c8tY7bA2vUe4pLo="
SIG_B = "CmUBjz1rX2n7Qm9hZWxsb1dvcmxkU2lnbmF0dXJlQg=="
SIG_C = "EkcKRQGPPWtfZ2VtaW5pLXRob3VnaHQtc2lnbmF0dXJl"

WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
TIME = ToolDefinition(name="get_time", description="Local time.", parameters={"type": "object", "properties": {}})
LIST = ToolDefinition(name="list_files")


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def load_stream(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if line]


def feed_all(events: list[dict[str, Any]]) -> tuple[list[Any], Response]:
    decoder = CODEC.stream_decoder()
    out = [e for event in events for e in decoder.feed(copy.deepcopy(event))]
    return out, decoder.finish()


def validate_request(body: dict[str, Any]) -> None:
    """Each piece of the body against google-genai's own models (extra keys forbidden)."""
    for content in body["contents"]:
        genai.Content.model_validate(content)
    for tool in body.get("tools", []):
        genai.Tool.model_validate(tool)
    if "toolConfig" in body:
        genai.ToolConfig.model_validate(body["toolConfig"])
    if "systemInstruction" in body:
        genai.Content.model_validate(body["systemInstruction"])
    if "generationConfig" in body:
        genai.GenerationConfig.model_validate(body["generationConfig"])


# Requests used by the golden files


def tool_loop_request() -> Request:
    """A Gemini tool loop: parallel calls (one Gemini-issued id, signature on the first), every result kind."""
    weather = ToolCall(
        id="k7q2m4xz",
        name="get_weather",
        arguments={"city": "Paris"},
        metadata={"gemini": {"id": "k7q2m4xz", "thought_signature": SIG_B}},
    )
    clock = ToolCall(id="call_2", name="get_time", arguments={})
    files = ToolCall(id="call_3", name="list_files", arguments={})
    broken = ToolCall(id="call_4", name="get_weather", arguments={"city": "Atlantis"})
    photo = ToolCall(id="call_5", name="get_weather", arguments={"city": "Rome"})
    return Request(
        model="gemini-3-flash-preview",
        messages=[
            SystemMessage(content="You are a concise assistant."),
            UserMessage(content="Weather and time in Paris, my files, Atlantis, and a photo of Rome?"),
            AssistantMessage(
                parts=[
                    ThinkingPart(text="**Planning**", signature=SIG_C, provider="gemini"),
                    TextPart(text="Checking."),
                    weather,
                    clock,
                    files,
                    broken,
                    photo,
                ]
            ),
            ToolResult.text(weather, "18 °C, sunny"),
            ToolResult.data(clock, {"time": "14:02", "tz": "Europe/Paris"}),
            ToolResult.data(files, ["a.txt", "b.txt"]),
            ToolResult.error(broken, "Unknown city 'Atlantis'; pass a real city name."),
            ToolResult.multimodal(
                photo, [TextPart(text="A photo of Rome."), ImagePart(data=PNG, media_type="image/png")]
            ),
        ],
        tools=[WEATHER, TIME, LIST],
        tool_choice="auto",
        max_tokens=1024,
        temperature=0.5,
    )


def foreign_history_request() -> Request:
    """History from another provider: calls without Gemini metadata, results then user text."""
    first = ToolCall(id="toolu_01A", name="get_weather", arguments={"city": "Oslo"}, metadata={"anthropic": {"x": 1}})
    second = ToolCall(id="call_abc|fc_1", name="get_weather", arguments={"city": "Bergen"})
    return Request(
        model="gemini-3-flash-preview",
        messages=[
            UserMessage(content="Weather in Oslo?"),
            AssistantMessage(
                parts=[
                    ThinkingPart(text="anthropic reasoning", signature="EqQBCkYIBxgCKkD", provider="anthropic"),
                    TextPart(text="Let me look."),
                    first,
                ]
            ),
            ToolResult.text(first, "2 °C, snow"),
            UserMessage(content="And Bergen?"),
            AssistantMessage(parts=[second]),
            ToolResult.data(second, {"temp_c": 5}),
        ],
        tools=[WEATHER],
        tool_choice=NamedToolChoice("get_weather"),
    )


REQUESTS = {"tool_loop": tool_loop_request, "foreign_history": foreign_history_request}


@pytest.mark.parametrize("case", sorted(REQUESTS))
def test_golden_request_bodies(case: str) -> None:
    body = CODEC.encode_request(REQUESTS[case]())
    assert body == load(f"{case}.request.json")
    validate_request(body)
    assert CODEC.encode_request(CODEC.decode_request(copy.deepcopy(body))) == body


def test_tool_loop_body_details() -> None:
    body = CODEC.encode_request(tool_loop_request())
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    model = body["contents"][1]["parts"]
    assert model[0] == {"text": "**Planning**", "thought": True, "thoughtSignature": SIG_C}
    assert model[1] == {"text": "Checking."}
    assert model[2] == {
        "functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "k7q2m4xz"},
        "thoughtSignature": SIG_B,
    }
    # only the first call of the step is signed; siblings carry nothing, foreign ids never go out
    assert model[3] == {"functionCall": {"name": "get_time", "args": {}}}
    responses = [p["functionResponse"] for p in body["contents"][2]["parts"]]
    assert len(responses) == 5 == sum("functionCall" in p for p in model)
    assert responses[0] == {"name": "get_weather", "response": {"output": "18 °C, sunny"}, "id": "k7q2m4xz"}
    assert responses[1] == {"name": "get_time", "response": {"time": "14:02", "tz": "Europe/Paris"}}
    assert responses[2] == {"name": "list_files", "response": {"output": ["a.txt", "b.txt"]}}
    assert responses[3] == {
        "name": "get_weather",
        "response": {"error": "Unknown city 'Atlantis'; pass a real city name."},
    }
    assert responses[4] == {
        "name": "get_weather",
        "response": {"output": "A photo of Rome."},
        "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG_B64}}],
    }
    assert body["systemInstruction"] == {"parts": [{"text": "You are a concise assistant."}]}
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert body["generationConfig"] == {"maxOutputTokens": 1024, "temperature": 0.5}
    assert body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"] == WEATHER.parameters
    assert body["tools"][0]["functionDeclarations"][2] == {"name": "list_files"}
    assert "model" not in body


def test_foreign_history_gets_the_stand_in_only_in_the_current_turn() -> None:
    body = CODEC.encode_request(foreign_history_request())
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "user", "model", "user"]
    old_turn, current = body["contents"][1]["parts"], body["contents"][4]["parts"]
    # anthropic thinking dropped, anthropic metadata never sent, old turn not validated so left alone
    assert old_turn == [{"text": "Let me look."}, {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}]
    assert current == [
        {"functionCall": {"name": "get_weather", "args": {"city": "Bergen"}}, "thoughtSignature": SIG_SKIP}
    ]
    # results and the following user text never share a content
    assert body["contents"][2] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "2 °C, snow"}}}],
    }
    assert body["contents"][3] == {"role": "user", "parts": [{"text": "And Bergen?"}]}
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}


SIG_SKIP = SKIP_THOUGHT_SIGNATURE


def test_stand_in_goes_on_the_first_call_of_every_step_of_the_current_turn() -> None:
    a = ToolCall(id="a", name="f", arguments={})
    b = ToolCall(id="b", name="f", arguments={})
    own = ToolCall(id="c", name="f", arguments={}, metadata={"gemini": {"thought_signature": SIG_A}})
    request = Request(
        model="m",
        messages=[
            UserMessage(content="go"),
            AssistantMessage(parts=[TextPart(text="step 1"), a, b]),
            ToolResult.text(a, "1"),
            ToolResult.text(b, "2"),
            AssistantMessage(parts=[own]),
            ToolResult.text(own, "3"),
        ],
    )
    contents = CODEC.encode_request(request)["contents"]
    assert [p.get("thoughtSignature") for p in contents[1]["parts"]] == [None, SIG_SKIP, None]
    assert contents[3]["parts"][0]["thoughtSignature"] == SIG_A  # its own, unchanged


def test_history_starting_with_a_model_turn_gets_a_user_turn_first() -> None:
    call = ToolCall(id="x", name="f", arguments={})
    body = CODEC.encode_request(
        Request(model="m", messages=[AssistantMessage(parts=[call]), ToolResult.text(call, "ok")])
    )
    assert body["contents"][0] == {"role": "user", "parts": [{"text": "Continue."}]}  # never an empty part
    assert body["contents"][1]["parts"][0]["thoughtSignature"] == SIG_SKIP
    assert CODEC.encode_request(CODEC.decode_request(copy.deepcopy(body))) == body


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        (NamedToolChoice("get_weather"), {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}),
        (None, None),
    ],
)
def test_tool_choice_table(choice: Any, config: Any) -> None:
    body = CODEC.encode_request(
        Request(model="m", messages=[UserMessage(content="hi")], tools=[WEATHER], tool_choice=choice)
    )
    assert body.get("toolConfig") == (None if config is None else {"functionCallingConfig": config})
    assert CODEC.decode_request(body).tool_choice == choice


def test_no_tool_config_without_tools() -> None:
    body = CODEC.encode_request(Request(model="m", messages=[UserMessage(content="hi")], tool_choice="required"))
    assert body == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def test_openapi_schema_option_uses_the_shared_converter() -> None:
    codec = GeminiCodec(schema_field="parameters")
    body = codec.encode_request(Request(model="m", messages=[UserMessage(content="hi")], tools=[WEATHER]))
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert "parametersJsonSchema" not in declaration
    assert declaration["parameters"]["type"] == "OBJECT"
    assert declaration["parameters"]["properties"]["unit"]["nullable"] is True
    assert "additionalProperties" not in declaration["parameters"]
    genai.Tool.model_validate(body["tools"][0])
    assert codec.encode_request(codec.decode_request(copy.deepcopy(body))) == body
    with pytest.raises(ValueError, match="schema_field 'schema'"):
        GeminiCodec(schema_field="schema")  # type: ignore[arg-type]


def test_data_results_plain_object_or_wrapped() -> None:
    call = ToolCall(id="c", name="f", arguments={})

    def response_of(result: ToolResult) -> Any:
        body = CODEC.encode_request(
            Request(model="m", messages=[UserMessage(content="u"), AssistantMessage(parts=[call]), result])
        )
        return body["contents"][2]["parts"][0]["functionResponse"]["response"]

    assert response_of(ToolResult.data(call, {"a": 1})) == {"a": 1}
    assert response_of(ToolResult.data(call, [1, 2])) == {"output": [1, 2]}
    assert response_of(ToolResult.data(call, "s")) == {"output": "s"}
    assert response_of(ToolResult.data(call, None)) == {"output": None}
    assert response_of(ToolResult.multimodal(call, [ImagePart(data=PNG)])) == {}


def test_url_images_in_results_go_as_file_data_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    codec = GeminiCodec()
    call = ToolCall(id="c", name="f", arguments={})
    result = ToolResult.multimodal(call, [ImagePart(url="gs://bucket/a.jpg", media_type="image/jpeg")])
    with caplog.at_level(logging.WARNING):
        body = codec.encode_request(
            Request(model="m", messages=[UserMessage(content="u"), AssistantMessage(parts=[call]), result])
        )
        codec.encode_request(
            Request(model="m", messages=[UserMessage(content="u"), AssistantMessage(parts=[call]), result])
        )
    assert body["contents"][2]["parts"][0]["functionResponse"]["parts"] == [
        {"fileData": {"mimeType": "image/jpeg", "fileUri": "gs://bucket/a.jpg"}}
    ]
    assert [r.message for r in caplog.records] == [
        "Gemini API rejects fileData in function responses (Vertex AI accepts it)."
    ]


def test_response_count_always_equals_call_count(caplog: pytest.LogCaptureFixture) -> None:
    codec = GeminiCodec()
    a, b = ToolCall(id="a", name="f", arguments={}), ToolCall(id="b", name="g", arguments={})
    stray = ToolResult(tool_call_id="zzz", name="h", kind="text", value="?")
    messages = [UserMessage(content="u"), AssistantMessage(parts=[a, b]), ToolResult.text(b, "B"), stray]
    with caplog.at_level(logging.WARNING):
        body = codec.encode_request(Request(model="m", messages=messages))
    parts = body["contents"][2]["parts"]
    assert [p["functionResponse"] for p in parts] == [
        {"name": "f", "response": {"error": "No result was recorded for this call."}},
        {"name": "g", "response": {"output": "B"}},
    ]
    assert len(caplog.records) == 2
    # a call turn followed straight by user text gets its error responses before the text
    body = codec.encode_request(
        Request(model="m", messages=[UserMessage(content="u"), AssistantMessage(parts=[a]), UserMessage(content="v")])
    )
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "user"]
    assert "functionResponse" in body["contents"][2]["parts"][0]


def test_empty_model_turns_are_left_out() -> None:
    messages = [
        UserMessage(content="u"),
        AssistantMessage(parts=[]),
        AssistantMessage(parts=[ThinkingPart(text="t", provider="openai")]),
    ]
    assert CODEC.encode_request(Request(model="m", messages=messages))["contents"] == [
        {"role": "user", "parts": [{"text": "u"}]}
    ]


def test_user_images_and_unknown_media_type() -> None:
    message = UserMessage(content=[TextPart(text="look"), ImagePart(data=PNG), ImagePart(url="https://x/y.png")])
    body = CODEC.encode_request(Request(model="m", messages=[message]))
    assert body["contents"][0]["parts"] == [
        {"text": "look"},
        {"inlineData": {"mimeType": "image/png", "data": PNG_B64}},
        {"fileData": {"mimeType": "image/png", "fileUri": "https://x/y.png"}},  # required: taken from the name
    ]
    decoded = CODEC.decode_request(body).messages[0]
    assert decoded == UserMessage(
        content=[
            TextPart(text="look"),
            ImagePart(data=PNG, media_type="image/png"),
            ImagePart(url="https://x/y.png", media_type="image/png"),
        ]
    )
    nameless = UserMessage(content=[ImagePart(url="https://x/image?id=7")])
    with pytest.raises(CodecError, match=r"gemini needs the media type of the image at 'https://x/image\?id=7'"):
        CODEC.encode_request(Request(model="m", messages=[nameless]))


def test_extra_is_merged_deeply_and_recovered_by_decode_request() -> None:
    request = Request(
        model="m",
        messages=[UserMessage(content="hi")],
        tools=[WEATHER],
        tool_choice="auto",
        max_tokens=100,
        extra={
            "toolConfig": {"functionCallingConfig": {"streamFunctionCallArguments": True}},
            "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
            "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
        },
    )
    body = CODEC.encode_request(request)
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO", "streamFunctionCallArguments": True}}
    assert body["generationConfig"] == {"maxOutputTokens": 100, "thinkingConfig": {"includeThoughts": True}}
    decoded = CODEC.decode_request(copy.deepcopy(body))
    assert decoded.tool_choice == "auto"
    assert decoded.max_tokens == 100
    assert decoded.extra == request.extra
    assert CODEC.encode_request(decoded) == body


def test_decode_request_keeps_what_the_neutral_form_cannot_hold() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}, {"executableCode": {"language": "PYTHON", "code": "1"}}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "ns.tool"}, {"name": "ok"}]}, {"googleSearch": {}}],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["a", "b"]}},
        "model": "models/gemini-2.5-flash",
    }
    request = CODEC.decode_request(copy.deepcopy(body))
    assert request.model == "models/gemini-2.5-flash"
    assert request.tools == [ToolDefinition(name="ok")]
    assert request.tool_choice is None
    assert set(request.extra) == {"contents", "tools", "toolConfig", "model"}
    assert CODEC.encode_request(request) == body


def test_decode_request_matches_results_to_calls() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "f", "args": {"x": 1}}, "thoughtSignature": SIG_A},
                    {"functionCall": {"id": "g1", "name": "g"}},
                    {"functionCall": {"name": "f", "args": {"x": 2}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": "g1", "name": "g", "response": {"error": "bad"}}},
                    {"functionResponse": {"name": "f", "response": {"output": "one"}}},
                    {"functionResponse": {"name": "f", "response": {"v": 2}}},
                ],
            },
        ]
    }
    messages = CODEC.decode_request(copy.deepcopy(body)).messages
    calls = messages[1].tool_calls  # type: ignore[union-attr]
    assert [c.id for c in calls] == [
        derived_call_id("gemini-request-1", 0),
        "g1",
        derived_call_id("gemini-request-1", 2),
    ]
    assert calls[0].metadata == {"gemini": {"thought_signature": SIG_A}}
    assert calls[1].metadata == {"gemini": {"id": "g1"}} and calls[1].arguments == {}
    assert messages[2:] == [
        ToolResult(tool_call_id="g1", name="g", kind="error", value="bad"),
        ToolResult(tool_call_id=calls[0].id, name="f", kind="text", value="one"),
        ToolResult(tool_call_id=calls[2].id, name="f", kind="data", value={"v": 2}),
    ]


def test_decode_request_rejects_what_is_not_a_gemini_body() -> None:
    with pytest.raises(CodecError, match="contents"):
        CODEC.decode_request({"messages": []})
    with pytest.raises(CodecError, match=r"contents\[0\]"):
        CODEC.decode_request({"contents": ["hi"]})
    with pytest.raises(CodecError):
        CODEC.decode_request([])  # type: ignore[arg-type]


def test_parallel_false_and_strict_degrade_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    codec = GeminiCodec()
    strict = ToolDefinition(name="f", parameters={"type": "object"}, strict=True)
    request = Request(model="m", messages=[UserMessage(content="u")], tools=[strict], parallel_tool_calls=False)
    with caplog.at_level(logging.WARNING):
        body = codec.encode_request(request)
        codec.encode_request(request)
    assert body["tools"] == [{"functionDeclarations": [{"name": "f", "parametersJsonSchema": {"type": "object"}}]}]
    assert len(caplog.records) == 2


def test_registry_returns_this_codec() -> None:
    assert get_codec("gemini")._codec is CODEC  # behind the decoding boundary (codecs/common/guard.py)
    assert CODEC.name == "gemini"


# Replies


def test_text_reply() -> None:
    response = CODEC.decode_response(load("text.response.json"))
    assert response == Response(
        message=AssistantMessage(
            parts=[TextPart(text="It is sunny in Paris, 18 °C.", metadata={"gemini": {"thought_signature": SIG_A}})]
        ),
        stop_reason=StopReason.END_TURN,
        raw_stop_reason="STOP",
        usage=Usage(input_tokens=12, output_tokens=9, cache_read_tokens=None, reasoning_tokens=None),
        model="gemini-3-flash-preview",
        id="f0QgaPq1Ho2UvdIPyMmx8Ak",
    )


def test_parallel_calls_signature_on_the_first_and_derived_ids() -> None:
    response = CODEC.decode_response(load("parallel_calls.response.json"))
    rid = "gkTVaeGwLJyW1dkPk6qH6Qw"
    assert response.tool_calls == [
        ToolCall(
            id=derived_call_id(rid, 0),
            name="get_weather",
            arguments={"city": "Paris"},
            metadata={"gemini": {"thought_signature": SIG_B}},
        ),
        ToolCall(id=derived_call_id(rid, 1), name="get_time", arguments={"tz": "Europe/Paris"}),
    ]
    assert response.stop_reason is StopReason.TOOL_USE and response.raw_stop_reason == "STOP"
    assert response.usage == Usage(input_tokens=88, output_tokens=92, reasoning_tokens=61)
    # sent back: ids stay local (Gemini gave none), the signature returns on its part
    call_turn = CODEC.encode_request(Request(model="m", messages=[UserMessage(content="u"), response.message]))
    assert call_turn["contents"][1]["parts"] == [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": SIG_B},
        {"functionCall": {"name": "get_time", "args": {"tz": "Europe/Paris"}}},
    ]


def test_call_with_gemini_issued_id_is_echoed_on_call_and_response() -> None:
    response = CODEC.decode_response(load("call_with_id.response.json"))
    (call,) = response.tool_calls
    assert call == ToolCall(
        id="k7q2m4xz",
        name="search_docs",
        arguments={"query": "thought signatures", "limit": 3},
        metadata={"gemini": {"id": "k7q2m4xz", "thought_signature": SIG_C}},
    )
    body = CODEC.encode_request(
        Request(model="m", messages=[UserMessage(content="u"), response.message, ToolResult.data(call, {"hits": []})])
    )
    assert body["contents"][1]["parts"][0]["functionCall"]["id"] == "k7q2m4xz"
    assert body["contents"][2]["parts"][0]["functionResponse"] == {
        "name": "search_docs",
        "response": {"hits": []},
        "id": "k7q2m4xz",
    }


def test_no_args_call() -> None:
    response = CODEC.decode_response(load("no_args_call.response.json"))
    assert response.tool_calls == [
        ToolCall(
            id=derived_call_id("nA1raYSCBpWQvdIPz7bXmAE", 0),
            name="list_files",
            arguments={},
            metadata={"gemini": {"thought_signature": SIG_A}},
        )
    ]


def test_thought_part_with_signature_and_usage_with_thoughts() -> None:
    response = CODEC.decode_response(load("thinking.response.json"))
    assert response.message.parts == [
        ThinkingPart(
            text="**Weighing the options**\nThe user wants a short answer.", signature=SIG_C, provider="gemini"
        ),
        TextPart(text="Take the train: it is faster."),
    ]
    assert response.usage == Usage(input_tokens=1040, output_tokens=225, cache_read_tokens=1024, reasoning_tokens=200)
    assert response.model == "gemini-2.5-pro"
    # replayed to Gemini unchanged; to no one else
    contents = CODEC.encode_request(Request(model="m", messages=[UserMessage(content="u"), response.message]))[
        "contents"
    ]
    assert contents[1]["parts"][0] == {
        "text": "**Weighing the options**\nThe user wants a short answer.",
        "thought": True,
        "thoughtSignature": SIG_C,
    }


def test_malformed_function_call_with_empty_content_is_an_error() -> None:
    response = CODEC.decode_response(load("malformed_function_call.response.json"))
    assert response == Response(
        message=AssistantMessage(parts=[]),
        stop_reason=StopReason.ERROR,
        raw_stop_reason="MALFORMED_FUNCTION_CALL",
        usage=Usage(input_tokens=73),
        model="gemini-2.5-flash",
        id="8GpraZKdAoyWvdIP3b-IkQ0",
    )


def test_safety() -> None:
    response = CODEC.decode_response(load("safety.response.json"))
    assert (response.stop_reason, response.raw_stop_reason, response.message.parts) == (
        StopReason.CONTENT_FILTER,
        "SAFETY",
        [],
    )


def test_blocked_prompt_is_a_content_filter() -> None:
    response = CODEC.decode_response({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "responseId": "r"})
    assert (response.stop_reason, response.raw_stop_reason) == (StopReason.CONTENT_FILTER, "PROHIBITED_CONTENT")


@pytest.mark.parametrize(
    ("raw", "with_call", "expected"),
    [
        ("STOP", True, StopReason.TOOL_USE),
        ("STOP", False, StopReason.END_TURN),
        ("MAX_TOKENS", False, StopReason.MAX_TOKENS),
        ("MAX_TOKENS", True, StopReason.MAX_TOKENS),
        ("SAFETY", False, StopReason.CONTENT_FILTER),
        ("RECITATION", False, StopReason.CONTENT_FILTER),
        ("BLOCKLIST", False, StopReason.CONTENT_FILTER),
        ("PROHIBITED_CONTENT", False, StopReason.CONTENT_FILTER),
        ("SPII", False, StopReason.CONTENT_FILTER),
        ("IMAGE_SAFETY", False, StopReason.CONTENT_FILTER),
        ("MALFORMED_FUNCTION_CALL", False, StopReason.ERROR),
        ("UNEXPECTED_TOOL_CALL", True, StopReason.ERROR),
        ("TOO_MANY_TOOL_CALLS", True, StopReason.ERROR),
        ("LANGUAGE", False, StopReason.OTHER),
        ("OTHER", False, StopReason.OTHER),
        ("FINISH_REASON_UNSPECIFIED", False, StopReason.OTHER),
        ("SOMETHING_NEW", False, StopReason.OTHER),
    ],
)
def test_finish_reason_table(raw: str, with_call: bool, expected: StopReason) -> None:
    parts = [{"functionCall": {"name": "f", "args": {}}}] if with_call else [{"text": "x"}]
    response = CODEC.decode_response(
        {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": raw}]}
    )
    assert (response.stop_reason, response.raw_stop_reason) == (expected, raw)


def test_error_payload_raises_provider_error() -> None:
    payload = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
        }
    }
    with pytest.raises(ProviderError) as caught:
        CODEC.decode_response(payload)
    assert caught.value.provider == "gemini"
    assert caught.value.status == 429
    assert caught.value.body == payload
    assert "Resource has been exhausted" in caught.value.message
    with pytest.raises(ProviderError):
        CODEC.stream_decoder().feed(payload)


def test_not_a_gemini_body() -> None:
    with pytest.raises(CodecError):
        CODEC.decode_response([])  # type: ignore[arg-type]


def test_broken_and_odd_arguments_never_raise() -> None:
    parts = [
        {"functionCall": {"name": "f", "args": '{"a": 1'}},
        {"functionCall": {"name": "g", "args": "nope"}},
        {"functionCall": {"name": "h", "args": {}}},
        {"functionCall": {"args": {}}},  # no name: not a call
        {"inlineData": {"mimeType": "image/png", "data": PNG_B64}},
    ]
    response = CODEC.decode_response(
        {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
    )
    f, g, h = response.tool_calls
    assert (f.arguments, f.metadata["raw_arguments"]) == ({}, '{"a": 1')  # cut off: the model is asked again
    assert f.metadata["arguments_error"].startswith("the arguments were cut off before their end")
    assert g.arguments == {} and "arguments_error" in g.metadata
    assert h.arguments == {}
    assert len({f.id, g.id, h.id}) == 3  # no responseId: fresh ids


def test_signed_part_is_never_merged_with_the_next() -> None:
    parts = [
        {"text": "a"},
        {"text": "b", "thoughtSignature": SIG_A},
        {"text": "c"},
        {"text": "", "thoughtSignature": SIG_B},
        {"text": "d", "thought": True},
        {"text": "e"},
    ]
    response = CODEC.decode_response(
        {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
    )
    assert response.message.parts == [
        TextPart(text="ab", metadata={"gemini": {"thought_signature": SIG_A}}),
        TextPart(text="c", metadata={"gemini": {"thought_signature": SIG_B}}),
        ThinkingPart(text="d", provider="gemini"),
        TextPart(text="e"),
    ]


# Streams


def test_text_stream_events_and_late_signature() -> None:
    events, final = feed_all(load_stream("text.stream.jsonl"))
    assert events == [TextDelta("It is sunny"), TextDelta(" in Paris,"), TextDelta(" 18 °C.")]
    assert final == CODEC.decode_response(load("text.response.json"))


def test_thinking_stream_events() -> None:
    events, final = feed_all(load_stream("thinking.stream.jsonl"))
    assert events == [
        ThinkingDelta("**Weighing the options**\n"),
        ThinkingDelta("The user wants a short answer."),
        TextDelta("Take the train:"),
        TextDelta(" it is faster."),
    ]
    assert final == CODEC.decode_response(load("thinking.response.json"))


def test_parallel_calls_stream_whole() -> None:
    events, final = feed_all(load_stream("parallel_calls.stream.jsonl"))
    rid = "gkTVaeGwLJyW1dkPk6qH6Qw"
    assert events == [
        ToolCallDelta(0, derived_call_id(rid, 0), "get_weather", '{"city":"Paris"}'),
        ToolCallDelta(1, derived_call_id(rid, 1), "get_time", '{"tz":"Europe/Paris"}'),
    ]
    assert final == CODEC.decode_response(load("parallel_calls.response.json"))


EXPECTED_ORDER = {
    "customer": {"name": "Ada Lovelace", "vip": True},
    "items": [{"sku": "A-1", "qty": 2}, {"sku": 'B-"7"', "qty": 0.5, "tags": ["fragile", "gift"]}],
    "note": None,
    "express": False,
}


def test_vertex_partial_args_are_assembled_exactly() -> None:
    events, final = feed_all(load_stream("vertex_partial_args.stream.jsonl"))
    (call,) = final.tool_calls
    assert call.name == "create_order"
    assert call.arguments == EXPECTED_ORDER
    assert call.id == derived_call_id("tjXVaYaxFISTq8YP_MWiyAo", 0)
    assert call.metadata == {"gemini": {"thought_signature": SIG_B}}
    assert final.stop_reason is StopReason.TOOL_USE
    assert final.usage == Usage(input_tokens=31, output_tokens=184, reasoning_tokens=120)
    assert all(isinstance(e, ToolCallDelta) and e.index == 0 for e in events)
    assert (events[0].id, events[0].name, events[0].arguments_delta) == (call.id, "create_order", "")
    fragments = [e.arguments_delta for e in events[1:]]
    assert fragments[:4] == ['{"customer":{"name":"Ada ', "Lovelace", '"', ',"vip":true']
    assert "".join(fragments) == json.dumps(EXPECTED_ORDER, separators=(",", ":"), ensure_ascii=False)
    assert final == CODEC.decode_response(load("vertex_partial_args.response.json"))


def test_vertex_partial_args_without_closing_marker() -> None:
    events, final = feed_all(load_stream("vertex_partial_args_unterminated.stream.jsonl"))
    assert final.tool_calls[0].arguments == EXPECTED_ORDER
    # the finish chunk completes the call: its closing brackets still arrive as a delta
    assert events[-1] == ToolCallDelta(0, None, None, "}")
    assert json.loads("".join(e.arguments_delta for e in events)) == EXPECTED_ORDER
    assert final == CODEC.decode_response(load("vertex_partial_args.response.json"))
    # cut before any finish chunk: finish() still gives the arguments assembled so far
    decoder = CODEC.stream_decoder()
    for chunk in load_stream("vertex_partial_args.stream.jsonl")[:8]:
        decoder.feed(chunk)
    cut = decoder.finish()
    assert cut.tool_calls[0].arguments == {
        "customer": {"name": "Ada Lovelace", "vip": True},
        "items": [{"sku": "A-1", "qty": 2}],
    }
    assert cut == decoder.finish()
    assert (cut.stop_reason, cut.raw_stop_reason) == (StopReason.TOOL_USE, None)


def test_partial_args_parallel_calls_and_last_piece_closing() -> None:
    rid = "dqHOab6xGLzWodAPkPuViA4"

    def chunk(call: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"role": "model", "parts": [{"functionCall": call, **extra}]}}],
            "responseId": rid,
        }

    stream = [
        chunk({"name": "get_weather", "willContinue": True}, thoughtSignature=SIG_A),
        chunk(
            {
                "partialArgs": [{"jsonPath": "$.location", "stringValue": "Boston", "willContinue": True}],
                "willContinue": True,
            }
        ),
        chunk({"partialArgs": [{"jsonPath": "$.location", "stringValue": ""}], "willContinue": True}),
        chunk({}),
        chunk({"name": "get_weather", "willContinue": True}),
        chunk(
            {"partialArgs": [{"jsonPath": "$['location']", "stringValue": "San Francisco"}]}
        ),  # last piece ends the call
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}],
            "responseId": rid,
        },
    ]
    events, final = feed_all(stream)
    assert [c.arguments for c in final.tool_calls] == [{"location": "Boston"}, {"location": "San Francisco"}]
    assert [c.metadata for c in final.tool_calls] == [{"gemini": {"thought_signature": SIG_A}}, {}]
    by_index: dict[int, str] = {}
    for event in events:
        by_index[event.index] = by_index.get(event.index, "") + event.arguments_delta
    assert by_index == {0: '{"location":"Boston"}', 1: '{"location":"San Francisco"}'}


def test_partial_args_call_with_no_arguments_and_odd_pieces() -> None:
    stream = [
        {"candidates": [{"content": {"parts": [{"functionCall": {"name": "ping", "willContinue": True}}]}}]},
        {
            "candidates": [
                {"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "bad"}, {"jsonPath": "$.x"}]}}]}}
            ]
        },
        {"candidates": [{"content": {"parts": [{"functionCall": {}}]}, "finishReason": "STOP"}]},
    ]
    events, final = feed_all(stream)
    assert final.tool_calls[0].arguments == {}
    assert "".join(e.arguments_delta for e in events) == "{}"


def test_out_of_order_pieces_still_assemble() -> None:
    stream = [
        {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "willContinue": True}}]}}]},
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {
                                "functionCall": {
                                    "partialArgs": [
                                        {"jsonPath": "$.a.x", "numberValue": 1},
                                        {"jsonPath": "$.b", "numberValue": 2},
                                        {"jsonPath": "$.a.y", "numberValue": 3},
                                        {"jsonPath": "$.list[2]", "boolValue": True},
                                    ]
                                }
                            }
                        ]
                    },
                    "finishReason": "STOP",
                }
            ]
        },
    ]
    _, final = feed_all(stream)
    assert final.tool_calls[0].arguments == {"a": {"x": 1, "y": 3}, "b": 2, "list": [None, None, True]}


def test_json_path_parser() -> None:
    assert parse_json_path("$.recipe.ingredients[0].name") == ("recipe", "ingredients", 0, "name")
    assert parse_json_path('$[\'a b\']["c\\"d"][12]') == ("a b", 'c"d', 12)
    assert parse_json_path("$") is None
    assert parse_json_path("recipe") is None
    assert parse_json_path("$.a[x]") is None
    assert parse_json_path(None) is None


def test_stream_error_chunk_mid_stream() -> None:
    decoder = CODEC.stream_decoder()
    assert decoder.feed(load_stream("text.stream.jsonl")[0]) == [TextDelta("It is sunny")]
    with pytest.raises(ProviderError):
        decoder.feed({"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}})


def test_feed_never_emits_done() -> None:
    for path in sorted(FIXTURES.glob("*.stream.jsonl")):
        events, _ = feed_all(load_stream(path.name))
        assert not any(isinstance(e, Done) for e in events), path.name


# Rendering replies (loopback server)


@pytest.mark.parametrize(
    "case", sorted(p.name.removesuffix(".response.json") for p in FIXTURES.glob("*.response.json"))
)
def test_rendered_fixtures_decode_back(case: str) -> None:
    decoded = CODEC.decode_response(load(f"{case}.response.json"))
    rendered = CODEC.encode_response(decoded)
    genai.GenerateContentResponse.model_validate(rendered)
    assert CODEC.decode_response(rendered) == decoded
    chunks = CODEC.encode_stream(decoded)
    for chunk in chunks:
        genai.GenerateContentResponse.model_validate(chunk)
    assert feed_all(chunks)[1] == decoded


def test_encode_stream_shape() -> None:
    call = ToolCall(id="call_1", name="f", arguments={"a": 1}, metadata={"gemini": {"thought_signature": SIG_A}})
    response = Response(
        message=AssistantMessage(
            parts=[TextPart(text="Hello world", metadata={"gemini": {"thought_signature": SIG_B}}), call]
        ),
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input_tokens=3, output_tokens=7, reasoning_tokens=2),
        model="gemini-x",
        id="rid",
    )
    chunks = CODEC.encode_stream(response)
    parts = [c["candidates"][0]["content"]["parts"] for c in chunks]
    assert parts == [
        [{"text": "Hell"}],
        [{"text": "o wo"}],
        [{"text": "rld"}],
        [{"text": "", "thoughtSignature": SIG_B}],  # a stream learns a part's signature at its end
        [{"functionCall": {"name": "f", "args": {"a": 1}, "id": "call_1"}, "thoughtSignature": SIG_A}],
    ]
    assert all("finishReason" not in c["candidates"][0] and "usageMetadata" not in c for c in chunks[:-1])
    assert len(chunks) == 5  # the finish reason rides on the call's chunk
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert chunks[-1]["usageMetadata"] == {
        "promptTokenCount": 3,
        "candidatesTokenCount": 5,
        "thoughtsTokenCount": 2,
        "totalTokenCount": 10,
    }
    decoded = feed_all(chunks)[1]
    assert decoded.tool_calls[0].id == "call_1"  # ids survive the rendering
    assert decoded.tool_calls[0].metadata == {"gemini": {"id": "call_1", "thought_signature": SIG_A}}
    assert decoded.usage == response.usage
    assert CODEC.decode_response(CODEC.encode_response(response)) == decoded


def test_missing_finish_reason_is_not_a_normal_end() -> None:
    body = {"candidates": [{"content": {"role": "model", "parts": [{"text": "partial"}]}}], "responseId": "r"}
    response = CODEC.decode_response(body)
    assert (response.stop_reason, response.raw_stop_reason, response.usage) == (StopReason.OTHER, None, None)
    decoder = CODEC.stream_decoder()
    decoder.feed(body)
    assert decoder.finish() == decoder.finish() == response


def test_usage_without_counts_and_with_only_thoughts() -> None:
    body = {"candidates": [], "usageMetadata": {"trafficType": "ON_DEMAND"}}
    assert CODEC.decode_response(body).usage == Usage()
    body = {"candidates": [], "usageMetadata": {"promptTokenCount": 5, "thoughtsTokenCount": 4}}
    assert CODEC.decode_response(body).usage == Usage(input_tokens=5, output_tokens=4, reasoning_tokens=4)


def test_empty_text_parts_are_never_sent() -> None:
    call = ToolCall(id="x", name="f", arguments={})
    messages = [
        UserMessage(content="hi"),
        AssistantMessage(parts=[TextPart(text=""), call]),
        ToolResult.text(call, "ok"),
        UserMessage(content=""),
        UserMessage(content=[TextPart(text=""), TextPart(text="go on")]),
    ]
    body = CODEC.encode_request(Request(model="m", messages=messages))
    texts = [p.get("text") for c in body["contents"] for p in c["parts"] if "text" in p]
    assert texts == ["hi", "go on"]
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "user"]


def test_every_way_of_declaring_tool_parameters_decodes_to_json_schema() -> None:
    declarations = [
        {"name": "f", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING", "nullable": True}}}},
        {"name": "g", "parametersJsonSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        {"name": "h", "parameters_json_schema": {"type": "object", "properties": {"y": {"type": "string"}}}},
    ]
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": declarations}],
    }
    request = get_codec("gemini").decode_request(copy.deepcopy(body))
    assert [(t.name, t.parameters) for t in request.tools] == [
        ("f", {"type": "object", "properties": {"city": {"type": ["string", "null"]}}}),
        ("g", {"type": "object", "properties": {"x": {"type": "integer"}}}),
        ("h", {"type": "object", "properties": {"y": {"type": "string"}}}),
    ]
    assert CODEC.encode_request(request) == body  # the same codec gets back exactly what was sent
    anthropic_tools = get_codec("anthropic").encode_request(request)["tools"]
    assert [t["input_schema"]["properties"] for t in anthropic_tools] == [
        {"city": {"type": ["string", "null"]}},
        {"x": {"type": "integer"}},
        {"y": {"type": "string"}},
    ]
