"""Codec for the OpenAI Responses API (`POST /v1/responses`), as typed by openai-python 3.x.

Rooms: `requests` (bodies both ways), `replies`, `stream_decoder`, `stream_encoder`, and
`items` (output items both ways, shared by history and replies).

Shapes (openai-python `types/responses/*`):
- leading system messages become `instructions` (joined with a blank line), later ones
  `developer` messages in place; the rest become `input` items: user `message`s with
  `input_text`/`input_image` content, assistant `message`s with `output_text` content,
  `reasoning`, `function_call` and `function_call_output` items.
- Function tools grouped in a `namespace` tool become flat definitions named `ns__name`
  (`namespaced`), and so do calls that name a namespace; the namespace goes back apart.
  Hosted tools (`web_search`, `mcp`, `custom`...) have no neutral form: a tool list that does
  not come back identically stays in `Request.extra` for Responses, and each hosted tool is
  logged once. Unknown input items are skipped, logged once by type.
- Reasoning is replayed statelessly: a `ThinkingPart` from this codec goes back as the
  `reasoning` item it came from (id, summary, `encrypted_content`) in its original position,
  because the API pairs each reasoning item with the item that followed it (docs/wire-formats.md, OpenAI Responses).
  Asking for that content is the caller's choice, through `Request.extra`:
  `{"store": False, "include": ["reasoning.encrypted_content"]}`.
- Item ids (`msg_…`, `fc_…`, `rs_…`) are kept in metadata and sent back only when known,
  as in OpenAI's "append `response.output` to the next input" pattern. A `function_call`'s
  `call_id` is the neutral `ToolCall.id`; its item `id` lives in
  `metadata["openai-responses"]["item_id"]` — the two are never joined (pydantic-ai #3136).
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.stream_encoding import replay
from toolwire.codecs.openai_responses.items import NAME
from toolwire.codecs.openai_responses.replies import decode_response, encode_response
from toolwire.codecs.openai_responses.requests import decode_request, encode_request
from toolwire.codecs.openai_responses.stream_decoder import ResponsesStreamDecoder
from toolwire.codecs.openai_responses.stream_encoder import ResponsesStreamEncoder
from toolwire.types import Request, Response

__all__ = ["CODEC", "OpenAIResponsesCodec"]


class OpenAIResponsesCodec:
    """The `openai-responses` codec: the Responses API's bodies, output items and stream events."""

    name = NAME
    output_strategies: tuple[str, ...] = ("native", "tool", "prompted")  # text.format json_schema

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the exact `POST /v1/responses` body for `request`."""
        return encode_request(request)

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a Response object; an `{"error": ...}` body raises `ProviderError`."""
        return decode_response(body)

    def stream_decoder(self) -> ResponsesStreamDecoder:
        """Return a fresh decoder for one Responses event stream."""
        return ResponsesStreamDecoder()

    def decode_request(self, body: dict[str, Any]) -> Request:
        """Read a request body back into a neutral `Request`; unknown keys go to `extra`."""
        return decode_request(body)

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as a Response object, deriving item ids the reply does not carry."""
        return encode_response(response)

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> ResponsesStreamEncoder:
        """A fresh encoder turning neutral stream events into Responses stream events as they come."""
        return ResponsesStreamEncoder(model, response_id)

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as the stream events the API sends, `sequence_number`s included."""
        return replay(ResponsesStreamEncoder(reply=response), response)


CODEC = OpenAIResponsesCodec()
