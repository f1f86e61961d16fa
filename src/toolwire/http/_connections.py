"""Which httpx2 transport carries toolwire's requests to a provider, and the requests it carries.

Imports only httpx2, the http package's two transports (`_http1`, `_asyncio`) and the standard library.
"""

from __future__ import annotations

import ssl
import urllib.request
from collections.abc import Awaitable, Callable

import httpx2

from toolwire.http._asyncio import asyncio_transport

__all__ = ["connections", "merged_headers", "post", "post_request"]

_BUILT_BY_HTTPX2 = frozenset({"host", "content-length", "transfer-encoding"})


_IDLE = 512  # idle upstream connections a gateway route keeps (a burst of 1,000 streams leaves at most this many)


def connections(*, verify: ssl.SSLContext, limits: httpx2.Limits) -> httpx2.AsyncBaseTransport | None:
    """HTTP/1.1 on httptools where it is installed (the `serve` extra), else httpcore2 on asyncio.

    None (httpx2's own transports) when the environment names a proxy (`HTTPS_PROXY`, ...): httpx2
    honours those only for the transports it builds itself.
    """
    if urllib.request.getproxies():
        return None
    fallback = asyncio_transport(verify=verify, limits=limits)
    try:
        from toolwire.http._http1 import Http1Transport
    except ModuleNotFoundError as exc:
        if exc.name != "httptools":
            raise
        return fallback
    if limits.max_connections is None:
        # No cap on connections (a gateway's routes): keep up to `_IDLE` idle ones, so 64 clients reuse
        # 64 upstream connections instead of opening 44 anew for each round of requests. This pool takes
        # the newest idle connection without probing the others, so keeping many costs nothing per
        # request (httpcore2 probes each one, hence its cap of 20); they close when idle past
        # `keepalive_expiry`.
        limits = httpx2.Limits(
            max_connections=None, max_keepalive_connections=_IDLE, keepalive_expiry=limits.keepalive_expiry
        )
    return Http1Transport(verify=verify, limits=limits, fallback=fallback)


def merged_headers(
    pool: httpx2.AsyncClient, url: httpx2.URL, content: bytes, headers: dict[str, str]
) -> list[tuple[bytes, bytes]] | None:
    """The headers `pool.build_request("POST", url, content=content, headers=headers)` sends, merged sooner.

    httpx2 merges and re-reads the headers through its case-insensitive multi-dict a dozen times
    (~0.05 ms of every request); here they are merged once, as it merges them: the `Host` it
    adds, the pool's defaults less those we name, ours, the `Content-Length` it adds. None for a
    pool holding cookies, an empty body, or headers naming what httpx2 computes (or one name
    twice): httpx2 builds those itself.
    """
    ours = {name.lower() for name in headers}
    if not content or pool.cookies or len(ours) < len(headers) or not _BUILT_BY_HTTPX2.isdisjoint(ours):
        return None
    merged = [(b"Host", url.netloc)]
    merged += [(name, value) for name, value in pool.headers.raw if name.decode("latin-1").lower() not in ours]
    merged += [(name.encode("ascii"), value.encode("ascii")) for name, value in headers.items()]  # as httpx2 does
    merged.append((b"Content-Length", str(len(content)).encode()))
    return merged


def post_request(pool: httpx2.AsyncClient, url: httpx2.URL, content: bytes, headers: dict[str, str]) -> httpx2.Request:
    """The request `pool.build_request("POST", url, content=content, headers=headers)` builds, sooner."""
    merged = merged_headers(pool, url, content, headers)
    if merged is None:
        return pool.build_request("POST", url, content=content, headers=headers or None)
    request = httpx2.Request(
        "POST", url, headers=merged, stream=httpx2.ByteStream(content), extensions={"timeout": pool.timeout.as_dict()}
    )
    request.read()  # as httpx2 does for a body at hand: `request.content` is there to read
    return request


async def post(
    pool: httpx2.AsyncClient,
    direct: httpx2.AsyncBaseTransport | None,
    url: httpx2.URL,
    content: bytes,
    headers: dict[str, str],
) -> httpx2.Response:
    """`pool.post(url, content=..., headers=...)`, streamed, through `direct` (what `connections` gave the pool).

    httpx2's client wraps each send in auth, redirect and event-hook layers, a timer around the
    body and a log line (~90k instructions, 8 % of a gateway's pass-through request), and builds
    a `Request` whose headers it normalizes again; toolwire uses none of that (no auth flow, no
    redirects followed). toolwire's HTTP/1.1 transport takes the merged headers as they are;
    another (httpcore2 without httptools) takes the built request. What the client does that
    matters is kept: errors name the URL they failed at, and cookies a provider sets are kept and
    sent back. `direct` is None when httpx2 chose the transport (a proxy from the environment).
    """
    lean: Callable[..., Awaitable[httpx2.Response]] | None = getattr(direct, "post", None)  # `Http1Transport.post`
    merged = merged_headers(pool, url, content, headers) if lean is not None else None
    if lean is not None and merged is not None:
        response = await _sent(lean(url, merged, content, pool.timeout.as_dict()), url)
    else:
        request = post_request(pool, url, content, headers)
        if direct is None:
            return await pool.send(request, stream=True)
        response = await _sent(direct.handle_async_request(request), url)
        response.request = request
    if "set-cookie" in response.headers:  # kept and sent back, as httpx2 does (it reads the request's URL)
        if merged is not None:
            response.request = post_request(pool, url, content, headers)
        pool.cookies.extract_cookies(response)
    return response


async def _sent(sending: Awaitable[httpx2.Response], url: httpx2.URL) -> httpx2.Response:
    try:
        return await sending
    except httpx2.RequestError as exc:
        exc.request = httpx2.Request("POST", url)  # as httpx2's client does: errors name the URL they failed at
        raise
