"""AWS Bedrock Converse API codec (`POST /model/{modelId}/converse`, `/converse-stream`).

The authority for shapes and enum values is the botocore service model `bedrock-runtime`
2023-09-30 (docs/wire-formats.md, AWS Bedrock). Rooms: `blocks` (content blocks requests and
replies share), `requests` (bodies both ways), `replies`, `stream_decoder`, `stream_encoder`.

Streams: `stream_decoder().feed` takes one event in botocore's parsed form, the event type as
the only key and the payload without its padding field (`{"contentBlockDelta": {...}}`), as the
AWS event-stream framing (`toolwire.http`) hands it over; the stream encoder yields the same
form for that framing to write.

Round trips: the body has no model (it is in the path), so `decode_request` gives `model=""`.
A `data` result that is not a JSON object goes as JSON text and comes back as a `text` result.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.bedrock.blocks import NAME
from toolwire.codecs.bedrock.replies import decode_response, encode_response
from toolwire.codecs.bedrock.requests import decode_request, encode_request
from toolwire.codecs.bedrock.stream_decoder import BedrockStreamDecoder
from toolwire.codecs.bedrock.stream_encoder import BedrockStreamEncoder
from toolwire.codecs.common.stream_encoding import replay
from toolwire.types import Request, Response

__all__ = ["CODEC", "BedrockCodec", "BedrockStreamDecoder", "BedrockStreamEncoder"]


class BedrockCodec:
    """The `bedrock` codec: Converse bodies and ConverseStream events to and from neutral types."""

    name: str = NAME

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the exact Converse body (the model id goes in the path)."""
        return encode_request(request)

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a Converse reply body."""
        return decode_response(body)

    def stream_decoder(self) -> BedrockStreamDecoder:
        """Return a fresh decoder for one ConverseStream reply."""
        return BedrockStreamDecoder()

    def decode_request(self, body: dict[str, Any]) -> Request:
        """Read a Converse body back (`model=""`: the model id is in the path)."""
        return decode_request(body)

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as a Converse body."""
        return encode_response(response)

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> BedrockStreamEncoder:
        """A fresh encoder turning neutral stream events into ConverseStream events as they come."""
        return BedrockStreamEncoder(model, response_id)

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as ConverseStream events, `messageStart` to `metadata`."""
        return replay(BedrockStreamEncoder(reply=response), response)


CODEC = BedrockCodec()
