"""Converse request bodies (`POST /model/{modelId}/converse`), both ways.

The body carries no model: the model id is in the path, so `encode_request` leaves
`Request.model` out and `decode_request` returns `model=""` (the caller, who read the path,
fills it in). What the Converse API requires and toolwire guarantees here:

- `toolConfig` is sent whenever the history holds `toolUse`/`toolResult` blocks, even when the
  request has no tools (the API answers "The toolConfig field must be defined when using
  toolUse and toolResult content blocks" otherwise): the tools the history called are declared.
- `toolChoice` has `auto`, `any` and `tool` only. `none` withholds the tools; when the history
  needs `toolConfig`, the tools stay and the choice is left to the model, logged once.
- Tool names match `[a-zA-Z0-9_-]{1,64}` and descriptions are not empty (the API's 400 for
  either is a `CodecError` here, naming the tool, before anything is sent).
- Call ids match `[a-zA-Z0-9_.:-]{1,64}` and are unique; Mistral models want exactly 9 letters
  and digits. Other ids are rewritten deterministically, the results that answer them too.
- All results of a turn go in one user message, before any user text of that turn.
"""

from __future__ import annotations

import hashlib
import re
import string
from typing import Any, assert_never

from toolwire.codecs.bedrock.blocks import (
    NAME,
    cache_point,
    decode_assistant_blocks,
    decode_media,
    dropped,
    encode_assistant_part,
    encode_media,
    logger,
    own,
    warned,
)
from toolwire.codecs.common.checks import sendable_schema
from toolwire.codecs.common.conversation import unique_call_ids
from toolwire.codecs.common.degradations import warn_missing_options, warn_once
from toolwire.codecs.common.wire import dumps, require_dict, stop_list
from toolwire.errors import CodecError
from toolwire.schema import anthropic_input_schema
from toolwire.types import (
    AssistantMessage,
    ImagePart,
    Message,
    NamedToolChoice,
    Request,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

__all__ = ["decode_request", "encode_request", "wire_call_ids"]

_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_CALL_ID = re.compile(r"[a-zA-Z0-9_.:-]{1,64}")
_UNSAFE_ID_CHARS = re.compile(r"[^a-zA-Z0-9_.:-]")
_MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")
_ALNUM = string.ascii_letters + string.digits
_INFERENCE = {"max_tokens": "maxTokens", "temperature": "temperature", "top_p": "topP", "stop": "stopSequences"}
_REQUEST_KEYS = frozenset({"messages", "system", "inferenceConfig", "toolConfig"})


# ids


def _digest(call_id: str) -> bytes:
    return hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).digest()


def _wire_id(call_id: str) -> str:
    if _CALL_ID.fullmatch(call_id):
        return call_id
    cleaned = _UNSAFE_ID_CHARS.sub("_", call_id)[:53]
    return f"{cleaned}_{_digest(call_id).hex()[:10]}" if cleaned else f"tooluse_{_digest(call_id).hex()[:10]}"


def _mistral_id(call_id: str) -> str:
    # Mistral models on Bedrock, as on Mistral's own API, take only 9 letters and digits.
    if _MISTRAL_ID.fullmatch(call_id):
        return call_id
    return "".join(_ALNUM[b % len(_ALNUM)] for b in _digest(call_id)[:9])


def wire_call_ids(model: str, messages: list[Message]) -> list[Message]:
    """The conversation with call ids Bedrock (and the model behind it) accepts, results matched."""
    messages = unique_call_ids(messages, _wire_id)
    return unique_call_ids(messages, _mistral_id) if "mistral" in model.lower() else messages


# encode


def encode_request(request: Request) -> dict[str, Any]:
    """The exact Converse body for `request` (the model goes in the path, not here)."""
    body: dict[str, Any] = {}
    system = [m.content for m in request.messages if isinstance(m, SystemMessage) and m.content]
    if system:
        body["system"] = [{"text": text} for text in system]
    body["messages"] = _encode_messages(wire_call_ids(request.model, request.messages))
    inference = {wire: value for field, wire in _INFERENCE.items() if (value := getattr(request, field)) is not None}
    if inference:
        body["inferenceConfig"] = inference
    tool_config = _encode_tool_config(request, body["messages"])
    if tool_config is not None:
        body["toolConfig"] = tool_config
    body.update(request.extra)
    warn_missing_options(logger, warned, NAME, request, ("seed", "user", "response_format"))
    if request.parallel_tool_calls is False:
        message = "bedrock has no switch for parallel tool calls; the model may still call several tools at once."
        warn_once(logger, warned, f"{NAME}:parallel_tool_calls", message)
    return body


def _encode_messages(messages: list[Message]) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case SystemMessage():
                pass  # all in the top-level `system`
            case ToolResult():
                _append(wire, "user", [{"toolResult": _encode_result(message)}, *cache_point(message.metadata)])
            case UserMessage():
                content = message.content
                parts = [TextPart(text=content)] if isinstance(content, str) else content
                _append(wire, "user", [b for p in parts for b in encode_media(p)])
            case AssistantMessage():
                _append(wire, "assistant", [b for p in message.parts for b in encode_assistant_part(p)])
            case _:
                assert_never(message)
    return wire


