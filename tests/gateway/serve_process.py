"""`toolwire serve` in a real subprocess on `--port 0`: the URL is read from its start banner.

Binding a "free" port in the test and handing its number over raced with other tests doing the
same; the gateway binds port 0 itself and says where it listens.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx2

_BANNER = re.compile(r"toolwire gateway at (http://\S+) ")


class ServeProcess:
    """`python -m toolwire.cli serve --config CONFIG --port 0 [flags]`, its banner and its log.

    Args:
        config: The settings file with the `[[route]]` tables.
        flags: More `serve` flags.
        env: The child's environment (default: this one, without a metrics directory).
        log: Where its stderr goes (default: kept in memory, `self.log` after exit).
    """

    def __init__(self, config: Path, *flags: str, env: dict[str, str] | None = None, log: Path | None = None) -> None:
        if env is None:
            env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
        argv = [sys.executable, "-m", "toolwire.cli", "serve", "--config", str(config), "--port", "0", *flags]
        self._log_path = log
        stderr = log.open("w") if log is not None else subprocess.PIPE
        self.process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
        self._stderr: list[str] = []
        self._readers: list[threading.Thread] = []
        if log is not None:
            stderr.close()  # type: ignore[union-attr]  # the child holds its own copy
        else:
            self._read_in_background(self.process.stderr, self._stderr)
        self.banner: list[str] = []
        self.log = ""
        self.url = ""

    def _read_in_background(self, pipe: IO[str] | None, into: list[str]) -> None:
        """Drain a pipe, so the child never blocks on a full one."""
        assert pipe is not None
        reader = threading.Thread(target=lambda: into.extend(pipe), daemon=True)
        reader.start()
        self._readers.append(reader)

    def start(self, timeout: float = 120) -> ServeProcess:
        """Wait for the banner, then for `/health`; the process must not exit meanwhile."""
        assert self.process.stdout is not None
        for line in self.process.stdout:  # the banner ends with the client paths
            self.banner.append(line.rstrip("\n"))
            if line.startswith("clients: "):
                break
        found = _BANNER.match(self.banner[0]) if self.banner else None
        if found is None:
            self.stop()
            raise AssertionError(f"toolwire serve printed no banner: {self.banner!r}, log: {self.log}")
        self.url = found.group(1)
        self._read_in_background(self.process.stdout, [])
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx2.get(self.url + "/health", timeout=5).status_code == 200:
                    return self
            except httpx2.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"toolwire serve did not answer /health: {self.log}")
            time.sleep(0.05)

    def stop(self, sig: signal.Signals = signal.SIGINT, timeout: float = 60) -> int:
        """Signal it, wait for it, keep its log; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for reader in self._readers:
            reader.join(10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        self.log = self._log_path.read_text() if self._log_path else "".join(self._stderr)
        return self.process.returncode

    def __enter__(self) -> ServeProcess:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
