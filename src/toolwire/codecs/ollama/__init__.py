"""Ollama native chat codec (`POST /api/chat`, the NDJSON API of ollama/ollama `api/types.go`).

Owns the Ollama quirks (docs/wire-formats.md, Ollama): `stream` defaults to true on the server, so it is
always sent; there is no `tool_choice` and no parallel switch (degraded with one warning per
codec instance); tool results link back by `tool_name`, not by id; arguments are objects; tool
calls arrive whole in a stream; a tool turn ends with `done_reason: "stop"`. Rooms:
`requests`, `replies`, `stream_decoder`, `stream_encoder`, and `calls` (calls and their ids).

Call ids: the server's `id` (`call_` + 8 characters, current builds) is kept as the call id and
recorded in `metadata["ollama"]["id"]`; only such ids are sent back. Older servers send no id:
the codec then derives one from the reply's `model` and `created_at` and the call's position
(`common.ids.derived_call_id`), so identical calls get different ids and decoding the same reply
twice gives the same ids. In a stream the seed is the `created_at` of the stream's first line
(known before any call arrives), which is what a non-streamed body's `created_at` stands for;
the seed is kept in `message.metadata["ollama"]["created_at"]` so the reply can be re-rendered.
Without a `created_at` the id is random.

Round trips: `decode_request` reads every tool message as a `text` result (or `multimodal`
when it has images), except an `error` result, recognised by its exact JSON form
`{"error":"..."}`; re-encoding gives the identical body.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.stream_encoding import replay
from toolwire.codecs.ollama.calls import NAME
from toolwire.codecs.ollama.replies import decode_response, encode_response
from toolwire.codecs.ollama.requests import decode_request, encode_request
from toolwire.codecs.ollama.stream_decoder import OllamaStreamDecoder
from toolwire.codecs.ollama.stream_encoder import OllamaStreamEncoder
from toolwire.schema import PORTABLE, SchemaSupport
from toolwire.types import Request, Response

__all__ = ["CODEC", "OllamaCodec", "OllamaStreamDecoder"]


class OllamaCodec:
    """The `ollama` codec: `/api/chat` bodies and NDJSON lines to and from neutral types.

    Degradations (tool choice, parallel switch, image URLs) are logged once per codec instance.
    """

    name: str = NAME
    # `format` takes the schema and Ollama decodes under it (a grammar): native and constrained both hold.
    output_strategies: tuple[str, ...] = ("native", "constrained", "prompted", "tool")
    schema_support: SchemaSupport = PORTABLE
    """What `format` (a JSON Schema) enforces. Its server drops nested `$ref`s (docs/wire-formats.md, Ollama):
    toolwire writes them out in every schema it sends."""

    def __init__(self) -> None:
        self._warned: set[str] = set()

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the exact `/api/chat` body; `stream` is always explicit (the server defaults to true)."""
        return encode_request(request, self._warned)

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a non-streamed reply; an `{"error": ...}` body raises `ProviderError`."""
        return decode_response(body)

    def stream_decoder(self) -> OllamaStreamDecoder:
        """Return a fresh decoder for one streamed reply."""
        return OllamaStreamDecoder()

    def decode_request(self, body: dict[str, Any]) -> Request:
        """Read an `/api/chat` body back; tool messages pair with calls by `tool_name` and order."""
        return decode_request(body)

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as a non-streamed `/api/chat` body."""
        return encode_response(response)

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> OllamaStreamEncoder:
        """A fresh encoder turning neutral stream events into Ollama NDJSON lines as they come."""
        return OllamaStreamEncoder(model, response_id)

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as NDJSON lines: thinking, content, whole calls, then the `done` line."""
        return replay(OllamaStreamEncoder(reply=response), response)


CODEC = OllamaCodec()
