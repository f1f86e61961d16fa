"""File tools: read, write, edit, grep and glob, all confined to the root directory."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from toolwire.stdtools._paths import ROOT, display_path, inside_root, open_in_root, resolved
from toolwire.stdtools._tree import MAX_DEPTH, Walk, glob_parts, matches_glob
from toolwire.tools import Depends, ToolError, tool
from toolwire.tools._regex import InvalidPattern, LinearPattern, compile_linear

__all__ = ["edit", "glob", "grep", "read", "write"]

_SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
)
_MAX_LINE = 2000
_MAX_GREP = 200
_MAX_GLOB = 1000


@tool(risk="low")
def read(path: str, offset: int = 1, limit: int = 2000, root: Path = Depends(ROOT)) -> str:
    """Read a text file, with line numbers (like `cat -n`).

    Args:
        path: The file, relative to the project root.
        offset: The first line to show (1-based).
        limit: How many lines to show at most.
        root: The project root (injected).
    """
    if offset < 1 or limit < 1:
        raise ToolError(f"offset and limit must be at least 1, got offset={offset}, limit={limit}.")
    with _open_text(root, path) as handle:
        shown: list[str] = []
        total = 0
        for total, raw in _raw_lines(handle):  # every line is counted, only the window decoded
            if offset <= total < offset + limit:
                shown.append(f"{total:>6}\t{_text(raw)}")
    if offset > max(total, 1):
        raise ToolError(f"{path!r} has {total} lines; offset {offset} is past the end.")
    body = "\n".join(shown)
    last = offset - 1 + len(shown)
    if last < total:
        body += f"\n[lines {offset}-{last} of {total}; use offset={last + 1} for more]"
    return body


@tool(risk="high")
def write(path: str, content: str, root: Path = Depends(ROOT)) -> str:
    """Create or overwrite a text file (parent folders are created).

    Args:
        path: The file, relative to the project root.
        content: The whole new content of the file.
        root: The project root (injected).
    """
    existed = _exists(root, path)
    # No O_TRUNC: a file is emptied only once it is known to be one of the root's own (a hard link
    # to a file outside would be emptied by the open itself).
    fd = open_in_root(root, path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK, make_parents=True)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        _require_regular(handle.fileno(), path)
        handle.truncate()
        handle.write(content)
    verb = "Overwrote" if existed else "Created"
    shown = display_path(root, path)
    return f"{verb} {shown} ({len(content)} characters, {content.count(chr(10)) + 1} lines)."


@tool(risk="high")
def edit(path: str, old_text: str, new_text: str, replace_all: bool = False, root: Path = Depends(ROOT)) -> str:
    """Replace exact text in a file; old_text must match exactly once unless replace_all is true.

    Args:
        path: The file, relative to the project root.
        old_text: The exact text to replace, including whitespace; add surrounding lines to make it unique.
        new_text: The replacement text.
        replace_all: Replace every occurrence instead of requiring exactly one.
        root: The project root (injected).
    """
    if not old_text:
        raise ToolError("old_text is empty; give the exact text to replace.")
    fd = open_in_root(root, path, os.O_RDWR | os.O_NONBLOCK)
    with os.fdopen(fd, "r+", encoding="utf-8", newline="") as handle:
        _require_regular(handle.fileno(), path)
        text = handle.read()
        count = text.count(old_text)
        if count == 1 or (count > 1 and replace_all):
            handle.seek(0)
            handle.write(text.replace(old_text, new_text))
            handle.truncate()
    if count == 0:
        raise ToolError(f"old_text was not found in {path!r}; read the file and copy the text exactly.")
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_text matches {count} times in {path!r}; add surrounding lines to make it unique "
            "or set replace_all to true."
        )
    shown = display_path(root, path)
    return f"Replaced {count} occurrence{'s' if count > 1 else ''} in {shown}."


@tool(risk="low")
def grep(pattern: str, path: str = ".", glob: str | None = None, root: Path = Depends(ROOT)) -> str:
    """Search file contents with a regular expression; returns `path:line: text` for each match.

    Args:
        pattern: A regular expression (RE2 syntax: like Python's, without backreferences or lookaround).
        path: A file or folder to search, relative to the project root.
        glob: Only search files whose name matches this pattern, e.g. "*.py".
        root: The project root (injected).
    """
    compiled = compile_pattern(pattern)
    start = inside_root(root, path)
    if not start.exists():
        raise ToolError(f"{path!r} does not exist; use glob to find files.")
    found: list[str] = []
    walk = Walk(root, display_path(root, path), _SKIPPED_DIRS)
    single = not start.is_dir()
    files = [display_path(root, path)] if single else (e.path for e in walk if not e.is_dir)
    for file in files:
        if not single and glob is not None and not fnmatch.fnmatch(PurePosixPath(file).name, glob):
            continue
        found.extend(_grep_file(root, file, compiled, _MAX_GREP + 1 - len(found)))
        if len(found) > _MAX_GREP:
            found[_MAX_GREP:] = [f"[stopped after {_MAX_GREP} matches; narrow the pattern or the path]"]
            break
    if walk.too_deep and len(found) <= _MAX_GREP:
        found.append(_too_deep(walk.too_deep))
    return "\n".join(found) if found else f"No matches for {pattern!r}."


def _too_deep(folders: list[str]) -> str:
    return f"[skipped {len(folders)} folder(s) more than {MAX_DEPTH} levels deep: {', '.join(folders[:5])}]"


def _grep_file(root: Path, name: str, compiled: LinearPattern, room: int) -> list[str]:
    try:
        fd = open_in_root(root, name, os.O_RDONLY | os.O_NONBLOCK)
    except ToolError:
        return []  # gone, or swapped for a link out of the root, since the listing
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            return []  # a FIFO, socket or device (reading it could block forever), or a hard link (read refuses it)
        if _is_binary(handle):
            matched = any(compiled.search(line) for _, line in _raw_lines(handle))
            return [f"{name}: binary file matches (not shown)"] if matched else []
        found = []
        for number, line in _raw_lines(handle):
            if compiled.search(line):
                found.append(f"{name}:{number}: {_clip(line.decode('utf-8', 'replace'))}")
                if len(found) >= room:
                    break
        return found


@tool(risk="low")
def glob(pattern: str, root: Path = Depends(ROOT)) -> str:
    """List files matching a glob pattern such as "**/*.py", relative to the project root.

    Args:
        pattern: The glob pattern; `**` matches any number of folders.
        root: The project root (injected).
    """
    if pattern.startswith("/") or ".." in Path(pattern).parts:
        raise ToolError(f"{pattern!r} leaves the project root; use a pattern relative to it.")
    base = root.resolve()
    start, parts, depth = glob_parts(pattern)
    skip = len(PurePosixPath(start).parts) if start != "." else 0
    walk = Walk(root, start, _SKIPPED_DIRS, depth)
    matches, loops = [], []
    try:
        for entry in walk:
            if not matches_glob(parts, entry.path.split("/")[skip:]):
                continue
            target = resolved(base / entry.path) if entry.is_link else base / entry.path
            if target is None:
                loops.append(entry.path)
            elif target.is_relative_to(base):
                matches.append(entry.path)
    except ToolError:
        return f"No files match {pattern!r}."  # its literal folders are not there (or not folders)
    matches.sort()
    if len(matches) > _MAX_GLOB:
        matches[_MAX_GLOB:] = [f"[{len(matches) - _MAX_GLOB} more; narrow the pattern]"]
    if loops:
        matches.append(f"[skipped {len(loops)} symlink loop{'s' * (len(loops) > 1)}: {', '.join(sorted(loops))}]")
    if walk.too_deep:
        matches.append(_too_deep(walk.too_deep))
    return "\n".join(matches) if matches else f"No files match {pattern!r}."


@contextlib.contextmanager
def _open_text(root: Path, path: str) -> Iterator[BinaryIO]:
    """The file opened for reading, after checking it is a regular text file."""
    fd = open_in_root(root, path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        _require_regular(handle.fileno(), path)
        if _is_binary(handle):
            size = os.fstat(handle.fileno()).st_size
            raise ToolError(f"{path!r} is a binary file ({size} bytes); read shows text files only.")
        yield handle


def _require_regular(fd: int, path: str) -> None:
    """A regular file with one name: a hard link's other name may lie outside the root."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"{path!r} is a directory; give a file path.")
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{path!r} is not a regular file (a FIFO, socket or device); give a text file.")
    if info.st_nlink > 1:
        raise ToolError(
            f"{path!r} has {info.st_nlink} hard links, so it may be a file outside the project root under "
            "another name; the file tools leave it alone (copy it to a new file to work on it)."
        )


def _exists(root: Path, path: str) -> bool:
    try:
        os.close(open_in_root(root, path, os.O_RDONLY | os.O_NONBLOCK))
    except ToolError:
        return False
    return True


def _is_binary(handle: BinaryIO) -> bool:
    """A NUL byte in the first 8 KiB, as git and grep decide; the position is restored."""
    head = handle.read(8192)
    handle.seek(0)
    return b"\0" in head


def _raw_lines(handle: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """Numbered lines without their newline, each cut to a bounded prefix.

    Memory stays flat even for a gigabyte on one line.
    """
    cap = _MAX_LINE * 4 + 4  # bytes enough for _MAX_LINE characters and the clipping note
    number, current, overflow = 0, bytearray(), False
    while chunk := handle.read(1 << 20):
        pieces = chunk.split(b"\n")
        for piece in pieces[:-1]:
            if not overflow:
                current.extend(piece[: cap - len(current)])
            number += 1
            yield number, bytes(current)
            current.clear()
            overflow = False
        tail = pieces[-1]
        if not overflow:
            current.extend(tail[: cap - len(current)])
            overflow = len(current) >= cap
    if current or overflow:
        yield number + 1, bytes(current)


def _text(raw: bytes) -> str:
    return _clip(raw.decode("utf-8", "replace").removesuffix("\r"))


def compile_pattern(pattern: str) -> LinearPattern:
    """Compile for grep with RE2, whose matching time is linear in the input (see `tools._regex`)."""
    try:
        return compile_linear(pattern)
    except InvalidPattern as exc:
        raise ToolError(
            f"Invalid regular expression {pattern!r}: {exc}. grep uses RE2 syntax (Python-like, "
            "without backreferences or lookaround)."
        ) from None


def _clip(line: str) -> str:
    return line if len(line) <= _MAX_LINE else line[:_MAX_LINE] + " [line clipped]"
