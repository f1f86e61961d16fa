"""What the OpenAI-compatible clouds do differently, for `ScriptedServer(..., dialect=NAME)`.

Each dialect refuses what the real service refuses, in its own words (Mistral's id rule, DeepSeek's
missing `reasoning_content`, Cohere's `stream_options`, Azure's `api-key`), and shapes replies as
the service does (Azure's filter-result chunks, OpenRouter's SSE comment lines). The turn helpers
script the failures peers mishandle: `azure_filtered_prompt`, `azure_filtered_reply`,
`groq_tool_use_failed`, `openrouter_stream_error`. Standard library only.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolwire.testing._script import ErrorReply, RawReply, Turn
from toolwire.types import Request

__all__ = [
    "DIALECTS",
    "Dialect",
    "azure_filtered_prompt",
    "azure_filtered_reply",
    "groq_tool_use_failed",
    "openrouter_stream_error",
]

Event = dict[str, Any] | str  # a stream chunk, or raw SSE text written as it is (a comment line)


def _nothing(path: str, headers: Mapping[str, str], body: Any) -> ErrorReply | None:
    return None


def _same_reply(body: dict[str, Any]) -> dict[str, Any]:
    return body


def _same_stream(events: list[dict[str, Any]]) -> list[Event]:
    return list(events)


@dataclass(frozen=True, slots=True)
class Dialect:
    """One service's differences from plain Chat Completions, as a test server plays them.

    Attributes:
        name: The provider name (`connect("<name>:model")`).
        refuse: `(path, headers, body) -> ErrorReply | None`: the service's own refusal of a request.
        reply: Shapes a whole `chat.completion` body.
        stream: Shapes the chunks of a stream (it may add raw SSE text).
    """

    name: str
    refuse: Callable[[str, Mapping[str, str], Any], ErrorReply | None] = _nothing
    reply: Callable[[dict[str, Any]], dict[str, Any]] = _same_reply
    stream: Callable[[list[dict[str, Any]]], list[Event]] = field(default=_same_stream)


def _openai_error(status: int, message: str, kind: str, code: str | None = None) -> ErrorReply:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return ErrorReply(status=status, body=body)


def _messages(body: Any) -> list[dict[str, Any]]:
    messages = body.get("messages") if isinstance(body, dict) else None
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


# Mistral

_MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")


def _mistral_refuse(path: str, headers: Mapping[str, str], body: Any) -> ErrorReply | None:
    messages = _messages(body)
    for message in messages:
        ids = [c.get("id") for c in message.get("tool_calls") or []] + [message.get("tool_call_id")]
        for call_id in ids:
            if call_id is not None and not _MISTRAL_ID.fullmatch(str(call_id)):
                text = f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9."
                return ErrorReply(
                    status=400, body={"object": "error", "message": text, "type": "invalid_function_call"}
                )
    for before, after in itertools.pairwise(messages):
        if before.get("role") == "tool" and after.get("role") == "user":
            text = "Unexpected role 'user' after role 'tool'"
            return ErrorReply(status=400, body={"object": "error", "message": text, "type": "invalid_request_error"})
    if isinstance(body, dict) and body.get("tool_choice") == "required":
        return _openai_error(422, "tool_choice: Input should be 'auto', 'none' or 'any'", "invalid_request_error")
    return None


# DeepSeek


def _deepseek_refuse(path: str, headers: Mapping[str, str], body: Any) -> ErrorReply | None:
    # Thinking mode (deepseek-reasoner) wants each assistant turn's reasoning back beside its calls.
    if not (isinstance(body, dict) and "reasoner" in str(body.get("model"))):
        return None
    for index, message in enumerate(_messages(body)):
        if message.get("role") == "assistant" and message.get("tool_calls") and "reasoning_content" not in message:
            text = f"Missing `reasoning_content` field in the assistant message at message index {index}."
            return _openai_error(400, text, "invalid_request_error", "invalid_request_error")
    return None


# Cohere


def _cohere_refuse(path: str, headers: Mapping[str, str], body: Any) -> ErrorReply | None:
    if isinstance(body, dict) and "stream_options" in body:
        return ErrorReply(status=400, body={"message": "invalid request: 'stream_options' is not supported"})
    return None


# Azure OpenAI

_QUIET = {"filtered": False, "severity": "safe"}
_CATEGORIES = ("hate", "self_harm", "sexual", "violence")


def _filter_results(filtered: tuple[str, ...] = ()) -> dict[str, Any]:
    return {c: ({"filtered": True, "severity": "high"} if c in filtered else dict(_QUIET)) for c in _CATEGORIES}


def _azure_refuse(path: str, headers: Mapping[str, str], body: Any) -> ErrorReply | None:
    if "api-key" not in headers and not headers.get("authorization", "").startswith("Bearer "):
        message = "Access denied due to missing subscription key. Make sure to include the api-key header."
        return ErrorReply(status=401, body={"error": {"code": "401", "message": message}})
    if "/deployments/" in path and "api-version=" not in path:
        return ErrorReply(status=404, body={"error": {"code": "404", "message": "Resource not found"}})
    return None


def _azure_reply(body: dict[str, Any]) -> dict[str, Any]:
    for choice in body.get("choices") or []:
        choice.setdefault("content_filter_results", _filter_results())
    return {**body, "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": _filter_results()}]}


def _azure_stream(events: list[dict[str, Any]]) -> list[Event]:
    """A prompt-filter chunk first (`choices: []`, empty id and model), a filter-only chunk after each piece."""
    first: dict[str, Any] = {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [],
    }
    first["prompt_filter_results"].append({"prompt_index": 0, "content_filter_results": _filter_results()})
    shaped: list[Event] = [first]
    for event in events:
        shaped.append(event)
        if any(isinstance(c, dict) and c.get("finish_reason") for c in event.get("choices") or []):
            continue
        offsets = {"check_offset": 0, "start_offset": 0, "end_offset": 1}
        choice = {"index": 0, "finish_reason": None, "content_filter_results": _filter_results()}
        shaped.append({**event, "choices": [{**choice, "content_filter_offsets": offsets}]})
    return shaped


# OpenRouter


def _openrouter_stream(events: list[dict[str, Any]]) -> list[Event]:
    return [": OPENROUTER PROCESSING\n\n", *events]


DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        Dialect("azure", refuse=_azure_refuse, reply=_azure_reply, stream=_azure_stream),
        Dialect("mistral", refuse=_mistral_refuse),
        Dialect("deepseek", refuse=_deepseek_refuse),
        Dialect("cohere", refuse=_cohere_refuse),
        Dialect("openrouter", stream=_openrouter_stream),
        Dialect("groq"),
    )
}


# scripted failures


def azure_filtered_prompt(*categories: str) -> ErrorReply:
    """Azure's HTTP 400 for a prompt its content filter blocked, naming `categories`."""
    result = _filter_results(categories)
    message = (
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
        "Please modify your prompt and retry."
    )
    inner = {"code": "ResponsibleAIPolicyViolation", "content_filter_result": result}
    error = {"message": message, "type": None, "param": "prompt", "code": "content_filter", "status": 400}
    return ErrorReply(status=400, body={"error": {**error, "innererror": inner}})


