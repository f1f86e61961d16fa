"""The file tools under hostile input: catastrophic patterns, FIFOs, binary and huge files, and
directories swapped for symlinks while the tools run."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from toolwire import ToolCall
from toolwire.stdtools import ROOT, edit, glob, grep, read, write
from toolwire.tools import Tool, ToolContext, ToolError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "a.py").write_text("x = 1\n# TODO: more\n", encoding="utf-8")
    return folder


def call(tool: object, root: Path, **arguments: object) -> str:
    return tool.function(root=root, **arguments)  # type: ignore[attr-defined,no-any-return]


def test_grep_runs_catastrophic_patterns_in_linear_time(root: Path) -> None:
    (root / "evil.txt").write_text("a" * 40 + "b\n" + "a" * 40 + "\n", encoding="utf-8")
    # Python's backtracking re needs about 2**40 steps for the first line; RE2 needs 41.
    assert call(grep, root, pattern="(a+)+$", path="evil.txt") == "evil.txt:2: " + "a" * 40


def test_grep_names_the_syntax_it_does_not_support(root: Path) -> None:
    with pytest.raises(ToolError) as caught:
        call(grep, root, pattern=r"(a)\1")
    assert caught.value.message == (
        "Invalid regular expression '(a)\\\\1': invalid escape sequence: \\1. grep uses RE2 syntax (Python-like, "
        "without backreferences or lookaround)."
    )


def test_fifos_are_skipped_or_refused_never_read(root: Path) -> None:
    os.mkfifo(root / "src" / "pipe")
    assert call(grep, root, pattern="TODO") == "src/a.py:2: # TODO: more"
    for tool, arguments in ((read, {"path": "src/pipe"}), (grep, {"pattern": "x", "path": "src/pipe"})):
        if tool is grep:
            assert call(tool, root, **arguments) == "No matches for 'x'."
            continue
        with pytest.raises(ToolError) as caught:
            call(tool, root, **arguments)
        assert caught.value.message == "'src/pipe' is not a regular file (a FIFO, socket or device); give a text file."


def test_binary_files_are_reported_not_dumped(root: Path) -> None:
    (root / "blob.bin").write_bytes(b"\x00\x01TODO\xff" * 10)
    assert call(grep, root, pattern="TODO") == "blob.bin: binary file matches (not shown)\nsrc/a.py:2: # TODO: more"
    with pytest.raises(ToolError) as caught:
        call(read, root, path="blob.bin")
    assert caught.value.message == "'blob.bin' is a binary file (70 bytes); read shows text files only."


def test_read_and_grep_memory_is_bounded_by_what_they_return(root: Path) -> None:
    big = root / "big.log"
    with big.open("wb") as f:
        f.write(b"first line\nsecond line\n" + b"x" * 9000)  # text for the first 8 KiB, so it is not binary
        f.truncate(256 * 1024 * 1024)  # sparse: 256 MiB of NULs after the text, one endless last line
    program = f"""