def _append(wire: list[dict[str, Any]], role: str, content: list[dict[str, Any]]) -> None:
    # Roles alternate: content of the same role as the last message joins it (a turn's results
    # and the user text after them become one user message).
    if not content:
        return
    if wire and wire[-1]["role"] == role:
        wire[-1]["content"].extend(content)
    else:
        wire.append({"role": role, "content": content})


def _encode_result(result: ToolResult) -> dict[str, Any]:
    block: dict[str, Any] = {"toolUseId": result.tool_call_id}
    match result.kind:
        case "text":
            block["content"] = [{"text": result.value}]
        case "data":
            value = result.value
            block["content"] = [{"json": value} if isinstance(value, dict) else {"text": dumps(value)}]
        case "error":
            block["content"] = [{"text": result.value}]
            block["status"] = "error"
        case "multimodal":
            block["content"] = [b for p in result.value for b in encode_media(p) if "cachePoint" not in b]
            if own(result.metadata).get("status") == "error":
                block["status"] = "error"
        case _:
            assert_never(result.kind)
    return block


def _history_tools(messages: list[dict[str, Any]]) -> list[str] | None:
    """The tool names the history's `toolUse` blocks call, or None when it holds no tool blocks."""
    names: list[str] = []
    found = False
    for message in messages:
        for block in message["content"]:
            if "toolUse" in block:
                names.append(block["toolUse"]["name"])
            found = found or "toolUse" in block or "toolResult" in block
    return list(dict.fromkeys(names)) if found else None


