"""Helpers for the cross-provider conversion matrix (`test_conversion.py`).

A rich neutral conversation as a given provider would have produced it (its ids, its signed
thinking, its opaque call metadata), the A → neutral → B → neutral pipeline, and the checks
docs/wire-formats.md asks of every conversion.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from botocore.session import get_session
from botocore.validate import ParamValidator
from google.genai import types as genai
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

from tests.sdk_types import drain
from toolwire import (
    AssistantMessage,
    ImagePart,
    Message,
    Request,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)
from toolwire.codecs import get_codec
from toolwire.codecs.common.wire import dumps

CODECS = ("anthropic", "bedrock", "gemini", "ollama", "openai", "openai-responses")
PAIRS = [(a, b) for a in CODECS for b in CODECS if a != b]

# A real PNG signature, so codecs that sniff the media type (Gemini, Ollama) find image/png.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"
PNG_2 = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x02"

# Opaque tokens each provider signs with; none may reach another provider's body.
SIGNATURES = {
    "anthropic": "EqQBCkYIBRgCKkAnthropicSignatureZz",
    "bedrock": "EqQBBedrockReasoningSignatureZz",
    "gemini": "CiQBGeminiThoughtSignatureZz==",
    "openai-responses": "gAAAAABResponsesEncryptedContentZz",
}
CALL_SIGNATURE = "CiQBGeminiCallSignatureZz=="  # Gemini thoughtSignature on a functionCall part
GEMINI_STAND_IN = "skip_thought_signature_validator"
IMAGE_URL = "https://example.com/scene.png"


def _call_id(source: str, n: int) -> str:
    """Ids in the source's own style, with the awkward shapes real histories carry."""
    match source:
        case "anthropic":
            return f"toolu_01{n}ABCDEFGHJKLMNPQRSTUVW"
        case "openai-responses":
            return f"call_{n}Rsp9xYzAbCdEfGhIjKlMnOp"
        case "bedrock":
            return f"tooluse_{n}BdRk9xYzAbCdEfGhIjKl"
        case "openai":
            # vLLM/Kimi ids (invalid for Anthropic) and an over-long one (invalid for OpenAI itself).
            return f"functions.lookup:{n}" if n % 2 else "chatcmpl-tool-" + "a" * 40 + str(n)
        case "ollama":
            return f"call_{n}ol1ama9"
        case _:
            return f"gemini-call-{n}"


def _call_metadata(source: str, n: int, first_of_step: bool) -> dict[str, Any]:
    match source:
        case "gemini":
            own: dict[str, Any] = {"id": _call_id(source, n)}
            if first_of_step:
                own["thought_signature"] = CALL_SIGNATURE
            return {"gemini": own}
        case "openai-responses":
            return {"openai-responses": {"item_id": f"fc_{n}item0123456789"}}
        case "ollama":
            return {"ollama": {"id": _call_id(source, n)}}
        case _:
            return {}


def _thinking(source: str, text: str, n: int) -> list[ThinkingPart]:
    match source:
        case "anthropic" | "bedrock" | "gemini":
            return [ThinkingPart(text=text, signature=SIGNATURES[source], provider=source)]
        case "openai-responses":
            return [
                ThinkingPart(
                    text=text,
                    signature=SIGNATURES[source],
                    provider=source,
                    metadata={"id": f"rs_{n}reasoning0123", "summary": [text]},
                )
            ]
        case "openai":
            return [ThinkingPart(text=text, provider=source, metadata={"openai": {"field": "reasoning_content"}})]
        case _:
            return [ThinkingPart(text=text, provider=source)]


def _calls(source: str, specs: list[tuple[int, str, dict[str, Any]]]) -> list[ToolCall]:
    return [
        ToolCall(id=_call_id(source, n), name=name, arguments=args, metadata=_call_metadata(source, n, i == 0))
        for i, (n, name, args) in enumerate(specs)
    ]


WEATHER_ARGS: dict[str, Any] = {
    "city": "Zürich",
    "note": 'say "hi" ☃ — 日本語 \\ end',
    "options": {"units": "celsius", "days": [1, 2, 3], "flags": {"wind": True, "rain": None}},
    "ratio": 0.25,
}
SEARCH_ARGS: dict[str, Any] = {"query": "emoji 🚀 and tab\t", "filters": [{"field": "year", "gte": 2020}, []]}


