"""The root directory file tools are confined to, and the one way every path is opened.

Checking a path and then opening it leaves a window in which a directory can be swapped for a
symlink to somewhere else. So paths are never opened by name: `open_in_root` walks them one
component at a time from a descriptor of the root, opening each with `O_NOFOLLOW` relative to
the previous one (`openat`). A symlink met on the way is read and followed by this code, which
keeps the walk inside the root; `..` may climb back only as far as the root. Whatever is swapped
in meanwhile, the walk never leaves the root.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path, PurePosixPath

from toolwire.tools import Dependency, ToolError

__all__ = ["ROOT", "display_path", "inside_root", "open_in_root", "relative", "resolved"]

ROOT: Dependency[Path] = Dependency("toolwire.root", Path.cwd)
"""The directory file tools work in: the current directory unless `deps`/`overrides` say otherwise."""

_MAX_LINKS = 40  # like the kernel's own limit on symlinks in one lookup
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def inside_root(root: Path, path: str) -> Path:
    """Resolve `path` against `root` for display and listing, refusing anything outside it.

    Only for names: opening goes through `open_in_root`, which cannot be raced.
    """
    base = root.resolve()
    _check_name(path)
    try:
        target = (base / path).resolve()
    except RuntimeError:  # Python 3.11 raises it for a symlink loop; later versions do not resolve it
        raise ToolError(f"{path!r} is a symlink loop; give a path that names a file.") from None
    if not target.is_relative_to(base):
        raise ToolError(_outside(path, base))
    return target


def resolved(path: Path) -> Path | None:
    """`path` with its links followed, or `None` for a symlink loop (which names no file)."""
    try:
        target = path.resolve()
    except (RuntimeError, OSError):  # RuntimeError: Python 3.11's word for a loop
        return None
    return None if target.is_symlink() else target


def _check_name(path: str) -> None:
    if not path.strip():
        raise ToolError("The path is empty; give a path relative to the project root.")
    if "\0" in path:
        raise ToolError(f"{path!r} holds a NUL byte, which no file name can; give the path without it.")


def relative(root: Path, path: Path) -> str:
    """`path` as the model should see it: relative to the root, with forward slashes."""
    return path.relative_to(root.resolve()).as_posix() or "."


def display_path(root: Path, path: str) -> str:
    """`path` as the model should see it, normalised, without touching the file system."""
    return "/".join(_components(root.resolve(), path)) or "."


def open_in_root(root: Path, path: str, flags: int, mode: int = 0o644, *, make_parents: bool = False) -> int:
    """Open `path` below `root` without ever following a link out of it; return the descriptor.

    Args:
        root: The root directory.
        path: Relative to the root (an absolute path inside the root is accepted too).
        flags: `os.open` flags for the last component (`O_NOFOLLOW` and `O_CLOEXEC` are added).
        mode: Permissions for a created file.
        make_parents: Create missing parent directories (for `write`).

    Raises:
        ToolError: The path leaves the root, or a component is missing or not a directory.
    """
    base = root.resolve()
    parts = _components(base, path)
    with _Walk(base) as walk:
        return walk.open(parts, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, make_parents, path)


def _components(base: Path, path: str) -> list[str]:
    _check_name(path)
    pure = PurePosixPath(path)
    if pure.is_absolute():
        if not Path(path).is_relative_to(base):
            raise ToolError(_outside(path, base))
        pure = PurePosixPath(Path(path).relative_to(base).as_posix())
    return [part for part in pure.parts if part not in ("", ".")]


def _outside(path: str, base: Path) -> str:
    return f"{path!r} is outside the project root {str(base)!r}; use a path inside it."


class _Walk:
    """A stack of open directory descriptors from the root down to where the walk is."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.stack = [os.open(base, _DIR_FLAGS & ~os.O_NOFOLLOW)]
        self.links = 0

    def __enter__(self) -> _Walk:
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self.stack:
            os.close(fd)

    def open(self, parts: list[str], flags: int, mode: int, make_parents: bool, shown: str) -> int:
        pending = list(reversed(parts))  # a stack: links push their targets' components
        if not pending:
            return os.dup(self.stack[-1]) if flags & os.O_DIRECTORY else self._not_a_file(shown)
        while pending:
            name = pending.pop()
            if name == "..":
                if len(self.stack) == 1:
                    raise ToolError(_outside(shown, self.base))
                os.close(self.stack.pop())
                continue
            last = not pending
            fd = self._step(name, flags if last else _DIR_FLAGS, mode, make_parents and not last, shown)
            if isinstance(fd, str):  # a symlink: its target's components come next
                pending.extend(reversed(self._link_parts(fd, shown)))
                continue
            if last:
                return fd
            self.stack.append(fd)
        return os.dup(self.stack[-1]) if flags & os.O_DIRECTORY else self._not_a_file(shown)

    def _step(self, name: str, flags: int, mode: int, make: bool, shown: str) -> int | str:
        """The opened descriptor, or the target of the symlink found there instead."""
        here = self.stack[-1]
        for attempt in range(3):  # a concurrent swap can change the answer; look again a few times
            try:
                return os.open(name, flags, mode, dir_fd=here)
            except FileNotFoundError:
                if not make:
                    raise ToolError(f"{shown!r} does not exist; use glob to find files.") from None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=here)
            except OSError as exc:
                if exc.errno == errno.EISDIR:
                    raise ToolError(f"{shown!r} is a directory; give a file path.") from None
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise ToolError(f"Cannot open {shown!r}: {exc.strerror}.") from None
                target = _link_target(name, here)
                if target is not None:
                    return target
                if exc.errno == errno.ENOTDIR and attempt == 2:
                    raise ToolError(f"{shown!r}: {name!r} is not a directory.") from None
        raise ToolError(f"{shown!r} keeps changing while it is opened; try again.")

    def _link_parts(self, target: str, shown: str) -> list[str]:
        self.links += 1
        if self.links > _MAX_LINKS:
            raise ToolError(f"{shown!r} goes through too many symbolic links.")
        if os.path.isabs(target):
            if not Path(target).is_relative_to(self.base):
                raise ToolError(_outside(shown, self.base))
            while len(self.stack) > 1:  # an absolute link inside the root restarts from the root
                os.close(self.stack.pop())
            target = Path(target).relative_to(self.base).as_posix()
        return [part for part in PurePosixPath(target).parts if part not in ("", ".")]

    @staticmethod
    def _not_a_file(shown: str) -> int:
        raise ToolError(f"{shown!r} is a directory; give a file path.")


def _link_target(name: str, dir_fd: int) -> str | None:
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:
        return None  # not a link (any more)
