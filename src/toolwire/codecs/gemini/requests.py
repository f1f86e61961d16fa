"""`generateContent` request bodies, both ways: every Gemini request quirk (docs/wire-formats.md, Gemini)."""

from __future__ import annotations

import base64
import binascii
import copy
import logging
import mimetypes
from collections.abc import Callable
from typing import Any, Literal, assert_never
from urllib.parse import urlsplit

from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.degradations import warn_missing_options, warn_once
from toolwire.codecs.common.ids import derived_call_id
from toolwire.codecs.common.wire import require_dict, sniff_image_type, stop_list
from toolwire.codecs.gemini.fields import NAME, call_metadata, gemini_metadata
from toolwire.errors import CodecError
from toolwire.schema import from_openapi_schema, gemini_schema
from toolwire.types import (
    AssistantMessage,
    ImagePart,
    Message,
    NamedToolChoice,
    Request,
    ResponseFormat,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

__all__ = ["SKIP_THOUGHT_SIGNATURE", "GeminiRequests", "SchemaField"]

SchemaField = Literal["parametersJsonSchema", "parameters"]

SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator"
"""The documented stand-in for a call that has no signature of its own (foreign or injected)."""

_logger = logging.getLogger("toolwire.codecs.gemini")

# Tables

_CHOICE_MODES: dict[str, str] = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
_MODE_CHOICES: dict[str, ToolChoice] = {"AUTO": "auto", "NONE": "none"}
_MISSING_RESULT = "No result was recorded for this call."
_DECLARATION_KEYS = frozenset({"name", "description", "parameters", "parametersJsonSchema", "parameters_json_schema"})
_USER_PART_KEYS = frozenset({"text", "inlineData", "fileData"})  # functionResponse parts are read apart
_MODEL_PART_KEYS = frozenset({"text", "functionCall"})
# Fields that describe a part rather than hold content; the content key decides what it is.
_PART_METADATA_KEYS = frozenset({"thought", "thoughtSignature", "partMetadata", "mediaResolution", "videoMetadata"})
_GEMINI_ONLY = "gemini: {what} {name!r} has no neutral form; it goes back to Gemini only (Request.extra)."

Warn = Callable[[str, str], None]


class GeminiRequests:
    """`generateContent` request bodies both ways; each instance warns once per degradation.

    Args:
        schema_field: Where tool schemas go. `"parametersJsonSchema"` (default) sends the JSON
            Schema as is — what current models accept and pydantic-ai sends; `"parameters"`
            sends Gemini's OpenAPI subset via `toolwire.schema.gemini_schema`, for Live, older
            models and pinned Vertex versions. The two fields are mutually exclusive.
    """

    def __init__(self, schema_field: SchemaField = "parametersJsonSchema") -> None:
        if schema_field not in ("parametersJsonSchema", "parameters"):
            raise ValueError(
                f"GeminiCodec: schema_field {schema_field!r} is not supported; "
                "use 'parametersJsonSchema' or 'parameters'."
            )
        self.schema_field: SchemaField = schema_field
        self._warned: set[str] = set()

    def encode(self, request: Request) -> dict[str, Any]:
        """Return the `generateContent` body (the model goes in the URL, not the body)."""
        body: dict[str, Any] = {"contents": _Contents(self._warn).encode(request.messages)}
        system = [m.content for m in request.messages if isinstance(m, SystemMessage)]
        if system:
            body["systemInstruction"] = {"parts": [{"text": text} for text in system]}
            self._warn_inner_system(request.messages)
        if request.tools:
            body["tools"] = [{"functionDeclarations": [self._encode_tool(t) for t in request.tools]}]
            if request.tool_choice is not None:
                body["toolConfig"] = {"functionCallingConfig": _encode_tool_choice(request.tool_choice)}
        if request.parallel_tool_calls is False:
            self._warn(
                "parallel", "Gemini has no switch for parallel tool calls; parallel_tool_calls=False is not sent."
            )
        generation = self._generation_config(request)
        if generation:
            body["generationConfig"] = generation
        return _merge(body, request.extra)

    def _generation_config(self, request: Request) -> dict[str, Any]:
        generation: dict[str, Any] = {}
        for option, key in _GENERATION_OPTIONS:
            if (value := getattr(request, option)) is not None:
                generation[key] = value
        warn_missing_options(_logger, self._warned, NAME, request, ("user",))
        if request.response_format is not None:
            generation["responseMimeType"] = "application/json"
            if request.response_format.schema is not None:
                generation["responseJsonSchema"] = request.response_format.schema
        return generation

    def decode(self, body: dict[str, Any]) -> Request:
        """Read a body back; whatever the neutral form cannot hold goes to `Request.extra`.

        The body's own `model` key, if any, becomes `Request.model` (Gemini normally takes
        the model from the URL, so it is usually `""`).
        """
        body = require_dict(body, NAME, "request body")
        contents = body.get("contents")
        if not isinstance(contents, list):
            raise CodecError(
                f"The gemini request body needs a 'contents' list, got {contents!r}; pass a generateContent body.",
                provider=NAME,
            )
        tools = _decode_tools(body.get("tools"), self._warn)
        generation = body.get("generationConfig")
        generation = generation if isinstance(generation, dict) else {}
        request = Request(
            model=body["model"] if isinstance(body.get("model"), str) else "",
            messages=[*_decode_system(body.get("systemInstruction")), *_decode_contents(contents, self._warn)],
            tools=tools,
            tool_choice=_decode_tool_choice(body.get("toolConfig"), self._warn) if tools else None,
            max_tokens=_number(generation.get("maxOutputTokens"), int),
            temperature=_number(generation.get("temperature"), float),
            top_p=_number(generation.get("topP"), float),
            stop=stop_list(generation.get("stopSequences")),
            seed=_number(generation.get("seed"), int),
            response_format=_decode_response_format(generation),
        )
        request.extra = _difference(body, self.encode(request))
        return request

    def _encode_tool(self, tool: ToolDefinition) -> dict[str, Any]:
        declaration: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            declaration["description"] = tool.description
        if tool.parameters is not None:
            # Shared, not copied: bodies are read-only JSON (see the Codec protocol).
            schema = tool.parameters
            declaration[self.schema_field] = gemini_schema(schema) if self.schema_field == "parameters" else schema
        if tool.strict:
            self._warn("strict", "Gemini has no per-tool strict flag; use extra toolConfig mode 'VALIDATED' instead.")
        return declaration

    def _warn(self, key: str, message: str) -> None:
        warn_once(_logger, self._warned, key, message)

    def _warn_inner_system(self, messages: list[Message]) -> None:
        # Gemini takes instructions only in systemInstruction: a system message from the middle
        # of a conversation (Anthropic's Opus 4.8+ allow them) joins the others there, in order,
        # so it keeps a system prompt's authority but loses its place (what LiteLLM does too).
        first_other = next((i for i, m in enumerate(messages) if not isinstance(m, SystemMessage)), len(messages))
        if any(isinstance(m, SystemMessage) for m in messages[first_other:]):
            self._warn(
                f"{NAME}:system-message-position",
                "gemini: a system message in the middle of the conversation is sent at the end of "
                "systemInstruction; Gemini takes instructions nowhere else.",
            )


def _encode_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    match choice:
        case NamedToolChoice():
            return {"mode": "ANY", "allowedFunctionNames": [choice.name]}
        case "auto" | "none" | "required":
            return {"mode": _CHOICE_MODES[choice]}
        case _:
            assert_never(choice)


_GENERATION_OPTIONS = (
    ("max_tokens", "maxOutputTokens"),
    ("temperature", "temperature"),
    ("top_p", "topP"),
    ("stop", "stopSequences"),
    ("seed", "seed"),
)


def _decode_response_format(generation: dict[str, Any]) -> ResponseFormat | None:
    """JSON output: `responseMimeType` JSON, with `responseJsonSchema` when there is one.

    A `responseSchema` (Gemini's OpenAPI subset) stays in `extra`: it goes back only to Gemini.
    Gemini also takes OpenAPI's upper-case types in `responseJsonSchema` (Gemini CLI sends
    `"type": "OBJECT"` there); the neutral schema is JSON Schema, which other providers check.
    """
    if generation.get("responseMimeType") != "application/json":
        return None
    schema = generation.get("responseJsonSchema")
    return ResponseFormat(schema=from_openapi_schema(schema) if isinstance(schema, dict) else None)


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` merged into `base`: nested objects key by key, anything else replaced."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _difference(actual: dict[str, Any], produced: dict[str, Any]) -> dict[str, Any]:
    """What to merge into `produced` to get `actual` back (the inverse of `_merge`)."""
    extra: dict[str, Any] = {}
    for key, value in actual.items():
        if key in produced and produced[key] == value:
            continue
        mine = produced.get(key)
        if isinstance(value, dict) and isinstance(mine, dict) and mine.keys() <= value.keys():
            extra[key] = _difference(value, mine)
        else:
            extra[key] = copy.deepcopy(value)
    return extra


# Encode: contents


class _Contents:
    """Walks a conversation into `contents`, keeping Gemini's turn rules."""

    def __init__(self, warn: Any) -> None:
        self._warn = warn
        self._contents: list[dict[str, Any]] = []
        self._calls: dict[str, ToolCall] = {}
        self._pending: list[ToolCall] = []
        self._results: list[ToolResult] = []

    def encode(self, messages: list[Message]) -> list[dict[str, Any]]:
        last_user = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=-1)
        for index, message in enumerate(messages):
            if isinstance(message, ToolResult):
                self._results.append(message)
                continue
            if isinstance(message, UserMessage | AssistantMessage):
                self._flush_results()
            match message:
                case SystemMessage():
                    continue  # goes to systemInstruction
                case UserMessage():
                    if user_parts := _encode_user(message):  # an empty turn is a 400: left out
                        self._contents.append({"role": "user", "parts": user_parts})
                case AssistantMessage():
                    self._add_model(message, current=index > last_user)
                case _:
                    assert_never(message)
        if self._results:
            self._flush_results()
        if self._contents and self._contents[0]["role"] == "model":
            # "function call turn comes immediately after a user turn"; an empty text part is a 400.
            self._contents.insert(0, {"role": "user", "parts": [{"text": _CONTINUE}]})
        return self._contents

    def _add_model(self, message: AssistantMessage, *, current: bool) -> None:
        parts: list[dict[str, Any]] = []
        first_call = True
        for part in message.parts:
            match part:
                case TextPart():
                    signature = gemini_metadata(part.metadata).get("thought_signature")
                    if part.text or signature:  # Gemini answers 400 to an empty text part
                        parts.append(_signed({"text": part.text}, signature))
                case ThinkingPart():
                    if part.provider == NAME:  # another provider's reasoning is never sent
                        parts.append(_signed({"text": part.text, "thought": True}, part.signature))
                case ToolCall():
                    wire = _encode_call(part)
                    if current and first_call and "thoughtSignature" not in wire:
                        # Gemini 3 validates the first call of each step of the current turn.
                        wire["thoughtSignature"] = SKIP_THOUGHT_SIGNATURE
                    first_call = False
                    self._calls[part.id] = part
                    parts.append(wire)
                case _:
                    assert_never(part)
        if parts:  # an empty model content is rejected; a turn with nothing to replay is left out
            self._contents.append({"role": "model", "parts": parts})
            self._pending = message.tool_calls

    def _flush_results(self) -> None:
        results, self._results = self._results, []
        pending, self._pending = self._pending, []
        if pending:
            results = self._match(pending, results)
        if results:
            parts = [_encode_result(r, self._calls.get(r.tool_call_id), self._warn) for r in results]
            self._contents.append({"role": "user", "parts": parts})

    def _match(self, calls: list[ToolCall], results: list[ToolResult]) -> list[ToolResult]:
        """One result per call, in call order: Gemini counts responses against calls."""
        ordered: list[ToolResult] = []
        unused = list(results)
        for call in calls:
            found = next((r for r in unused if r.tool_call_id == call.id), None)
            if found is None:
                self._warn("missing", f"Gemini needs a response for every call; call {call.id!r} gets an error one.")
                found = ToolResult.error(call, _MISSING_RESULT)
            else:
                unused.remove(found)
            ordered.append(found)
        if unused:
            ids = [r.tool_call_id for r in unused]
            self._warn("orphan", f"Gemini rejects responses without a call in the turn; dropped results {ids!r}.")
        return ordered


def _signed(part: dict[str, Any], signature: Any) -> dict[str, Any]:
    if isinstance(signature, str):
        part["thoughtSignature"] = signature
    return part


def _encode_call(call: ToolCall) -> dict[str, Any]:
    own = gemini_metadata(call.metadata)
    wire: dict[str, Any] = {"name": call.name, "args": call.arguments}
    if isinstance(own.get("id"), str):  # echoed only when Gemini issued it (pydantic-ai #4645)
        wire["id"] = own["id"]
    return _signed({"functionCall": wire}, own.get("thought_signature"))


def _encode_result(result: ToolResult, call: ToolCall | None, warn: Any) -> dict[str, Any]:
    response: dict[str, Any] = {"name": result.name, "response": {}}
    issued = gemini_metadata(call.metadata).get("id") if call is not None else None
    if isinstance(issued, str):
        response["id"] = issued
    match result.kind:
        case "text":
            response["response"] = {"output": result.value}
        case "data":
            # `response` must be a JSON object (a proto Struct); anything else is wrapped.
            value = result.value
            response["response"] = value if isinstance(value, dict) else {"output": value}
        case "error":
            response["response"] = {"error": result.value}
        case "multimodal":
            texts = [p.text for p in result.value if isinstance(p, TextPart)]
            response["response"] = {"output": "\n".join(texts)} if texts else {}
            images = [p for p in result.value if isinstance(p, ImagePart)]
            if images:  # Gemini 3+: functionResponse.parts[].inlineData
                response["parts"] = [_encode_image(p) for p in images]
            if any(p.url is not None for p in images):
                warn("result-url", "Gemini API rejects fileData in function responses (Vertex AI accepts it).")
        case _:
            assert_never(result.kind)
    return {"functionResponse": response}


_CONTINUE = "Continue."
"""The stand-in user turn before a conversation that starts with the model."""


def _encode_user(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"text": message.content}] if message.content else []
    return [{"text": p.text} if isinstance(p, TextPart) else _encode_image(p) for p in message.content if _filled(p)]


def _filled(part: TextPart | ImagePart) -> bool:
    return not isinstance(part, TextPart) or bool(part.text)


def _encode_image(image: ImagePart) -> dict[str, Any]:
    if image.data is not None:
        media_type = image.media_type or sniff_image_type(image.data) or "image/png"
        return {"inlineData": {"mimeType": media_type, "data": base64.b64encode(image.data).decode("ascii")}}
    url_type = image.media_type or _type_from_url(image.url or "")
    if url_type is None:
        raise CodecError(
            f"gemini needs the media type of the image at {image.url!r} (fileData.mimeType is required) and "
            "its address does not say; pass ImagePart(url=..., media_type='image/png') or the bytes.",
            provider=NAME,
        )
    return {"fileData": {"mimeType": url_type, "fileUri": image.url}}


def _type_from_url(url: str) -> str | None:
    """The media type an image URL's file name gives (`.png`, `.jpg`...), ignoring its query."""
    guessed, _ = mimetypes.guess_type(urlsplit(url).path)
    return guessed if guessed is not None and guessed.startswith("image/") else None


# Decode: requests


def _number(value: Any, kind: type[int] | type[float]) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if kind is float or isinstance(value, int) else None


def _decode_system(instruction: Any) -> list[Message]:
    parts = instruction.get("parts") if isinstance(instruction, dict) else None
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)] if parts else []
    return [SystemMessage(content=text) for text in texts]


def _decode_tools(tools: Any, warn: Warn) -> list[ToolDefinition]:
    decoded: list[ToolDefinition] = []
    for tool in tools if isinstance(tools, list) else []:
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        for kind in sorted(set(tool) - {"functionDeclarations"}) if isinstance(tool, dict) else []:
            # googleSearch, codeExecution, urlContext, mcpServers...: kept in Request.extra for Gemini.
            warn(f"{NAME}:{kind}", _GEMINI_ONLY.format(what="tool", name=kind))
        for declaration in declarations if isinstance(declarations, list) else []:
            definition = _decode_declaration(declaration, warn)
            if definition is not None:
                decoded.append(definition)
    return decoded


def _decode_declaration(declaration: Any, warn: Warn) -> ToolDefinition | None:
    if not isinstance(declaration, dict):
        return None
    for key in sorted(set(declaration) - _DECLARATION_KEYS):  # responseJsonSchema, behavior
        warn(f"{NAME}:{key}", _GEMINI_ONLY.format(what="function declaration field", name=key))
    # parametersJsonSchema is JSON Schema as is (snake_case from the google-genai SDK's to_dict);
    # parameters is Gemini's OpenAPI subset (`OBJECT`, `nullable`).
    schema = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
    if schema is None:
        schema = from_openapi_schema(declaration.get("parameters"))
    description = declaration.get("description")
    try:
        return ToolDefinition(
            name=str(declaration.get("name")),
            description=description if isinstance(description, str) else None,
            parameters=schema if isinstance(schema, dict) else None,
        )
    except ValueError:  # a Gemini-only name ("ns.tool"); the declaration stays in Request.extra
        name = declaration.get("name")
        warn(f"{NAME}:{name}", _GEMINI_ONLY.format(what="function name", name=name))
        return None


def _decode_tool_choice(config: Any, warn: Warn) -> ToolChoice | None:
    calling = config.get("functionCallingConfig") if isinstance(config, dict) else None
    if not isinstance(calling, dict):
        return None
    mode, names = calling.get("mode"), calling.get("allowedFunctionNames")
    if mode == "VALIDATED":
        # AUTO plus schema adherence enforced by the API (docs/wire-formats.md, Gemini): the model still
        # chooses, so it reads as `auto`; the enforcement itself reaches Gemini only (extra).
        warn(
            f"{NAME}:VALIDATED",
            "gemini: functionCallingConfig mode 'VALIDATED' reads as tool_choice 'auto'; its schema "
            "enforcement goes back to Gemini only (Request.extra).",
        )
        return "auto"
    if mode == "ANY":
        if names is None:
            return "required"
        if isinstance(names, list) and len(names) == 1 and isinstance(names[0], str):
            return NamedToolChoice(names[0])
        return None  # a subset of tools: kept in Request.extra
    return _MODE_CHOICES.get(mode) if isinstance(mode, str) and names is None else None


def _decode_contents(contents: list[Any], warn: Warn) -> list[Message]:
    messages: list[Message] = []
    pending: list[ToolCall] = []
    for index, content in enumerate(contents):
        if not isinstance(content, dict):
            raise CodecError(
                f"The gemini contents[{index}] must be an object, got {content!r}; pass a generateContent body.",
                provider=NAME,
            )
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if content.get("role") == "model":
            message = _decode_model(parts, f"gemini-request-{index}", warn)
            messages.append(message)
            pending = list(message.tool_calls)
            continue
        responses = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
        messages.extend(
            _decode_function_response(r, pending, f"gemini-request-{index}", n) for n, r in enumerate(responses)
        )
        rest = [p for p in parts if "functionResponse" not in p]
        if rest or not responses:
            messages.append(_decode_user(rest, warn))
    return messages


def _decode_model(parts: list[dict[str, Any]], seed: str, warn: Warn) -> AssistantMessage:
    decoded: list[TextPart | ThinkingPart | ToolCall] = []
    for position, part in enumerate(parts):
        _check_part(part, _MODEL_PART_KEYS, warn)
        signature = part.get("thoughtSignature")
        call = part.get("functionCall")
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            wire_id = call.get("id")
            arguments, problems = parse_arguments(call.get("args"))
            decoded.append(
                ToolCall(
                    id=wire_id if isinstance(wire_id, str) and wire_id else derived_call_id(seed, position),
                    name=call["name"],
                    arguments=arguments,
                    metadata=call_metadata(wire_id, signature) | problems,
                )
            )
        elif isinstance(part.get("text"), str) and part.get("thought") is True:
            sig = signature if isinstance(signature, str) else None
            decoded.append(ThinkingPart(text=part["text"], signature=sig, provider=NAME))
        elif isinstance(part.get("text"), str):
            own = {NAME: {"thought_signature": signature}} if isinstance(signature, str) else {}
            decoded.append(TextPart(text=part["text"], metadata=own))
    return AssistantMessage(parts=decoded)


def _decode_function_response(
    response: dict[str, Any], pending: list[ToolCall], seed: str, position: int
) -> ToolResult:
    """A functionResponse, matched to its call by the id Gemini issued, else by name and order."""
    wire_id, name = response.get("id"), response.get("name")
    call = next((c for c in pending if wire_id and gemini_metadata(c.metadata).get("id") == wire_id), None)
    call = call or next((c for c in pending if c.name == name), None)
    if call is not None:
        pending.remove(call)
    call_id = (
        call.id if call else (wire_id if isinstance(wire_id, str) and wire_id else derived_call_id(seed, position))
    )
    name = name if isinstance(name, str) else (call.name if call else "")
    value = response.get("response")
    images = [i for i in (_decode_image(p) for p in response.get("parts") or [] if isinstance(p, dict)) if i]
    if images:
        output = value.get("output") if isinstance(value, dict) else None
        parts: list[TextPart | ImagePart] = [TextPart(text=output)] if isinstance(output, str) else []
        return ToolResult(tool_call_id=call_id, name=name, kind="multimodal", value=parts + images)
    if isinstance(value, dict) and len(value) == 1:
        if isinstance(value.get("error"), str):
            return ToolResult(tool_call_id=call_id, name=name, kind="error", value=value["error"])
        if isinstance(value.get("output"), str):
            return ToolResult(tool_call_id=call_id, name=name, kind="text", value=value["output"])
        if "output" in value:
            return ToolResult(tool_call_id=call_id, name=name, kind="data", value=value["output"])
    return ToolResult(tool_call_id=call_id, name=name, kind="data", value=value if value is not None else {})


def _decode_user(parts: list[dict[str, Any]], warn: Warn) -> UserMessage:
    decoded: list[TextPart | ImagePart] = []
    for part in parts:
        _check_part(part, _USER_PART_KEYS, warn)
        if isinstance(part.get("text"), str):
            decoded.append(TextPart(text=part["text"]))
        elif (image := _decode_image(part)) is not None:
            decoded.append(image)
    if len(decoded) == 1 and isinstance(decoded[0], TextPart):
        return UserMessage(content=decoded[0].text)
    return UserMessage(content=decoded)


def _check_part(part: dict[str, Any], known: frozenset[str], warn: Warn) -> None:
    # executableCode, codeExecutionResult, toolCall, toolResponse, and fields added later.
    for key in sorted(set(part) - known - _PART_METADATA_KEYS):
        warn(f"{NAME}:{key}", _GEMINI_ONLY.format(what="part type", name=key))


def _decode_image(part: dict[str, Any]) -> ImagePart | None:
    inline, file = part.get("inlineData"), part.get("fileData")
    if isinstance(inline, dict) and isinstance(inline.get("data"), str):
        try:
            data = base64.b64decode(inline["data"], validate=True)
        except binascii.Error:
            return None
        media = inline.get("mimeType")
        return ImagePart(data=data, media_type=media if isinstance(media, str) else None)
    if isinstance(file, dict) and isinstance(file.get("fileUri"), str):
        media = file.get("mimeType")
        return ImagePart(url=file["fileUri"], media_type=media if isinstance(media, str) else None)
    return None
