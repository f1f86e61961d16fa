"""The `openai` codec: OpenAI Chat Completions (`POST /v1/chat/completions`) and the servers that copy it.

The same codec serves vLLM, llama.cpp's `llama-server`, LM Studio and Ollama's OpenAI-compatible
endpoint, each through its `OpenAIProfile`. Rooms: `requests` (bodies both ways), `messages`
(the history inside them), `replies`, `stream_decoder`, `stream_encoder`, `profiles`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from toolwire.codecs.common.stream_encoding import replay
from toolwire.codecs.common.wire import object_or_empty
from toolwire.codecs.openai.content_filter import FILTERED, prompt_filter_error, reply_categories, reply_filter_error
from toolwire.codecs.openai.messages import NAME
from toolwire.codecs.openai.profiles import PROFILES, OpenAIProfile
from toolwire.codecs.openai.replies import decode_response, encode_response
from toolwire.codecs.openai.requests import ChatRequests
from toolwire.codecs.openai.stream_decoder import OpenAIStreamDecoder
from toolwire.codecs.openai.stream_encoder import OpenAIStreamEncoder
from toolwire.errors import BadRequestError, ToolwireError
from toolwire.schema import SchemaSupport
from toolwire.types import Request, Response, ToolCall

__all__ = ["CODEC", "PROFILES", "OpenAICodec", "OpenAIProfile"]


class OpenAICodec:
    """Chat Completions, shaped by one server's `OpenAIProfile`.

    Each instance warns once about each feature its server lacks.
    """

    name = NAME
    respelled = frozenset({"max_tokens", "max_completion_tokens"})
    """`extra` keys that only keep the caller's spelling of `max_tokens`, for an exact round trip."""

    def __init__(self, profile: OpenAIProfile = PROFILES["openai"]) -> None:
        self.profile = profile
        self._requests = ChatRequests(profile)

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the exact JSON body for `request`."""
        return self._requests.encode(request)

    @property
    def verbatim(self) -> bool:
        """Whether a client's body may reach this server unchanged (no quirk to apply on the way)."""
        return self.profile.verbatim

    @property
    def schema_support(self) -> SchemaSupport:
        """What this server's constrained decoding enforces of a JSON Schema (its profile says)."""
        return self.profile.schema_support

    @property
    def output_strategies(self) -> tuple[str, ...]:
        """The output strategies this server supports, its default first (its profile says)."""
        return self.profile.output_strategies

    @property
    def preferred_tool_mode(self) -> str:
        """The tool mode that works with any model on this server (its profile says)."""
        return self.profile.tool_mode

    def unstreamable(self, request: Request) -> str | None:
        """Why this server cannot stream `request` (its profile says so), or `None` when it can."""
        return self._requests.unstreamable(request)

    def decode_request(self, body: dict[str, Any]) -> Request:
        """Read a request body back; keys toolwire does not model go to `Request.extra`."""
        return self._requests.decode(body)

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a `chat.completion` body; an error body raises `ProviderError`.

        With the profile's `content_filter_errors`, a `content_filter` stop raises `ContentFilterError`.
        """
        response = decode_response(body)
        if self.profile.content_filter_errors and response.raw_stop_reason == FILTERED:
            raise reply_filter_error(self.profile.name, reply_categories(body), body)
        return self._own_ids(response)

    def stream_decoder(self) -> OpenAIStreamDecoder:
        """Return a fresh decoder for one `chat.completion.chunk` stream."""
        return OpenAIStreamDecoder(
            content_filter_errors=self.profile.content_filter_errors,
            original_id=self._requests.call_ids.original,
            server=self.profile.name,
        )

    def refine_error(self, error: ToolwireError) -> ToolwireError:
        """A more specific error for what this server's error body says (Azure's filtered prompt)."""
        if self.profile.content_filter_errors and isinstance(error, BadRequestError):
            typed = prompt_filter_error(self.profile.name, error.body, error.status, error.request_id)
            if typed is not None:
                return typed
        return error

    def failed_generation(self, error: ToolwireError) -> str | None:
        """The model's own text when the server could not parse its tool call (Groq's `tool_use_failed`)."""
        if not (self.profile.failed_generation and isinstance(error, BadRequestError)):
            return None
        wire = object_or_empty(object_or_empty(error.body).get("error"))
        text = wire.get("failed_generation")
        return text if wire.get("code") == "tool_use_failed" and isinstance(text, str) else None

    def _own_ids(self, response: Response) -> Response:
        """The reply with any id this codec rewrote back as its caller wrote it."""
        original = self._requests.call_ids.original
        parts = [
            dataclasses.replace(p, id=original(p.id)) if isinstance(p, ToolCall) and original(p.id) != p.id else p
            for p in response.message.parts
        ]
        if all(a is b for a, b in zip(parts, response.message.parts, strict=True)):
            return response
        return dataclasses.replace(response, message=dataclasses.replace(response.message, parts=parts))

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as a `chat.completion` body."""
        return encode_response(response)

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> OpenAIStreamEncoder:
        """A fresh encoder turning neutral stream events into `chat.completion.chunk`s as they come."""
        return OpenAIStreamEncoder(model, response_id)

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as `chat.completion.chunk` objects (without the `[DONE]` marker)."""
        return replay(OpenAIStreamEncoder(reply=response), response)


CODEC = OpenAICodec()
