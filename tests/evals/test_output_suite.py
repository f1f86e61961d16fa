"""`toolwire eval output`: the typed-output suite, against a loopback server that answers every case right."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from toolwire.evals._output_cases import KINDS, output_cases
from toolwire.testing import ScriptedServer, reply
from toolwire.toolmodes import OUTPUT_TOOL
from toolwire.types import Request, Response, ToolCall

ANSWERS = {case.prompt: case.expected for case in output_cases()}


def test_the_suite_has_110_cases_with_known_answers_in_four_kinds() -> None:
    cases = output_cases()
    assert len(cases) == 110
    assert len({c.id for c in cases}) == 110
    assert {k: sum(c.kind == k for c in cases) for k in KINDS} == {
        "sentiment": 30,
        "person": 30,
        "order": 30,
        "number": 20,
    }
    assert [c.kind for c in cases[:4]] == ["sentiment", "person", "order", "number"]  # interleaved for --limit
    person = next(c for c in cases if c.id == "person_1")
    assert person.prompt == "Extract the person's name, age and city.\n\nMeet Bruno, a 26-year-old from Tokyo."
    assert person.expected == {"name": "Bruno", "age": 26, "city": "Tokyo"}


def right(request: Request) -> Response:
    """A model that answers every case right, in the form the strategy asks for."""
    user = request.messages[-1]
    expected = ANSWERS[str(getattr(user, "content", ""))]
    payload = expected if isinstance(expected, dict) else {"value": expected}
    if any(t.name == OUTPUT_TOOL for t in request.tools):
        return reply(tool_calls=[ToolCall(id="call_1", name=OUTPUT_TOOL, arguments=payload)])
    return reply(json.dumps(payload))


def test_eval_output_scores_each_strategy(tmp_path: Path) -> None:
    out = tmp_path / "output.json"
    with ScriptedServer(right) as server:
        command = [
            *(sys.executable, "-m", "toolwire.cli", "eval", "output", "--limit", "8"),
            *("--provider", "openai", "--model", "m", "--base-url", server.base_url + "/v1"),
            *("--strategies", "native,tool,prompted", "--json", str(out)),
        ]
        env = dict(os.environ, OPENAI_API_KEY="k", NO_COLOR="1", XDG_CONFIG_HOME=str(tmp_path / "none"))
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    rows = [(s["strategy"], s["cases"], s["valid_first"], s["valid"], s["exact"]) for s in report["summary"]]
    assert rows == [("native", 8, 1.0, 1.0, 1.0), ("tool", 8, 1.0, 1.0, 1.0), ("prompted", 8, 1.0, 1.0, 1.0)]
    assert "Typed output, openai:m, 8 cases" in done.stdout
    assert server.request_count == 24


def test_a_strategy_the_provider_lacks_is_a_usage_error(tmp_path: Path) -> None:
    command = [
        *(sys.executable, "-m", "toolwire.cli", "eval", "output", "--provider", "anthropic", "--model", "m"),
        *("--base-url", "http://127.0.0.1:9", "--strategies", "constrained"),
    ]
    env = dict(os.environ, ANTHROPIC_API_KEY="k", XDG_CONFIG_HOME=str(tmp_path / "none"))
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "--strategies constrained: not supported by this provider; use tool, native, prompted." in done.stderr
