"""Whole Chat Completions replies (`chat.completion` bodies), read and rendered.

Targets openai-python 3.x `types/chat/chat_completion.py`, plus what OpenAI-compatible servers
(vLLM, llama.cpp, Ollama, Gemini's compat endpoint) really send. The stream rooms reuse the
head, usage and finish-reason helpers here.
"""

from __future__ import annotations

import time
from typing import Any

from toolwire.codecs.common.wire import require_dict
from toolwire.codecs.openai.messages import (
    NAME,
    decode_assistant,
    encode_assistant,
)
from toolwire.errors import (
    AuthenticationError,
    BadRequestError,
    CodecError,
    ProviderError,
    RateLimitError,
    ToolwireError,
)
from toolwire.types import (
    AssistantMessage,
    Response,
    StopReason,
    Usage,
)

__all__ = [
    "REPLY_REASONING_FIELD",
    "build_response",
    "decode_response",
    "decode_usage",
    "encode_response",
    "encode_usage",
    "finish_reason",
    "optional_str",
    "raise_if_error",
]

# tables

_STOP_REASONS: dict[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,  # deprecated, still documented
    "content_filter": StopReason.CONTENT_FILTER,
}
_FINISH_REASONS: dict[StopReason, str] = {
    StopReason.END_TURN: "stop",
    StopReason.MAX_TOKENS: "length",
    StopReason.TOOL_USE: "tool_calls",
    StopReason.CONTENT_FILTER: "content_filter",
}
REPLY_REASONING_FIELD = "reasoning_content"  # where a rendered reply puts unlabelled reasoning
# An error payload with an HTTP-like code, as OpenRouter sends mid-stream (`{"error": {"code": 429,
# ...}}` in a 200 stream, openrouter.ai/docs "Errors"): typed as the same status would be.
_ERROR_CODES: dict[int, type[ToolwireError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: AuthenticationError,  # OpenRouter: out of credits
    403: AuthenticationError,
    404: BadRequestError,
    422: BadRequestError,
    429: RateLimitError,
}

# decode


def decode_response(body: Any) -> Response:
    """Read a `chat.completion` body; an error body raises `ProviderError`."""
    body = require_dict(body, NAME)
    raise_if_error(body)
    choices = body.get("choices")
    if not isinstance(choices, list):
        raise CodecError(f"The openai response needs a 'choices' list, got {choices!r}.", provider=NAME)
    choice = require_dict(choices[0], NAME, "choice") if choices else {}
    wire = choice.get("message")
    message = decode_assistant(
        wire if isinstance(wire, dict) else {}, seed=optional_str(body.get("id")) or "", keep_empty=False
    )
    return build_response(message, choice.get("finish_reason"), decode_usage(body.get("usage")), body)


def decode_usage(wire: Any) -> Usage | None:
    """Read `usage`, including the cached-prompt and reasoning shares."""
    if not isinstance(wire, dict):
        return None
    prompt = wire.get("prompt_tokens_details")
    completion = wire.get("completion_tokens_details")
    return Usage(
        input_tokens=_int(wire.get("prompt_tokens")),
        output_tokens=_int(wire.get("completion_tokens")),
        cache_read_tokens=_int(prompt.get("cached_tokens")) if isinstance(prompt, dict) else None,
        reasoning_tokens=_int(completion.get("reasoning_tokens")) if isinstance(completion, dict) else None,
    )


def build_response(message: AssistantMessage, raw: Any, usage: Usage | None, head: dict[str, Any]) -> Response:
    """The neutral reply from a decoded message, its raw finish reason, usage and head (`id`, `model`)."""
    raw = optional_str(raw)
    stop = _STOP_REASONS.get(raw, StopReason.OTHER) if raw is not None else StopReason.OTHER
    if stop is StopReason.END_TURN and message.tool_calls:
        # A forced named tool answers with finish_reason "stop" (vLLM PR #25054): calls are
        # recognised by presence. Failure states (length, content_filter) are kept as they are.
        stop = StopReason.TOOL_USE
    return Response(
        message=message,
        stop_reason=stop,
        raw_stop_reason=raw,
        usage=usage,
        model=optional_str(head.get("model")),
        id=optional_str(head.get("id")),
    )


def raise_if_error(body: dict[str, Any]) -> None:
    # OpenAI nests the error under "error"; older vLLM sends {"object": "error", "message": ...}.
    """Raise the typed error for an error body or an error chunk (`ProviderError` unless its code says more)."""
    error = body.get("error")
    if error is None and body.get("object") == "error":
        error = body
    if error is None:
        return
    message = error.get("message") if isinstance(error, dict) else error
    code = error.get("code") if isinstance(error, dict) else None
    status = code if isinstance(code, int) and not isinstance(code, bool) else None
    kind = _ERROR_CODES.get(status, ProviderError) if status is not None else ProviderError
    raise kind(
        str(message or f"the server sent an error without a message: {error!r}"),
        provider=NAME,
        status=status,
        body=body,
    )


def optional_str(value: Any) -> str | None:
    """`value` if it is a str, else `None`."""
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# stream decoder


# render (for test servers and proxies)


def encode_response(response: Response) -> dict[str, Any]:
    """Render a reply as a `chat.completion` body."""
    choice = {
        "index": 0,
        "message": encode_assistant(response.message, REPLY_REASONING_FIELD, reply=True),
        "logprobs": None,
        "finish_reason": finish_reason(response),
    }
    body = {**_head(response, "chat.completion"), "choices": [choice]}
    usage = encode_usage(response.usage)
    if usage is not None:
        body["usage"] = usage
    return body


def _head(response: Response, kind: str) -> dict[str, Any]:
    head: dict[str, Any] = {"id": response.id} if response.id is not None else {}
    head.update(object=kind, created=int(time.time()))
    if response.model is not None:
        head["model"] = response.model
    return head


def finish_reason(response: Response) -> str | None:
    """The reply's own finish reason if known, else the wire word for the neutral stop reason."""
    return response.raw_stop_reason or _FINISH_REASONS.get(response.stop_reason)


def encode_usage(usage: Usage | None) -> dict[str, Any] | None:
    """Usage as Chat Completions reports it (`None` when unknown)."""
    if usage is None:
        return None
    wire: dict[str, Any] = {}
    if usage.input_tokens is not None:
        wire["prompt_tokens"] = usage.input_tokens
    if usage.output_tokens is not None:
        wire["completion_tokens"] = usage.output_tokens
    if usage.input_tokens is not None and usage.output_tokens is not None:
        wire["total_tokens"] = usage.input_tokens + usage.output_tokens
    if usage.cache_read_tokens is not None:
        wire["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_tokens}
    if usage.reasoning_tokens is not None:
        wire["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return wire