def rich_request(source: str) -> Request:
    """Two turns: parallel calls with every result kind, a second step, a final answer, then a new tool turn."""
    first = _calls(
        source,
        [(0, "get_weather", WEATHER_ARGS), (1, "search", SEARCH_ARGS), (2, "get_time", {})],
    )
    second = _calls(source, [(3, "list_files", {"path": "/tmp", "depth": 2}), (4, "render", {"scene": "ünïcödé"})])
    third = _calls(source, [(5, "get_weather", {"city": "Paris"}), (6, "get_time", {})])
    messages: list[Message] = [
        SystemMessage(content="You are a careful assistant. Use tools."),
        UserMessage(
            content=[
                TextPart(text="What's in this picture, and the weather?"),
                ImagePart(data=PNG, media_type="image/png"),
            ]
        ),
        AssistantMessage(
            parts=[*_thinking(source, "Need weather and a search.", 0), TextPart(text="Checking."), *first]
        ),
        ToolResult.text(first[0], "Sunny, 21 °C"),
        ToolResult.data(first[1], {"hits": [{"title": "Ünïcode", "score": 0.5}], "total": 1, "next": None}),
        ToolResult.data(first[2], ["2025-01-01T00:00:00Z", 3, True, None]),
        AssistantMessage(parts=[*second]),
        ToolResult.error(second[0], "Permission denied: /tmp"),
        ToolResult.multimodal(
            second[1],
            [
                TextPart(text="Rendered scene:"),
                ImagePart(data=PNG_2, media_type="image/png"),
                TextPart(text="Source:"),
                ImagePart(url=IMAGE_URL),
            ],
        ),
        AssistantMessage(parts=[TextPart(text="It is sunny (21 °C); the picture shows a scene.")]),
        UserMessage(content="And in Paris, right now?"),
        AssistantMessage(parts=[*_thinking(source, "Two more calls.", 1), *third]),
        ToolResult.data(third[0], {"summary": "Cloudy", "temp_c": 14}),
        ToolResult.text(third[1], "12:00"),
    ]
    names = ["get_weather", "search", "get_time", "list_files", "render"]
    tools = [
        ToolDefinition(
            name=n,
            description=f"The {n} tool.",
            parameters={"type": "object", "properties": {"city": {"type": "string"}}} if n == "get_weather" else None,
        )
        for n in names
    ]
    return Request(model="test-model", messages=messages, tools=tools, max_tokens=1024, temperature=0.5)


def same_name_results_out_of_order(source: str) -> Request:
    """Two parallel calls of one tool, answered in the reverse order (a valid neutral history)."""
    paris, rome = _calls(source, [(0, "get_weather", {"city": "Paris"}), (1, "get_weather", {"city": "Rome"})])
    messages: list[Message] = [
        UserMessage(content="Weather in Paris and Rome?"),
        AssistantMessage(parts=[paris, rome]),
        ToolResult.text(rome, "Rome: rain"),
        ToolResult.text(paris, "Paris: sun"),
    ]
    return Request(model="test-model", messages=messages, tools=[ToolDefinition(name="get_weather")])


def reused_ids() -> Request:
    """`call_0` again in the next turn: Bedrock Mantle reuses ids per response (pydantic-ai #6536)."""
    first = ToolCall(id="call_0", name="get_time", arguments={})
    second = ToolCall(id="call_0", name="get_weather", arguments={"city": "Oslo"})
    messages: list[Message] = [
        UserMessage(content="Time?"),
        AssistantMessage(parts=[first]),
        ToolResult.text(first, "12:00"),
        AssistantMessage(parts=[TextPart(text="Noon.")]),
        UserMessage(content="Weather in Oslo?"),
        AssistantMessage(parts=[second]),
        ToolResult.text(second, "Snow"),
    ]
    tools = [ToolDefinition(name="get_time"), ToolDefinition(name="get_weather")]
    return Request(model="test-model", messages=messages, tools=tools)


@dataclass(slots=True)
class Conversion:
    """Every stage of one A → B conversion."""

    original: Request
    source_body: dict[str, Any]
    via_source: Request
    target_body: dict[str, Any]
    via_target: Request


def _wire(body: dict[str, Any]) -> dict[str, Any]:
    """What the provider would receive: the body as JSON text, parsed again (no Python-only values)."""
    result: dict[str, Any] = json.loads(json.dumps(body, ensure_ascii=False))
    return result


