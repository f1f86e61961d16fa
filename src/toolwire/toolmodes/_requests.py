"""What each tool mode sends: the caller's neutral request rewritten for a model without a tool API.

A request decoded by the gateway may carry, in `extra`, the client's own wire copy of what these
rewrite (a tool list with hosted tools, cached system blocks, Gemini `contents`, a response
format): merged into the body last, it would undo the rewrite, so it goes.
"""

from __future__ import annotations

from dataclasses import replace

from toolwire.constrained import ReplySchema, SchemaSupport, answer_request, constrained_request
from toolwire.textcalls import to_text_messages
from toolwire.types import Request

__all__ = ["answer_sent", "constrained_sent", "text_sent"]

_TOOL_KEYS = frozenset({"tools", "tool_choice", "toolConfig"})
_PROMPT_KEYS = frozenset({"system", "systemInstruction", "instructions", "contents", "messages", "input"})
_FORMAT_KEYS = frozenset({"response_format", "format"})
_REWRITTEN = _TOOL_KEYS | _PROMPT_KEYS | _FORMAT_KEYS


def text_sent(request: Request) -> Request:
    """`request` as text mode sends it: tools in the prompt, past calls and results as text."""
    extra = {k: v for k, v in request.extra.items() if k not in _TOOL_KEYS}
    if not request.tools:
        return replace(request, extra=extra) if len(extra) != len(request.extra) else request
    extra = {k: v for k, v in extra.items() if k not in _PROMPT_KEYS}
    messages = to_text_messages(request.messages, request.tools)
    return replace(request, messages=messages, tools=[], tool_choice=None, parallel_tool_calls=None, extra=extra)


def constrained_sent(request: Request, support: SchemaSupport) -> tuple[Request, ReplySchema | None]:
    """`request` as constrained mode sends it, and the reply schema (None: nothing to constrain)."""
    if not request.tools:
        return text_sent(request), None
    return constrained_request(_without_rewritten(request), support)


def answer_sent(request: Request) -> Request:
    """The request constrained mode sends once the model called nothing: the one its answer comes from."""
    return answer_request(_without_rewritten(request))


def _without_rewritten(request: Request) -> Request:
    if not any(key in _REWRITTEN for key in request.extra):
        return request
    return replace(request, extra={k: v for k, v in request.extra.items() if k not in _REWRITTEN})
