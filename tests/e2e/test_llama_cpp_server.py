"""llama.cpp's own llama-server (`--jinja`) with SmolLM2-135M-Instruct: what the `llamacpp` profile says, checked.

The same model and questions as the llama-cpp-python tests, through every door: the client
(named, `auto`, `required`, streamed and not, a second turn), the agent, `toolwire run` and
`toolwire serve` with the official SDKs. With this model the server leaves the tools out of the
prompt (its template cannot render them), so the profile's mode is `constrained` (the server's
`json_schema`), and a client of `llamacpp` uses it unless told otherwise.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anthropic
import openai
import pytest

import toolwire
from tests.e2e.llama_server import MODEL_NAME, LlamaServer
from tests.e2e.test_cli_and_gateway import TIMEOUT_S, WEATHER, _env
from tests.e2e.test_native_calls import QUESTION, SEED, get_weather
from tests.gateway.serve_process import ServeProcess
from toolwire import Client, Done, Response, StopReason, ToolResult, UserMessage, toolmodes
from toolwire.agent import Agent
from toolwire.toolmodes import ModeState


def connect(server: LlamaServer, seed: int = SEED, max_tokens: int = 128) -> Client:
    return toolwire.connect(
        f"llamacpp:{MODEL_NAME}",
        base_url=server.base_url,
        temperature=0,
        max_tokens=max_tokens,
        extra={"seed": seed},
        timeout=float(TIMEOUT_S),
    )


@pytest.fixture
async def client(llama_cpp: LlamaServer) -> AsyncIterator[Client]:
    async with connect(llama_cpp) as client:
        yield client


async def _ask(client: Client, choice: str, mode: str | None = None, stream: bool = False) -> Response:
    """One request in `mode` (default: the client's preferred one), as sessions and agents send it."""
    request = client.build_request(QUESTION, tools=[get_weather], tool_choice=choice, stream=stream)
    state = ModeState(mode or client.preferred_tool_mode)  # type: ignore[arg-type]
    if not stream:
        return await toolmodes.complete(client, request, state)
    events = [e async for e in toolmodes.stream(client, request, state)]
    assert isinstance(events[-1], Done) and len(events) > 1
    return events[-1].response


async def test_natively_the_server_leaves_the_tools_out_of_the_prompt(client: Client) -> None:
    """What the profile records: same prompt tokens with and without tools, prose, no call."""
    bare = await client.complete(QUESTION, max_tokens=8)
    native = await _ask(client, "auto", "native")
    print(f"native: {native.text[:80]!r}, usage {native.usage}")
    assert native.tool_calls == [] and native.text.strip()
    assert native.usage is not None and bare.usage is not None
    assert native.usage.input_tokens == bare.usage.input_tokens


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("choice", ["get_weather", "auto", "required"])
async def test_the_profiles_mode_gets_a_whole_call(client: Client, choice: str, stream: bool) -> None:
    assert client.preferred_tool_mode == "constrained"
    response = await _ask(client, choice, stream=stream)
    print(f"{choice}, {'streamed' if stream else 'whole'}: {response.tool_calls}")
    assert [call.name for call in response.tool_calls] == ["get_weather"]
    assert isinstance(response.tool_calls[0].arguments, dict) and response.tool_calls[0].id
    assert response.stop_reason == StopReason.TOOL_USE


async def test_a_second_turn_with_the_tool_result_is_answered(client: Client) -> None:
    first = await _ask(client, "get_weather")
    call = first.tool_calls[0]
    result = await get_weather.execute_raw(call.arguments, call=call)
    assert isinstance(result, ToolResult)
    second = await client.complete([UserMessage(content=QUESTION), first.message, result], tool_choice="none")
    print(f"second turn: {second.text!r}")
    assert second.text.strip() and second.tool_calls == []


@pytest.mark.parametrize("seed", range(10))
async def test_an_agent_executes_a_real_tool_call_in_every_seeded_run(llama_cpp: LlamaServer, seed: int) -> None:
    async with connect(llama_cpp, seed=seed) as client:
        agent = Agent(client, [get_weather], max_tool_turns=1)  # the profile's mode: constrained
        result = await agent.run(QUESTION)
    print(f"seed {seed}: {agent.tool_mode}, {result.stop_reason}, calls {[r.call for r in result.calls]}")
    assert agent.tool_mode == "constrained"
    assert result.calls and result.calls[0].call.name == "get_weather"
    assert result.calls[0].result.kind == "data"


def test_toolwire_run_writes_a_real_file(llama_cpp: LlamaServer, tmp_path: Path) -> None:
    command = [
        *(sys.executable, "-m", "toolwire.cli", "run", "--provider", "llamacpp", "--model", MODEL_NAME),
        *("--base-url", llama_cpp.base_url, "--tool-choice", "write", "--max-tokens", "200"),
        *("--tool-mode", "constrained", "--temperature", "0", "--timeout", TIMEOUT_S),
        *("--max-tool-turns", "1", "--yes", "--json", "Write the word hello into the file hello.txt"),
    ]
    done = subprocess.run(command, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=1200)
    print(f"exit {done.returncode}\nstderr:\n{done.stderr}")
    assert done.returncode in (0, 3), done.stderr
    first = json.loads(done.stdout)["calls"][0]
    assert (first["name"], first["approved"], first["result_kind"]) == ("write", True, "text")
    assert (tmp_path / first["arguments"]["path"]).read_text(encoding="utf-8") == first["arguments"]["content"]


@pytest.fixture(scope="module")
def gateway(llama_cpp: LlamaServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`toolwire serve` routing model `local` to llama-server in the profile's mode."""
    folder = tmp_path_factory.mktemp("serve-llama-cpp")
    config = folder / "toolwire.toml"
    route = f'[[route]]\nmodel = "local"\ntarget = "llamacpp:{MODEL_NAME}"\nbase_url = "{llama_cpp.base_url}"\n'
    config.write_text(route + 'tool_mode = "constrained"\n', encoding="utf-8")
    with ServeProcess(config, env=_env(folder)) as serve:
        yield serve.url
    print(serve.log)


def test_the_anthropic_sdk_gets_a_whole_tool_use_and_its_result_answered(gateway: str) -> None:
    tool = {"name": WEATHER["name"], "description": WEATHER["description"], "input_schema": WEATHER["parameters"]}
    question = {"role": "user", "content": QUESTION}
    with anthropic.Anthropic(base_url=gateway, api_key="unused", max_retries=0, timeout=float(TIMEOUT_S)) as sdk:
        # Greedy: at the server's default temperature the model wrote a second call now and then
        # (this SDK no longer takes `temperature`; the Messages API still reads it from the body).
        greedy = {"temperature": 0}
        first = sdk.messages.create(model="local", max_tokens=128, messages=[question], tools=[tool], extra_body=greedy)  # type: ignore[list-item]
        uses = [block for block in first.content if block.type == "tool_use"]
        print(f"anthropic, first turn: {first.content}")
        assert [use.name for use in uses] == ["get_weather"] and isinstance(uses[0].input, dict)
        assert first.stop_reason == "tool_use"
        result = {"type": "tool_result", "tool_use_id": uses[0].id, "content": '{"temp_c": 18}'}
        history = [question, {"role": "assistant", "content": first.content}, {"role": "user", "content": [result]}]
        second = sdk.messages.create(
            model="local",
            max_tokens=128,
            messages=history,
            tool_choice={"type": "none"},
            tools=[tool],
            extra_body=greedy,
        )  # type: ignore[arg-type,list-item]
    assert second.stop_reason in ("end_turn", "max_tokens")
    assert "".join(block.text for block in second.content if block.type == "text").strip()


def test_the_openai_sdk_gets_a_whole_call_streamed(gateway: str) -> None:
    with openai.OpenAI(base_url=gateway + "/v1", api_key="unused", max_retries=0, timeout=float(TIMEOUT_S)) as sdk:
        stream = sdk.chat.completions.create(
            model="local",
            messages=[{"role": "user", "content": QUESTION}],
            tools=[{"type": "function", "function": WEATHER}],  # type: ignore[list-item]
            temperature=0,
            max_tokens=128,
            stream=True,
        )
        chunks = list(stream)
    pieces = [d.tool_calls[0] for c in chunks if c.choices and (d := c.choices[0].delta).tool_calls]
    print(f"openai, streamed: {pieces}")
    assert pieces[0].function is not None and pieces[0].function.name == "get_weather"
    arguments = "".join(p.function.arguments or "" for p in pieces if p.function is not None)
    assert isinstance(json.loads(arguments), dict)
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["tool_calls"]