def convert(source: str, target: str, request: Request) -> Conversion:
    """Encode with A, decode with A, re-encode with B, decode with B."""
    a, b = get_codec(source), get_codec(target)
    source_body = a.encode_request(request)
    via_source = a.decode_request(_wire(source_body))
    target_body = b.encode_request(via_source)
    via_target = b.decode_request(_wire(target_body))
    return Conversion(request, source_body, via_source, target_body, via_target)


# Neutral views of a conversation, for comparing before and after


def calls_by_turn(messages: list[Message]) -> list[list[tuple[str, dict[str, Any]]]]:
    """Each assistant turn's calls as (name, arguments), in order; turns without calls left out."""
    return [
        [(c.name, c.arguments) for c in m.tool_calls]
        for m in messages
        if isinstance(m, AssistantMessage) and m.tool_calls
    ]


def pairing(messages: list[Message]) -> list[tuple[int, int, str]]:
    """For each result: (its turn, the position of its call in that turn, the name), or a failure marker.

    A result answers a call of the assistant message right before its run of results; a result
    whose id matches none of those calls gives position -1.
    """
    turn, calls, out = -1, [], []
    for message in messages:
        if isinstance(message, AssistantMessage) and message.tool_calls:
            turn, calls = turn + 1, [c.id for c in message.tool_calls]
        elif isinstance(message, ToolResult):
            position = calls.index(message.tool_call_id) if message.tool_call_id in calls else -1
            out.append((turn, position, message.name))
        elif not isinstance(message, AssistantMessage):
            calls = []  # a user message ends the turn: later results cannot answer its calls
    return out


Form = tuple[str, Any]


def _part_form(part: TextPart | ImagePart) -> tuple[Any, ...]:
    if isinstance(part, TextPart):
        return ("text", part.text)
    if part.url is not None:
        return ("url", part.url)  # URL images carry no media type on most wires
    return ("image", part.data, part.media_type or "image/png")


def result_form(result: ToolResult) -> Form:
    """A result's kind and content, with parts as comparable tuples."""
    if result.kind == "multimodal":
        return ("multimodal", [_part_form(p) for p in result.value])
    return (result.kind, result.value)


def through(codec: str, form: Form) -> Form:
    """What a codec's own encode → decode round trip makes of a result (its documented normalizations)."""
    kind, value = form
    if kind == "data" and codec == "bedrock":
        # A JSON object goes as a `json` block and comes back as data; anything else as its JSON text.
        return form if isinstance(value, dict) else ("text", dumps(value))
    if kind == "data" and codec != "gemini":
        # `json(value)` as the result text (docs/wire-formats.md); the wire has no data/text flag
        # (_anthropic docstring: "A `data` result comes back as a `text` result holding the same JSON text").
        return ("text", dumps(value))
    if kind != "multimodal":
        return form
    texts = [p[1] for p in value if p[0] == "text"]
    images = [p for p in value if p[0] != "text"]
    match codec:
        case "openai":
            # Tool messages hold text only; images follow in a user message (docs/wire-formats.md, OpenAI Chat
            # Completions).
            return ("multimodal", [p for p in value if p[0] == "text"] + images)
        case "gemini":
            # One `response.output` string (texts joined by newlines), images as functionResponse.parts.
            if not images:
                return ("text", "\n".join(texts)) if texts else ("data", {})
            return ("multimodal", ([("text", "\n".join(texts))] if texts else []) + images)
        case "bedrock":
            # Bytes or s3:// images only; other URL images become "[image: url]" text (warned,
            # codecs/bedrock/blocks.py); one text block alone reads back as a text result.
            parts = [
                ("text", f"[image: {p[1]}]") if p[0] == "url" and not p[1].startswith("s3://") else p for p in value
            ]
            return ("text", parts[0][1]) if len(parts) == 1 and parts[0][0] == "text" else ("multimodal", parts)
        case "ollama":
            # `content` + base64 `images`; URL images become "[image: url]" text (warned, _ollama._encode_media).
            joined = "\n".join(p[1] if p[0] == "text" else f"[image: {p[1]}]" for p in value if p[0] != "image")
            inline = [p for p in value if p[0] == "image"]
            if not inline:
                return ("text", joined)
            return ("multimodal", ([("text", joined)] if joined else []) + inline)
        case _:
            return form


def expected_results(conversion: Conversion, source: str, target: str) -> list[Form]:
    return [through(target, through(source, result_form(r))) for r in results_of(conversion.original)]


def results_of(request: Request) -> list[ToolResult]:
    return [m for m in request.messages if isinstance(m, ToolResult)]


