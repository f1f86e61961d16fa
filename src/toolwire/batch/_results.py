"""Result lines and the output file: appended whole, flushed one by one, resumable.

Each result is one `os.write` of a complete line to a file opened with `O_APPEND`, so a crash,
`kill -9` or Ctrl-C loses at most the tasks in flight, never a written line. The only damage a
kill can do is a torn last line (a write cut by the OS); opening the file again cuts it off, so
that task simply runs again.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from toolwire.agent import RunResult
from toolwire.types import Usage

__all__ = ["ResultFile", "TaskResult"]


@dataclass(slots=True)
class TaskResult:
    """One result line; `error` is set when the task could not finish."""

    id: str
    text: str
    stop_reason: str
    turns: int
    calls: list[dict[str, Any]]
    usage: dict[str, int | None]
    duration_s: float
    error: str | None = None
    attempts: int = field(default=1)

    @classmethod
    def from_run(cls, task_id: str, result: RunResult, duration_s: float, attempts: int = 1) -> TaskResult:
        """The line for a finished agent run."""
        calls = [
            {
                "id": record.call.id,
                "name": record.call.name,
                "arguments": record.call.arguments,
                "result_kind": record.result.kind,
                "approved": record.approved,
                "duration_s": round(record.duration_s, 6),
            }
            for record in result.calls
        ]
        return cls(
            id=task_id,
            text=result.text,
            stop_reason=result.stop_reason,
            turns=result.turns,
            calls=calls,
            usage=_usage(result.usage),
            duration_s=round(duration_s, 6),
            attempts=attempts,
        )

    @classmethod
    def failed(cls, task_id: str, error: str, duration_s: float, attempts: int = 1) -> TaskResult:
        """The line for a task that raised, timed out or ran out of retries."""
        return cls(
            id=task_id,
            text="",
            stop_reason="error",
            turns=0,
            calls=[],
            usage=_usage(None),
            duration_s=round(duration_s, 6),
            error=error,
            attempts=attempts,
        )

    def to_json(self) -> str:
        """One line of compact JSON, without the newline."""
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":"), default=str)


def _usage(usage: Usage | None) -> dict[str, int | None]:
    if usage is None:
        return {"input_tokens": 0, "output_tokens": 0}
    return {"input_tokens": usage.input_tokens or 0, "output_tokens": usage.output_tokens or 0}


class ResultFile:
    """The output JSONL: which ids it already holds, and a way to append one result at a time.

    Args:
        path: The output file; created when missing.
        retry_failed: Drop the lines of failed tasks (rewriting the file atomically) so they run again.
    """

    def __init__(self, path: Path, *, retry_failed: bool = False) -> None:
        self.path = path
        self.done: set[str] = set()
        self.repaired = False
        self.dropped_failed = 0
        self._retry_failed = retry_failed
        self._fd: int | None = None

    def open(self) -> Self:
        """Read what is there (cutting a torn last line), then open for appending."""
        if self.path.exists():
            self._load()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return self

    def append(self, result: TaskResult) -> None:
        """Write one whole line in one system call."""
        if self._fd is None:
            raise RuntimeError("ResultFile.append before open()")
        data = (result.to_json() + "\n").encode("utf-8")
        written = os.write(self._fd, data)
        while written < len(data):  # regular files take it whole; a short write is finished, never lost
            written += os.write(self._fd, data[written:])
        self.done.add(result.id)

    def close(self) -> None:
        """Close the file (every line is already with the OS)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _load(self) -> None:
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            self.repaired = True
            with self.path.open("r+b") as handle:
                handle.truncate(end)
            data = data[:end]
        kept: list[bytes] = []
        for line in data.splitlines(keepends=True):
            parsed = _parse(line)
            if parsed is None:
                kept.append(line)
                continue
            task_id, failed = parsed
            if failed and self._retry_failed:
                self.dropped_failed += 1
                continue
            self.done.add(task_id)
            kept.append(line)
        if self.dropped_failed:
            temporary = self.path.with_name(self.path.name + ".tmp")
            temporary.write_bytes(b"".join(kept))
            os.replace(temporary, self.path)


def _parse(line: bytes) -> tuple[str, bool] | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or "id" not in data:
        return None
    return str(data["id"]), data.get("error") is not None
