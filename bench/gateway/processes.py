"""The processes bench/gateway/vs_litellm.py measures: two upstreams, `toolwire serve`, LiteLLM's proxy, Portkey.

Each runs in its own process with one worker (unless asked for more); their output goes to log
files in a temp dir. Memory is read from /proc: `VmHWM` (peak resident set) is reset through
`clear_refs` before a test, so the peak is that test's own; CPU time from `/proc/PID/stat`
(user + system, summed over the process tree), so a busy machine does not count against a
gateway.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from bench.harness import free_port, reset_peak, status_kb

ROOT = Path(__file__).resolve().parents[2]
LITELLM = ROOT / "bench" / ".litellm-venv" / "bin" / "litellm"
PORTKEY = ROOT / "bench/gateway/.portkey/node_modules/@portkey-ai/gateway/build/start-server.js"
KEY_ENV = "BENCH_UPSTREAM_KEY"
DIRECT_NAME = "direct upstream"
CLIENT_KEY = "sk-bench-client"  # both gateways check it: toolwire's gateway key, LiteLLM's master key

TOOLWIRE_TOML = """\
[[route]]
model = "bench-model"
target = "openai:up-model"
base_url = "http://127.0.0.1:{fast}/v1"
api_key_env = "{key}"

[[route]]                  # an OpenAI client to an Anthropic upstream (the same process, /v1/messages)
model = "bench-claude"
target = "anthropic:up-model"
base_url = "http://127.0.0.1:{fast}/v1"
api_key_env = "{key}"

[[route]]
model = "bench-claude-slow"
target = "anthropic:up-model"
base_url = "http://127.0.0.1:{slow}/v1"
api_key_env = "{key}"

[[route]]
model = "bench-slow"
target = "openai:up-model"
base_url = "http://127.0.0.1:{slow}/v1"
api_key_env = "{key}"

[[route]]                  # two equal targets: what choosing between them costs
model = "bench-two"
strategy = "balance"
[[route.targets]]
target = "openai:up-model"
base_url = "http://127.0.0.1:{fast}/v1"
api_key_env = "{key}"
[[route.targets]]
target = "openai:up-model"
base_url = "http://127.0.0.1:{fast}/v1"
api_key_env = "{key}"

[[route]]                  # the first target refuses every connection: a failover per request
model = "bench-failover"
cooldown = 0.001
[[route.targets]]
target = "openai:up-model"
base_url = "http://127.0.0.1:{dead}/v1"
api_key_env = "{key}"
[[route.targets]]
target = "openai:up-model"
base_url = "http://127.0.0.1:{fast}/v1"
api_key_env = "{key}"
"""

LITELLM_YAML = """\
model_list:
  - model_name: bench-model
    litellm_params:
      model: openai/up-model
      api_base: http://127.0.0.1:{fast}/v1
      api_key: os.environ/{key}
  - model_name: bench-slow
    litellm_params:
      model: openai/up-model
      api_base: http://127.0.0.1:{slow}/v1
      api_key: os.environ/{key}
  # LiteLLM's /v1/messages sends `openai/` models to the Responses API (BerriAI/litellm#37088);
  # an OpenAI-chat upstream is reached from there as `hosted_vllm/`.
  - model_name: bench-vllm-model
    litellm_params:
      model: hosted_vllm/up-model
      api_base: http://127.0.0.1:{fast}/v1
      api_key: os.environ/{key}
  - model_name: bench-vllm-slow
    litellm_params:
      model: hosted_vllm/up-model
      api_base: http://127.0.0.1:{slow}/v1
      api_key: os.environ/{key}
  - model_name: bench-claude
    litellm_params:
      model: anthropic/up-model
      api_base: http://127.0.0.1:{fast}
      api_key: os.environ/{key}
  - model_name: bench-claude-slow
    litellm_params:
      model: anthropic/up-model
      api_base: http://127.0.0.1:{slow}
      api_key: os.environ/{key}
