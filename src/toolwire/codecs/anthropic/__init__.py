"""Anthropic Messages API codec (`POST /v1/messages`, `anthropic-version: 2023-06-01`).

Owns every Anthropic quirk (docs/wire-formats.md, Anthropic): top-level `system`, required `max_tokens`, tool
results first in the next user message, thinking replayed with its signature, ids limited to
`^[a-zA-Z0-9_-]+$`, the block-indexed stream. Rooms: `requests` (bodies both ways),
`replies`, `stream_decoder`, `stream_encoder`.

Round trips: `decode_request` always sets `Request.max_tokens` from the body, so a request
encoded with the default (`DEFAULT_MAX_TOKENS`) comes back with it explicit — re-encoding gives
the identical body. A `data` result comes back as a `text` result holding the same JSON text.
Call ids are made unique across the conversation (servers that reuse `call_0` would otherwise be
rejected), results rewritten to match.

System messages: the leading ones form the top-level `system`; a `SystemMessage` later in the
conversation goes in place as a `role: "system"` message when the model takes them (Claude Opus
4.8 and later, right after a user turn), and otherwise joins the top-level `system`, logged
once. `requests` says what is kept of each newer request field and what is dropped.

`temperature` is sent only when `Request.temperature` is set. API version 2023-06-01, which the
transport pins, accepts it; 2026-10-21 rejects every sampling parameter, and some newer models
reject a non-default temperature even under 2023-06-01 — leave it unset for those.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.anthropic.profiles import PROFILES, AnthropicProfile
from toolwire.codecs.anthropic.replies import decode_response, encode_response
from toolwire.codecs.anthropic.requests import DEFAULT_MAX_TOKENS, NAME, decode_request, encode_request
from toolwire.codecs.anthropic.stream_decoder import AnthropicStreamDecoder
from toolwire.codecs.anthropic.stream_encoder import AnthropicStreamEncoder
from toolwire.codecs.common.stream_encoding import replay
from toolwire.types import Request, Response

__all__ = ["CODEC", "DEFAULT_MAX_TOKENS", "PROFILES", "AnthropicCodec", "AnthropicProfile", "AnthropicStreamDecoder"]


class AnthropicCodec:
    """The `anthropic` codec: Messages API bodies and stream events to and from neutral types."""

    name: str = NAME
    # A forced tool works on every Claude model; `output_config.format` only on those with structured outputs.
    output_strategies: tuple[str, ...] = ("tool", "native", "prompted")

    def __init__(self, profile: AnthropicProfile = PROFILES["anthropic"]) -> None:
        self.profile = profile

    @property
    def verbatim(self) -> bool:
        """Whether a client's Messages body may reach this host unchanged (not Vertex's: no model in it)."""
        return self.profile.model_in_body and self.profile.body_version is None

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the exact `/v1/messages` body; `max_tokens` defaults to `DEFAULT_MAX_TOKENS`.

        The profile may move the model to the URL and put the API version in the body (Vertex AI,
        Bedrock), or leave streaming to the path (Bedrock).
        """
        body = encode_request(request)
        if not self.profile.model_in_body:
            del body["model"]
        if not self.profile.stream_in_body:
            body.pop("stream", None)
        if self.profile.body_version is not None:
            body = {"anthropic_version": self.profile.body_version, **body}
        return body

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a Message body; an `{"type": "error"}` body raises `ProviderError`."""
        return decode_response(body)

    def stream_decoder(self) -> AnthropicStreamDecoder:
        """Return a fresh decoder for one streamed reply."""
        return AnthropicStreamDecoder()

    def decode_request(self, body: dict[str, Any]) -> Request:
        """Read a `/v1/messages` body back; grouped results split into `ToolResult`s then user text."""
        return decode_request(body)

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as a Message body."""
        return encode_response(response)

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> AnthropicStreamEncoder:
        """A fresh encoder turning neutral stream events into Anthropic Messages stream events as they come."""
        return AnthropicStreamEncoder(model, response_id)

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as stream event data objects, `message_start` to `message_stop`."""
        return replay(AnthropicStreamEncoder(reply=response), response)


CODEC = AnthropicCodec()