from pathlib import Path
import json
from toolwire.stdtools import grep, read
root = Path({str(root)!r})
shown = read.function(path="big.log", limit=1, root=root)
found = grep.function(pattern="second", path="big.log", root=root)
status = Path("/proc/self/status").read_text()
peak_kb = int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1])
print(json.dumps([shown, found, peak_kb // 1024]))
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, check=True)
    shown, found, peak_mb = json.loads(done.stdout)
    assert shown == "     1\tfirst line\n[lines 1-1 of 3; use offset=2 for more]"
    assert found == "big.log:2: second line"
    assert peak_mb < 120, f"peak RSS {peak_mb} MB for a 256 MiB file"


def test_paths_through_links_stay_inside_the_root(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE\n", encoding="utf-8")
    (root / "inner-link").symlink_to(root / "src")
    (root / "relative-link").symlink_to("src")
    (root / "escape").symlink_to(outside)
    (root / "sneaky").symlink_to("../outside")
    assert call(read, root, path="inner-link/a.py") == "     1\tx = 1\n     2\t# TODO: more"
    assert call(read, root, path="relative-link/../src/a.py", limit=1).startswith("     1\tx = 1")
    for path in ("escape/secret.txt", "sneaky/secret.txt", "../outside/secret.txt", str(outside / "secret.txt")):
        with pytest.raises(ToolError, match="is outside the project root"):
            call(read, root, path=path)
        with pytest.raises(ToolError, match="is outside the project root"):
            call(write, root, path=path, content="x")
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "OUTSIDE\n"
    assert call(write, root, path="inner-link/new/b.py", content="y = 2\n") == (
        "Created inner-link/new/b.py (6 characters, 2 lines)."
    )
    assert (root / "src" / "new" / "b.py").read_text(encoding="utf-8") == "y = 2\n"
    assert call(edit, root, path="relative-link/new/b.py", old_text="2", new_text="3") == (
        "Replaced 1 occurrence in relative-link/new/b.py."
    )


SWAPS = int(os.environ.get("TOOLWIRE_RACE_SWAPS", "4000"))
"""Swaps per race test; `make fuzz` runs 50,000."""


class Swapper(threading.Thread):
    """Swaps the directory `d` for a symlink to `outside` and back, `SWAPS` times."""

    def __init__(self, real: Path, outside: Path) -> None:
        super().__init__()
        self.real, self.parked, self.outside = real, real.with_name("d-parked"), outside
        self.swaps = 0

    def run(self) -> None:
        while self.swaps < SWAPS:
            self.real.rename(self.parked)
            self.put(lambda: self.real.symlink_to(self.outside))
            self.put(lambda: self.parked.rename(self.real))
            self.swaps += 1

    def put(self, make: Callable[[], None]) -> None:
        """Put something at `d`, first taking away a parent directory `write` made meanwhile."""
        while True:
            if self.real.is_symlink():
                self.real.unlink()
            elif self.real.exists():
                shutil.rmtree(self.real, ignore_errors=True)
            try:
                make()
                return
            except OSError:
                continue


def attack(root: Path, swapper: Swapper) -> tuple[int, int, list[str]]:
    """Read and write through `d` until the swapper is done; return reads, writes and leaks."""
    reads = writes = 0
    leaked: list[str] = []
    while swapper.is_alive():
        with contextlib.suppress(ToolError, OSError):  # refused or caught mid-swap: fine
            value = call(read, root, path="d/secret.txt")
            reads += 1
            leaked.extend([value] if "OUTSIDE" in value else [])
        with contextlib.suppress(ToolError, OSError):
            call(write, root, path="d/x.txt", content="w")
            writes += 1
    return reads, writes, leaked


def test_swapping_a_directory_for_a_symlink_never_leaks_or_writes_outside(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE\n", encoding="utf-8")
    (root / "d").mkdir()
    (root / "d" / "secret.txt").write_text("inside\n", encoding="utf-8")
    swapper = Swapper(root / "d", outside)
    swapper.start()
    reads, writes, leaked = attack(root, swapper)
    swapper.join()
    assert (swapper.swaps, leaked, sorted(p.name for p in outside.iterdir())) == (SWAPS, [], ["secret.txt"])
    assert reads > 0 and writes > 0


@pytest.mark.parametrize("tool", [read, write, edit, grep], ids=lambda t: t.name)
async def test_a_nul_byte_in_a_path_is_refused_in_one_sentence_without_a_logged_traceback(
    root: Path, tool: Tool, caplog: pytest.LogCaptureFixture
) -> None:
    arguments = {"path": "src/a\0.py", "content": "x", "old_text": "x", "new_text": "y", "pattern": "x"}
    accepted = {name: arguments[name] for name in tool.definition.parameters["properties"] if name in arguments}
    call = ToolCall(id="c1", name=tool.name, arguments=accepted)
    with caplog.at_level(logging.DEBUG, logger="toolwire"):
        result = await tool.execute_raw(accepted, ToolContext(overrides={ROOT.id: root}), call=call)
    assert (result.kind, result.value) == (
        "error",
        "'src/a\\x00.py' holds a NUL byte, which no file name can; give the path without it.",
    )
    assert caplog.records == []


def test_a_symlink_loop_is_skipped_and_named_not_fatal_for_the_tree(root: Path) -> None:
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    (root / "src" / "self").symlink_to("self")
    assert call(glob, root, pattern="**/*") == ("src\nsrc/a.py\n[skipped 3 symlink loops: loop1, loop2, src/self]")
    assert call(grep, root, pattern="TODO") == "src/a.py:2: # TODO: more"
    with pytest.raises(ToolError) as caught:
        call(grep, root, pattern="TODO", path="loop1")
    assert caught.value.message == "'loop1' is a symlink loop; give a path that names a file."


def test_a_hard_link_to_a_file_outside_is_neither_read_written_nor_edited(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("OUTSIDE\n", encoding="utf-8")
    os.link(secret, root / "src" / "linked.txt")
    message = (
        "'src/linked.txt' has 2 hard links, so it may be a file outside the project root under another name; "
        "the file tools leave it alone (copy it to a new file to work on it)."
    )
    for tool, arguments in (
        (read, {}),
        (write, {"content": "overwritten"}),
        (edit, {"old_text": "OUTSIDE", "new_text": "edited"}),
    ):
        with pytest.raises(ToolError) as caught:
            call(tool, root, path="src/linked.txt", **arguments)
        assert caught.value.message == message
    assert call(grep, root, pattern="OUTSIDE") == "No matches for 'OUTSIDE'."
    assert secret.read_text(encoding="utf-8") == "OUTSIDE\n"  # before: emptied by write's open, then written


def test_a_tree_3000_levels_deep_is_listed_to_a_bounded_depth_and_the_rest_still_works(root: Path) -> None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(3000):  # deeper than PATH_MAX allows by name: made one level at a time
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("deep.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    finally:
        os.close(fd)
    deepest = "/".join(["d"] * 64)
    note = f"[skipped 1 folder(s) more than 64 levels deep: {deepest}]"
    try:
        assert call(grep, root, pattern="TODO").splitlines() == [
            "src/a.py:2: # TODO: more",
            note,
        ]  # before: RecursionError
        assert call(glob, root, pattern="**/*.py").splitlines() == ["src/a.py", note]
    finally:
        _remove_chain(root)  # pytest's own clean-up (shutil.rmtree) recurses: it would fail on it, in every later run


def _remove_chain(folder: Path) -> None:
    """Remove a chain of `d` folders too deep for `shutil.rmtree`, lifting one level at a time."""
    while (folder / "d" / "d").is_dir():
        (folder / "d" / "d").rename(folder / "lifted")
        (folder / "d").rmdir()
        (folder / "lifted").rename(folder / "d")
    shutil.rmtree(folder / "d")


def test_glob_never_names_what_lies_behind_a_directory_swapped_for_a_symlink(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret-name.txt").write_text("x", encoding="utf-8")
    (root / "d").mkdir()
    (root / "d" / "inside.txt").write_text("x", encoding="utf-8")
    swapper = Swapper(root / "d", outside)
    swapper.start()
    leaked = []
    while swapper.is_alive():
        with contextlib.suppress(ToolError, OSError):
            listed = call(glob, root, pattern="**/*.txt")
            leaked.extend([listed] if "secret-name" in listed else [])
    swapper.join()
    assert leaked == []  # before: 48 of 1,000 listings named it
