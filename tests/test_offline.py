"""The offline scripted model behind `toolwire serve`, as a client of the gateway meets it.

A real `toolwire serve` subprocess routes to it; the official OpenAI SDK asks. It honours
`tool_choice`, calls the tools the prompt names (in parallel) or as many as the route's
`parallel` asks, and makes one round of calls per conversation.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.serve_process import ServeProcess

CONFIG = """\
[[route]]
model = "three"
target = "scripted:three"
parallel = 3

[[route]]
model = "*"
target = "scripted:demo"
"""


def _tool(name: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    return {"type": "function", "function": {"name": name, "description": f"{name} for a city", "parameters": schema}}


TOOLS = [_tool("get_weather"), _tool("get_time"), _tool("get_news")]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    config = tmp_path_factory.mktemp("offline") / "toolwire.toml"
    config.write_text(CONFIG, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLWIRE_GATEWAY_KEYS", "PROMETHEUS_MULTIPROC_DIR")}
    with ServeProcess(config, env=env) as serve:
        yield serve


def _ask(gateway: ServeProcess, prompt: str, model: str = "demo", **options: Any) -> Any:
    import openai

    sdk = openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0)
    messages = [{"role": "user", "content": prompt}]
    return sdk.chat.completions.create(model=model, messages=messages, tools=TOOLS, **options).choices[0]  # type: ignore[arg-type]


def _calls(choice: Any) -> list[str]:
    return [call.function.name for call in choice.message.tool_calls or []]


def test_it_calls_the_tool_that_tool_choice_names(gateway: ServeProcess) -> None:
    named = {"type": "function", "function": {"name": "get_news"}}
    assert _calls(_ask(gateway, "Weather in Paris?", tool_choice=named)) == ["get_news"]


def test_tool_choice_none_gets_an_answer_without_calls(gateway: ServeProcess) -> None:
    choice = _ask(gateway, "Weather in Paris?", tool_choice="none")
    assert (_calls(choice), choice.finish_reason) == ([], "stop")
    said = "Hello from the offline scripted model (no model, no key). You said: 'Weather in Paris?'"
    assert choice.message.content == said


def test_the_tools_the_prompt_names_are_called_in_parallel_in_its_order(gateway: ServeProcess) -> None:
    choice = _ask(gateway, "Call get_time, then get_weather for Paris", tool_choice="required")
    assert (_calls(choice), choice.finish_reason) == (["get_time", "get_weather"], "tool_calls")
    assert [c.id for c in choice.message.tool_calls] == ["call_1_0", "call_1_1"]


def test_a_route_with_parallel_makes_that_many_calls(gateway: ServeProcess) -> None:
    assert _calls(_ask(gateway, "Weather in Paris?", model="three")) == ["get_weather"] * 3
    assert _calls(_ask(gateway, "get_news and get_time", model="three")) == ["get_news", "get_time", "get_news"]
    assert _calls(_ask(gateway, "Weather in Paris?", model="three", parallel_tool_calls=False)) == ["get_weather"]


def test_one_round_of_calls_ends_the_conversation(gateway: ServeProcess) -> None:
    import openai

    sdk = openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    first = sdk.chat.completions.create(model="demo", messages=messages, tools=TOOLS).choices[0]  # type: ignore[arg-type]
    call = first.message.tool_calls[0]  # type: ignore[index]
    messages += [
        first.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "18 C"},
        {"role": "user", "content": "<system-reminder>A background task finished.</system-reminder>"},
    ]
    later = sdk.chat.completions.create(model="demo", messages=messages, tools=TOOLS).choices[0]  # type: ignore[arg-type]
    said = "The offline scripted model called get_weather, which returned: 18 C"
    assert (_calls(later), later.message.content) == ([], said)


def test_a_prompt_it_wrote_itself_gets_an_answer_so_sub_agents_end(gateway: ServeProcess) -> None:
    choice = _ask(gateway, "example")
    assert (_calls(choice), choice.message.content) == (
        [],
        "The offline scripted model answers its own example prompt without calling tools.",
    )


@pytest.mark.parametrize(
    ("route", "message"),
    [
        ('target = "openai:gpt-4o"\nparallel = 2', "Target 'openai:gpt-4o': parallel applies only to the offline"),
        ('target = "scripted:x"\nparallel = 0', "'parallel' of [[route]] 1 in"),
    ],
)
def test_parallel_is_checked_at_start(tmp_path: Path, route: str, message: str) -> None:
    import subprocess
    import sys

    config = tmp_path / "toolwire.toml"
    config.write_text(f'[[route]]\nmodel = "*"\n{route}\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "serve", "--config", str(config), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert message in done.stderr


def test_connect_takes_parallel_for_the_scripted_model() -> None:
    from toolwire import connect
    from toolwire.types import ToolDefinition

    tool = ToolDefinition(name="get_weather", description="", parameters=_tool("get_weather")["function"]["parameters"])
    with connect("scripted:demo", parallel=2) as client:
        reply = client.complete_sync("Paris?", tools=[tool])
    assert [c.name for c in reply.message.tool_calls] == ["get_weather", "get_weather"]
