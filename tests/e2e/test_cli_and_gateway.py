"""The real model through the doors a user takes: `toolwire run` and `toolwire serve` with the official SDKs.

Real processes in scratch folders; the assertions are on what crossed each door (a `write`
call that made a real file; `tool_use` / `function_call` items that come back whole and a
tool-result turn that is answered), never on the 135M model's judgement.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import anthropic
import openai
import pytest
from openai.types.responses.response import IncompleteDetails

from tests.e2e.llama_server import MODEL_NAME, LlamaServer, free_port

TIMEOUT_S = "600"  # the first piece of a reply waits for ~1,000 prompt tokens on a busy CPU
WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def _env(folder: Path) -> dict[str, str]:
    return dict(os.environ, NO_COLOR="1", XDG_CONFIG_HOME=str(folder / ".no-user-config"))


def test_toolwire_run_writes_a_real_file(native_server: LlamaServer, tmp_path: Path) -> None:
    command = [
        *(sys.executable, "-m", "toolwire.cli", "run", "--provider", "llama-cpp-python", "--model", MODEL_NAME),
        *("--base-url", native_server.base_url, "--tool-choice", "write", "--max-tokens", "200"),
        *("--temperature", "0", "--timeout", TIMEOUT_S, "--max-tool-turns", "1", "--yes", "--json"),
        "Write the word hello into the file hello.txt",
    ]
    done = subprocess.run(command, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=900)
    print(f"exit {done.returncode}\nstderr:\n{done.stderr}")
    assert done.returncode in (0, 3), done.stderr  # 3: the model called again after its one tool turn
    result = json.loads(done.stdout)
    first = result["calls"][0]
    assert (first["name"], first["approved"], first["result_kind"]) == ("write", True, "text")
    written = tmp_path / first["arguments"]["path"]
    assert written.read_text(encoding="utf-8") == first["arguments"]["content"]


@pytest.fixture(scope="module")
def gateway(native_server: LlamaServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`toolwire serve` routing model `local` to the real server through the llama-cpp-python profile."""
    folder = tmp_path_factory.mktemp("serve")
    config = folder / "toolwire.toml"
    config.write_text(
        f'[[route]]\nmodel = "local"\ntarget = "llama-cpp-python:{MODEL_NAME}"\n'
        f'base_url = "{native_server.base_url}"\n',
        encoding="utf-8",
    )
    port = free_port()
    log = (folder / "serve.log").open("w", encoding="utf-8")
    command = [sys.executable, "-m", "toolwire.cli", "serve", "--config", str(config), "--port", str(port)]
    process = subprocess.Popen(command, cwd=folder, env=_env(folder), stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(url + "/v1/models", process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()
        print((folder / "serve.log").read_text(encoding="utf-8"))


def _wait_for(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, "toolwire serve exited"
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    raise RuntimeError(f"toolwire serve did not answer {url}")


def test_the_anthropic_sdk_gets_a_whole_tool_use_and_its_result_answered(gateway: str) -> None:
    tool = {"name": WEATHER["name"], "description": WEATHER["description"], "input_schema": WEATHER["parameters"]}
    question = {"role": "user", "content": "What is the weather in Paris?"}
    with anthropic.Anthropic(base_url=gateway, api_key="unused", max_retries=0, timeout=float(TIMEOUT_S)) as sdk:
        first = sdk.messages.create(
            model="local",
            max_tokens=128,
            messages=[question],
            tools=[tool],
            tool_choice={"type": "tool", "name": "get_weather"},
        )
        print(f"anthropic, first turn: {first.content}")
        uses = [block for block in first.content if block.type == "tool_use"]
        assert [use.name for use in uses] == ["get_weather"] and isinstance(uses[0].input, dict)
        assert first.stop_reason == "tool_use"
        result = {"type": "tool_result", "tool_use_id": uses[0].id, "content": '{"temp_c": 18}'}
        second = sdk.messages.create(
            model="local",
            max_tokens=128,
            messages=[question, {"role": "assistant", "content": first.content}, {"role": "user", "content": [result]}],
            tools=[tool],
            tool_choice={"type": "none"},
        )
    print(f"anthropic, after the result: {second.content}")
    assert second.stop_reason in ("end_turn", "max_tokens")
    assert "".join(block.text for block in second.content if block.type == "text").strip()


def test_the_responses_sdk_gets_a_whole_function_call_and_its_output_answered(gateway: str) -> None:
    tool = {"type": "function", **WEATHER}
    with openai.OpenAI(base_url=gateway + "/v1", api_key="unused", max_retries=0, timeout=float(TIMEOUT_S)) as sdk:
        first = sdk.responses.create(
            model="local",
            input="What is the weather in Paris?",
            tools=[tool],
            tool_choice={"type": "function", "name": "get_weather"},
            temperature=0,
            max_output_tokens=128,
        )
        print(f"responses, first turn: {first.output}")
        calls = [item for item in first.output if item.type == "function_call"]
        assert [call.name for call in calls] == ["get_weather"]
        assert isinstance(json.loads(calls[0].arguments), dict)
        output = {"type": "function_call_output", "call_id": calls[0].call_id, "output": '{"temp_c": 18}'}
        second = sdk.responses.create(
            model="local",
            input=[{"role": "user", "content": "What is the weather in Paris?"}, *first.output, output],
            tools=[tool],
            tool_choice="none",
            temperature=0,
            max_output_tokens=128,
        )
    print(f"responses, after the output: {second.output_text!r}")
    # A reply cut at max_output_tokens is a whole protocol answer too; which one depends on the KV cache's state.
    assert (second.status, second.incomplete_details) in (
        ("completed", None),
        ("incomplete", IncompleteDetails(reason="max_output_tokens")),
    )
    assert second.output_text.strip()