def azure_filtered_reply(text: str, *categories: str) -> Callable[[Request], Turn]:
    """A reply Azure's filter stops after `text`: `finish_reason: "content_filter"`, whole or streamed."""

    def answer(request: Request) -> Turn:
        results = _filter_results(categories)
        head = {"id": "chatcmpl-filtered", "created": 0, "model": request.model}
        if not request.stream:
            message = {"role": "assistant", "content": text}
            choice = {
                "index": 0,
                "message": message,
                "finish_reason": "content_filter",
                "content_filter_results": results,
            }
            return RawReply(
                body=json.dumps({**head, "object": "chat.completion", "choices": [choice]}),
                content_type="application/json",
            )
        chunk = {**head, "object": "chat.completion.chunk"}
        lines = [
            {
                **chunk,
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}],
            },
            {**chunk, "choices": [{"index": 0, "finish_reason": None, "content_filter_results": results}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "content_filter"}]},
        ]
        return RawReply(body="".join(f"data: {json.dumps(line)}\n\n" for line in lines) + "data: [DONE]\n\n")

    return answer


def groq_tool_use_failed(text: str) -> ErrorReply:
    """Groq's HTTP 400 for a tool call its server could not parse, the model's raw `text` in `failed_generation`."""
    message = "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details."
    error = {"message": message, "type": "invalid_request_error", "code": "tool_use_failed", "failed_generation": text}
    return ErrorReply(status=400, body={"error": error})


def openrouter_stream_error(text: str, code: int, message: str) -> RawReply:
    """An OpenRouter stream that fails after it started: HTTP 200, `text`, then an `error` event."""
    head = {"id": "gen-1", "object": "chat.completion.chunk", "created": 0, "model": "openrouter/scripted"}
    first = {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]}
    failed = {
        **head,
        "error": {"code": code, "message": message},
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
    }
    body = ": OPENROUTER PROCESSING\n\n" + "".join(f"data: {json.dumps(e)}\n\n" for e in (first, failed))
    return RawReply(body=body)
