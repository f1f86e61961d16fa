"""Task lines: one JSON object per line, read lazily, bad lines reported with their numbers.

A task file can be far larger than memory allows to hold twice, so tasks are read one line at
a time; only the ids seen so far are kept, to refuse duplicates.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["BadLine", "Task", "parse_task", "read_tasks"]

_OPTIONAL: dict[str, tuple[type, ...]] = {
    "system": (str,),
    "model": (str,),
    "tools": (list,),
    "max_tool_turns": (int,),
    "root": (str,),
}


@dataclass(frozen=True, slots=True)
class Task:
    """One agent run of a batch.

    Besides the prompt, a task may name its own system prompt, model, standard tools, tool-turn
    limit and root folder; unknown keys are kept in `extra`.
    """

    id: str
    prompt: str
    system: str | None = None
    model: str | None = None
    tools: tuple[str, ...] | None = None
    max_tool_turns: int | None = None
    root: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BadLine:
    """A task line that was skipped, and why."""

    line: int
    reason: str


def parse_task(data: Any) -> Task:
    """Check one decoded task object; raise `ValueError` saying which field is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"a task must be a JSON object, got {type(data).__name__}")
    task_id = data.get("id")
    if isinstance(task_id, bool) or not isinstance(task_id, str | int) or task_id == "":
        raise ValueError(f"'id' must be a non-empty string or an integer, got {task_id!r}")
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(f"'prompt' must be a non-empty string, got {prompt!r}")
    for key, types in _OPTIONAL.items():
        value = data.get(key)
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            raise ValueError(f"{key!r} must be {' or '.join(t.__name__ for t in types)}, got {value!r}")
    tools = data.get("tools")
    if tools is not None and not all(isinstance(t, str) for t in tools):
        raise ValueError(f"'tools' must be a list of standard tool names, got {tools!r}")
    turns = data.get("max_tool_turns")
    if turns is not None and turns < 0:
        raise ValueError(f"'max_tool_turns' must be >= 0, got {turns!r}")
    known = {"id", "prompt", *_OPTIONAL}
    return Task(
        id=str(task_id),
        prompt=prompt,
        system=data.get("system"),
        model=data.get("model"),
        tools=tuple(tools) if tools is not None else None,
        max_tool_turns=turns,
        root=data.get("root"),
        extra={k: v for k, v in data.items() if k not in known},
    )


def read_tasks(path: Path) -> Iterator[Task | BadLine]:
    """Yield each task of a JSONL file in order, or a `BadLine` for one that cannot run.

    Blank lines are skipped silently; a repeated id is a bad line (the first one runs).
    """
    seen: dict[str, int] = {}
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                task = parse_task(json.loads(raw.decode("utf-8")))
            except UnicodeDecodeError:
                yield BadLine(number, "not UTF-8 text")
                continue
            except (ValueError, RecursionError) as exc:
                yield BadLine(number, _reason(exc))
                continue
            if task.id in seen:
                yield BadLine(number, f"duplicate id {task.id!r} (first on line {seen[task.id]})")
                continue
            seen[task.id] = number
            yield task


def _reason(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg} at column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "not valid JSON (nested too deeply)"
    return str(exc)
