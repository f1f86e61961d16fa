"""`--model provider:model` in run, chat, eval and batch; `--api-key-env`; errors that name what was typed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import cli_env
from tests.evals.test_eval_cli import play_model, write_data
from toolwire.offline import SCRIPTED_PROVIDERS
from toolwire.providers import PROVIDERS
from toolwire.testing import ScriptedServer

KNOWN = ", ".join(sorted({*PROVIDERS, *SCRIPTED_PROVIDERS, "copilot"}))
GROQ_KEY = "gsk-test-0123456789"


def toolwire(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str = "") -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "toolwire.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={k: v for k, v in cli_env(cwd, env).items() if k != "GROQ_API_KEY"} | (env or {}),
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("command", ["run", "chat"])
def test_run_and_chat_reach_the_provider_the_model_names_with_its_key(tmp_path: Path, command: str) -> None:
    with ScriptedServer(["hello from groq"]) as server:
        at = ["--model", "groq:llama-3.3-70b-versatile", "--base-url", server.base_url + "/openai/v1", "--yes"]
        args = [command, *at, "hi"] if command == "run" else [command, *at]
        status, out, err = toolwire(*args, cwd=tmp_path, env={"GROQ_API_KEY": GROQ_KEY}, stdin="hi\n")
        assert status == 0, err
        (request,) = server.requests
    assert "hello from groq" in out
    assert (request.path, request.headers["authorization"]) == ("/openai/v1/chat/completions", f"Bearer {GROQ_KEY}")
    assert request.body["model"] == "llama-3.3-70b-versatile"


def test_api_key_env_names_the_variable_and_says_so_when_it_is_unset(tmp_path: Path) -> None:
    with ScriptedServer(["ok"]) as server:
        at = ["--model", "mistral:mistral-small-latest", "--base-url", server.base_url + "/v1", "--yes"]
        ok = toolwire("run", *at, "--api-key-env", "MY_MISTRAL", "hi", cwd=tmp_path, env={"MY_MISTRAL": "mk-1"})
        unset = toolwire("run", *at, "--api-key-env", "MY_UNSET_VAR", "hi", cwd=tmp_path)
        (request,) = server.requests
    assert ok[0] == 0, ok[2]
    assert request.headers["authorization"] == "Bearer mk-1"
    assert unset == (2, "", "toolwire: error: MY_UNSET_VAR is not set (--api-key-env); export it.\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--model", "anthropic:claude-sonnet-4-5"],
            "No API key for anthropic: set ANTHROPIC_API_KEY, or api_key_env in toolwire.toml.",
        ),
        (
            ["--model", "antropic:claude-sonnet-4-5"],
            f"Unknown provider 'antropic' in --model 'antropic:claude-sonnet-4-5'; did you mean 'anthropic'? Use "
            f"one of: {KNOWN} (or pass --provider for a model name with a colon).",
        ),
        (
            ["--provider", "openai", "--model", "groq:llama"],
            "--model 'groq:llama' names provider 'groq' but --provider says 'openai'; drop one.",
        ),
        (["--model", "groq:"], "No model in --model 'groq:'; write provider:model, e.g. 'groq:my-model'."),
    ],
    ids=["no key", "misspelt provider", "two providers", "no model"],
)
def test_model_targets_fail_naming_what_was_typed(tmp_path: Path, args: list[str], message: str) -> None:
    assert toolwire("run", *args, "hi", cwd=tmp_path) == (2, "", f"toolwire: error: {message}\n")


def test_a_model_name_with_its_own_colon_stays_whole_when_the_provider_is_given(tmp_path: Path) -> None:
    with ScriptedServer(["ok"]) as server:
        at = ["--provider", "ollama", "--model", "qwen3:8b", "--base-url", server.base_url, "--yes"]
        status, _, err = toolwire("run", *at, "hi", cwd=tmp_path)
        (request,) = server.requests
    assert status == 0, err
    assert (request.path, request.body["model"]) == ("/api/chat", "qwen3:8b")


def test_eval_and_batch_take_provider_model(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t1", "prompt": "say hi"}) + "\n", encoding="utf-8")
    env = {"XAI_API_KEY": "xai-key"}
    with ScriptedServer(play_model) as evaluated:
        at = ["--model", "xai:grok-4", "--base-url", evaluated.base_url + "/v1"]
        status, _, err = toolwire("eval", "bfcl", *at, "--data-dir", str(data), "--limit", "1", cwd=tmp_path, env=env)
        assert status == 0, err
        seen = {(r.path, r.headers["authorization"], r.body["model"]) for r in evaluated.requests}
    assert seen == {("/v1/chat/completions", "Bearer xai-key", "grok-4")}
    with ScriptedServer(["done"]) as batched:
        at = ["--model", "xai:grok-4", "--base-url", batched.base_url + "/v1", "--yes"]
        status, _, err = toolwire("batch", str(tasks), "--out", "out.jsonl", *at, cwd=tmp_path, env=env)
        assert status == 0, err
        (request,) = batched.requests
    assert (request.headers["authorization"], request.body["model"]) == ("Bearer xai-key", "grok-4")
