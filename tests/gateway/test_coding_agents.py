"""Real coding agents from npm (Claude Code, Codex CLI, Gemini CLI) run tool loops through the gateway.

Each agent talks its own protocol to a gateway on a loopback socket, streamed (Claude Code:
Anthropic Messages via `ANTHROPIC_BASE_URL`; Codex: the Responses API via a custom model
provider; Gemini CLI: Gemini via `GOOGLE_GEMINI_BASE_URL`), and the gateway translates to a
`ScriptedServer` upstream speaking another protocol. The upstream script thinks, talks and
calls the agent's own tools (two in parallel, then one), then answers with text; the tests
check that the tools really ran (files in the agent's temp working dir, their output in the
next upstream request), that signatures came back on every turn, and that the agent printed
the final text. Also: Claude Code's own view of the stream, namespaced Codex tools, upstream
errors as each agent shows them, retries after a 429 and a cut stream, a text-mode route, and
the README's lines through `toolwire serve`. A few tests need no npm (plain HTTP shaped like
the agents' requests) and pin the gateway fixes the agents exposed.

The agents come from `tests/gateway/install_coding_agents.sh` (`make test` runs it; it needs
npm and the npm registry; without them these tests skip and say so). They run hermetically:
temp HOME and config dirs, a dummy key, telemetry and updates off, proxies that lead nowhere
(loopback excepted).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.gateway._agents import (
    CLAUDE,
    COMMANDS,
    FINAL,
    GEMINI,
    SIGNATURE,
    UPSTREAM_KEY_ENV,
    ToolLoop,
    claude_command,
    codex_command,
    gateway_to,
    hermetic_env,
    needs_claude,
    needs_codex,
    needs_gemini,
    router_answer,
    run,
    run_agent,
)
from tests.gateway.conftest import Gateway
from tests.gateway.serve_process import ServeProcess
from toolwire.gateway import Route, create_app
from toolwire.testing import DropStream, ErrorReply, RecordedRequest, ScriptedServer, Turn, reply
from toolwire.toolmodes import OUTPUT_TOOL
from toolwire.types import Request, SystemMessage, ToolCall, ToolResult, UserMessage

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
PROMPT = "Write a.txt and b.txt, then show them."
MARKS = {"claude": needs_claude, "codex": needs_codex, "gemini": needs_gemini}
PROTOCOLS = {"claude": "anthropic", "codex": "openai-responses", "gemini": "gemini"}


def agents(*pairs: tuple[str, str]) -> list[Any]:
    """(agent, upstream) parameters, each skipped (saying why) when its agent is not installed."""
    return [pytest.param(agent, upstream, marks=MARKS[agent], id=f"{agent}-to-{upstream}") for agent, upstream in pairs]


@pytest.fixture(autouse=True)
def _upstream_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UPSTREAM_KEY_ENV, "upstream-key-for-agent-tests")


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    return work, home


# the tool loop: two files written at once, then both shown by one command, with each agent's own tools


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def turns(agent: str, work: Path) -> list[list[ToolCall]]:
    if agent == "claude":
        return [
            [
                call("call_w1", "Write", file_path=str(work / "a.txt"), content="A\n"),
                call("call_w2", "Write", file_path=str(work / "b.txt"), content="B\n"),
            ],
            [call("call_b3", "Bash", command="cat a.txt b.txt", description="Show both files")],
        ]
    if agent == "gemini":
        return [
            [
                call("call_g1", "write_file", file_path=str(work / "a.txt"), content="A\n"),
                call("call_g2", "write_file", file_path=str(work / "b.txt"), content="B\n"),
            ],
            [call("call_g3", "run_shell_command", command="cat a.txt b.txt", description="Show both files")],
        ]
    return [
        [call("call_x1", "exec_command", cmd="echo A > a.txt"), call("call_x2", "exec_command", cmd="echo B > b.txt")],
        [call("call_x3", "exec_command", cmd="cat a.txt b.txt")],
    ]


def tool_loop(agent: str, upstream: str, work: Path) -> ToolLoop:
    script = turns(agent, work)
    return ToolLoop(script[0][0].name, upstream, script, client=PROTOCOLS[agent])


def in_loop(server: ScriptedServer) -> list[RecordedRequest]:
    """The requests of the agent's conversation: not Gemini CLI's model router (a JSON score).

    The router asks for JSON (`responseJsonSchema`); an upstream without that field gets it as a
    forced output tool instead (the gateway's typed-output strategy), so either marks it.
    """
    return [
        r
        for r in server.requests
        if r.request is None
        or (r.request.response_format is None and all(t.name != OUTPUT_TOOL for t in r.request.tools))
    ]


def _json_asked(request: Request) -> dict[str, Any] | None:
    """The JSON Schema a request asks its reply to follow: its own field, or the forced output tool's."""
    if request.response_format is not None:
        return request.response_format.schema
    return next((dict(t.parameters) for t in request.tools if t.name == OUTPUT_TOOL), None)


def assert_the_tools_ran(work: Path, loop: ToolLoop) -> None:
    assert (work / "a.txt").read_text(encoding="utf-8") == "A\n"
    assert (work / "b.txt").read_text(encoding="utf-8") == "B\n"
    assert len(loop.loop) == 3
    ids = [m.tool_call_id for m in loop.loop[-1].messages if isinstance(m, ToolResult)]
    assert ids == [c.id for calls in loop.turns for c in calls]
    assert "A\nB" in loop.results()[2]  # the command's output went back to the upstream model
    loop.assert_context_came_back()


LOOPS = agents(
    ("claude", "openai"),
    ("claude", "openai-responses"),
    ("claude", "gemini"),
    ("codex", "anthropic"),
    ("codex", "gemini"),
    ("codex", "openai"),
    ("gemini", "anthropic"),
    ("gemini", "openai-responses"),
)


@pytest.mark.parametrize(("agent", "upstream"), LOOPS)
def test_the_agent_runs_its_tools_through_the_gateway(agent: str, upstream: str, dirs: tuple[Path, Path]) -> None:
    work, home = dirs
    loop = tool_loop(agent, upstream, work)
    with ScriptedServer(loop) as server, gateway_to(upstream, server) as gateway:
        printed = run_agent(agent, gateway.url, PROMPT, work, home).stdout
    assert printed.strip().splitlines()[-1] == FINAL  # Gemini CLI prints the first turn's text too
    assert_the_tools_ran(work, loop)
    assert all(r.stream for r in in_loop(server))  # the agents stream; so does the upstream leg
    if agent == "gemini":  # its model router's JSON output crossed too, as JSON Schema (not "OBJECT")
        (router,) = [_json_asked(r.request) for r in server.requests if r.request and _json_asked(r.request)]
        assert router["type"] == "object"
    if agent == "claude" and upstream.startswith("openai"):  # its system message after the prompt stays there
        kinds = [type(m).__name__ for m in loop.loop[0].messages]
        assert kinds[kinds.index("UserMessage") :] == ["UserMessage", "SystemMessage"]


def saved_session(agent: str, argv: list[str]) -> tuple[list[str], list[str]]:
    """The agent's command with its session saved, and the command that continues it."""
    if agent == "claude":
        return argv, [argv[0], "-p", "And now?", "--continue", *argv[3:]]
    kept = [word for word in argv if word != "--ephemeral"]
    options = [word for word in kept[2:-1] if word not in ("--color", "never")]
    return kept, [*kept[:2], "resume", "--last", *options, "And now?"]


@pytest.mark.parametrize(("agent", "upstream"), agents(("claude", "gemini"), ("codex", "gemini")))
def test_carried_context_survives_the_agents_saved_session(agent: str, upstream: str, dirs: tuple[Path, Path]) -> None:
    """A later run continues the conversation from the agent's files: the signatures still come back."""
    work, home = dirs
    loop = tool_loop(agent, upstream, work)
    with ScriptedServer(loop) as server, gateway_to(upstream, server) as gateway:
        argv, env = COMMANDS[agent](gateway.url, PROMPT, home)
        first, then = saved_session(agent, argv)
        run(first, work, env)
        assert run(then, work, env).stdout.strip().splitlines()[-1] == FINAL
    assert len(loop.loop) == 4
    assert isinstance(loop.loop[-1].messages[-1], UserMessage)  # "And now?", after the whole first run
    loop.assert_context_came_back()


@needs_claude
def test_claude_code_sees_every_call_streamed_as_it_arrives(dirs: tuple[Path, Path]) -> None:
    """Claude Code's own view of the stream: one block per part, arguments as `input_json_delta`s.

    The failure other proxies ship: `tool_use` blocks whose input never streams, reaching the
    agent as `{}`. The OpenAI upstream sends each call's arguments in pieces.
    """
    work, home = dirs
    loop = tool_loop("claude", "openai", work)
    with ScriptedServer(loop) as server, gateway_to("openai", server) as gateway:
        argv, env = claude_command(gateway.url, PROMPT, home)
        flags = ["--output-format", "stream-json", "--include-partial-messages", "--verbose"]
        lines = [json.loads(line) for line in run([*argv, *flags], work, env).stdout.splitlines()]
    events = [line["event"] for line in lines if line["type"] == "stream_event"]
    every = [(e["type"], e.get("index"), e.get("delta", {}).get("type")) for e in events]
    # Pieces that reach the gateway in one read go on as one delta, so how many a block gets
    # depends on timing: each run of the same block's deltas counts once.
    seen = [e for n, e in enumerate(every) if not (e[0] == "content_block_delta" and n and every[n - 1] == e)]
    start, stop = [("message_start", None, None)], [("message_delta", None, None), ("message_stop", None, None)]

    def block(index: int, kind: str) -> list[tuple[str, int | None, str | None]]:
        return [
            ("content_block_start", index, None),
            ("content_block_delta", index, kind),
            ("content_block_stop", index, None),
        ]

    first = [*block(0, "thinking_delta"), *block(1, "text_delta"), *block(2, "input_json_delta")]
    first += block(3, "input_json_delta")
    replies = [first, block(0, "input_json_delta"), block(0, "text_delta")]
    assert seen == [event for one in replies for event in (*start, *one, *stop)]
    content = [b for line in lines if line["type"] == "assistant" for b in line["message"]["content"]]
    uses = [(b["name"], b["input"]) for b in content if b["type"] == "tool_use"]
    assert uses == [(c.name, c.arguments) for calls in loop.turns for c in calls]  # never {}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_reply_that_ends_in_text_has_no_carrier_block(stream: bool) -> None:
    """Claude Code prints the text of the last content block: a carrier after it printed nothing.

    No provider needs context back from a turn without calls, so it is dropped there (and named
    in `x-toolwire-dropped` when the headers are still to be sent); turns with calls keep theirs.
    Needs no npm: plain HTTP, as Claude Code sends it.
    """
    with ScriptedServer(["The answer."]) as server, gateway_to("openai-responses", server) as gateway:
        messages = [{"role": "user", "content": "hi"}]
        body = {"model": "claude-sonnet-4-6", "max_tokens": 64, "stream": stream, "messages": messages}
        answer = httpx2.post(gateway.url + "/v1/messages", json=body, headers={"x-api-key": "k"}, timeout=60)
    assert answer.status_code == 200
    if stream:
        events = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]
        blocks = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
        assert (blocks, answer.headers.get("x-toolwire-dropped")) == (["text"], None)
    else:
        content = answer.json()["content"]
        assert content == [{"type": "text", "text": "The answer."}]
        assert answer.headers["x-toolwire-dropped"] == "context:openai-responses"  # the Responses message item id


