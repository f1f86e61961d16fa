"""OpenTelemetry spans after the GenAI semantic conventions.

toolwire records, through `opentelemetry-api` only (extra `otel`):

- `chat {model}` (kind CLIENT): one model call, streamed or not; provider, model, server,
  response id and model, finish reason, token usage, `error.type` on failure.
- `invoke_agent` (INTERNAL): one agent run; the model calls, reviews and tool executions of
  the run are its children.
- `execute_tool {name}` (INTERNAL): one tool call; call id, risk, approved, `error.type` for an
  `error` result (`tool_error`), a rejected call (`rejected`) or an unknown tool (`unknown_tool`).
- `review {name}` (INTERNAL): a reviewer deciding on a high-risk call; a `QuorumReviewer`'s
  voter model calls are its children.
- `batch_task {id}` and `gateway {route}` for batch runs and gateway requests.

Spans go to the tracer provider the application installed; without the `opentelemetry`
package, or with no SDK configured, every helper here does nothing measurable.

Prompts, replies, tool arguments and tool results are recorded only when the user opts in
with the convention's variable `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`
(read at each span, so no global switch is kept here). This module imports only `types` and
`_serialize`: every layer above may use it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any
from urllib.parse import urlsplit

from toolwire._serialize import dump_messages
from toolwire.types import Message, Response, ToolCall, ToolDefinition, ToolResult, Usage

__all__ = [
    "CONTENT_ENV",
    "ChatSpan",
    "capture_content",
    "chat_span",
    "gateway_span",
    "provider_name",
    "record_gateway",
    "record_tool_result",
    "span",
    "tool_span",
    "usage_attributes",
]

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

# gen_ai.provider.name well-known values; other providers are named as toolwire names them.
_PROVIDER_NAMES = {
    "openai-responses": "openai",
    "gemini": "gcp.gemini",
    "vertex": "gcp.vertex_ai",
}


def capture_content() -> bool:
    """Whether the user opted in to recording prompts, replies and tool contents."""
    return os.environ.get(CONTENT_ENV, "").strip().lower() in {"1", "true", "yes"}


def provider_name(provider: str) -> str:
    """The `gen_ai.provider.name` value for a toolwire provider name."""
    return _PROVIDER_NAMES.get(provider, provider)


class ChatSpan:
    """One model call's span: opened by `chat_span`, told the outcome through `record_response`."""

    __slots__ = ("_span",)

    def __init__(self, span: Any) -> None:
        self._span = span

    @property
    def recording(self) -> bool:
        """False when nobody collects spans: callers skip building attributes."""
        return self._span is not None and bool(self._span.is_recording())

    def record_response(self, response: Response) -> None:
        """Add the reply's id, model, finish reason and usage (and, opted in, its content)."""
        if not self.recording:
            return
        attributes: dict[str, Any] = {
            "gen_ai.response.finish_reasons": [response.raw_stop_reason or response.stop_reason.value],
            "toolwire.stop_reason": response.stop_reason.value,
            "toolwire.tool_calls": len(response.tool_calls),
        }
        if response.id:
            attributes["gen_ai.response.id"] = response.id
        if response.model:
            attributes["gen_ai.response.model"] = response.model
        attributes.update(usage_attributes(response.usage))
        if capture_content():
            attributes["gen_ai.output.messages"] = _json(dump_messages([response.message]))
        self._span.set_attributes(attributes)


def usage_attributes(usage: Usage | None) -> dict[str, int]:
    """Token counts as GenAI attributes (only those the provider reported)."""
    if usage is None:
        return {}
    pairs = (
        ("gen_ai.usage.input_tokens", usage.input_tokens),
        ("gen_ai.usage.output_tokens", usage.output_tokens),
        ("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens),
        ("toolwire.usage.reasoning_tokens", usage.reasoning_tokens),
    )
    return {name: value for name, value in pairs if value is not None}


def chat_span(
    *,
    provider: str,
    model: str,
    url: str | None = None,
    messages: Sequence[Message] = (),
    tools: Sequence[ToolDefinition] = (),
    max_tokens: int | None = None,
    temperature: float | None = None,
    stream: bool = False,
) -> AbstractContextManager[ChatSpan]:
    """Open the `chat {model}` span around one model call.

    The span is not made current: a stream's events are consumed by the caller between
    yields, and nothing toolwire does inside a model call has spans of its own. When nothing
    is recorded it costs a `nullcontext` (this runs for every model call).
    """
    tracer = _tracer()
    if tracer is None:
        return nullcontext(ChatSpan(None))
    return _chat_span(tracer, provider, model, url, messages, tools, max_tokens, temperature, stream)


@contextmanager
def _chat_span(
    tracer: Any,
    provider: str,
    model: str,
    url: str | None,
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition],
    max_tokens: int | None,
    temperature: float | None,
    stream: bool,
) -> Iterator[ChatSpan]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider_name(provider),
        "gen_ai.request.model": model,
        "toolwire.provider": provider,
        "toolwire.stream": stream,
    }
    attributes.update(_server_attributes(url))
    if max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = max_tokens
    if temperature is not None:
        attributes["gen_ai.request.temperature"] = temperature
    if capture_content():
        attributes["gen_ai.input.messages"] = _json(dump_messages(list(messages)))
        if tools:
            attributes["gen_ai.tool.definitions"] = _json([_definition(t) for t in tools])
    otel_span = tracer.start_span(f"chat {model}", kind=_otel().SpanKind.CLIENT, attributes=attributes)
    try:
        yield ChatSpan(otel_span)
    except BaseException as exc:
        _fail(otel_span, exc)
        raise
    finally:
        otel_span.end()


