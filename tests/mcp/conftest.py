"""Where the MCP servers the tests drive live: the npm reference servers, `mcp-server-time`, a probe."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install -e '.[dev,mcp]'")

ROOT = Path(__file__).resolve().parents[2]
NPM_BIN = ROOT / ".cache" / "mcp-servers" / "node_modules" / ".bin"
PROBE = Path(__file__).with_name("_probe_server.py")


def npm_server(name: str) -> str:
    """The installed npm reference server `name`, or a skip saying how to install it."""
    path = NPM_BIN / name
    if path.exists():
        return str(path)
    if shutil.which("npm") is None:
        pytest.skip(f"npm is not installed, so the reference MCP server {name} is not either")
    pytest.skip(f"{name} is not installed (npm could not reach the registry?): run sh tests/mcp/install_servers.sh")


@pytest.fixture
def filesystem_server() -> str:
    return npm_server("mcp-server-filesystem")


@pytest.fixture
def everything_server() -> str:
    return npm_server("mcp-server-everything")


@pytest.fixture
def time_server() -> str:
    path = Path(sys.executable).with_name("mcp-server-time")
    if not path.exists():
        pytest.fail("mcp-server-time is missing from the venv; it is a dev dependency: pip install -e '.[dev,mcp]'")
    return str(path)


@pytest.fixture
def probe_server() -> list[str]:
    """A small MCP server on the official SDK (list changes, calls that wait to be cancelled)."""
    return [sys.executable, str(PROBE)]
