"""The `toolwire` command driven as a user drives it: real subprocesses, real sockets, real files."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolwire import ToolCall
from toolwire.codecs import get_codec
from toolwire.offline import SCRIPTED_PROVIDERS
from toolwire.providers import PROVIDERS
from toolwire.testing import ErrorReply, ScriptedServer, reply
from toolwire.types import Request, SystemMessage, ToolDefinition, ToolResult, UserMessage

STANDARD = ["read", "write", "edit", "exec", "grep", "glob", "done", "write_todos"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "hello.txt").write_text("hi from the file\n", encoding="utf-8")
    return folder


def cli_env(cwd: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    base |= {"NO_COLOR": "1", "XDG_CONFIG_HOME": str(cwd / ".no-user-config"), "OPENAI_API_KEY": "sk-test"}
    return base | (extra or {})


def toolwire(
    *args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolwire.cli", *args],
        cwd=cwd,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=cli_env(cwd, env),
        timeout=30,
    )


def toolwire_all(commands: list[tuple[list[str], Path]]) -> list[tuple[int, str, str]]:
    """Several independent invocations at once (each a real process in its own folder; saves wall time)."""
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "toolwire.cli", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(cwd),
        )
        for args, cwd in commands
    ]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=30)
        results.append((process.returncode, out, err))
    return results


def at(server: ScriptedServer) -> list[str]:
    return ["--provider", "openai", "--model", "test-model", "--base-url", server.base_url + "/v1"]


def read_call() -> ToolCall:
    return ToolCall(id="call_1", name="read", arguments={"path": "hello.txt"})


# run


def test_run_prints_the_answer_and_shows_tool_calls_on_stderr(project: Path) -> None:
    with ScriptedServer([reply("Reading.", [read_call()]), reply("The file says hi.")]) as server:
        done = toolwire("run", *at(server), "what", "does", "hello.txt", "say?", cwd=project)
    assert done.returncode == 0
    assert done.stdout == "The file says hi.\n"
    stderr = re.sub(r"\d+\.\d\ds", "0.00s", done.stderr)
    assert stderr == 'Reading.\n→ read(path="hello.txt")\n← read ok, 1 line, 0.00s\n  │      1      hi from the file\n'
    first, second = server.requests
    assert first.headers["authorization"] == "Bearer sk-test"
    assert first.stream is True
    assert first.request is not None and [t.name for t in first.request.tools] == STANDARD
    assert first.request.messages[1] == UserMessage(content="what does hello.txt say?")
    assert second.request is not None
    assert second.request.messages[-1] == ToolResult.text(read_call(), "     1\thi from the file")


def test_run_json_prints_the_run_result(project: Path) -> None:
    with ScriptedServer([reply("Reading.", [read_call()]), reply("The file says hi.")]) as server:
        done = toolwire("run", "--json", *at(server), "read it", cwd=project)
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert list(result) == ["text", "stop_reason", "turns", "usage", "calls", "messages"]
    assert result["text"] == "The file says hi."
    assert result["stop_reason"] == "end_turn"
    assert result["turns"] == 2
    assert result["usage"] == {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": None,
        "reasoning_tokens": None,
    }
    [call] = result["calls"]
    assert isinstance(call.pop("duration_s"), float)
    assert call == {
        "id": "call_1",
        "name": "read",
        "arguments": {"path": "hello.txt"},
        "result_kind": "text",
        "approved": True,
    }
    assert [m["role"] for m in result["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert result["messages"][3]["value"] == "     1\thi from the file"
    assert '→ read(path="hello.txt")' in done.stderr


def test_run_without_a_terminal_rejects_high_risk_calls_unless_yes(project: Path) -> None:
    write = ToolCall(id="call_w", name="write", arguments={"path": "out.txt", "content": "x"})
    with ScriptedServer([reply("", [write]), reply("Could not write.")]) as server:
        done = toolwire("run", "--json", *at(server), "write it", cwd=project)
    assert done.returncode == 3  # the task was not done: a call was refused with nobody to ask
    assert "Refused for lack of a terminal to ask: write; pass --yes.\n" in done.stderr
    assert not (project / "out.txt").exists()
    assert json.loads(done.stdout)["calls"][0]["approved"] is False
    reason = "no one can approve it: run without a terminal; pass --yes to allow high-risk tools"
    assert f"✗ write rejected: {reason}\n" in done.stderr

    with ScriptedServer([reply("", [write]), reply("Wrote it.")]) as server:
        done = toolwire("run", "--yes", *at(server), "write it", cwd=project)
    assert (done.returncode, done.stdout) == (0, "Wrote it.\n")
    assert (project / "out.txt").read_text(encoding="utf-8") == "x"


def test_run_reads_the_prompt_from_stdin_and_the_settings_file(project: Path) -> None:
    (project / "toolwire.toml").write_text('[agent]\nsystem_prompt = "Be brief."\n', encoding="utf-8")
    with ScriptedServer(["Brief."]) as server:
        done = toolwire("run", *at(server), "-", cwd=project, stdin="from stdin\n")
    assert (done.returncode, done.stdout, done.stderr) == (0, "Brief.\n", "")
    request = server.requests[0].request
    assert request is not None
    assert request.messages == [SystemMessage(content="Be brief."), UserMessage(content="from stdin\n")]


def test_flags_override_the_settings_file(project: Path) -> None:
    (project / "toolwire.toml").write_text(
        '[provider]\nname = "openai"\nmodel = "from-file"\n[agent]\ntool_mode = "text"\n', encoding="utf-8"
    )
    with ScriptedServer(["one", "two"]) as server:
        base = ["--base-url", server.base_url + "/v1"]
        assert toolwire("run", *base, "hi", cwd=project).returncode == 0
        assert (
            toolwire("run", *base, "--model", "from-flag", "--tool-mode", "native", "hi", cwd=project).returncode == 0
        )
    first, second = (r.body for r in server.requests)
    assert (first["model"], "tools" in first) == ("from-file", False)  # text mode sends no tools parameter
    assert (second["model"], len(second["tools"])) == ("from-flag", len(STANDARD))


def test_the_default_provider_is_the_offline_scripted_model(project: Path) -> None:
    done = toolwire("run", "--yes", "--json", "--debug", "summarize", cwd=project)
    assert done.returncode == 0
    assert "DEBUG toolwire.cli: tool call glob (call_2_0) found by native tool calling\n" in done.stderr
    result = json.loads(done.stdout)
    assert (
        result["text"] == "Done: I wrote SUMMARY.md and found 2 TODO comments in the code (src/app.py:2, src/app.py:6)."
    )
    assert [c["name"] for c in result["calls"]] == ["glob", "read", "write", "grep"]
    assert all(c["approved"] for c in result["calls"])
    assert done.stderr.startswith("offline scripted model (no network, no key): openai wire protocol over HTTP at ")
    assert "the scripted server answered 4 HTTP requests (POST /chat/completions)" in done.stderr
    assert not (project / "SUMMARY.md").exists()  # the offline model works in its own demo folder


def test_make_demo_runs_the_tool_loop_in_every_wire_protocol(project: Path) -> None:
    base = {k: v for k, v in os.environ.items() if k != "DEBUG"} | {"NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "toolwire.demo"], cwd=project, capture_output=True, text=True, env=base, timeout=30
    )
    assert done.returncode == 0, done.stderr
    answer = "Done: I wrote SUMMARY.md and found 2 TODO comments in the code (src/app.py:2, src/app.py:6).\n"
    assert done.stdout.count(answer) == 6
    for wire, path in [
        ("openai", "/chat/completions"),
        ("openai-responses", "/responses"),
        ("anthropic", "/v1/messages"),
        ("gemini", "/v1beta/models/offline-scripted:streamGenerateContent?alt=sse"),
        ("ollama", "/api/chat"),
    ]:
        assert f"=== {wire} wire protocol ===\n$ toolwire run --provider scripted-{wire} --yes " in done.stdout
        assert f"offline scripted model (no network, no key): {wire} wire protocol over HTTP at" in done.stderr
        assert f"the scripted server answered 4 HTTP requests (POST {path})" in done.stderr
    assert done.stderr.count("← write ok, 1 line") == 6
    assert done.stderr.count('→ grep(pattern="TODO", glob="*.py")') == 6
    assert "6 of 6 runs succeeded" in done.stdout
    assert list(project.iterdir()) == [project / "hello.txt"]  # the demo never touches the current folder


def test_debug_env_logs_calls_found_by_text_parsing(project: Path) -> None:
    text = toolwire("run", "--yes", "--tool-mode", "text", "go", cwd=project, env={"DEBUG": "1"})
    assert text.returncode == 0
    assert "tool call glob found by text parsing" in text.stderr
    assert "found by native tool calling" not in text.stderr


# tools and convert


def test_tools_prints_the_codec_encoding_and_the_fallback_prompt(project: Path) -> None:
    done = toolwire("tools", "--provider", "anthropic", "--json", cwd=project)
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert list(out) == ["provider", "codec", "request", "prompt"]
    assert (out["provider"], out["codec"], list(out["request"])) == ("anthropic", "anthropic", ["tools"])
    assert [t["name"] for t in out["request"]["tools"]] == STANDARD
    assert out["request"]["tools"][0]["input_schema"]["required"] == ["path"]
    assert out["prompt"].startswith("## Available tools\n\n- **read(path, offset?, limit?)**: Read a text file")

    plain = toolwire("tools", cwd=project)
    lines = plain.stdout.splitlines()
    assert lines[0] == "# The tools as the openai codec sends them to scripted (request body keys)"
    assert "# The fallback prompt (tool mode text): added to the system prompt instead of sending tools" in lines
    assert "## Available tools" in lines


def sample_request() -> dict[str, Any]:
    request = Request(
        model="m",
        messages=[SystemMessage(content="Be brief."), UserMessage(content="Weather in Paris?")],
        tools=[
            ToolDefinition(
                name="get_weather",
                description="Weather for a city.",
                parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            )
        ],
        max_tokens=100,
    )
    return get_codec("openai").encode_request(request)


def test_convert_re_encodes_a_file_and_stdin(project: Path) -> None:
    body = sample_request()
    expected = get_codec("anthropic").encode_request(get_codec("openai").decode_request(body))
    (project / "request.json").write_text(json.dumps(body), encoding="utf-8")

    from_file = toolwire("convert", "--from", "openai", "--to", "anthropic", "request.json", cwd=project)
    assert (from_file.returncode, from_file.stderr) == (0, "")
    assert json.loads(from_file.stdout) == expected
    assert from_file.stdout == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"

    piped = toolwire("convert", "--from", "openai", "--to", "anthropic", cwd=project, stdin=json.dumps(body))
    assert (piped.returncode, json.loads(piped.stdout)) == (0, expected)

    back = toolwire("convert", "--from", "anthropic", "--to", "openai", "-", cwd=project, stdin=json.dumps(expected))
    assert json.loads(back.stdout) == get_codec("openai").encode_request(
        get_codec("anthropic").decode_request(expected)
    )


# errors: one line, the right exit status


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Every name --provider takes: the HTTP providers (as many as the table holds), copilot, the scripted ones.
KNOWN = ", ".join(sorted({*PROVIDERS, *SCRIPTED_PROVIDERS, "copilot"}))
USAGE_ERRORS = [
    (
        ["run", "--provider", "nope", "hi"],
        2,
        f"toolwire: error: Unknown provider 'nope'; use one of: {KNOWN}.",
    ),
    (
        ["run", "--provider", "opnai", "hi"],
        2,
        f"toolwire: error: Unknown provider 'opnai'; did you mean 'openai'? Use one of: {KNOWN}.",
    ),
    (
        ["run", "--provider", "openai", "hi"],
        2,
        "toolwire: error: No model for provider 'openai'; pass --model or set [provider] model in toolwire.toml.",
    ),
    (
        ["run", "--provider", "anthropic", "--model", "claude", "hi"],
        2,
        "toolwire: error: No API key for anthropic: set ANTHROPIC_API_KEY, or api_key_env in toolwire.toml.",
    ),
    (
        ["run", "--provider", "scripted", "--model", "x", "hi"],
        2,
        "toolwire: error: --model does not apply to the offline scripted provider 'scripted'.",
    ),
    (
        ["frobnicate"],
        2,
        "toolwire: error: argument COMMAND: invalid choice: 'frobnicate' (choose from 'chat', 'run', 'tools', "
        "'convert', 'batch', 'serve', 'mcp-server', 'eval') (see toolwire --help)",
    ),
    (
        ["run", "--max-tool-turns", "-3", "hi"],
        2,
        "toolwire: error: argument --max-tool-turns: expected a whole number >= 0, got '-3' (see toolwire run --help)",
    ),
    (
        ["convert", "--from", "openai", "--to", "gemini", "missing.json"],
        2,
        "toolwire: error: Cannot read 'missing.json': No such file or directory.",
    ),
    (
        ["convert", "--from", "openai", "--to", "gemini", "hello.txt"],
        2,
        "toolwire: error: 'hello.txt' is not JSON (Expecting value: line 1 column 1 (char 0)); "
        "give a request body as a JSON object.",
    ),
]


def settings_folder(root: Path, name: str, text: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "toolwire.toml").write_text(text, encoding="utf-8")
    return folder


def test_errors_are_one_line_with_status_2_for_usage_and_1_at_runtime(project: Path) -> None:
    cases: list[tuple[list[str], Path, int, str]] = [
        (args, project, status, re.escape(line)) for args, status, line in USAGE_ERRORS
    ]
    bad_type = settings_folder(project, "bad-type", '[agent]\nmax_tool_turns = "ten"\n')
    path = bad_type / "toolwire.toml"
    line = f"toolwire: error: 'agent.max_tool_turns' in {str(path)!r} must be an integer >= 0, got 'ten' (a string)."
    cases.append((["run", "hi"], bad_type, 2, re.escape(line)))
    bad_name = settings_folder(project, "bad-name", '[provider]\nname = "nope"\n')
    line = f"toolwire: error: Unknown provider 'nope' (from {bad_name / 'toolwire.toml'}); use one of: anthropic,"
    cases.append((["tools"], bad_name, 2, re.escape(line) + ".*"))
    no_key = settings_folder(
        project, "no-key", '[provider]\nname = "openai"\nmodel = "m"\napi_key_env = "MY_TEST_KEY"\n'
    )
    line = f"toolwire: error: MY_TEST_KEY is not set (api_key_env in {no_key / 'toolwire.toml'}); export it."
    cases.append((["run", "hi"], no_key, 2, re.escape(line)))
    refused = ["run", "--provider", "openai", "--model", "m", "--base-url", f"http://127.0.0.1:{free_port()}/v1", "hi"]
    line = (
        r"toolwire: error: Could not reach openai at http://127\.0\.0\.1:\d+/v1/chat/completions: "
        r"ConnectError: .*; check --base-url \(or base_url in \[provider\] of toolwire\.toml\) and the network\. "
        r"\(openai\)"
    )
    cases.append((refused, project, 1, line))
    with ScriptedServer([ErrorReply(status=401, message="Incorrect API key provided: sk-test.")]) as server:
        line = (
            "toolwire: error: openai answered HTTP 401: 'Incorrect API key provided: [redacted].'; check the API key "
            "or token and its permissions. (openai, HTTP 401, request id req_1)"
        )
        cases.append((["run", *at(server), "hi"], project, 1, re.escape(line)))
        results = toolwire_all([(args, cwd) for args, cwd, _, _ in cases])
    for (args, _, status, pattern), (code, out, err) in zip(cases, results, strict=True):
        assert (code, out) == (status, ""), (args, err)
        assert err.endswith("\n") and err.count("\n") == 1, (args, err)
        assert re.fullmatch(pattern, err[:-1]), (args, err)


def test_errors_name_flags_settings_and_variables_never_connect_arguments(project: Path, tmp_path: Path) -> None:
    missing_cli = {"COPILOT_CLI_PATH": str(tmp_path / "no-copilot")}
    signed_out = fake_copilot_env(tmp_path, {"text": "unused"})
    cases = [
        (["--provider", "openai-compatible", "--model", "m"], {}, 2, (
            "openai-compatible needs --base-url (or base_url in [provider] of toolwire.toml), the server's "
            "OpenAI-compatible URL ending in /v1."
        )),
        (["--provider", "vertex", "--model", "m"], {"VERTEX_ACCESS_TOKEN": "t"}, 2, (
            "vertex needs its project: set GOOGLE_CLOUD_PROJECT."
        )),
        (["--provider", "copilot", "--model", "m"], missing_cli, 1, (
            f"Could not start the Copilot CLI {missing_cli['COPILOT_CLI_PATH']!r} (No such file or directory); "
            "install it or set COPILOT_CLI_PATH to it. (copilot)"
        )),
        (["--provider", "copilot", "--model", "m"], signed_out, 1, (
            "The Copilot CLI is not signed in ('Not authenticated'); run `copilot login`, set COPILOT_GITHUB_TOKEN, "
            "or use your own key with --base-url. (copilot)"
        )),
    ]  # fmt: skip
    for args, env, status, message in cases:
        done = toolwire("run", *args, "hi", cwd=project, env={"GOOGLE_CLOUD_PROJECT": ""} | env)
        assert (done.returncode, done.stdout, done.stderr) == (status, "", f"toolwire: error: {message}\n")
        assert "connect()" not in done.stderr and "=..." not in done.stderr


def test_help_documents_the_settings_order(project: Path) -> None:
    done = toolwire("--help", cwd=project)
    assert done.returncode == 0
    assert "settings, highest first:\n  1. command-line flags\n  2. the settings file: ./toolwire.toml" in done.stdout
    assert "The environment only supplies API keys" in done.stdout


def test_a_commands_help_shows_its_flags_once_and_points_to_the_shared_text(project: Path) -> None:
    commands = ["chat", "run", "tools", "convert"]
    results = toolwire_all([([name, "--help"], project) for name in commands])
    for name, (code, out, err) in zip(commands, results, strict=True):
        assert (code, err) == (0, ""), name
        assert out.startswith(f"usage: toolwire {name} "), name
        assert "settings, highest first" not in out and "examples:\n" not in out, name
        assert out.count("--model NAME") == 2, name  # once in usage, once in the settings group
        assert out.endswith("settings, providers and examples: toolwire --help\n"), name


def fake_copilot_env(tmp_path: Path, *turns: dict[str, Any], authenticated: bool = False) -> dict[str, str]:
    """A `copilot` launcher for the scripted fake CLI, and the variables that point toolwire at it."""
    from toolwire.testing import fake_copilot
    from toolwire.testing.fake_copilot import ENV_SCENARIO, ENV_TRANSCRIPT

    launcher = tmp_path / "copilot"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{fake_copilot.__file__}" "$@"\n')
    launcher.chmod(0o755)
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"authenticated": authenticated, "sends": [list(turns)]}))
    return {"COPILOT_CLI_PATH": str(launcher), ENV_SCENARIO: str(scenario), ENV_TRANSCRIPT: str(tmp_path / "t.jsonl")}


def test_run_with_the_copilot_provider_through_a_fake_cli(project: Path, tmp_path: Path) -> None:
    turn = {"text": "", "tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "hello.txt"}}]}
    env = fake_copilot_env(tmp_path, turn, {"text": "The file says hi."}, authenticated=True)
    done = toolwire(
        "run", "--provider", "copilot", "--model", "fake-model", "what is in hello.txt?", cwd=project, env=env
    )
    assert (done.returncode, done.stdout) == (0, "The file says hi.\n")
    assert '→ read(path="hello.txt")' in done.stderr and "hi from the file" in done.stderr


def test_copilot_bring_your_own_key_from_flags_and_the_settings_file(project: Path, tmp_path: Path) -> None:
    env = fake_copilot_env(tmp_path, {"text": "From my own model."}) | {"MY_BYOK_KEY": "sk-mine"}
    record = tmp_path / "traffic.jsonl"
    args = ["--provider", "copilot", "--model", "my-model", "--base-url", "http://127.0.0.1:8000/v1"]
    done = toolwire("run", *args, "--copilot-record", str(record), "hi", cwd=project, env=env)
    assert (done.returncode, done.stdout) == (0, "From my own model.\n"), done.stderr
    sent = [json.loads(line)["frame"] for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    create = next(f["params"] for f in sent if f.get("method") == "session.create")
    # OPENAI_API_KEY (the openai type's own variable) is the key; no GitHub sign-in is asked for.
    assert create["provider"] == {"type": "openai", "baseUrl": "http://127.0.0.1:8000/v1", "apiKey": "sk-test"}
    assert "auth.getStatus" not in [f.get("method") for f in sent]
    assert "sk-test" not in record.read_text() and '"method": "session.create"' in record.read_text()

    (tmp_path / "t.jsonl").unlink()
    settings = settings_folder(
        project,
        "byok",
        '[provider]\nname = "copilot"\nmodel = "claude-x"\nbase_url = "https://api.anthropic.com"\n'
        'api_key_env = "MY_BYOK_KEY"\ncopilot_byok = "anthropic"\n',
    )
    done = toolwire("run", "hi", cwd=settings, env=env)
    assert (done.returncode, done.stdout) == (0, "From my own model.\n"), done.stderr
    sent = [json.loads(line)["frame"] for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    create = next(f["params"] for f in sent if f.get("method") == "session.create")
    assert create["provider"] == {"type": "anthropic", "baseUrl": "https://api.anthropic.com", "apiKey": "sk-mine"}


def test_copilot_flags_are_refused_for_other_providers_and_byok_needs_a_url(project: Path) -> None:
    results = toolwire_all(
        [
            (["run", "--provider", "openai", "--model", "m", "--copilot-byok", "openai", "hi"], project),
            (["run", "--provider", "copilot", "--model", "m", "--copilot-byok", "azure", "hi"], project),
        ]
    )
    assert results == [
        (2, "", "toolwire: error: --copilot-byok applies only to --provider copilot, not 'openai'.\n"),
        (
            2,
            "",
            "toolwire: error: --copilot-byok needs the endpoint's URL: pass --base-url or set [provider] base_url "
            "in toolwire.toml.\n",
        ),
    ]


def test_version_and_an_unfinished_run_exit_status(project: Path) -> None:
    from importlib.metadata import version

    import toolwire as package

    assert package.__version__ == version("toolwire")
    shown = toolwire("--version", cwd=project)
    assert (shown.returncode, shown.stdout) == (0, f"toolwire {package.__version__}\n")
    loop = ToolCall(id="call_r", name="read", arguments={"path": "hello.txt"})
    with ScriptedServer([reply("", [loop])] * 3) as server:
        done = toolwire("run", "--max-tool-turns", "1", *at(server), "read forever", cwd=project)
    assert done.returncode == 3
    assert "The run stopped early: max_turns." in done.stderr


def test_convert_says_which_format_a_body_looks_like_and_refuses_binary_files(project: Path) -> None:
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    anthropic_body = fixtures / "anthropic" / "tool_loop_parallel.request.json"
    gemini_body = fixtures / "gemini" / "tool_loop.request.json"
    (project / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    wrong = toolwire("convert", "--from", "openai", "--to", "gemini", str(anthropic_body), cwd=project)
    assert (wrong.returncode, wrong.stderr) == (
        2,
        "toolwire: error: The input looks like the anthropic format, not openai; pass --from anthropic.\n",
    )
    wrong = toolwire("convert", "--from", "anthropic", "--to", "openai", str(gemini_body), cwd=project)
    assert (
        wrong.stderr == "toolwire: error: The input looks like the gemini format, not anthropic; pass --from gemini.\n"
    )
    binary = toolwire("convert", "--from", "openai", "--to", "gemini", "image.png", cwd=project)
    assert (binary.returncode, binary.stderr) == (
        2,
        "toolwire: error: 'image.png' is not UTF-8 text (a binary file?); give a JSON request body.\n",
    )
    right = toolwire("convert", "--from", "anthropic", "--to", "gemini", str(anthropic_body), cwd=project)
    assert right.returncode == 0 and json.loads(right.stdout)["contents"]


def test_convert_from_gemini_takes_the_model_from_the_flag(project: Path) -> None:
    gemini_body = Path(__file__).resolve().parents[1] / "fixtures" / "gemini" / "tool_loop.request.json"
    done = toolwire("convert", "--from", "gemini", "--to", "openai", "--model", "gpt-x", str(gemini_body), cwd=project)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["model"] == "gpt-x"


def test_run_no_stream_asks_for_whole_replies_and_still_shows_the_calls(project: Path) -> None:
    read = ToolCall(id="call_r", name="read", arguments={"path": "hello.txt"})
    with ScriptedServer([reply("", [read]), reply("It says hi.")]) as server:
        done = toolwire("run", "--no-stream", *at(server), "what does hello.txt say", cwd=project)
        streamed = [r.stream for r in server.requests]
    assert (done.returncode, done.stdout, streamed) == (0, "It says hi.\n", [False, False])
    assert '→ read(path="hello.txt")' in done.stderr


def test_convert_warns_about_arguments_it_cannot_read_and_keeps_them_where_it_can(project: Path) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "I will call lookup now"}}
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "bad arguments"},
        ],
    }
    (project / "body.json").write_text(json.dumps(body), encoding="utf-8")
    same = toolwire("convert", "--from", "openai", "--to", "openai", "body.json", cwd=project)
    assert json.loads(same.stdout)["messages"][1]["tool_calls"][0]["function"]["arguments"] == "I will call lookup now"
    assert same.stderr == (
        "toolwire: warning: call call_1 (lookup): 'I will call lookup now' is not valid JSON; kept as written.\n"
    )
    other = toolwire("convert", "--from", "openai", "--to", "anthropic", "body.json", cwd=project)
    assert other.returncode == 0
    assert other.stderr == (
        "toolwire: warning: call call_1 (lookup): 'I will call lookup now' is not valid JSON; "
        "sent as {} (the target takes only objects).\n"
    )


def test_subcommand_help_points_to_the_main_help_instead_of_repeating_it(project: Path) -> None:
    main_help = toolwire("--help", cwd=project).stdout
    run_help = toolwire("run", "--help", cwd=project).stdout
    assert "settings, highest first:" in main_help
    assert "settings, highest first:" not in run_help
    assert run_help.rstrip().endswith("settings, providers and examples: toolwire --help")


def test_run_in_constrained_mode_reads_calls_from_the_json_the_server_was_held_to(project: Path) -> None:
    call = [{"name": "read", "arguments": {"path": "hello.txt"}}]
    with ScriptedServer([json.dumps(call), "[]", "It says hi."]) as server:
        flags = ["--provider", "llama-cpp-python", "--model", "m", "--base-url", server.base_url + "/v1"]
        done = toolwire("run", *flags, "--tool-mode", "constrained", "what does hello.txt say?", cwd=project)
    assert (done.returncode, done.stdout) == (0, "It says hi.\n")
    assert '→ read(path="hello.txt")\n' in done.stderr and "{" not in done.stderr  # no JSON shown
    first, second, answer = (r.body for r in server.requests)
    assert first["response_format"]["type"] == "json_object" and "tools" not in first
    names = [c["properties"]["name"]["const"] for c in first["response_format"]["schema"]["items"]["anyOf"]]
    assert names == STANDARD
    assert second["messages"][-2]["content"] == json.dumps(call)
    assert second["messages"][-1]["content"].endswith("     1\thi from the file")
    assert "response_format" not in answer and answer["messages"][1:] == second["messages"][1:]


def test_a_mistyped_subcommand_or_option_gets_a_guess(tmp_path: Path) -> None:
    command = toolwire("tols", cwd=tmp_path)
    option = toolwire("run", "--base_url", "http://127.0.0.1:9/v1", "hi", cwd=tmp_path)
    assert (command.returncode, option.returncode) == (2, 2)
    assert command.stderr == (
        "toolwire: error: argument COMMAND: invalid choice: 'tols' (choose from 'chat', 'run', 'tools', 'convert', "
        "'batch', 'serve', 'mcp-server', 'eval'); did you mean 'tools'? (see toolwire --help)\n"
    )
    assert option.stderr == (
        "toolwire: error: unrecognized arguments: --base_url; did you mean '--base-url'? (see toolwire --help)\n"
    )


def test_tools_into_a_pipe_nobody_reads_ends_quietly(tmp_path: Path) -> None:
    """`toolwire tools | head`: the reader is gone before the listing is written (its end closed first)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "toolwire.cli", "tools"],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(tmp_path),
            timeout=30,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_serve_without_routes_prints_a_line_that_makes_one(tmp_path: Path) -> None:
    from tests.gateway.serve_process import ServeProcess

    done = toolwire("serve", cwd=tmp_path)
    assert done.returncode == 2
    printf = done.stderr.split(" e.g. ", 1)[1].split(" (the offline", 1)[0]
    assert printf.startswith("printf '[[route]]") and printf.endswith("> toolwire.toml")
    subprocess.run(["bash", "-c", printf], cwd=tmp_path, check=True)
    with ServeProcess(tmp_path / "toolwire.toml") as gateway:
        assert gateway.banner[2] == "  * -> scripted:demo (offline scripted model, in-process, no key)"


