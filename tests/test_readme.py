"""The README's examples run as written, offline, and it links nowhere outside the repository.

Python blocks run; TOML blocks load as a settings file; the offline `toolwire` command lines
run; the ones that need a real model are checked against the parser (flags and choices exist).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text(encoding="utf-8")
# Blocks for a running gateway (127.0.0.1:4000) and Codex's own config file are run by
# tests/gateway/test_coding_agents.py, against `toolwire serve`, instead.
GATEWAY = "127.0.0.1:4000"
BLOCKS = [b for b in re.findall(r"^```python\n(.*?)^```", TEXT, re.DOTALL | re.MULTILINE) if GATEWAY not in b]
TOML = [b for b in re.findall(r"^```toml\n(.*?)^```", TEXT, re.DOTALL | re.MULTILINE) if "[model_providers." not in b]
SHELL = re.findall(r"^```sh\n(.*?)^```", TEXT, re.DOTALL | re.MULTILINE)
# Indented command lines: `toolwire ...`, optionally after `VAR=... ` assignments.
COMMANDS = [line.split("#")[0].strip() for line in re.findall(r"^    ((?:[A-Z_]+=\S+ )*toolwire .*)$", TEXT, re.M)]


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
    links = re.findall(r"\]\((https?://[^)]+)\)", TEXT)
    assert links == []
    assert re.findall(r"[`(]\.\./[^`)]*", TEXT) == []  # nor a path to a file outside it


def test_each_toml_example_is_a_valid_settings_file(tmp_path: Path) -> None:
    from toolwire.config import load_config

    assert TOML
    for number, block in enumerate(TOML):
        path = tmp_path / f"{number}.toml"
        path.write_text(block, encoding="utf-8")
        assert load_config(path).path == path


def test_each_shell_example_names_a_make_target() -> None:
    makefile = (README.parent / "Makefile").read_text(encoding="utf-8")
    lines = [line.split("#")[0].strip() for block in SHELL for line in block.splitlines() if line.strip()]
    assert lines and all(line.startswith("make ") for line in lines)
    assert all(re.search(rf"^{line.split()[1]}:", makefile, re.M) for line in lines)


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    while "=" in words[0]:
        words.pop(0)
    assert words[0] == "toolwire", command
    return words[1:]


def test_the_command_examples_parse_and_the_offline_ones_run(tmp_path: Path) -> None:
    from toolwire.cli._app import build_parser

    assert len(COMMANDS) >= 8
    offline = []
    for command in COMMANDS:
        args = build_parser().parse_args(_argv(command))  # a stale flag or choice exits here
        provider = args.provider or (args.model.partition(":")[0] if args.model and ":" in args.model else None)
        if provider is None or provider.startswith("scripted"):
            offline.append(_argv(command))
    assert len(offline) >= 3
    env = {k: v for k, v in os.environ.items() if k != "DEBUG"} | {"XDG_CONFIG_HOME": str(tmp_path / "none")}
    for argv in offline:
        done = subprocess.run(
            [sys.executable, "-m", "toolwire.cli", *argv],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (argv, done.stderr)


def test_install_hints_use_the_checkout_form_since_toolwire_is_not_on_pypi() -> None:
    sources = [README, *sorted((README.parent / "src").rglob("*.py"))]
    found = [str(p) for p in sources if "install 'toolwire[" in p.read_text(encoding="utf-8")]
    assert found == []
    assert "pip install -e '.[cli,serve]'" in TEXT
    for status in ("0 when", "1 on a runtime failure", "2 on a usage", "3 when the run did not finish", "130 when"):
        assert status in TEXT


def _extras() -> dict[str, list[str]]:
    import tomllib

    with (README.parent / "pyproject.toml").open("rb") as file:
        extras: dict[str, list[str]] = tomllib.load(file)["project"]["optional-dependencies"]
    return extras


def test_the_install_line_lists_every_extra() -> None:
    [line] = [line for line in TEXT.splitlines() if line.startswith("python3 -m venv .venv && ")]
    listed = line.split("# extras:", 1)[1].split()
    assert sorted(listed) == sorted(_extras())


def test_the_tracing_example_needs_only_the_otel_extra() -> None:
    """Every module the example imports comes with a distribution the `otel` extra installs.

    (`opentelemetry` is a namespace package: `from opentelemetry import trace` is the API's module.)
    """
    from importlib import metadata

    section = TEXT.split("### Tracing (OpenTelemetry)\n", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"^```python\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    imports = re.findall(r"^from (\S+) import (\w+)", block, re.M)
    modules = {f"{m}.{name}" if m == "opentelemetry" else m for m, name in imports if not m.startswith("toolwire")}
    wanted = {re.split(r"[<>=;\[ ]", requirement, maxsplit=1)[0] for requirement in _extras()["otel"]}

    def provider(module: str) -> str:
        path = module.replace(".", "/")
        for dist in metadata.distributions():
            if any(str(f) in (f"{path}/__init__.py", f"{path}.py") for f in dist.files or ()):
                return str(dist.metadata["Name"])
        raise AssertionError(f"no installed distribution provides {module}")

    assert modules == {
        "opentelemetry.trace",
        "opentelemetry.sdk.trace",
        "opentelemetry.sdk.trace.export",
        "opentelemetry.sdk.trace.export.in_memory_span_exporter",
    }
    assert {provider(m) for m in modules} <= wanted
