"""Constrained mode over a neutral request: what is sent, and how the reply comes back.

The model gets no `tools` parameter. The tools are described in the system prompt as small open
models learned them for function calling (APIGen's prompt, which SmolLM2's chat template uses:
the tools as a JSON list, the calls as a JSON list, `[]` for none); the reply schema goes as
`Request.response_format`, strict (each codec and server profile sends it in its own form:
`OpenAIProfile.schema_form`); the history is rewritten in the same shape: the model's earlier
calls as such lists, its earlier answers as text, tool results as user text. When the model
calls nothing, `answer_request` is the plain request its answer comes from. The history itself
stays neutral; only what is sent changes, as in text mode.

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
from toolwire.constrained._schema import ReplySchema, reply_schema
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
    Usage,
)

__all__ = [
    "SCHEMA_NAME",
    "answer_request",
    "calls_from_reply",
    "constrained_request",
    "render_constrained_prompt",
    "with_usage_of",
]

SCHEMA_NAME = "tool_reply"
_CALL_EXAMPLE = '{"name": "func_name1", "arguments": {"argument1": "value1", "argument2": "value2"}}'


def render_constrained_prompt(reply: ReplySchema) -> str:
    """The system-prompt section that lists the tools (as JSON) and the reply format.

    Word for word the prompt small models were tuned on for function calling, less what
    `tool_choice` rules out: its example is a placeholder, which a small model would copy if it
    were a concrete call.
    """
    tools = [_tool_json(tool) for tool in reply.tools]
    no_call = " If no function call is needed, please make the tool calls an empty list '[]'."
    lines = [
        "You are an expert in composing functions. You are given a question and a set of possible functions.",
        "Based on the question, you will need to make one or more function/tool calls to achieve the purpose.",
        *(["If none of the functions can be used, point it out and refuse to answer."] if reply.answer_allowed else []),
        "If the given question lacks the parameters required by the function, also point it out.",
        "You have access to the following tools:",
        f"<tools>{json.dumps(tools)}</tools>",
        "The output MUST strictly adhere to the following format, and NO other text MUST be included.",
        "The example format is as follows. Please make sure the parameter type is correct."
        + (no_call if reply.answer_allowed else ""),
        "<tool_call>[",
        f"{_CALL_EXAMPLE}," if reply.max_calls > 1 else _CALL_EXAMPLE,
        *(["(more tool calls as required)"] if reply.max_calls > 1 else []),
        "]</tool_call>",
    ]
    return "\n".join(lines)


def _tool_json(tool: ToolDefinition) -> dict[str, Any]:
    described = {"description": tool.description} if tool.description else {}
    return {"name": tool.name, **described, "parameters": tool.parameters}


def constrained_request(request: Request, support: SchemaSupport = PORTABLE) -> tuple[Request, ReplySchema | None]:
    """The request as constrained mode sends it, and the reply schema it asks for.

    With no tools, or `tool_choice="none"`, nothing is constrained: the request goes as
    `answer_request` makes it (the model answers in plain text) and the schema is None.
    """
    reply = reply_schema(
        request.tools, request.tool_choice, parallel_tool_calls=request.parallel_tool_calls, support=support
    )
    plain = answer_request(request)
    if reply is None:
        return plain, None
    messages = _with_prompt(plain.messages, render_constrained_prompt(reply))
    fmt = ResponseFormat(schema=reply.schema, name=SCHEMA_NAME, strict=True)
    return dataclasses.replace(plain, messages=messages, response_format=fmt), reply


def answer_request(request: Request) -> Request:
    """The request a final answer comes from: no tools, no schema, the history rewritten.

    The history is written as constrained mode writes it (earlier calls as their JSON list, tool
    results as user text). Sent when the model called nothing (`ConstrainedReply.answer_due`),
    and for `tool_choice="none"`.
    """
    messages = _as_constrained(request.messages)
    return dataclasses.replace(request, messages=messages, tools=[], tool_choice=None, parallel_tool_calls=None)


def _with_prompt(messages: list[Message], prompt: str) -> list[Message]:
    for i, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            return [*messages[:i], SystemMessage(content=f"{message.content}\n\n{prompt}".strip()), *messages[i + 1 :]]
    return [SystemMessage(content=prompt), *messages]


def _as_constrained(messages: Sequence[Message]) -> list[Message]:
    out: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            out.append(_assistant_as_json(message) if message.tool_calls else _assistant_as_text(message))
        elif isinstance(message, ToolResult):
            append_result_text(out, result_message_text(message))
        else:
            out.append(message)
    return out


def _assistant_as_json(message: AssistantMessage) -> AssistantMessage:
    calls = [{"name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    return AssistantMessage(parts=[TextPart(text=json.dumps(calls, ensure_ascii=False))])


def _assistant_as_text(message: AssistantMessage) -> AssistantMessage:
    return AssistantMessage(parts=[TextPart(text=message.text)] if message.text else [])


def calls_from_reply(response: Response, reply: ReplySchema) -> tuple[Response, ConstrainedReply]:
    """The reply with its JSON read back into `ToolCall`s, and what reading it found.

    An empty list (`found.answer_due`) comes back as a reply without text or calls: the answer
    is `answer_request`'s to give.

    Each call's `metadata["constrained"]` says how it was read (for `--debug`); a call whose
    arguments fail its tool's schema carries `metadata["arguments_error"]`.
    """
    found = parse_reply(response.text, reply.tools, answer_allowed=reply.answer_allowed)
    for call in found.calls:
        call.metadata["constrained"] = {"parsed": found.parsed}
    others = [p for p in response.message.parts if not isinstance(p, TextPart | ToolCall)]
    text = [TextPart(text=found.text)] if found.text else []
    parts: list[TextPart | ThinkingPart | ToolCall] = [*others, *text, *found.calls]
    stop = StopReason.TOOL_USE if found.calls and response.stop_reason == StopReason.END_TURN else response.stop_reason
    message = AssistantMessage(parts=parts, metadata=response.message.metadata)
    # The upstream's own finish reason ("stop") no longer describes a reply that now calls tools.
    raw = response.raw_stop_reason if stop == response.stop_reason else None
    return dataclasses.replace(response, message=message, stop_reason=stop, raw_stop_reason=raw), found


def with_usage_of(answer: Response, earlier: Usage | None) -> Response:
    """`answer` with the tokens of the constrained request before it added: both were paid for."""
    if earlier is None:
        return answer
    return dataclasses.replace(answer, usage=earlier.plus(answer.usage))