def test_a_gemini_client_gets_the_carrier_on_the_first_call() -> None:
    """Gemini CLI sends back the signatures of `functionCall` parts only; one on the text was lost.

    Needs no npm: plain HTTP, as Gemini CLI sends it.
    """
    loop = ToolLoop("get_weather", "anthropic", [[call("toolu_1", "get_weather", city="Oslo")]])
    with ScriptedServer(loop) as server, gateway_to("anthropic", server) as gateway:
        tools = [{"functionDeclarations": [{"name": "get_weather", "parameters": {"type": "object"}}]}]
        body = {"contents": [{"role": "user", "parts": [{"text": "Weather?"}]}], "tools": tools}
        url = gateway.url + "/v1beta/models/gemini-2.5-flash:generateContent"
        answer = httpx2.post(url, json=body, headers={"x-goog-api-key": "k"}, timeout=60)
    parts = answer.json()["candidates"][0]["content"]["parts"]
    assert [sorted(p) for p in parts] == [["text", "thought"], ["text"], ["functionCall", "thoughtSignature"]]
    assert parts[2]["thoughtSignature"] != SIGNATURE  # the packed context, not Gemini's own


NAMESPACED = {
    "type": "namespace",
    "name": "crm",
    "description": "The customer database.",
    "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}],
}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_call_to_a_namespaced_tool_reaches_a_responses_client_under_its_namespace(stream: bool) -> None:
    """Other providers know `crm__lookup`; the Responses client dispatches on `namespace` + `name`.

    Needs no npm: plain HTTP, as Codex sends it (its sub-agent tools come in a namespace).
    """
    with ScriptedServer([reply("", [call("toolu_1", "crm__lookup", id=7)])]) as server:
        with gateway_to("anthropic", server) as gateway:
            body = {"model": "gpt-5.1-codex", "input": "Who is 7?", "tools": [NAMESPACED], "stream": stream}
            answer = httpx2.post(gateway.url + "/v1/responses", json=body, headers={"authorization": "Bearer k"})
    assert [t["name"] for t in server.requests[0].body["tools"]] == ["crm__lookup"]
    expected = {"name": "lookup", "namespace": "crm", "arguments": '{"id":7}'}
    if stream:
        events = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]
        items = [e["item"] for e in events if e["type"] in ("response.output_item.added", "response.output_item.done")]
        items += events[-1]["response"]["output"]
        assert [(i["name"], i["namespace"]) for i in items] == [("lookup", "crm")] * 3
        done = next(e for e in events if e["type"] == "response.function_call_arguments.done")
        assert done["name"] == "lookup"
        item = items[-1]
    else:
        (item,) = answer.json()["output"]
    assert {k: item[k] for k in expected} == expected


