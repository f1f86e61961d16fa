"""What any decoder accepts, every encoder writes again, or the decoder refuses it.

A gateway decodes with the client's codec and encodes with the upstream's (and back): a value
a decoder let through must not crash another codec's encoder with a `TypeError`, a bare
`ValueError` or a `UnicodeEncodeError`.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tests.codecs._fuzz import reencode, run, warnings_shown_again
from toolwire.codecs import CODEC_NAMES, get_codec
from toolwire.codecs.common.wire import dumps
from toolwire.errors import CodecError
from toolwire.types import (
    AssistantMessage,
    NamedToolChoice,
    Request,
    Response,
    StopReason,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
    UserMessage,
)


@pytest.mark.parametrize("codec", CODEC_NAMES)
def test_cross_codec_reencoding_fuzz_raises_nothing_undocumented(codec: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        assert run(codec, 300, seed=3, reencoded=True) == []


def _refused(codec: str, body: dict[str, Any], what: str = "request") -> str:
    target = get_codec(codec)
    with pytest.raises(CodecError) as caught:
        target.decode_request(body) if what == "request" else target.decode_response(body)
    return caught.value.message


def test_an_anthropic_tool_use_name_that_is_a_list_is_refused_naming_the_field() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": ["f"], "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        ],
    }
    message = "The anthropic request cannot be read: messages[1].content[0].name should be a string."
    assert _refused("anthropic", body) == message


def test_a_responses_function_call_name_that_is_a_list_is_refused_not_turned_into_text() -> None:
    body = {
        "model": "m",
        "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c1", "name": ["f"], "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ],
    }
    message = "The openai-responses request cannot be read: input[1].name should be a string."
    assert _refused("openai-responses", body) == message


def test_an_anthropic_text_block_that_is_a_number_is_refused_before_any_encoder_sees_it() -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": [{"type": "text", "text": 1.5}]}]}
    message = "The anthropic request cannot be read: messages[0].content[0].text should be a string."
    assert _refused("anthropic", body) == message


NEGATIVE_USAGE = {
    "openai": (
        {
            "id": "r",
            "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
            "usage": {"prompt_tokens": -5, "completion_tokens": 1, "total_tokens": -4},
        },
        "usage input_tokens should be 0 or more, got -5",
    ),
    "anthropic": (
        {
            "id": "r",
            "model": "m",
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": -1},
        },
        "usage output_tokens should be 0 or more, got -1",
    ),
    "bedrock": (
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3, "cacheWriteInputTokens": -4},
        },
        "usage cache_write_tokens should be 0 or more, got -4",
    ),
    "gemini": (
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": -2, "candidatesTokenCount": 1},
        },
        "usage input_tokens should be 0 or more, got -2",
    ),
    "ollama": (
        {
            "model": "m",
            "message": {"role": "assistant", "content": "hi"},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 4,
            "eval_count": -7,
        },
        "usage output_tokens should be 0 or more, got -7",
    ),
    "openai-responses": (
        {
            "id": "r",
            "model": "m",
            "status": "completed",
            "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}],
            "usage": {"input_tokens": 1, "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": -3}},
        },
        "usage reasoning_tokens should be 0 or more, got -3",
    ),
}


@pytest.mark.parametrize("codec", CODEC_NAMES)
def test_negative_token_counts_are_refused_by_every_decoder(codec: str) -> None:
    body, problem = NEGATIVE_USAGE[codec]
    assert _refused(codec, body, "response") == f"The {codec} response cannot be read: {problem}."


@pytest.mark.parametrize("codec", CODEC_NAMES)
def test_negative_token_counts_in_a_stream_are_refused(codec: str) -> None:
    reply = Response(
        message=AssistantMessage(parts=[TextPart(text="hi")]),
        stop_reason=StopReason.END_TURN,
        usage=Usage(input_tokens=3, output_tokens=2),
    )
    decoder = get_codec(codec).stream_decoder()
    with pytest.raises(CodecError) as caught:
        for event in get_codec(codec).encode_stream(reply):
            decoder.feed(_negated(event))
        decoder.finish()
    assert caught.value.message.startswith(f"The {codec} ")
    assert "tokens should be 0 or more, got -" in caught.value.message


def _negated(value: Any, key: str = "") -> Any:
    """`value` with every token count made negative (`input_tokens`, `promptTokenCount`, `eval_count`)."""
    if isinstance(value, dict):
        return {k: _negated(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_negated(v) for v in value]
    counted = "token" in key.lower() or key.endswith("_count")
    return -value if counted and isinstance(value, int) and not isinstance(value, bool) and value > 0 else value


def test_a_tool_schema_that_is_not_an_object_is_refused_by_the_decoder() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "string"}}}],
    }
    message = (
        "The openai request cannot be read: tool 'f': parameters should describe an object (type 'object'), "
        "got type 'string'; wrap the value in an object property."
    )
    assert _refused("openai", body) == message


def test_a_schema_format_that_is_not_a_string_is_moved_to_the_description_in_strict_mode() -> None:
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": {"x": 1}}}, "required": ["when"]}
    request = Request(
        model="m",
        messages=[UserMessage(content="hi")],
        tools=[ToolDefinition(name="f", parameters=schema, strict=True)],
    )
    sent = get_codec("openai").encode_request(request)["tools"][0]["function"]["parameters"]
    assert sent["properties"]["when"] == {"type": "string", "description": '(format: {"x": 1})'}


def test_ollama_refuses_a_named_tool_choice_for_a_missing_tool_with_a_codec_error() -> None:
    request = Request(
        model="m",
        messages=[UserMessage(content="hi")],
        tools=[ToolDefinition(name="f")],
        tool_choice=NamedToolChoice("lookup"),
    )
    with pytest.raises(CodecError) as caught:
        get_codec("ollama").encode_request(request)
    assert caught.value.message == (
        "ollama tool_choice names 'lookup', which is not among the request's tools; add it to tools."
    )


LONE = "a\ud800b"


@pytest.mark.parametrize("codec", CODEC_NAMES)
def test_lone_surrogates_in_ids_and_text_are_written_escaped_and_read_back_unchanged(codec: str) -> None:
    call = ToolCall(id="call_" + LONE, name="f", arguments={"q": LONE})
    request = Request(
        model="m",
        messages=[
            UserMessage(content=LONE),
            AssistantMessage(parts=[TextPart(text=LONE), call]),
            ToolResult.text(call, LONE),
        ],
    )
    target = get_codec(codec)
    sent = dumps(target.encode_request(request)).encode()  # UTF-8, as the wire needs
    assert b"a\\ud800b" in sent
    back = target.decode_request(json.loads(sent))
    assert back.messages[0] == UserMessage(content=LONE)
    assert [p.text for p in back.messages[1].parts if isinstance(p, TextPart)] == [LONE]  # type: ignore[union-attr]
    assert back.messages[-1].value == LONE  # type: ignore[union-attr]
    reply = Response(message=AssistantMessage(parts=[TextPart(text=LONE), call]), stop_reason=StopReason.TOOL_USE)
    decoded = target.decode_response(json.loads(dumps(target.encode_response(reply)).encode()))
    assert decoded.text == LONE
    assert decoded.tool_calls[0].arguments == {"q": LONE}
    with warnings_shown_again():
        reencode(decoded, [])  # and every other codec writes it too


def test_a_strict_schema_the_target_cannot_take_is_a_codec_error_naming_the_tool() -> None:
    # The root is a $ref to a string: decoders take it (its type is not written at the root), but
    # strict mode needs an object there.
    schema = {"$ref": "#/$defs/X", "$defs": {"X": {"type": "string"}}}
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "strict": True, "parameters": schema}}],
    }
    request = get_codec("openai").decode_request(body)
    for codec in ("openai", "openai-responses"):
        with pytest.raises(CodecError) as caught:
            get_codec(codec).encode_request(request)
        assert caught.value.message.startswith(
            f"{codec} cannot send tool 'f': OpenAI strict mode needs an object schema at the root"
        )
