"""`toolwire serve`: run the gateway (`toolwire.gateway`) with uvicorn.

Routes come from the `[[route]]` tables of the settings file. Without gateway keys
(`TOOLWIRE_GATEWAY_KEYS`) the server binds loopback addresses only: an open gateway spends
its owner's upstream keys for whoever reaches it. With `--workers N` uvicorn starts N
processes, each building the app from the same file (`app_factory`); nothing is shared
between them because the gateway keeps no conversation state.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import os
import signal
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolwire.cli._listening_socket import listening_socket
from toolwire.cli._settings import CommandFailed, Settings, UsageError
from toolwire.config import load_config

__all__ = ["app_factory", "serve_command"]

_CONFIG_ENV = "TOOLWIRE_SERVE_CONFIG"
_DEBUG_ENV = "TOOLWIRE_SERVE_DEBUG"
_MAX_BODY_ENV = "TOOLWIRE_SERVE_MAX_BODY_BYTES"
_LOG_LEVEL_ENV = "TOOLWIRE_SERVE_LOG_LEVEL"
_ACCESS_LOG_ENV = "TOOLWIRE_SERVE_ACCESS_LOG"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def app_factory() -> Any:
    """The app for one uvicorn worker process (`--workers N`), from the file the parent named."""
    from toolwire.gateway import create_app
    from toolwire.gateway._limits import DEFAULT_MAX_BODY_BYTES

    path = os.environ.get(_CONFIG_ENV)
    config = load_config(Path(path) if path else None)
    debug = os.environ.get(_DEBUG_ENV) == "1"
    level = os.environ.get(_LOG_LEVEL_ENV, "info")
    _gateway_logging(level)
    max_body_bytes = int(os.environ.get(_MAX_BODY_ENV, DEFAULT_MAX_BODY_BYTES))
    access_log = os.environ.get(_ACCESS_LOG_ENV, "1") == "1"
    return create_app(config, debug=debug, max_body_bytes=max_body_bytes, access_log=access_log)


class _CutByShutdown(logging.Filter):
    """uvicorn's traceback for a request cancelled by a forced exit, as one line.

    A second signal (SIGTERM, then Ctrl-C) stops waiting for requests in flight: each is cut,
    and uvicorn logged each as "Exception in ASGI application" with a chained traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep every record; a cancellation's loses its traceback."""
        error = record.exc_info[1] if record.exc_info else None
        text = record.getMessage()  # Starlette hands a cut lifespan's traceback over as the message
        cut = text.startswith("Traceback") and text.rstrip().endswith(("CancelledError", "KeyboardInterrupt"))
        if cut or isinstance(error, asyncio.CancelledError | KeyboardInterrupt):
            record.msg, record.args, record.exc_info, record.exc_text = (
                "a request in flight was cut by the exit",
                (),
                None,
                None,
            )
        return True