def _encode_tool_config(request: Request, messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    history = _history_tools(messages)
    choice = request.tool_choice
    if history is None and (not request.tools or choice == "none"):
        return None
    tools = request.tools or [ToolDefinition(name=name) for name in history or () if _TOOL_NAME.fullmatch(name)]
    if not tools:
        raise CodecError(
            "bedrock needs toolConfig for a history with tool results, and the history names no tool to declare; "
            "pass the tools the conversation used.",
            provider=NAME,
        )
    config: dict[str, Any] = {"tools": [_encode_tool(t) for t in tools]}
    if choice == "none":
        message = (
            "bedrock has no tool_choice 'none' and needs the tools whenever the history holds tool calls; "
            "toolwire sends them with the choice left to the model."
        )
        warn_once(logger, warned, f"{NAME}:tool_choice.none", message)
    elif choice is not None:
        config["toolChoice"] = _encode_tool_choice(choice)
    return config


def _encode_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    if isinstance(choice, NamedToolChoice):
        return {"tool": {"name": choice.name}}
    return {"any": {}} if choice == "required" else {"auto": {}}


def _encode_tool(tool: ToolDefinition) -> dict[str, Any]:
    if not isinstance(tool.name, str) or not _TOOL_NAME.fullmatch(tool.name):
        raise CodecError(
            f"bedrock tool name {tool.name!r} must be 1 to 64 letters, digits, '_' or '-'; rename the tool.",
            provider=NAME,
        )
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        if not tool.description:
            raise CodecError(
                f"bedrock rejects the empty description of tool {tool.name!r}; describe the tool or leave "
                "the description out (None).",
                provider=NAME,
            )
        spec["description"] = tool.description
    spec["inputSchema"] = {"json": sendable_schema(NAME, tool, anthropic_input_schema)}
    if tool.strict is not None:
        spec["strict"] = tool.strict
    return {"toolSpec": spec}


# decode


def decode_request(body: dict[str, Any]) -> Request:
    """Read a Converse body back; `model` is `""` (the model id is in the path)."""
    body = require_dict(body, NAME, "request body")
    wire_messages = body.get("messages")
    if not isinstance(wire_messages, list):
        raise CodecError(f"The bedrock request body needs a messages list: {body!r:.200}", provider=NAME)
    extra = {k: v for k, v in body.items() if k not in _REQUEST_KEYS}
    messages = _decode_system(body.get("system"), extra) + _decode_messages(wire_messages)
    inference = body.get("inferenceConfig")
    inference = inference if isinstance(inference, dict) else {}
    tools, choice = _decode_tool_config(body.get("toolConfig"), extra)
    return Request(
        model="",
        messages=messages,
        tools=tools,
        tool_choice=choice,
        max_tokens=inference.get("maxTokens"),
        temperature=inference.get("temperature"),
        top_p=inference.get("topP"),
        stop=stop_list(inference.get("stopSequences")),
        extra=extra,
    )


def _decode_system(system: Any, extra: dict[str, Any]) -> list[Message]:
    if system is None:
        return []
    if not isinstance(system, list):
        raise CodecError(f"bedrock system {system!r:.80} is not a list of blocks.", provider=NAME)
    texts = [b["text"] for b in system if isinstance(b, dict) and isinstance(b.get("text"), str)]
    if len(texts) != len(system):
        extra["system"] = system  # cache points and guard content go back as they were, to Bedrock
    return [SystemMessage(content=text) for text in texts]


def _decode_messages(wire_messages: list[Any]) -> list[Message]:
    names: dict[str, str] = {}  # toolUseId -> tool name: results carry no name
    messages: list[Message] = []
    for index, item in enumerate(wire_messages):
        item = require_dict(item, NAME, f"messages[{index}]")
        role, content = item.get("role"), item.get("content")
        if role == "assistant":
            parts = decode_assistant_blocks(content, request=True)
            names.update((p.id, p.name) for p in parts if isinstance(p, ToolCall))
            messages.append(AssistantMessage(parts=parts))
        elif role == "user":
            messages.extend(_decode_user_content(content, names))
        else:
            raise CodecError(f"bedrock messages[{index}] has role {role!r}; use 'user' or 'assistant'.", provider=NAME)
    return messages


def _decode_user_content(content: Any, names: dict[str, str]) -> list[Message]:
    if not isinstance(content, list):
        raise CodecError(f"bedrock message content {content!r:.80} is not a list of blocks.", provider=NAME)
    messages: list[Message] = []
    pending: list[TextPart | ImagePart] = []
    for block in content:
        block = require_dict(block, NAME, "content block")
        if isinstance(block.get("cachePoint"), dict):
            _attach_cache_point(block["cachePoint"], pending, messages)
        elif isinstance(block.get("toolResult"), dict):
            if pending:
                messages.append(_user_message(pending))
                pending = []
            messages.append(_decode_result(block["toolResult"], names))
        elif (part := decode_media(block)) is not None:
            pending.append(part)
    if pending or not messages:
        messages.append(_user_message(pending))
    return messages


def _user_message(parts: list[TextPart | ImagePart]) -> UserMessage:
    # One plain text block is what a string content encodes to: read it back as that string.
    if len(parts) == 1 and isinstance(parts[0], TextPart) and not parts[0].metadata:
        return UserMessage(content=parts[0].text)
    return UserMessage(content=parts)


def _attach_cache_point(point: dict[str, Any], pending: list[TextPart | ImagePart], messages: list[Message]) -> None:
    last = pending[-1] if pending else (messages[-1] if messages else None)
    if isinstance(last, TextPart | ToolResult):
        last.metadata.setdefault(NAME, {})["cachePoint"] = point
    else:
        dropped("content block", "cachePoint")


def _decode_result(block: dict[str, Any], names: dict[str, str]) -> ToolResult:
    tool_call_id = str(block.get("toolUseId") or "")
    name = names.get(tool_call_id, "")
    content = [b for b in block.get("content") or [] if isinstance(b, dict)]
    error = block.get("status") == "error"
    if len(content) == 1 and "json" in content[0] and not error:
        return ToolResult(tool_call_id=tool_call_id, name=name, kind="data", value=content[0]["json"])
    if len(content) <= 1 and all(isinstance(b.get("text"), str) for b in content):
        text = content[0]["text"] if content else ""
        return ToolResult(tool_call_id=tool_call_id, name=name, kind="error" if error else "text", value=text)
    parts = [p for b in content if (p := _decode_result_block(b)) is not None]
    metadata = {NAME: {"status": "error"}} if error else {}
    return ToolResult(tool_call_id=tool_call_id, name=name, kind="multimodal", value=parts, metadata=metadata)


def _decode_result_block(block: dict[str, Any]) -> TextPart | ImagePart | None:
    if "json" in block:
        return TextPart(text=dumps(block["json"]))
    return decode_media(block)


def _decode_tool_config(config: Any, extra: dict[str, Any]) -> tuple[list[ToolDefinition], ToolChoice | None]:
    if config is None:
        return [], None
    config = require_dict(config, NAME, "toolConfig")
    wire_tools = config.get("tools") or []
    tools = [t for t in map(_decode_tool, wire_tools) if t is not None]
    if [_encode_tool(t) for t in tools] != wire_tools:
        extra["toolConfig"] = config  # cache points, system tools: the whole config goes back as it was, to Bedrock
    return tools, _decode_tool_choice(config.get("toolChoice"))


def _decode_tool(tool: Any) -> ToolDefinition | None:
    tool = require_dict(tool, NAME, "tool")
    spec = tool.get("toolSpec")
    if not isinstance(spec, dict):
        dropped("tool", next(iter(tool), None))
        return None
    schema = spec.get("inputSchema")
    parameters = schema.get("json") if isinstance(schema, dict) else None
    name = spec.get("name")
    if not isinstance(name, str):
        raise CodecError(f"bedrock toolSpec name {name!r} is not a string.", provider=NAME)
    try:
        return ToolDefinition(
            name=name, description=spec.get("description"), parameters=parameters, strict=spec.get("strict")
        )
    except (ValueError, TypeError) as exc:
        raise CodecError(f"bedrock toolSpec {spec.get('name')!r} is not usable: {exc}", provider=NAME) from None


def _decode_tool_choice(choice: Any) -> ToolChoice | None:
    if choice is None:
        return None
    choice = require_dict(choice, NAME, "toolChoice")
    if "auto" in choice:
        return "auto"
    if "any" in choice:
        return "required"
    tool = choice.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
        return NamedToolChoice(tool["name"])
    raise CodecError(f"bedrock toolChoice {choice!r} is not one of auto, any or tool (named).", provider=NAME)