GEMINI_BODY = '{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}'


def test_convert_detects_the_input_format_and_wants_a_model_where_the_target_carries_one(tmp_path: Path) -> None:
    anthropic_body = json.dumps(
        {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}], "tools": [WEATHER_ANTHROPIC]}
    )
    detected = toolwire("convert", "--to", "openai", cwd=tmp_path, stdin=anthropic_body)
    no_model = toolwire("convert", "--to", "openai", cwd=tmp_path, stdin=GEMINI_BODY)
    named = toolwire("convert", "--to", "openai", "--model", "gpt-4o", cwd=tmp_path, stdin=GEMINI_BODY)
    plain = toolwire("convert", "--to", "anthropic", cwd=tmp_path, stdin='{"model": "m", "messages": []}')
    assert detected.returncode == 0, detected.stderr
    assert json.loads(detected.stdout)["tools"][0]["function"]["name"] == "get_weather"
    assert (no_model.returncode, no_model.stdout) == (2, "")
    assert no_model.stderr == (
        "toolwire: error: The gemini body names no model, and openai bodies carry one; pass --model NAME.\n"
    )
    assert (named.returncode, json.loads(named.stdout)["model"]) == (0, "gpt-4o")
    assert plain.stderr == (
        "toolwire: error: Cannot tell the input's format (a body of plain messages reads as openai, anthropic or "
        "ollama alike); pass --from openai (or anthropic, ollama).\n"
    )


WEATHER_ANTHROPIC = {
    "name": "get_weather",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