# Target bodies: the wire rules of docs/wire-formats.md

ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")
OPENAI_MAX_ID = 40  # "string_above_max_length" above 40 characters (docs/wire-formats.md)


def opaque_tokens(source: str) -> list[str]:
    """Every provider-opaque value the source put in the conversation; none may reach another provider."""
    tokens = [SIGNATURES[source]] if source in SIGNATURES else []
    if source == "gemini":
        tokens.append(CALL_SIGNATURE)
    if source == "openai-responses":
        tokens += [f"fc_{n}item0123456789" for n in range(7)] + ["rs_0reasoning0123", "rs_1reasoning0123"]
    return tokens


def wire_pairs(target: str, body: dict[str, Any]) -> list[tuple[list[str], list[str]]]:
    """(call ids or names of one assistant turn, the ids or names its results answer with), per turn."""
    match target:
        case "anthropic":
            return _anthropic_pairs(body["messages"])
        case "openai":
            return _chat_pairs(body["messages"], "id", "tool_call_id")
        case "ollama":
            return _chat_pairs(body["messages"], "name", "tool_name")
        case "openai-responses":
            return _responses_pairs(body["input"])
        case "bedrock":
            return _bedrock_pairs(body["messages"])
        case _:
            return _gemini_pairs(body["contents"])


def _anthropic_pairs(messages: list[dict[str, Any]]) -> list[tuple[list[str], list[str]]]:
    out: list[tuple[list[str], list[str]]] = []
    for message in messages:
        blocks = message["content"] if isinstance(message["content"], list) else []
        if message["role"] == "assistant":
            calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
            if calls:
                out.append((calls, []))
        elif out:
            out[-1][1].extend(b["tool_use_id"] for b in blocks if b["type"] == "tool_result")
    return out


def _bedrock_pairs(messages: list[dict[str, Any]]) -> list[tuple[list[str], list[str]]]:
    out: list[tuple[list[str], list[str]]] = []
    for message in messages:
        blocks = message["content"]
        if message["role"] == "assistant":
            calls = [b["toolUse"]["toolUseId"] for b in blocks if "toolUse" in b]
            if calls:
                out.append((calls, []))
        elif out:
            out[-1][1].extend(b["toolResult"]["toolUseId"] for b in blocks if "toolResult" in b)
    return out


def _chat_pairs(messages: list[dict[str, Any]], call_key: str, result_key: str) -> list[tuple[list[str], list[str]]]:
    out: list[tuple[list[str], list[str]]] = []
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            out.append(
                ([c[call_key] if call_key == "id" else c["function"]["name"] for c in message["tool_calls"]], [])
            )
        elif message["role"] == "tool":
            out[-1][1].append(message[result_key])
    return out


def _responses_pairs(items: list[dict[str, Any]]) -> list[tuple[list[str], list[str]]]:
    out: list[tuple[list[str], list[str]]] = []
    previous = None
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            if previous != "function_call":
                out.append(([], []))
            out[-1][0].append(item["call_id"])
        elif kind == "function_call_output":
            out[-1][1].append(item["call_id"])
        if kind != "reasoning":
            previous = kind
    return out


def _gemini_pairs(contents: list[dict[str, Any]]) -> list[tuple[list[str], list[str]]]:
    out: list[tuple[list[str], list[str]]] = []
    for content in contents:
        calls = [p["functionCall"]["name"] for p in content["parts"] if "functionCall" in p]
        responses = [p["functionResponse"]["name"] for p in content["parts"] if "functionResponse" in p]
        if content["role"] == "model" and calls:
            out.append((calls, []))
        elif responses:
            out[-1][1].extend(responses)
    return out


def gemini_signed_calls(body: dict[str, Any]) -> dict[tuple[int, int], str]:
    """(content index, part index) → thoughtSignature, for every signed part of the body."""
    return {
        (i, j): part["thoughtSignature"]
        for i, content in enumerate(body["contents"])
        for j, part in enumerate(content["parts"])
        if "thoughtSignature" in part
    }


def gemini_current_first_calls(body: dict[str, Any]) -> set[tuple[int, int]]:
    """The first functionCall part of each model content after the last user text: the current turn's steps."""
    contents = body["contents"]
    last_user = max(
        i
        for i, c in enumerate(contents)
        if c["role"] == "user" and not any("functionResponse" in p for p in c["parts"])
    )
    firsts = set()
    for i, content in enumerate(contents[last_user + 1 :], start=last_user + 1):
        calls = [j for j, p in enumerate(content["parts"]) if "functionCall" in p]
        if content["role"] == "model" and calls:
            firsts.add((i, calls[0]))
    return firsts


