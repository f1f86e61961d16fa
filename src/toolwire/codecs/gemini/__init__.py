"""Gemini codec: the `generateContent` body shared by the Gemini API (`v1beta`) and Vertex AI.

Owns every Gemini quirk (docs/wire-formats.md, Gemini): `contents` with roles `user`/`model` only, a
history that starts with a user turn, `systemInstruction`, one `functionDeclarations` tool,
`toolConfig.functionCallingConfig` sent only with tools, tool results as `functionResponse`
parts grouped in one `user` content (never beside user text, as many as the turn's calls),
call ids echoed only when Gemini issued them, and `thoughtSignature`s returned on the part
they came with — the first call of each step of the current turn always carries one.
Rooms: `requests` (bodies both ways), `replies`, `stream_decoder` (with `partial_arguments`
for Vertex's streamed arguments), `stream_encoder`, and `fields` (values they all share).

Degradations (each logged once per codec instance): `parallel_tool_calls=False` (Gemini has no
switch) and `ToolDefinition.strict` (Gemini's `VALIDATED` mode is request-wide; pass it in
`extra`) are not sent; images given by URL inside tool results go as `fileData`, which only
Vertex AI accepts there. Results that answer no call of the preceding turn are dropped and calls
left unanswered get an `error` response, because Gemini rejects a turn whose response count
differs from its call count. A system message from the middle of a conversation joins the
others at the end of `systemInstruction` (Gemini takes instructions nowhere else; logged once).

Decoding reads `parametersJsonSchema` (or the OpenAPI `parameters`) into tool definitions and
`functionCallingConfig` mode `VALIDATED` as tool choice `auto`; what has no neutral form
(`responseJsonSchema`, `googleSearch`/`codeExecution` tools, `executableCode` parts,
`thinkingConfig`...) stays in `Request.extra` for Gemini and is logged once when it is a tool,
a declaration field or a part.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.stream_encoding import replay
from toolwire.codecs.gemini.fields import NAME
from toolwire.codecs.gemini.replies import decode_response, encode_response
from toolwire.codecs.gemini.requests import SKIP_THOUGHT_SIGNATURE, GeminiRequests, SchemaField
from toolwire.codecs.gemini.stream_decoder import GeminiStreamDecoder
from toolwire.codecs.gemini.stream_encoder import GeminiStreamEncoder
from toolwire.types import Request, Response

__all__ = ["CODEC", "SKIP_THOUGHT_SIGNATURE", "GeminiCodec", "GeminiStreamDecoder"]


class GeminiCodec:
    """Translates between the neutral format and Gemini's `generateContent` JSON.

    Args:
        schema_field: Where tool schemas go. `"parametersJsonSchema"` (default) sends the JSON
            Schema as is — what current models accept and pydantic-ai sends; `"parameters"`
            sends Gemini's OpenAPI subset via `toolwire.schema.gemini_schema`, for Live, older
            models and pinned Vertex versions. The two fields are mutually exclusive.
    """

    name = NAME
    output_strategies: tuple[str, ...] = ("native", "tool", "prompted")  # responseJsonSchema

    def __init__(self, schema_field: SchemaField = "parametersJsonSchema") -> None:
        self._requests = GeminiRequests(schema_field)
        self.schema_field: SchemaField = schema_field

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the `generateContent` body (the model goes in the URL, not the body)."""
        return self._requests.encode(request)

    def decode_request(self, body: dict[str, Any]) -> Request:
        """Read a body back; whatever the neutral form cannot hold goes to `Request.extra`.

        The body's own `model` key, if any, becomes `Request.model` (Gemini normally takes
        the model from the URL, so it is usually `""`).
        """
        return self._requests.decode(body)

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a `GenerateContentResponse`; raises `ProviderError` for an error payload."""
        return decode_response(body)

    def stream_decoder(self) -> GeminiStreamDecoder:
        """A fresh decoder for one `streamGenerateContent?alt=sse` response."""
        return GeminiStreamDecoder()

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as Gemini's non-streaming body."""
        return encode_response(response)

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> GeminiStreamEncoder:
        """A fresh encoder turning neutral stream events into Gemini stream chunks as they come."""
        return GeminiStreamEncoder(model, response_id)

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as Gemini's stream chunks."""
        return replay(GeminiStreamEncoder(reply=response), response)


CODEC = GeminiCodec()
