"""Helpers: run `toolwire.testing.fake_copilot` with a scenario and read its transcript."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire.copilot import CopilotClient, connect_copilot
from toolwire.testing import fake_copilot
from toolwire.testing.fake_copilot import ENV_SCENARIO, ENV_TRANSCRIPT

# Run by path: `-m toolwire.testing.fake_copilot` works too, but imports the whole testing package first.
FAKE_CLI = [sys.executable, fake_copilot.__file__]


@dataclass
class Fake:
    folder: Path

    @property
    def transcript_path(self) -> Path:
        return self.folder / "transcript.jsonl"

    def scenario(self, **scenario: Any) -> dict[str, str]:
        path = self.folder / "scenario.json"
        path.write_text(json.dumps(scenario))
        return {ENV_SCENARIO: str(path), ENV_TRANSCRIPT: str(self.transcript_path)}

    def client(self, scenario: dict[str, Any], **options: Any) -> CopilotClient:
        options.setdefault("timeout", 10.0)
        options.setdefault("startup_timeout", 10.0)
        env = self.scenario(**scenario) | options.pop("env", {})
        return connect_copilot("fake-model", cli_path=FAKE_CLI, env=env, **options)

    def entries(self) -> list[dict[str, Any]]:
        if not self.transcript_path.exists():
            return []
        return [json.loads(line) for line in self.transcript_path.read_text().splitlines()]

    def received(self, method: str | None = None) -> list[dict[str, Any]]:
        """Frames the fake CLI received (requests, and responses to its own requests)."""
        frames = [e["frame"] for e in self.entries() if e["dir"] == "in"]
        return [f for f in frames if method is None or f.get("method") == method]

    def methods(self) -> list[str]:
        return [f["method"] for f in self.received() if "method" in f]

    def model_saw(self) -> list[tuple[str, str, str]]:
        return [(e["toolCallId"], e["text"], e["resultType"]) for e in self.entries() if e["dir"] == "model"]

    def sent_events(self) -> list[str]:
        frames = [e["frame"] for e in self.entries() if e["dir"] == "out" and "frame" in e]
        return [f["params"]["event"]["type"] for f in frames if f.get("method") == "session.event"]


async def until(condition: Callable[[], bool], deadline_s: float = 30.0) -> None:
    """Wait until `condition()` holds (checked every 10 ms), failing after a generous deadline."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold within the deadline"
        await asyncio.sleep(0.01)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def tool_turn(*calls: tuple[str, str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    return {"text": text, "tool_calls": [{"id": i, "name": n, "arguments": a} for i, n, a in calls]}


def env_without(*names: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in names}
