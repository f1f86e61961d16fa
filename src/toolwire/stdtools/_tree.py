"""The names below a directory of the root, listed without following a link and without recursion.

`glob` and `grep` list through this walk. Each directory is opened from its parent's descriptor
with `O_NOFOLLOW` (`openat`), so a directory swapped for a symlink mid-walk is skipped, never
listed: the walk cannot name what lies outside the root. It keeps one descriptor per level on an
explicit stack instead of recursing, and goes `MAX_DEPTH` levels deep at most: a tree 3,000
levels deep (which `write` can make) is listed to that depth, its deeper part named as skipped,
and the rest of the root is untouched. Imports only this package's paths and the standard library.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from toolwire.stdtools._paths import display_path, open_in_root

__all__ = ["MAX_DEPTH", "Entry", "Walk", "glob_parts", "matches_glob"]

MAX_DEPTH = 64
"""Levels below the walk's start that are listed; deeper folders are named as skipped."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class Entry:
    """One name met by the walk: its path relative to the root, and what it is."""

    path: str
    is_dir: bool
    is_link: bool


@dataclass(slots=True)
class Walk:
    """A walk below `start` (relative to `root`), `depth` levels at most; `too_deep` fills as it goes.

    Attributes:
        root: The root directory.
        start: Where the walk begins, relative to the root.
        skipped: Folder names never entered (`.git`, `node_modules`, ...).
        depth: The deepest level listed, below `start` (1: its own entries only).
        too_deep: Folders that were not entered because they lie deeper than `MAX_DEPTH`.
    """

    root: Path
    start: str = "."
    skipped: frozenset[str] = frozenset()
    depth: int = MAX_DEPTH
    too_deep: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[Entry]:
        top = open_in_root(self.root, self.start, os.O_RDONLY | os.O_DIRECTORY)
        shown = display_path(self.root, self.start)
        prefix = "" if shown == "." else shown + "/"
        stack: list[tuple[int, str, Iterator[str]]] = [(top, prefix, iter(()))]
        limit = min(self.depth, MAX_DEPTH)
        try:
            stack[-1] = (top, prefix, iter((yield from _listed(top, prefix))))
            while stack:
                fd, at, pending = stack[-1]
                name = next(pending, None)
                if name is None:
                    os.close(stack.pop()[0])
                    continue
                if name in self.skipped:
                    continue
                if len(stack) >= limit:
                    if len(stack) >= MAX_DEPTH:
                        self.too_deep.append(at + name)
                    continue
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:  # gone, or swapped for a link since it was listed: not entered
                    continue
                stack.append((child, at + name + "/", iter(())))
                stack[-1] = (child, at + name + "/", iter((yield from _listed(child, at + name + "/"))))
        finally:
            for fd, _, _ in stack:
                os.close(fd)


def _listed(fd: int, at: str) -> Generator[Entry, None, list[str]]:
    """The entries of one open directory, sorted; returns its sub-folders' names."""
    folders, others = [], []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            else:
                others.append((entry.name, entry.is_symlink()))
    folders.sort()
    for name in folders:
        yield Entry(at + name, True, False)
    for name, link in sorted(others):
        yield Entry(at + name, False, link)
    return folders


def glob_parts(pattern: str) -> tuple[str, list[str], int]:
    """Where a glob pattern's walk can start (its literal folders), the rest, and how deep it goes."""
    parts = [p for p in PurePosixPath(pattern).parts if p not in ("", ".")]
    start: list[str] = []
    while len(parts) > 1 and not _magic(parts[0]):
        start.append(parts.pop(0))
    depth = MAX_DEPTH if "**" in parts else len(parts)
    return "/".join(start) or ".", parts, depth


def matches_glob(parts: list[str], path: list[str]) -> bool:
    """Whether path components match glob components (`**`: any number of folders), case-sensitively."""
    reachable = {0}  # how many pattern parts can have been used after the path parts seen so far
    for name in path:
        reachable = _closure(parts, reachable)
        step = set()
        for used in reachable:
            if used < len(parts):
                if parts[used] == "**":
                    step.add(used)
                elif fnmatch.fnmatchcase(name, parts[used]):
                    step.add(used + 1)
        reachable = step
        if not reachable:
            return False
    return len(parts) in _closure(parts, reachable)


def _closure(parts: list[str], reachable: set[int]) -> set[int]:
    """`**` may also match no folder at all: skipping it is always possible."""
    out = set(reachable)
    for used in sorted(reachable):
        while used < len(parts) and parts[used] == "**":
            used += 1
            out.add(used)
    return out


def _magic(part: str) -> bool:
    return any(char in part for char in "*?[")
