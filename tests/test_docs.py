"""The site under docs/ builds with `mkdocs build --strict`: a broken link, a page left out of the
nav or a docstring mkdocstrings cannot read fails here, as it fails `make docs`."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_NEEDED = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def _missing() -> list[str]:
    missing = []
    for name in _NEEDED:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # the parent package of a dotted name is absent
            found = False
        if not found:
            missing.append(name)
    return missing


MISSING = _missing()


@pytest.mark.skipif(bool(MISSING), reason=f"the docs extra is not installed (missing: {', '.join(MISSING)})")
def test_the_docs_build_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml")]
    done = subprocess.run(
        [*command, "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{output}"
    assert "WARNING" not in output, f"mkdocs build warned:\n{output}"
    assert (tmp_path / "site" / "reference" / "types" / "index.html").is_file()


# What the code cites must be in the repository: a maintainer who clones it has nothing else.
_CITED_FILE = re.compile(r"\b((?:SPEC|PROVIDERS|STYLE|COPILOT|DEVELOPERS)\.md|docs/[\w/-]+\.md)\b")
_WORK_LOG = re.compile(
    r"\b(?:SPEC|PROVIDERS|STYLE|COPILOT) ?§|\bissue \d+\b|\b(?:session|sitting) \d+\b", re.IGNORECASE
)


def _texts() -> list[tuple[str, int, str]]:
    found = []
    for folder in ("src", "tests", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if any(part.startswith(".") for part in path.relative_to(ROOT).parts):
                continue  # the bench's own venvs and npm folder (git-ignored): not the project's code
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                found.append((str(path.relative_to(ROOT)), number, line))
    return found


def test_the_code_cites_only_files_in_the_repository() -> None:
    missing = [
        f"{path}:{number}: {name}"
        for path, number, line in _texts()
        for name in _CITED_FILE.findall(line)
        if not (ROOT / name).exists() and not _external(line)
    ]
    assert missing == []


def _external(line: str) -> bool:
    """Another project's page, named as such (`llama.cpp's docs/function-calling.md`)."""
    return "'s docs/" in line


def test_the_code_cites_no_work_log() -> None:
    assert [f"{path}:{number}: {line.strip()}" for path, number, line in _texts() if _WORK_LOG.search(line)] == []
