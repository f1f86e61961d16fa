"""Properties of the test suite itself: it runs the same under every way CI invokes pytest."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# Per-test JUnit properties are refused by the default `xunit2` report format; with
# `filterwarnings = error` the warning fails the test under `pytest --junitxml` only.
_JUNIT_ONLY_FIXTURES = {"record_property", "record_xml_attribute"}


def test_no_test_needs_a_junit_format_other_than_the_default() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names = {a.arg for a in node.args.args + node.args.kwonlyargs}
                found += [f"{path.relative_to(TESTS)}::{node.name} uses {n}" for n in names & _JUNIT_ONLY_FIXTURES]
    assert found == []