def replayed_thinking(target: str, body: dict[str, Any]) -> list[Any]:
    """Whatever in the body replays reasoning (which foreign reasoning must never become)."""
    match target:
        case "anthropic":
            blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
            return [b for b in blocks if b["type"] in ("thinking", "redacted_thinking")]
        case "openai":
            keys = ("reasoning", "reasoning_content", "thinking")
            return [m for m in body["messages"] if any(k in m for k in keys)]
        case "ollama":
            return [m for m in body["messages"] if "thinking" in m]
        case "openai-responses":
            return [i for i in body["input"] if i.get("type") == "reasoning"]
        case "bedrock":
            return [b for m in body["messages"] for b in m["content"] if "reasoningContent" in b]
        case _:
            return [p for c in body["contents"] for p in c["parts"] if p.get("thought")]


# Official SDK types (dev dependencies: used to validate bodies, never as transport)

# Module-level: pydantic validates `Iterable[...]` lazily and needs its adapter alive while draining.
SDK_PARAMS: dict[str, TypeAdapter[Any]] = {
    "openai": TypeAdapter(CompletionCreateParamsNonStreaming),
    "openai-responses": TypeAdapter(ResponseCreateParamsNonStreaming),
    "anthropic": TypeAdapter(MessageCreateParamsNonStreaming),
}


# botocore reads its service model from the package's data: no network, no credentials.
BEDROCK_CONVERSE = get_session().get_service_model("bedrock-runtime").operation_model("Converse").input_shape
BEDROCK_VALIDATOR = ParamValidator()


def validate_with_sdk(target: str, body: dict[str, Any]) -> None:
    """Check a body against the provider's official SDK types; raise on any mismatch."""
    if target == "gemini":
        # google-genai models forbid unknown keys, so each item is checked exactly.
        for content in body["contents"]:
            genai.Content.model_validate(content)
        if "systemInstruction" in body:
            genai.Content.model_validate(body["systemInstruction"])
        for tool in body.get("tools", []):
            genai.Tool.model_validate(tool)
        if "toolConfig" in body:
            genai.ToolConfig.model_validate(body["toolConfig"])
        if "generationConfig" in body:
            genai.GenerationConfig.model_validate(body["generationConfig"])
        return
    if target == "ollama":
        _check_ollama(body)
        return
    if target == "bedrock":
        check_bedrock_request(body)
        return
    validated = drain(SDK_PARAMS[target].validate_python(json.loads(json.dumps(body))))
    # TypedDict validation drops keys the SDK does not know: equality means there were none.
    assert validated == body


def check_bedrock_request(body: dict[str, Any]) -> None:
    """Check a Converse body against botocore's own service model (shapes, enums, patterns, lengths)."""
    problems = BEDROCK_VALIDATOR.validate(body | {"modelId": "test-model"}, BEDROCK_CONVERSE)
    assert not problems.has_errors(), problems.generate_report()


def _check_ollama(body: dict[str, Any]) -> None:
    """No official typed SDK is installed for Ollama: check the `/api/chat` shapes of ollama `api/types.go`."""
    assert set(body) <= {"model", "messages", "tools", "stream", "options"}
    for message in body["messages"]:
        assert message["role"] in ("system", "user", "assistant", "tool")
        assert isinstance(message["content"], str)
        assert set(message) <= {"role", "content", "images", "tool_calls", "tool_name", "thinking"}
        assert all(isinstance(i, str) and base64.b64decode(i, validate=True) for i in message.get("images", []))
        for call in message.get("tool_calls", []):
            assert set(call) <= {"id", "function"}
            assert isinstance(call["function"]["name"], str) and isinstance(call["function"]["arguments"], dict)
        assert (message["role"] == "tool") == ("tool_name" in message)
    for tool in body.get("tools", []):
        assert tool["type"] == "function" and tool["function"]["parameters"]["type"] == "object"


def without_known_sdk_gaps(target: str, body: dict[str, Any]) -> dict[str, Any]:
    """The body minus what the installed SDK types are known not to model (each gap has its own xfail test).

    - anthropic: `temperature` — anthropic-python 2.x dropped the sampling parameters from
      `MessageCreateParams` (API version 2026-10-21 rejects them; 2023-06-01, which toolwire sends, still
      accepts them for older models).
    """
    body = copy.deepcopy(body)
    if target == "anthropic":
        body.pop("temperature", None)
    return body