@contextmanager
def span(name: str, attributes: dict[str, Any] | None = None, *, kind: str = "INTERNAL") -> Iterator[Any]:
    """A span (INTERNAL unless `kind` says) made current for its block (agent runs, reviews, batch tasks).

    Yields the OpenTelemetry span, or `None` when nothing is recorded; an exception marks it
    failed with `error.type` and passes through.
    """
    tracer = _tracer()
    if tracer is None:
        yield None
        return
    with tracer.start_as_current_span(
        name,
        kind=getattr(_otel().SpanKind, kind),
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as otel_span:
        try:
            yield otel_span if otel_span.is_recording() else None
        except BaseException as exc:
            _fail(otel_span, exc)
            raise


def gateway_span(method: str, path: str, attributes: dict[str, Any]) -> AbstractContextManager[Any]:
    """The SERVER span of one gateway request (`POST /v1/messages`), current for its block.

    The upstream call's `chat {model}` span nests under it. Yields the span, or `None` when
    nothing is recorded (then at the cost of a `nullcontext`: this runs for every request);
    close the request's facts in with `record_gateway`.
    """
    if _tracer() is None:
        return nullcontext()
    attributes = {"http.request.method": method, "url.path": path, "http.route": path, **attributes}
    return span(f"{method} {path}", attributes, kind="SERVER")


def record_gateway(otel_span: Any, status: int, attributes: dict[str, Any]) -> None:
    """The reply's status and what the request became (route, upstream, tokens) on its span."""
    if otel_span is None:
        return
    otel_span.set_attribute("http.response.status_code", status)
    otel_span.set_attributes({k: v for k, v in attributes.items() if v is not None})
    if status >= 500:  # HTTP server conventions: only server errors fail a server span
        otel_span.set_attribute("error.type", str(status))
        otel_span.set_status(_otel().Status(_otel().StatusCode.ERROR, str(status)))


@contextmanager
def tool_span(call: ToolCall, *, risk: str, description: str | None = None) -> Iterator[Any]:
    """The `execute_tool {name}` span; close it with `record_tool_result`."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function",
        "toolwire.tool.risk": risk,
    }
    if description:
        attributes["gen_ai.tool.description"] = description
    with span(f"execute_tool {call.name}", attributes) as otel_span:
        if otel_span is not None and capture_content():
            otel_span.set_attribute("gen_ai.tool.call.arguments", _json(call.arguments))
        yield otel_span


def record_tool_result(otel_span: Any, result: ToolResult, *, approved: bool, error_type: str | None = None) -> None:
    """Finish a tool span: approved or not, and `error.type` when the call failed or did not run."""
    if otel_span is None:
        return
    otel_span.set_attribute("toolwire.tool.approved", approved)
    otel_span.set_attribute("toolwire.tool.result_kind", result.kind)
    if error_type is None and result.kind == "error":
        error_type = "tool_error"
    if error_type is not None:
        otel_span.set_attribute("error.type", error_type)
        otel_span.set_status(_otel().Status(_otel().StatusCode.ERROR))
    if capture_content():
        otel_span.set_attribute("gen_ai.tool.call.result", _json(dump_messages([result])[0].get("value")))


@functools.cache
def _otel() -> Any:
    """`opentelemetry.trace`, imported on first use (it costs ~10 ms), or None without the extra."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace


def _tracer() -> Any:
    """The tracer, or None while no tracer provider is set (every span would be a no-op).

    Asked on every call, so a provider set later (the SDK, `opentelemetry-instrument`) is used
    from then on; until then a model call skips ~20 µs of attributes and a no-op span.
    """
    trace = _otel()
    if trace is None:
        return None
    # While none is set, `get_tracer_provider` looks for a provider named in the environment,
    # a `KeyError` raised and caught each time (twice a gateway request); the API's own global
    # says first whether one is set, the environment is read once.
    if getattr(trace, "_TRACER_PROVIDER", _UNKNOWN) is None and not _provider_in_environment():
        return None
    if isinstance(trace.get_tracer_provider(), (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    return trace.get_tracer("toolwire")


_UNKNOWN = object()  # the API keeps its provider elsewhere: ask it


@functools.cache
def _provider_in_environment() -> bool:
    """Whether `OTEL_PYTHON_TRACER_PROVIDER` names a provider (read once, as the SDK reads its settings)."""
    return "OTEL_PYTHON_TRACER_PROVIDER" in os.environ


def _fail(otel_span: Any, exc: BaseException) -> None:
    if isinstance(exc, GeneratorExit):
        return  # the caller stopped reading a stream: not a failure of the call
    error_type = "cancelled" if isinstance(exc, asyncio.CancelledError) else type(exc).__qualname__
    otel_span.set_attribute("error.type", error_type)
    otel_span.set_status(_otel().Status(_otel().StatusCode.ERROR, error_type))


def _server_attributes(url: str | None) -> dict[str, Any]:
    if not url:
        return {}
    parts = urlsplit(url)
    attributes: dict[str, Any] = {}
    if parts.hostname:
        attributes["server.address"] = parts.hostname
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    if port is not None:
        attributes["server.port"] = port
    return attributes


def _definition(tool: ToolDefinition) -> dict[str, Any]:
    return {"type": "function", "name": tool.name, "description": tool.description, "parameters": tool.parameters}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
