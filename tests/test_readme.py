"""The README's Python examples run as written, offline, and it links nowhere outside the repository."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)


def test_the_readme_has_python_examples() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_each_python_example_runs(number: int, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", BLOCKS[number]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "every example prints what it shows"


def test_no_link_leaves_the_repository() -> None:
    links = re.findall(r"\]\((https?://[^)]+)\)", README.read_text(encoding="utf-8"))
    assert links == []