"""


class Proc:
    """A server process on a port; `stop()` ends it (and its children) by its process group."""

    def __init__(self, name: str, command: list[str], port: int, logs: Path, env: dict[str, str] | None = None):
        self.name = name
        self.port = port
        self.log = logs / f"{name}.log"
        with open(self.log, "wb") as out:
            self.popen = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=logs, start_new_session=True
            )

    def wait_ready(self, path: str, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.popen.returncode}); see {self.log}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"{self.name} did not answer {path} within {timeout:g}s; see {self.log}")

    def tail(self, lines: int = 15) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def pids(self) -> list[int]:
        """This process and its descendants (LiteLLM may serve from a child)."""
        found = [self.popen.pid]
        for pid in found:
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            found.extend(int(c) for c in children)
        return found

    def reset_peak(self) -> None:
        for pid in self.pids():
            try:
                reset_peak(pid)
            except OSError:
                pass

    def cpu_seconds(self) -> float:
        """User + system CPU time of the process tree so far (children that ended are not counted)."""
        ticks = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
        return ticks / os.sysconf("SC_CLK_TCK")

    def memory_mb(self, key: str) -> float:
        """`VmRSS` or `VmHWM` summed over the process tree, in MB."""
        total = 0
        for pid in self.pids():
            try:
                total += status_kb(key, pid)
            except OSError:
                continue
        return total / 1024

    def stop(self) -> None:
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()


def start_upstream(name: str, logs: Path, pace_ms: float, chunks: int) -> Proc:
    port = free_port()
    code = (
        f"import asyncio, sys; sys.path.insert(0, {str(ROOT)!r}); from bench.gateway import wire; "
        f"asyncio.run(wire.serve_upstream({port}, {pace_ms}, {chunks}))"
    )
    proc = Proc(name, [sys.executable, "-c", code], port, logs)
    proc.wait_ready("/stats", timeout=30)
    return proc


def _env() -> dict[str, str]:
    return dict(os.environ, **{KEY_ENV: "sk-bench-upstream"})


def start_toolwire(logs: Path, fast: int, slow: int, workers: int = 1, *, access_log: bool = False) -> Proc:
    """`toolwire serve` as a production gateway runs it: the access log off (`--no-access-log`).

    With the log on, every request writes a line to the log file (what the outside benchmark ran).
    """
    config = logs / "toolwire.toml"
    config.write_text(TOOLWIRE_TOML.format(fast=fast, slow=slow, dead=free_port(), key=KEY_ENV))
    port = free_port()
    command = [sys.executable, "-m", "toolwire.cli", "serve", "--config", str(config), "--port", str(port)]
    command += ["--workers", str(workers)] if workers > 1 else []
    command += [] if access_log or not _knows_access_log() else ["--no-access-log"]
    env = _env() | {"TOOLWIRE_GATEWAY_KEYS": CLIENT_KEY}
    proc = Proc(f"toolwire-{workers}w" if workers > 1 else "toolwire", command, port, logs, env)
    proc.wait_ready("/health")
    return proc


def _knows_access_log() -> bool:
    """Whether the toolwire being measured has `--no-access-log` (a checkout from before it has not)."""
    out = subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "serve", "--help"], capture_output=True, text=True, check=False
    )
    return "--no-access-log" in out.stdout


def start_portkey(logs: Path) -> Proc | str:
    """The Portkey AI gateway (`@portkey-ai/gateway` on Node.js, one process), or why it cannot run.

    It keeps no routes: each request names its upstream in `x-portkey-provider` and
    `x-portkey-custom-host` headers (`portkey_headers`).
    """
    if not PORTKEY.exists():
        return "n/a: bench/gateway/.portkey is missing (run bash bench/gateway/setup_portkey.sh, or make bench-gateway)"
    port = free_port()
    proc = Proc("portkey", ["node", str(PORTKEY), f"--port={port}", "--headless"], port, logs, _env())
    try:
        proc.wait_ready("/", timeout=120)
    except RuntimeError as exc:
        proc.stop()
        return f"n/a: {exc}"
    return proc


def portkey_headers(provider: str, upstream: int) -> bytes:
    """Portkey's routing headers: the provider's protocol, the upstream's address, its key."""
    return (
        f"x-portkey-provider: {provider}\r\nx-portkey-custom-host: http://127.0.0.1:{upstream}/v1\r\n"
        f"authorization: Bearer sk-bench-upstream\r\n"
    ).encode()


def portkey_version() -> str:
    package = PORTKEY.parents[1] / "package.json"
    try:
        return str(json.loads(package.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "not installed"


def start_litellm(logs: Path, fast: int, slow: int) -> Proc | str:
    """LiteLLM's proxy with its defaults and one worker, or why it cannot run."""
    if not LITELLM.exists():
        return "n/a: bench/.litellm-venv is missing (run bash bench/gateway/setup_litellm.sh, or make bench-gateway)"
    config = logs / "litellm.yaml"
    config.write_text(LITELLM_YAML.format(fast=fast, slow=slow, key=KEY_ENV))
    port = free_port()
    command = [str(LITELLM), "--config", str(config), "--port", str(port), "--num_workers", "1"]
    env = _env() | {"LITELLM_TELEMETRY": "False", "NO_DOCS": "True", "LITELLM_MASTER_KEY": CLIENT_KEY}
    for name in ("DATABASE_URL", "OPENAI_API_KEY"):
        env.pop(name, None)
    proc = Proc("litellm", command, port, logs, env)
    try:
        proc.wait_ready("/health/liveliness", timeout=300)
    except RuntimeError as exc:
        proc.stop()
        return f"n/a: {exc}"
    return proc


def litellm_version() -> str:
    python = LITELLM.parent / "python"
    if not python.exists():
        return "not installed"
    out = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('litellm'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() or "unknown"
