"""httpx2 on toolwire's two transports (httptools' and httpcore2's on asyncio): real sockets on 127.0.0.1.

Every test runs on both: `Http1Transport` (where httptools is installed) and httpcore2 on
`AsyncioBackend` (the fallback, and what a `toolwire` without the `serve` extra uses).
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpcore2
import httpx2
import pytest

from tests.http._loopback import read_request, reply, server
from toolwire.http._asyncio import AsyncioBackend, asyncio_transport

Client = Callable[..., httpx2.AsyncClient]


@pytest.fixture(params=["httptools", "httpcore2"])
def client(request: pytest.FixtureRequest) -> Client:
    """Makes a client on one of the two transports."""
    if request.param == "httptools":
        pytest.importorskip("httptools", reason="httptools (the serve extra) is not installed")

    def make(
        timeout: float = 5.0, verify: ssl.SSLContext | None = None, limits: httpx2.Limits | None = None
    ) -> httpx2.AsyncClient:
        verify = verify or ssl.create_default_context()
        limits = limits or httpx2.Limits(max_connections=10, max_keepalive_connections=5)
        transport: httpx2.AsyncBaseTransport = asyncio_transport(verify=verify, limits=limits)
        if request.param == "httptools":
            from toolwire.http._http1 import Http1Transport

            transport = Http1Transport(verify=verify, limits=limits, fallback=transport)
        return httpx2.AsyncClient(transport=transport, timeout=timeout)

    return make


async def test_requests_share_a_connection_and_bodies_arrive_whole(client: Client) -> None:
    connections = 0
    big = bytes(range(256)) * 20_000  # 5 MB each way: the transport's back-pressure on both sides

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while not reader.at_eof():
            try:
                body = await read_request(reader)
            except asyncio.IncompleteReadError:
                break
            writer.write(reply(body[::-1]))
            await writer.drain()

    async with server(handle) as port, client() as http:
        first = await http.post(f"http://127.0.0.1:{port}/", content=big)
        second = await http.post(f"http://127.0.0.1:{port}/", content=b"abc")
    assert (first.status_code, first.content == big[::-1], second.content) == (200, True, b"cba")
    assert connections == 1


async def test_a_connection_the_server_closed_while_idle_is_not_reused(client: Client) -> None:
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await read_request(reader)
        writer.write(reply(b"once"))  # keep-alive promised, then the server closes anyway
        await writer.drain()
        writer.close()

    async with server(handle) as port, client() as http:
        answers = []
        for _ in range(3):
            answers.append((await http.get(f"http://127.0.0.1:{port}/")).text)
            await asyncio.sleep(0.05)  # the close reaches the client while the connection is idle
    assert answers == ["once"] * 3
    assert connections == 3


async def test_stalls_closes_and_refusals_are_httpx2_errors(client: Client) -> None:
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf")
        await writer.drain()
        await asyncio.sleep(5)

    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf")
        writer.close()

    async with server(stall) as port, client(timeout=0.2) as http:
        with pytest.raises(httpx2.ReadTimeout):
            await http.get(f"http://127.0.0.1:{port}/")
    async with server(cut) as port, client() as http:
        with pytest.raises(
            httpx2.RemoteProtocolError, match=r"peer closed connection .* \(received 4 bytes, expected 10\)$"
        ):
            await http.get(f"http://127.0.0.1:{port}/")
    async with server(cut) as port:
        pass  # the port is free again: nothing listens there
    async with client() as http:
        with pytest.raises(httpx2.ConnectError, match=r"^Connection refused$"):
            await http.get(f"http://127.0.0.1:{port}/")
        with pytest.raises(httpx2.ConnectError, match=r"^cannot resolve upstream\.invalid: [A-Z]"):
            await http.get("http://upstream.invalid/")  # .invalid never resolves (RFC 6761)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed: no certificate to test TLS with")
async def test_tls_with_the_callers_context(tmp_path: Path, client: Client) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = await read_request(reader)
        writer.write(reply(b"secret " + body))
        await writer.drain()
        await reader.read()  # open until the client closes

    trusting = ssl.create_default_context(cafile=str(cert))
    limits = httpx2.Limits(max_connections=2)
    async with server(handle, served) as port:
        async with client(verify=trusting, limits=limits) as http:
            answer = await http.post(f"https://127.0.0.1:{port}/", content=b"hello")
            assert answer.text == "secret hello"
            assert answer.extensions["network_stream"].get_extra_info("ssl_object").version().startswith("TLS")
        async with client() as untrusting:  # the system's CAs do not know this certificate
            with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await untrusting.get(f"https://127.0.0.1:{port}/")


async def test_the_backend_alone_reports_httpcore2_errors() -> None:
    backend = AsyncioBackend()
    async with server(lambda r, w: asyncio.sleep(0)) as port:
        pass
    with pytest.raises(httpcore2.ConnectError):
        await backend.connect_tcp("127.0.0.1", port, timeout=1)

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(1)

    async with server(silent) as port:
        stream = await backend.connect_tcp("127.0.0.1", port, timeout=1)
        with pytest.raises(httpcore2.ReadTimeout):
            await stream.read(10, timeout=0.05)
        assert stream.get_extra_info("server_addr") == ("127.0.0.1", port)
        assert stream.get_extra_info("is_readable") is False
        await stream.aclose()
        with pytest.raises(httpcore2.WriteError):
            await stream.write(b"x")
