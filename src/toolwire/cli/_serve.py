"""`toolwire serve`: run the gateway (`toolwire.gateway`) with uvicorn.

Routes come from the `[[route]]` tables of the settings file. Without gateway keys
(`TOOLWIRE_GATEWAY_KEYS`) the server binds loopback addresses only: an open gateway spends
its owner's upstream keys for whoever reaches it. With `--workers N` uvicorn starts N
processes, each building the app from the same file (`app_factory`); nothing is shared
between them because the gateway keeps no conversation state.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolwire.cli._settings import Settings, UsageError
from toolwire.config import load_config

__all__ = ["app_factory", "serve_command"]

_CONFIG_ENV = "TOOLWIRE_SERVE_CONFIG"
_DEBUG_ENV = "TOOLWIRE_SERVE_DEBUG"


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

    path = os.environ.get(_CONFIG_ENV)
    config = load_config(Path(path) if path else None)
    debug = os.environ.get(_DEBUG_ENV) == "1"
    _log_requests(debug)
    return create_app(config, debug=debug)


def _log_requests(debug: bool) -> None:
    """One line per request on stderr (bodies too with --debug), in this process."""
    root = logging.getLogger("toolwire")
    if not root.handlers:  # a worker process starts without the CLI's handler
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.propagate = False
    logging.getLogger("toolwire.gateway").setLevel(logging.DEBUG if debug else logging.INFO)


def serve_command(settings: Settings, args: argparse.Namespace) -> int:
    """Check the settings, then serve until interrupted."""
    try:
        import uvicorn

        from toolwire.gateway import create_app, gateway_keys
        from toolwire.gateway._slow_clients import header_deadline_protocol
    except ModuleNotFoundError as exc:
        raise UsageError(
            f"toolwire serve needs {exc.name}; install it from the toolwire checkout with: pip install -e '.[serve]'"
        ) from None
    config = load_config(settings.config_path)
    if not config.routes:
        where = f"{config.path}" if config.path else "no toolwire.toml was found"
        raise UsageError(f"No [[route]] tables ({where}); add one per model pattern (see toolwire serve --help).")
    if not gateway_keys() and not _is_loopback(args.host):
        raise UsageError(
            f"Refusing to serve on {args.host!r} without gateway keys; set TOOLWIRE_GATEWAY_KEYS "
            "(comma-separated) or bind a loopback address such as 127.0.0.1."
        )
    debug = bool(args.debug)
    _log_requests(debug)
    options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "access_log": False,
        "log_level": "warning",
        "timeout_graceful_shutdown": args.drain_timeout,
        "http": header_deadline_protocol(),  # slow-header clients are cut off; see gateway/_slow_clients
    }
    # uvicorn drains on SIGTERM, then raises the signal again for whoever handled it before:
    # a handler that does nothing makes a drained shutdown exit 0.
    signal.signal(signal.SIGTERM, lambda number, frame: None)
    if args.workers > 1:
        if config.path is not None:
            os.environ[_CONFIG_ENV] = str(config.path)
        os.environ[_DEBUG_ENV] = "1" if debug else "0"
        with _shared_metrics():
            uvicorn.run("toolwire.cli._serve:app_factory", factory=True, workers=args.workers, **options)
    else:
        uvicorn.run(create_app(config, debug=debug), **options)
    return 0


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
