"""A hand-written stdio MCP server for what the SDK will not send: hostile schemas, huge results, a stall.

`python _raw_server.py MODE`: `hang` never answers `initialize`; `schemas` lists a good tool
between two with broken `inputSchema`s; `big` answers `tools/call` of `big` with `{"size": N}`
characters of text: numbered lines (`big_text`), so a test can tell every part of it apart, or
all "x" with `"plain": true` (cheap to make, for bench/micro/mcp_calls.py); `stubborn` starts a
`sleep` child, names both pids on stderr, and ignores its stdin closing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "schemas"
GOOD = {"name": "echo", "description": "Echo text.", "inputSchema": {"type": "object", "properties": {}}}
TOOLS = {
    "schemas": [
        {"name": "broken_properties", "inputSchema": {"type": "object", "properties": 5}},
        GOOD,
        {"name": "broken_type", "inputSchema": {"type": "object", "properties": {"x": {"type": "nonsense"}}}},
    ],
    "big": [{"name": "big", "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}}}],
}


def big_text(size: int) -> str:
    """`size` characters: lines `000000001`, `000000002`, ... (ten characters each with the newline)."""
    return "".join(f"{n:09d}\n" for n in range(1, size // 10 + 2))[:size]


def answer(request: dict, result: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n")
    sys.stdout.flush()


def handle(request: dict) -> None:
    method = request.get("method")
    if "id" not in request:
        return
    if method == "initialize":
        if MODE == "hang":
            time.sleep(3600)
        info = {"name": f"raw-{MODE}", "version": "1"}
        answer(request, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": info})
    elif method == "tools/list":
        answer(request, {"tools": TOOLS.get(MODE, [GOOD])})
    elif method == "tools/call":
        arguments = request["params"].get("arguments") or {}
        size = int(arguments.get("size", 0))
        if MODE != "big":
            text = json.dumps(arguments)
        else:
            text = "x" * size if arguments.get("plain") else big_text(size)
        answer(request, {"content": [{"type": "text", "text": text}]})
    else:
        answer(request, {})


if __name__ == "__main__":
    if MODE == "stubborn":
        child = subprocess.Popen(["sleep", "3600"])
        sys.stderr.write(f"server {os.getpid()} child {child.pid}\n")
        sys.stderr.flush()
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))
    if MODE == "stubborn":
        time.sleep(3600)
