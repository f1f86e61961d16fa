"""Constrained mode over a neutral request: what is sent, and how the reply comes back.

The model gets no `tools` parameter. The tools are described in the system prompt, the reply
schema goes as `Request.response_format`, strict (each codec and server profile sends it in its
own form: `OpenAIProfile.schema_form`), and the history is rewritten in the shape the model is
asked to write: its earlier calls as `{"call_count": n, "tool_calls": [...]}` replies, its
earlier answers as calls of the `no_tool_fits` pseudo-tool, tool results as user text. The
history itself stays neutral; only what is sent changes, as in text mode.

Imports `toolwire.types`, `toolwire.textcalls` (the result text shared with text mode), this
package's modules and the standard library.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from toolwire.constrained._loosen import PORTABLE, SchemaSupport
from toolwire.constrained._reply import ConstrainedReply, parse_reply
from toolwire.constrained._schema import (
    ANSWER_ARGUMENT,
    CALLS_KEY,
    COUNT_KEY,
    NO_TOOL,
    ReplySchema,
    no_tool_definition,
    reply_schema,
)
from toolwire.textcalls import append_result_text, result_message_text
from toolwire.types import (
    AssistantMessage,
    Message,
    Request,
    Response,
    ResponseFormat,
    StopReason,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
)

__all__ = ["SCHEMA_NAME", "calls_from_reply", "constrained_request", "render_constrained_prompt"]

SCHEMA_NAME = "tool_reply"


def render_constrained_prompt(reply: ReplySchema) -> str:
    """The system-prompt section that names the tools (`no_tool_fits` first) and the reply shape.

    The shape is shown with placeholders only: a small model copies a concrete example.
    """
    offered = [no_tool_definition(reply.no_tool), *reply.tools] if reply.answer_allowed else list(reply.tools)
    call = '{"name": "<tool>", "arguments": {...}}'
    shape = f'{{"{COUNT_KEY}": <n>, "{CALLS_KEY}": [<n calls like {call}>]}}'
    return "\n".join(
        [
            "You can use these tools:",
            *(_tool_line(tool) for tool in offered),
            "",
            f"Reply {shape} where n is the number of separate things the user asks for.",
        ]
    )


def _tool_line(tool: ToolDefinition) -> str:
    parameters = tool.parameters or {}
    properties = parameters.get("properties") if isinstance(parameters.get("properties"), dict) else {}
    required = parameters.get("required") if isinstance(parameters.get("required"), list) else []
    assert isinstance(properties, dict) and isinstance(required, list)
    params = ", ".join(_param(name, schema, name in required) for name, schema in properties.items())
    description = " ".join((tool.description or "").split())
    return f"- {tool.name}({params})" + (f": {description}" if description else "")


def _param(name: str, schema: Any, required: bool) -> str:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(schema, dict) and isinstance(schema.get("enum"), list):
        kind = " | ".join(json.dumps(v) for v in schema["enum"])
    elif isinstance(kind, list):
        kind = " | ".join(str(k) for k in kind)
    mark = "" if required else "?"
    return f"{name}{mark}: {kind}" if isinstance(kind, str) else f"{name}{mark}"


def constrained_request(request: Request, support: SchemaSupport = PORTABLE) -> tuple[Request, ReplySchema | None]:
    """The request as constrained mode sends it, and the reply schema it asks for.

    With no tools, or `tool_choice="none"`, nothing is constrained: the request goes without
    its tools (the model answers in plain text) and the schema is None.
    """
    reply = reply_schema(
        request.tools, request.tool_choice, parallel_tool_calls=request.parallel_tool_calls, support=support
    )
    plain = dataclasses.replace(request, tools=[], tool_choice=None, parallel_tool_calls=None)
    if reply is None:
        return dataclasses.replace(plain, messages=_as_constrained(request.messages, None)), None
    messages = _with_prompt(_as_constrained(request.messages, reply), render_constrained_prompt(reply))
    fmt = ResponseFormat(schema=reply.schema, name=SCHEMA_NAME, strict=True)
    return dataclasses.replace(plain, messages=messages, response_format=fmt), reply


def _with_prompt(messages: list[Message], prompt: str) -> list[Message]:
    for i, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            return [*messages[:i], SystemMessage(content=f"{message.content}\n\n{prompt}".strip()), *messages[i + 1 :]]
    return [SystemMessage(content=prompt), *messages]


def _as_constrained(messages: Sequence[Message], reply: ReplySchema | None) -> list[Message]:
    out: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            out.append(_assistant_as_json(message, reply.no_tool) if reply is not None else _assistant_as_text(message))
        elif isinstance(message, ToolResult):
            append_result_text(out, result_message_text(message))
        else:
            out.append(message)
    return out


def _assistant_as_json(message: AssistantMessage, no_tool: str = NO_TOOL) -> AssistantMessage:
    calls = [{"name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    if not calls:
        calls = [{"name": no_tool, "arguments": {ANSWER_ARGUMENT: message.text}}]
    value = {COUNT_KEY: len(calls), CALLS_KEY: calls}
    return AssistantMessage(parts=[TextPart(text=json.dumps(value, ensure_ascii=False))])


def _assistant_as_text(message: AssistantMessage) -> AssistantMessage:
    return AssistantMessage(parts=[TextPart(text=message.text)] if message.text else [])


def calls_from_reply(response: Response, reply: ReplySchema) -> tuple[Response, ConstrainedReply]:
    """The reply with its JSON read back into text and `ToolCall`s, and what reading it found.

    Each call's `metadata["constrained"]` says how it was read (for `--debug`); a call whose
    arguments fail its tool's schema carries `metadata["arguments_error"]`.
    """
    found = parse_reply(response.text, reply.tools, no_tool=reply.no_tool)
    for call in found.calls:
        call.metadata["constrained"] = {"parsed": found.parsed}
    others = [p for p in response.message.parts if not isinstance(p, TextPart | ToolCall)]
    text = [TextPart(text=found.text)] if found.text else []
    parts: list[TextPart | ThinkingPart | ToolCall] = [*others, *text, *found.calls]
    stop = StopReason.TOOL_USE if found.calls and response.stop_reason == StopReason.END_TURN else response.stop_reason
    message = AssistantMessage(parts=parts, metadata=response.message.metadata)
    return dataclasses.replace(response, message=message, stop_reason=stop), found
