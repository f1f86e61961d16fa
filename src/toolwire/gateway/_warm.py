"""What a gateway's first requests would load and build, done before it serves (`warm_up`).

A fresh process imports each codec, the upstream HTTP stack (httpx2, httptools) and the
telemetry API on first use, builds each target's client, and pays for first calls
(schemas compiled, shapes checked): ~0.5 s spread over the first request of each kind,
against ~0.5 ms for later ones. `toolwire serve` runs this before it says it is ready, and
the app's startup runs it for embedders and for every worker. No request leaves the
process: each codec translates a small reply to itself. Imports codecs, the neutral types,
telemetry and the gateway's routes and protocol table.
"""

from __future__ import annotations

import logging

from toolwire.codecs import Codec, get_codec
from toolwire.gateway._protocols import PROTOCOLS, frame
from toolwire.gateway._routing import Router
from toolwire.telemetry import gateway_span
from toolwire.types import (
    AssistantMessage,
    Done,
    Request,
    Response,
    StopReason,
    SystemMessage,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    Usage,
    UserMessage,
)

__all__ = ["warm_up"]

logger = logging.getLogger("toolwire.gateway")

_TOOL = ToolDefinition(
    name="warm_up",
    description="Nothing: the gateway's warm-up.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
_REQUEST = Request(
    model="warm-up", messages=[SystemMessage(content="s"), UserMessage(content="hi")], tools=[_TOOL], max_tokens=16
)
_CALL = ToolCall(id="call_warm_up", name="warm_up", arguments={"city": "Paris"})
_REPLY = Response(
    message=AssistantMessage(parts=[TextPart(text="t"), _CALL]),
    stop_reason=StopReason.TOOL_USE,
    usage=Usage(input_tokens=1, output_tokens=1),
    model="warm-up",
    id="warm-up",
)
_EVENTS = (
    TextDelta(text=""),
    TextDelta(text="t"),
    ToolCallDelta(index=0, id=_CALL.id, name=_CALL.name, arguments_delta='{"city":"Paris"}'),
    Done(response=_REPLY),
)


def warm_up(router: Router, *, codecs: bool = True) -> None:
    """Build every target's client (and pool, in an event loop); run each codec the routes use once."""
    names = set(PROTOCOLS)
    for route in router.routes:
        for target in route.targets:
            try:
                client = target.client(route.model)
            except Exception:  # the target's first request says what is wrong, as it always did
                logger.debug("warm-up: %s cannot be built yet", target.target, exc_info=True)
                continue
            names.add(client.codec.name)
            transport = getattr(client, "transport", None)  # an offline target has none
            if transport is not None:
                transport.warm_up()
    for name in sorted(names) if codecs else ():
        try:
            _translate(name, get_codec(name))
        except Exception:  # a codec that cannot take the sample is still served as before
            logger.debug("warm-up: the %s codec did not take the sample", name, exc_info=True)
    if codecs:
        with gateway_span("POST", "/", {}):  # the telemetry API, when installed
            pass


def _translate(name: str, codec: Codec) -> None:
    """The sample through the codec both ways, whole and streamed (framed as the gateway frames it)."""
    codec.decode_request(codec.encode_request(_REQUEST))
    codec.decode_response(codec.encode_response(_REPLY))
    encoder, decoder = codec.stream_encoder("warm-up"), codec.stream_decoder()
    protocol = PROTOCOLS.get(name)
    for event in _EVENTS:
        for wire in encoder.feed(event):
            decoder.feed(wire.data)
            if protocol is not None:
                frame(protocol, wire.data, wire.event)
    decoder.finish()