@needs_codex
def test_codex_runs_a_namespaced_tool_of_its_own_through_the_gateway(dirs: tuple[Path, Path]) -> None:
    work, home = dirs
    close = call("call_n1", "multi_agent_v1__close_agent", target="no-such-agent")  # a sub-agent tool
    loop = ToolLoop("exec_command", "anthropic", [[close]], client="openai-responses")
    with ScriptedServer(loop) as server, gateway_to("anthropic", server) as gateway:
        run_agent("codex", gateway.url, "Close the agent.", work, home)
    assert "multi_agent_v1__close_agent" in [t["name"] for t in server.requests[0].body["tools"]]
    (result,) = loop.results()
    assert result.startswith("invalid agent id no-such-agent")  # its own tool answered, not "unsupported call"
    loop.assert_context_came_back()


# errors, as each agent sees them

REJECTION = "tools.0.name: String should match pattern '^[a-zA-Z0-9_-]+$'"
SHOWN = (  # the gateway's message, in the agent's protocol; {} is the upstream
    f"Upstream error: {{}} answered HTTP 400: {REJECTION!r}; "
    "fix the request (model name, tools, parameters) before retrying."
)


@pytest.mark.parametrize(
    ("agent", "upstream"), agents(("claude", "openai"), ("codex", "gemini"), ("gemini", "anthropic"))
)
def test_an_upstream_rejection_reaches_the_agent_in_its_protocol(
    agent: str, upstream: str, dirs: tuple[Path, Path]
) -> None:
    work, home = dirs
    with ScriptedServer(lambda request: ErrorReply(status=400, message=REJECTION)) as server:
        with gateway_to(upstream, server) as gateway:
            done = run_agent(agent, gateway.url, "Say hello.", work, home, check=False)
    assert done.returncode == 1
    shown = SHOWN.format(upstream)
    if agent == "claude":  # Claude Code asks a few times, then prints the API's message
        assert done.stdout == f"API Error: 400 {shown}\n"
    elif agent == "codex":  # Codex prints the OpenAI error body
        error = {"message": shown, "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}
        assert f"ERROR: {json.dumps({'error': error}, separators=(',', ':'))}" in done.stderr.splitlines()
    else:  # Gemini CLI prints the Gemini error body
        error = {"code": 400, "message": shown, "status": "INVALID_ARGUMENT"}
        assert f"_ApiError: {json.dumps({'error': error}, separators=(',', ':'))}" in done.stderr


@pytest.mark.parametrize(("agent", "upstream"), agents(("claude", "openai"), ("codex", "gemini")))
def test_the_agent_retries_a_rate_limit_and_a_cut_stream(agent: str, upstream: str, dirs: tuple[Path, Path]) -> None:
    """(Gemini CLI retries too, after seconds of its own backoff: too slow for the suite.)"""
    work, home = dirs
    script = [
        ErrorReply(
            status=429, message="Too many requests.", headers={"retry-after": "1"}
        ),  # 0 would mean the default cool-down
        DropStream(response="This answer is cut", after=3),
        FINAL,
    ]
    with ScriptedServer(script) as server, gateway_to(upstream, server) as gateway:
        done = run_agent(agent, gateway.url, "Say hello.", work, home)
    assert done.stdout.strip() == FINAL
    assert server.request_count == 3


# a model served without a tool parser (tool_mode = "text")


def written_call(agent: str, work: Path) -> str:
    """A call as such a model writes it, in the format the text-mode prompt asks for."""
    first = turns(agent, work)[0][0]
    return "I'll do it.\nTOOL_CALL: " + json.dumps({"name": first.name, "args": first.arguments})


@pytest.mark.parametrize(("agent", "upstream"), agents(("claude", "ollama"), ("codex", "ollama"), ("gemini", "ollama")))
def test_a_model_without_tool_calling_drives_the_agent_in_text_mode(
    agent: str, upstream: str, dirs: tuple[Path, Path]
) -> None:
    work, home = dirs
    replies = [written_call(agent, work), FINAL]

    def answer(request: Request) -> Turn:
        score = router_answer(request)
        return score if score is not None else replies.pop(0)

    with ScriptedServer(answer) as server:
        route = Route(model="*", target=f"{upstream}:qwen3", base_url=server.base_url, tool_mode="text")
        with Gateway(create_app([route])) as gateway:
            printed = run_agent(agent, gateway.url, "Write a.txt.", work, home).stdout
    assert printed.strip().splitlines()[-1] == FINAL
    assert (work / "a.txt").read_text(encoding="utf-8") == "A\n"
    first, second = (r.request for r in in_loop(server))
    assert first is not None and second is not None
    assert ["tools" in r.body for r in in_loop(server)] == [False, False]  # the tools went into the prompt
    name = turns(agent, work)[0][0].name
    prompt = "\n".join(m.content for m in first.messages if isinstance(m, SystemMessage))
    assert "TOOL_CALL" in prompt and name in prompt
    assert f"TOOL_RESULT (result) for {name} [" in str(second.messages[-1])  # the agent's result, written back


# the README's "Use it from Claude Code / Codex / the OpenAI SDK" lines, through `toolwire serve`

# (its own lines only: the subsections after it, multi-target routes and the like, have other blocks)
SECTION = README.split("## Use it from Claude Code / Codex / the OpenAI SDK\n", 1)[1].split("\n## ", 1)[0]
SECTION = SECTION.split("\n### ", 1)[0]
GATEWAY = "127.0.0.1:4000"  # where the README's lines point


def readme_blocks(language: str, containing: str) -> str:
    blocks = [
        b for b in re.findall(rf"^```{language}\n(.*?)^```", SECTION, re.DOTALL | re.MULTILINE) if containing in b
    ]
    assert len(blocks) == 1, (language, containing)
    return blocks[0]


def readme_line(start: str) -> list[str]:
    """The README command line that starts with `start`, as words (comments dropped)."""
    lines = [line for line in readme_blocks("bash", start).splitlines() if line.startswith(start)]
    return shlex.split(lines[0], comments=True)


def assignments(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """`A=1 B=2 cmd args` -> ({A: 1, B: 2}, [cmd, args])."""
    env: dict[str, str] = {}
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return env, words


class Serve(ServeProcess):
    """`toolwire serve` as the README starts it, in a subprocess on the port it picks (`--port 0`)."""

    def __init__(self, config: Path, env: dict[str, str]) -> None:
        serve = readme_line("toolwire serve")
        assert serve[:4] == ["toolwire", "serve", "--config", "toolwire.toml"]
        super().__init__(config, *serve[4:], env=env)

    @property
    def address(self) -> str:
        """`127.0.0.1:<port>`, as the README's lines name the gateway."""
        return self.url.removeprefix("http://")


def readme_gateway(tmp_path: Path, upstream: ScriptedServer) -> Serve:
    """The README's route, aimed at the scripted upstream, served with the README's gateway key."""
    route = readme_blocks("toml", "[[route]]")
    config = tmp_path / "toolwire.toml"
    config.write_text(route + f'base_url = "{upstream.base_url}"\n', encoding="utf-8")
    keys, _ = assignments(readme_line("export TOOLWIRE_GATEWAY_KEYS")[1:])
    env = dict(os.environ, GEMINI_API_KEY="upstream-key-from-the-environment", **keys)
    return Serve(config, env)


def readme_agent(agent: str, work: Path, home: Path, local: Any) -> str:
    """Run the README's line for `agent` (plus what a test needs: allowed tools, no sandbox); its output."""
    start = {"claude": "ANTHROPIC_BASE_URL=", "codex": "TOOLWIRE_KEY=", "gemini": "GOOGLE_GEMINI_BASE_URL="}[agent]
    env, argv = assignments([local(word) for word in readme_line(start)])
    assert argv[:2] == {"claude": ["claude", "-p"], "codex": ["codex", "exec"], "gemini": ["gemini", "-p"]}[agent]
    base: dict[str, str] = {}
    if agent == "codex":  # the README's config.toml
        command, base = codex_command("unused", argv[2], home, config=local(readme_blocks("toml", "[model_providers.")))
    elif agent == "gemini":  # the README's settings.json, and headless approval
        (home / ".gemini").mkdir(exist_ok=True)
        (home / ".gemini" / "settings.json").write_text(readme_blocks("json", "selectedType"), encoding="utf-8")
        command = [str(GEMINI), *argv[1:], "--yolo", "--skip-trust"]
    else:
        command = [str(CLAUDE), *argv[1:], "--allowedTools", "Write", "Bash"]
    return run(command, work, hermetic_env(home) | base | env).stdout


@needs_claude
@needs_codex
@needs_gemini
def test_the_readme_lines_work_through_toolwire_serve(tmp_path: Path) -> None:
    names = ("claude", "codex", "gemini")
    works = {name: tmp_path / name for name in names}
    for folder in (*works.values(), tmp_path / "home"):
        folder.mkdir()
    loops = {name: tool_loop(name, "gemini", works[name]) for name in names}

    def answer(request: Request) -> Turn:
        offered = {tool.name for tool in request.tools}
        loop = next((loop for loop in loops.values() if loop.marker in offered), None)
        if loop is not None or router_answer(request) is not None:  # a loop, or Gemini CLI's model router
            return (loop or loops["gemini"])(request)
        return "Hello from Gemini, through the gateway."

    with ScriptedServer(answer) as server, readme_gateway(tmp_path, server) as gateway:

        def local(text: str) -> str:
            return text.replace(GATEWAY, gateway.address)

        for name in names:
            printed = readme_agent(name, works[name], tmp_path / "home", local)
            assert printed.strip().splitlines()[-1] == FINAL
        sdk = readme_blocks("python", "OpenAI(")
        done = subprocess.run([sys.executable, "-c", local(sdk)], capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout, done.stderr) == (0, "Hello from Gemini, through the gateway.\n", "")
    for name in names:
        assert_the_tools_ran(works[name], loops[name])
    assert [r.stream for r in in_loop(server)] == [True] * 9 + [False]  # the agents stream, the SDK example not
    assert all("/models/gemini-2.5-flash:" in r.path for r in server.requests)
    assert {r.headers["x-goog-api-key"] for r in server.requests} == {"upstream-key-from-the-environment"}
    assert "upstream-key-from-the-environment" not in gateway.log


@needs_claude
def test_the_readmes_claude_line_against_the_offline_model_makes_one_round_trip(tmp_path: Path) -> None:
    """Claude Code's first tool is `Agent`: the sub-agent it starts gets an answer, not another `Agent` call."""
    config = tmp_path / "try.toml"
    config.write_text('[[route]]\nmodel = "*"\ntarget = "scripted:demo"\n', encoding="utf-8")
    (tmp_path / "work").mkdir()
    (tmp_path / "home").mkdir()
    env, argv = assignments(readme_line("ANTHROPIC_BASE_URL="))
    with ServeProcess(config) as gateway:
        env["ANTHROPIC_BASE_URL"] = gateway.url
        done = run([str(CLAUDE), *argv[1:]], tmp_path / "work", hermetic_env(tmp_path / "home") | env)
    assert done.stdout.splitlines()[0].startswith("The offline scripted model called Agent, which returned: ")
    requests = gateway.log.count("POST /v1/messages ")
    assert 2 <= requests <= 8, gateway.log  # the prompt, the sub-agent, the answer, a notice or two; it was hundreds
