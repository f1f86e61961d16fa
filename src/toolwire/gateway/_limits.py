"""What the gateway accepts from a client: body size, body pace, JSON depth, header pace.

A body is read piece by piece and refused (413) once it passes the cap, before it is held
whole; one that trickles in slower than `body_timeout` is refused (408). JSON nested deeper
than `MAX_BODY_DEPTH` is refused (400) before any codec recurses into it. Slow headers are
`_slow_clients`' job (it needs uvicorn). Imports starlette.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import ClientDisconnect, Request

from toolwire.codecs.common.arguments import depth_exceeds
from toolwire.gateway._errors import GatewayError

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "MAX_BODY_DEPTH",
    "BodyLimits",
    "header_values",
    "parse_json",
    "read_body",
]

DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest request body accepted (a long conversation with images stays well under it)."""
DEFAULT_BODY_TIMEOUT = 60.0
"""Seconds a client has to send its whole body once the headers are in."""
MAX_BODY_DEPTH = 128
"""Deeper JSON is refused: no request needs it, and codecs that recurse into it would crash."""


class BodyLimits:
    """The caps one app applies to request bodies."""

    __slots__ = ("max_bytes", "timeout")

    def __init__(self, max_bytes: int = DEFAULT_MAX_BODY_BYTES, timeout: float = DEFAULT_BODY_TIMEOUT) -> None:
        if max_bytes < 1 or timeout <= 0:
            raise ValueError(f"max_body_bytes and body_timeout must be positive, got {max_bytes!r}, {timeout!r}.")
        self.max_bytes = max_bytes
        self.timeout = timeout


def header_values(request: Request) -> dict[bytes, bytes]:
    """Each request header's first value, by its name (lowercase, as ASGI servers give it).

    One pass in C, where Starlette's `headers.get` walks the list in Python for every name and
    raises a `KeyError` for each one missing (three of every request's five looks). ASGI allows
    any iterable of pairs: copied to a list, which `reversed` takes.
    """
    return dict(reversed(list(request.scope["headers"])))


async def read_body(request: Request, limits: BodyLimits) -> bytes:
    """The request body, refused once it passes `limits.max_bytes` or takes longer than `limits.timeout`.

    Read off the ASGI `receive` as Starlette's `request.stream()` would, without its generator.
    """
    declared = header_values(request).get(b"content-length", b"").decode("latin-1")
    if declared.isdigit() and int(declared) > limits.max_bytes:
        raise _too_large(limits.max_bytes)
    body = bytearray()
    # One timer that cancels this task, as `asyncio.timeout` does with a dozen steps more
    # (~7 µs of every request); anyio's scope cost ~0.1 ms.
    task = asyncio.current_task()
    assert task is not None
    expired: list[bool] = []
    cancelling = task.cancelling()
    timer = asyncio.get_running_loop().call_later(limits.timeout, _expire, task, expired)
    receive = request.receive
    try:
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "http.disconnect":
                raise ClientDisconnect()
            if kind != "http.request":
                continue
            body.extend(message.get("body", b""))
            if len(body) > limits.max_bytes:
                raise _too_large(limits.max_bytes)
            if not message.get("more_body", False):
                break
    except asyncio.CancelledError:
        if not expired or task.uncancel() > cancelling:
            raise  # cancelled from outside: not the body's timeout
        raise GatewayError(
            408, f"The request body did not arrive within {limits.timeout:g} s; send it at once, or a smaller one."
        ) from None
    finally:
        timer.cancel()
    return bytes(body)


def _expire(task: asyncio.Task[Any], expired: list[bool]) -> None:
    expired.append(True)
    task.cancel()


def _too_large(limit: int) -> GatewayError:
    return GatewayError(
        413, f"The request body is larger than this gateway's limit of {limit} bytes; send a shorter conversation."
    )


def parse_json(raw: bytes) -> Any:
    """The body as JSON; a 400 for invalid JSON or JSON nested deeper than `MAX_BODY_DEPTH`."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:
        raise GatewayError(400, f"The request body is not valid JSON ({exc}); send a JSON object.") from None
    # Each level opens with a bracket: a body with few of them cannot nest too deep, and counting
    # them costs ~1 µs where walking the parsed body cost ~25 µs of every request.
    brackets = raw.count(b"{") + raw.count(b"[")
    if brackets > MAX_BODY_DEPTH and depth_exceeds(value, MAX_BODY_DEPTH):
        raise _too_deep()
    return value


def _too_deep() -> GatewayError:
    return GatewayError(400, f"The request body nests deeper than {MAX_BODY_DEPTH} levels; send flatter JSON.")
