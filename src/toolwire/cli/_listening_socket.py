"""A listening TCP socket bound before a server starts, so the command can name its real port (port 0).

Made with `IPPROTO_TCP` named and `TCP_NODELAY` set, which accepted connections inherit: asyncio
turns Nagle's algorithm off only on sockets whose protocol says TCP, and a socket made with the
default protocol (0) kept it on, so a reply's headers and body, written apart, waited for the
client's delayed acknowledgement (about 40 ms a request).
"""

from __future__ import annotations

import socket

from toolwire.cli._settings import CommandFailed

__all__ = ["listening_socket"]


def listening_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """Bound, listening (connections made early wait for the server) and inheritable (`--workers`).

    Raises:
        CommandFailed: When the address cannot be bound (taken, not this host's).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        listening.bind((host, port))
    except OSError as exc:
        listening.close()
        raise CommandFailed(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.") from None
    listening.listen(backlog)
    listening.set_inheritable(True)
    return listening
