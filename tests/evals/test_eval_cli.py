"""`toolwire eval bfcl` as a user runs it: a real subprocess against a real loopback server playing the model."""

from __future__ import annotations

import json
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli import cli_env
from toolwire.testing import ErrorReply, ScriptedServer, Turn, reply
from toolwire.types import Request, SystemMessage, ToolCall

AREA = {
    "name": "geometry.area",
    "description": "Area of a triangle.",
    "parameters": {
        "type": "dict",
        "properties": {"base": {"type": "integer"}, "height": {"type": "float"}, "unit": {"type": "string"}},
        "required": ["base", "height"],
    },
}
FACTORIAL = {
    "name": "math.factorial",
    "description": "Factorial of a number.",
    "parameters": {"type": "dict", "properties": {"number": {"type": "integer"}}, "required": ["number"]},
}
PLAY = {
    "name": "spotify.play",
    "description": "Play an artist.",
    "parameters": {
        "type": "dict",
        "properties": {"artist": {"type": "string"}, "duration": {"type": "integer"}},
        "required": ["artist", "duration"],
    },
}
QUESTIONS = {
    "simple_python": [
        (
            "Area of a triangle with base 10 and height 5?",
            [AREA],
            [{"geometry.area": {"base": [10], "height": [5.0], "unit": ["", "units"]}}],
        ),
        ("Factorial of 5?", [FACTORIAL], [{"math.factorial": {"number": [5]}}]),
    ],
    "multiple": [("Factorial of 4?", [AREA, FACTORIAL], [{"math.factorial": {"number": [4]}}])],
    "parallel": [
        (
            "Play Taylor Swift for 20 minutes and Maroon 5 for 15.",
            [PLAY],
            [
                {"spotify.play": {"artist": ["Taylor Swift"], "duration": [20]}},
                {"spotify.play": {"artist": ["Maroon 5"], "duration": [15]}},
            ],
        )
    ],
    "irrelevance": [("Tell me a joke.", [AREA], [])],
}
# What the scripted model answers: right everywhere but the factorial of 5 (a string, which fits no schema).
ANSWERS: dict[str, list[tuple[str, dict[str, Any]]] | None] = {
    "Area of a triangle with base 10 and height 5?": [("geometry_area", {"base": 10, "height": 5})],
    "Factorial of 5?": [("math_factorial", {"number": "5"})],
    "Factorial of 4?": [("math_factorial", {"number": 4})],
    "Play Taylor Swift for 20 minutes and Maroon 5 for 15.": [
        ("spotify_play", {"artist": "Maroon 5", "duration": 15}),
        ("spotify_play", {"artist": "Taylor Swift", "duration": 20}),
    ],
    "Tell me a joke.": None,
}


def write_data(root: Path) -> Path:
    (root / "possible_answer").mkdir(parents=True)
    for category, questions in QUESTIONS.items():
        lines, answers = [], []
        for i, (question, functions, answer) in enumerate(questions):
            case_id = f"{category}_{i}"
            lines.append({"id": case_id, "question": [[{"role": "user", "content": question}]], "function": functions})
            answers.append({"id": case_id, "ground_truth": answer})
        (root / f"BFCL_v4_{category}.json").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
        if category != "irrelevance":
            (root / "possible_answer" / f"BFCL_v4_{category}.json").write_text(
                "\n".join(json.dumps(x) for x in answers)
            )
    return root


