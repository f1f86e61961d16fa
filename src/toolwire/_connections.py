"""Which httpx2 transport carries toolwire's requests to a provider.

Imports only httpx2, toolwire's own transports and the standard library.
"""

from __future__ import annotations

import ssl
import urllib.request

import httpx2

from toolwire._netio import asyncio_transport

__all__ = ["connections"]


def connections(*, verify: ssl.SSLContext, limits: httpx2.Limits) -> httpx2.AsyncBaseTransport | None:
    """HTTP/1.1 on httptools where it is installed (the `serve` extra), else httpcore2 on asyncio.

    None (httpx2's own transports) when the environment names a proxy (`HTTPS_PROXY`, ...): httpx2
    honours those only for the transports it builds itself.
    """
    if urllib.request.getproxies():
        return None
    fallback = asyncio_transport(verify=verify, limits=limits)
    try:
        from toolwire._http1 import Http1Transport
    except ModuleNotFoundError as exc:
        if exc.name != "httptools":
            raise
        return fallback
    return Http1Transport(verify=verify, limits=limits, fallback=fallback)