def _gateway_logging(level: str) -> None:
    """The gateway's lines on stderr at `level` (`info` includes one line per request), in this process."""
    uvicorn_errors = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _CutByShutdown) for f in uvicorn_errors.filters):
        uvicorn_errors.addFilter(_CutByShutdown())
    root = logging.getLogger("toolwire")
    if not root.handlers:  # a worker process starts without the CLI's handler
        from toolwire.http import SafeLogFormatter

        handler = logging.StreamHandler()
        handler.setFormatter(SafeLogFormatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.propagate = False
    number = logging.getLevelName(level.upper())
    if number > root.getEffectiveLevel():  # `error` quiets every toolwire warning, not only the gateway's
        root.setLevel(number)
    logging.getLogger("toolwire.gateway").setLevel(number)


def _log_level(args: argparse.Namespace) -> str:
    """`--log-level`, or `debug` with `--debug`, else `info`."""
    chosen: str | None = getattr(args, "log_level", None)
    return chosen if chosen is not None else ("debug" if args.debug else "info")


def serve_command(settings: Settings, args: argparse.Namespace) -> int:
    """Check the settings and every route, say what is served where, then serve until interrupted."""
    try:
        import uvicorn
        from uvicorn.supervisors import Multiprocess

        from toolwire.gateway import RouteConfigError, Router, create_app, gateway_keys
        from toolwire.gateway._slow_clients import header_deadline_protocol
    except ModuleNotFoundError as exc:
        raise UsageError(
            f"toolwire serve needs {exc.name}; install it from the toolwire checkout with: pip install -e '.[serve]'"
        ) from None
    config = load_config(settings.config_path)
    if not config.routes:
        where = f"{config.path}" if config.path else "no toolwire.toml was found"
        raise UsageError(
            f"No [[route]] tables ({where}); add one per model pattern to toolwire.toml, e.g. "
            """printf '[[route]]\\nmodel = "*"\\ntarget = "scripted:demo"\\n' > toolwire.toml """
            '(the offline scripted model; target = "openai:gpt-4o" or "vllm:NAME" with base_url for a real one).'
        )
    keys = gateway_keys()
    if not keys and not _is_loopback(args.host):
        raise UsageError(
            f"Refusing to serve on {args.host!r} without gateway keys; set TOOLWIRE_GATEWAY_KEYS "
            "(comma-separated) or bind a loopback address such as 127.0.0.1."
        )
    try:
        routes = Router(config.routes).check()
    except (RouteConfigError, ValueError) as exc:
        raise CommandFailed(str(exc)) from None
    debug = bool(args.debug)
    max_body_bytes = int(args.max_body_mb * 1024 * 1024)
    level = _log_level(args)
    access_log = bool(getattr(args, "access_log", True))
    _gateway_logging(level)
    options: dict[str, Any] = {
        "access_log": False,  # the gateway's own line per request says more (--access-log)
        "log_level": "error" if level == "error" else "warning",
        "timeout_graceful_shutdown": args.drain_timeout,
        "http": header_deadline_protocol(),  # slow-header clients are cut off; see gateway/_slow_clients
    }
    listening = listening_socket(args.host, args.port)  # before the banner: it names the real port
    app = None
    if args.workers == 1:  # built and warmed before the banner: the first request costs what later ones do
        app = create_app(config, debug=debug, max_body_bytes=max_body_bytes, access_log=access_log)
        app.state.gateway.warm_up()
    _banner(listening, routes, keys=bool(keys), workers=args.workers, max_body_mb=args.max_body_mb)
    # uvicorn drains on SIGTERM, then raises the signal again for whoever handled it before:
    # a handler that does nothing makes a drained shutdown exit 0.
    signal.signal(signal.SIGTERM, lambda number, frame: None)
    if args.workers > 1:
        if config.path is not None:
            os.environ[_CONFIG_ENV] = str(config.path)
        os.environ[_DEBUG_ENV] = "1" if debug else "0"
        os.environ[_MAX_BODY_ENV] = str(max_body_bytes)
        os.environ[_LOG_LEVEL_ENV] = level
        os.environ[_ACCESS_LOG_ENV] = "1" if access_log else "0"
        factory = uvicorn.Config("toolwire.cli._serve:app_factory", factory=True, workers=args.workers, **options)
        workers = _workers(Multiprocess)(factory, sockets=[listening])
        with _shared_metrics(), contextlib.suppress(KeyboardInterrupt):
            workers.run()
        forced = workers.forced
    else:
        assert app is not None
        server = uvicorn.Server(uvicorn.Config(app, **options))
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a foreground gateway stops
            server.run(sockets=[listening])
        forced = server.force_exit
    if forced:  # a second signal cut the drain short: requests in flight were lost
        sys.stderr.write("toolwire serve: forced exit before requests in flight finished.\n")
        return 1
    return 0


def _workers(base: type[Any]) -> type[Any]:
    """Uvicorn's worker supervisor, refusing connections once told to stop, and forced by a second signal.

    The parent holds the listening socket too: while it stayed open, the kernel went on
    accepting connections that no worker would ever read. A second SIGINT or SIGTERM while the
    workers drain is passed on as SIGINT, uvicorn's forced exit.
    """

    class Workers(base):  # type: ignore[misc]
        forced = False

        def terminate_all(self) -> None:
            for listening in self.sockets:
                listening.close()
            super().terminate_all()

        def join_all(self) -> None:
            while any(worker.process.is_alive() for worker in self.processes):
                if self.signal_queue and not self.forced:
                    self.signal_queue.clear()
                    self.forced = True
                    for worker in self.processes:
                        if worker.process.is_alive() and worker.pid is not None:
                            os.kill(worker.pid, signal.SIGINT)
                for worker in self.processes:
                    worker.process.join(0.1)

    return Workers


def _banner(listening: socket.socket, routes: list[str], *, keys: bool, workers: int, max_body_mb: float) -> None:
    """What a person starting the gateway wants to see: where, which routes go where, and how it is guarded."""
    host, port = listening.getsockname()[:2]
    url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    guard = "gateway keys on" if keys else "gateway keys off: loopback only"
    plural = "s" if workers != 1 else ""
    lines = [
        f"toolwire gateway at {url} - {workers} worker{plural}, {guard}, bodies up to {max_body_mb:g} MiB",
        "routes, first match wins:",
        *(f"  {line}" for line in routes),
        "clients: /v1/chat/completions, /v1/responses, /v1/messages, /v1beta/models/..., /api/chat, "
        "/model/.../converse (and /v1/models, /health, /metrics)",
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


@contextmanager
def _shared_metrics() -> Iterator[None]:
    """Workers write their metrics to one fresh directory, so any worker's /metrics sums them all."""
    from toolwire.gateway._metrics import MULTIPROCESS_ENV

    if os.environ.get(MULTIPROCESS_ENV):  # the operator chose one
        yield
        return
    with tempfile.TemporaryDirectory(prefix="toolwire-metrics-") as folder:
        os.environ[MULTIPROCESS_ENV] = folder
        try:
            yield
        finally:
            del os.environ[MULTIPROCESS_ENV]