def play_model(request: Request) -> Turn:
    """Answer in the shape the tool mode asked for."""
    question = next(str(m.content) for m in request.messages if not isinstance(m, SystemMessage))
    calls = ANSWERS[question]
    if request.response_format is not None:
        return json.dumps([{"name": n, "arguments": a} for n, a in calls or []])
    if calls is None:
        return "Why did the triangle cross the road?"
    if request.tools:
        return reply(tool_calls=[ToolCall(id=f"call_{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls)])
    assert "TOOL_CALL" in str(request.messages[0].content)  # text mode: the tools are in the system prompt
    return "\n".join("TOOL_CALL: " + json.dumps({"name": n, "args": a}) for n, a in calls)


def toolwire_eval(
    server: ScriptedServer | str | None, cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`toolwire eval bfcl` with the server (or a URL) as the model (`None`: no provider or model given)."""
    url = server if isinstance(server, str) or server is None else server.base_url
    at = [] if url is None else ["--provider", "openai", "--model", "m", "--base-url", url + "/v1"]
    return subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "eval", "bfcl", *at, *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=cli_env(cwd) | (env or {}),
        timeout=120,
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("mode", ["native", "text", "auto", "constrained"])
def test_every_mode_scores_the_same_answers_the_same(tmp_path: Path, mode: str, stream: bool) -> None:
    data = write_data(tmp_path / "data")
    streamed = ["--stream"] if stream else []
    with ScriptedServer(play_model) as server:
        done = toolwire_eval(
            server, tmp_path, "--data-dir", str(data), "--tool-mode", mode, "--json", "out.json", *streamed
        )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "out.json").read_text())
    rows = {
        s["category"]: (s["cases"], s["correct"], s["parsed"], s["calls"], s["valid_calls"]) for s in report["summary"]
    }
    # The string "5" is a call that was read (parsed) but fits no schema (not valid), in every mode.
    assert rows == {
        "simple_python": (2, 1, 2, 2, 1),
        "multiple": (1, 1, 1, 1, 1),
        "parallel": (1, 1, 1, 2, 2),
        "irrelevance": (1, 1, 1, 0, 0),
        "overall": (5, 4, 5, 5, 4),
    }
    results = {r["id"]: r for r in report["results"]}
    assert results["simple_python_1"]["calls"] == [{"math.factorial": {"number": "5"}}]
    assert results["parallel_0"]["correct"] and results["irrelevance_0"]["calls"] == []
    assert (report["tool_mode"], report["seed"], report["max_tokens"], report["stream"]) == (mode, 0, 512, stream)
    assert all(r["latency_s"] > 0 for r in report["results"])
    assert report["model_s"] == pytest.approx(sum(r["latency_s"] for r in report["results"]))
    assert report["harness_overhead"] == pytest.approx(report["harness_cpu_s"] / report["model_s"])
    assert "simple_python" in done.stdout and "80 %" in done.stdout
    bodies = [r.body for r in server.requests]
    assert all(b["temperature"] == 0 and b["seed"] == 0 and b["max_completion_tokens"] == 512 for b in bodies)
    assert [b.get("stream", False) for b in bodies] == [stream] * len(bodies)
    # Constrained: one request per case, and the answer's plain request after irrelevance's `[]`.
    constrained = [("response_format" in b) for b in bodies]
    assert constrained == ([True] * 5 + [False] if mode == "constrained" else [False] * 5)
    assert all(("tools" in b) == (mode in ("native", "auto")) for b in bodies)


def test_plot_draws_a_png_and_missing_data_says_how_to_install_it(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    with ScriptedServer(play_model) as server:
        drawn = toolwire_eval(server, tmp_path, "--data-dir", str(data), "--categories", "parallel", "--plot", "c.png")
        missing = toolwire_eval(server, tmp_path, "--data-dir", str(tmp_path), "--categories", "simple_python")
    assert drawn.returncode == 0, drawn.stderr
    png = (tmp_path / "c.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1500, 400)  # three 5 x 4 inch panels at 100 dpi
    assert missing.returncode == 2
    assert missing.stderr == (
        f"toolwire: error: No BFCL data for category 'simple_python' at '{tmp_path / 'BFCL_v4_simple_python.json'}'; "
        "the categories are simple_python, simple_java, simple_javascript, multiple, parallel, parallel_multiple, "
        "irrelevance, live_simple, live_multiple, live_parallel, live_parallel_multiple, live_irrelevance, "
        "live_relevance (data from `pip install --no-deps bfcl-eval`).\n"
    )


def test_without_a_provider_and_model_it_says_what_to_give_and_asks_nothing(tmp_path: Path) -> None:
    done = toolwire_eval(None, tmp_path, "--limit", "1")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "toolwire: error: toolwire eval scores a model: give --provider and --model (and --base-url for a local "
        "server), e.g. --provider llamacpp --model qwen3 --base-url http://127.0.0.1:8080/v1.\n"
    )


def test_plot_without_matplotlib_is_refused_before_the_run_with_the_install_line(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    hidden = tmp_path / "no-matplotlib" / "matplotlib"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError(\"No module named 'matplotlib'\")\n")
    with ScriptedServer(play_model) as server:
        env = {"PYTHONPATH": str(hidden.parent)}
        done = toolwire_eval(server, tmp_path, "--data-dir", str(data), "--plot", "c.png", env=env)
    assert (done.returncode, server.requests) == (2, [])
    assert done.stderr == (
        "toolwire: error: --plot draws with matplotlib, which is not installed: pip install -e '.[eval]'.\n"
    )


def test_the_table_names_provider_and_model_and_prints_milliseconds(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    with ScriptedServer(play_model) as server:
        done = toolwire_eval(server, tmp_path, "--data-dir", str(data), "--categories", "multiple")
    assert done.returncode == 0, done.stderr
    assert "BFCL, openai:m, tool mode auto" in done.stdout
    row = next(line for line in done.stdout.splitlines() if "multiple" in line)
    assert row.rstrip(" │").endswith(" ms") and "0.00 s" not in done.stdout


JAVA_FUNCTION = {
    "name": "Cache.put",
    "description": "Put a value.",
    "parameters": {
        "type": "dict",
        "properties": {
            "key": {"type": "String", "description": "The key."},
            "size": {"type": "long", "description": "The size."},
            "items": {"type": "ArrayList", "description": "Items.", "items": {"type": "integer"}},
        },
        "required": ["key", "size", "items"],
    },
}


def test_java_and_live_relevance_cases_run_by_their_own_rules(tmp_path: Path) -> None:
    """Java arguments come as Java source in strings, read by type; live_relevance wants any call."""
    data = tmp_path / "data"
    (data / "possible_answer").mkdir(parents=True)
    cases = {
        "simple_java": ("Put 3 items under 'k' with size 10.", [JAVA_FUNCTION]),
        "live_relevance": ("Store the number 7.", [FACTORIAL]),
    }
    for category, (question, functions) in cases.items():
        line = {"id": f"{category}_0-0-0", "question": [[{"role": "user", "content": question}]], "function": functions}
        (data / f"BFCL_v4_{category}.json").write_text(json.dumps(line) + "\n")
    answer = {"Cache.put": {"key": ["k"], "size": [10], "items": [[1, 2, 3]]}}
    (data / "possible_answer" / "BFCL_v4_simple_java.json").write_text(
        json.dumps({"id": "simple_java_0-0-0", "ground_truth": [answer]}) + "\n"
    )
    java_args = {"key": "k", "size": "10L", "items": "new ArrayList<>(Arrays.asList(1, 2, 3))"}

    def model(request: Request) -> Turn:
        if request.tools[0].name == "Cache_put":
            assert request.tools[0].parameters is not None
            assert {p["type"] for p in request.tools[0].parameters["properties"].values()} == {"string"}
            return reply(tool_calls=[ToolCall(id="c1", name="Cache_put", arguments=java_args)])
        return reply(tool_calls=[ToolCall(id="c1", name="math_factorial", arguments={"number": 7})])

    with ScriptedServer(model) as server:
        categories = "simple_java,live_relevance"
        done = toolwire_eval(server, tmp_path, "--data-dir", str(data), "--categories", categories, "--json", "o.json")
    assert done.returncode == 0, done.stderr
    results = {r["id"]: (r["correct"], r["error"]) for r in json.loads((tmp_path / "o.json").read_text())["results"]}
    assert results == {"simple_java_0-0-0": (True, ""), "live_relevance_0-0-0": (True, "")}


async def test_in_text_mode_a_reply_without_a_call_parsed_nothing_unless_none_was_wanted() -> None:
    from toolwire.evals import load_cases
    from toolwire.evals._runner import run_case
    from toolwire.testing import ScriptedModel

    simple, irrelevant = (next(iter(load_cases([c], limit=1))) for c in ("simple_python", "irrelevance"))
    prose = "I would rather not call anything."
    asked = await run_case(ScriptedModel([prose]), simple, "text")
    declined = await run_case(ScriptedModel([prose]), irrelevant, "text")
    assert (asked.parsed, asked.correct) == (False, False)
    assert (declined.parsed, declined.correct) == (True, True)


@pytest.mark.parametrize("upstream", ["always-500", "unreachable"])
def test_infrastructure_failures_are_counted_apart_and_exit_non_zero(tmp_path: Path, upstream: str) -> None:
    data = write_data(tmp_path / "data")
    with ScriptedServer(lambda request: ErrorReply(status=500, message="down")) as server:
        url = server.base_url
        if upstream == "always-500":
            done = toolwire_eval(server, tmp_path, "--data-dir", str(data), "--json", "out.json")
    if upstream == "unreachable":  # where the server was: nothing listens there now
        done = toolwire_eval(url, tmp_path, "--data-dir", str(data), "--json", "out.json")
    assert done.returncode == 1  # before: 0, with a 0 % table
    report = json.loads((tmp_path / "out.json").read_text())
    overall = report["summary"][-1]
    assert (overall["cases"], overall["failed"], overall["correct"], overall["accuracy"]) == (5, 5, 0, 0.0)
    assert "toolwire eval: 5 of 5 cases failed for infrastructure reasons and are not scored (first: " in done.stderr
    assert "failed" in done.stdout


def test_a_corrupt_data_file_and_empty_or_repeated_categories_are_said_plainly(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    with ScriptedServer(play_model) as server:
        repeated = toolwire_eval(
            server, tmp_path, "--data-dir", str(data), "--categories", "parallel,parallel", "--json", "out.json"
        )
        empty = toolwire_eval(server, tmp_path, "--data-dir", str(data), "--categories", " , ")
        corrupt_file = data / "BFCL_v4_parallel.json"
        corrupt_file.write_text('{"id": "parallel_0"\n', encoding="utf-8")
        corrupt = toolwire_eval(server, tmp_path, "--data-dir", str(data), "--categories", "parallel")
    assert repeated.returncode == 0, repeated.stderr
    assert [s["cases"] for s in json.loads((tmp_path / "out.json").read_text())["summary"]] == [1, 1]  # once, not twice
    assert (empty.returncode, empty.stderr) == (
        2,
        "toolwire: error: --categories names no category (' , '); give one or more, comma-separated.\n",
    )
    assert corrupt.returncode == 2
    assert corrupt.stderr.startswith(f"toolwire: error: BFCL data file '{corrupt_file}' line 1 is not JSON (")


def test_ctrl_c_keeps_the_cases_that_finished(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    held = threading.Event()
    asked: list[int] = []

    def slow_third(request: Request) -> Turn:
        asked.append(1)
        if len(asked) == 3:
            held.set()
            time.sleep(60)  # the third case never answers in time: the user presses Ctrl-C
        return play_model(request)

    at = ["--data-dir", str(data), "--json", "out.json", "--categories", "simple_python,multiple,parallel"]
    with ScriptedServer(slow_third) as server:
        base = ["--provider", "openai", "--model", "m", "--base-url", server.base_url + "/v1"]
        process = subprocess.Popen(
            [sys.executable, "-m", "toolwire.cli", "eval", "bfcl", *base, *at],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(tmp_path),
            # Ctrl-C as a terminal sends it: a disposition this test process inherited or was left
            # with by an earlier test in it (SIGINT ignored) would otherwise reach the child too.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert held.wait(120)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    report = json.loads((tmp_path / "out.json").read_text())  # before: nothing written
    assert [r["id"] for r in report["results"]] == ["simple_python_0", "simple_python_1"]
    assert "toolwire eval: interrupted after 2 of 4 cases." in stderr
    assert "simple_python" in stdout
