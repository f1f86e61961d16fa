"""Agent loop: a scripted model asks for tool calls; the framework runs them and loops.

Scenario "loop": 10 turns x 2 parallel calls over 5 trivial async tools, then a final text
answer (11 model turns, 20 tool runs). Scenario "sleep": one turn of 4 calls to a low-risk tool
that sleeps 0.1 s, then the answer; concurrent execution finishes in ≈ 0.1 s.

Every row is driven by the same plan (`plan()`); its scripted model is stateless (it reads the
turn number from the history it is given), is built untimed, and each row returns
`(final text, tool runs)` so the check can see all calls really ran.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bench.harness import RowSpec

Plan = list[list[tuple[str, str, dict[str, Any]]]]
NAP_S = 0.1


async def t_add(a: int, b: int) -> str:
    return str(a + b)


async def t_upper(text: str) -> str:
    return text.upper()


async def t_echo(text: str) -> str:
    return text


async def t_count(items: list[int]) -> str:
    return str(len(items))


async def t_status(service: str) -> str:
    return f"{service}: ok"


async def t_nap(label: str) -> str:
    await asyncio.sleep(NAP_S)
    return label


TOOLS = {"add": t_add, "upper": t_upper, "echo": t_echo, "count": t_count, "status": t_status, "nap": t_nap}
_ARGS = {
    "add": {"a": 2, "b": 3},
    "upper": {"text": "héllo"},
    "echo": {"text": "ping"},
    "count": {"items": [1, 2, 3]},
    "status": {"service": "db"},
}
_TRIVIAL = ["add", "upper", "echo", "count", "status"]


def plan(scenario: str) -> Plan:
    """The calls of each tool turn (the final text turn is implied)."""
    if scenario == "sleep":
        return [[(f"call_nap_{k}", "nap", {"label": f"n{k}"}) for k in range(4)]]
    return [
        [(f"call_{t}_{k}", _TRIVIAL[(2 * t + k) % 5], _ARGS[_TRIVIAL[(2 * t + k) % 5]]) for k in range(2)]
        for t in range(10)
    ]


def _tool_names(scenario: str) -> list[str]:
    return ["nap"] if scenario == "sleep" else _TRIVIAL


def check_for(scenario: str) -> Any:
    want = sum(len(turn) for turn in plan(scenario))

    def check(result: tuple[str, int]) -> str | None:
        text, runs = result
        if text != "all done" or runs != want:
            return f"final text {text!r}, {runs} tool runs (want 'all done', {want})"
        return None

    return check


# floor


def _floor(scenario: str) -> Any:
    def make() -> tuple[Any, Any]:
        steps = plan(scenario)
        loop = asyncio.new_event_loop()

        async def model(history: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
            turn = sum(1 for m in history if m["role"] == "assistant")
            return steps[turn] if turn < len(steps) else []

        async def run() -> tuple[str, int]:
            history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
            runs = 0
            while calls := await model(history):
                history.append({"role": "assistant", "calls": calls})
                results = await asyncio.gather(*(TOOLS[name](**args) for _, name, args in calls))
                history.extend({"role": "tool", "id": c[0], "content": r} for c, r in zip(calls, results, strict=True))
                runs += len(results)
            history.append({"role": "assistant", "content": "all done"})
            return "all done", runs

        return None, lambda _: loop.run_until_complete(run())

    return make


# toolwire


def _toolwire(scenario: str) -> Any:
    def make() -> tuple[Any, Any]:
        from toolwire.agent import Agent
        from toolwire.testing import ScriptedModel, reply
        from toolwire.tools import tool
        from toolwire.types import AssistantMessage, Request, Response, ToolCall

        steps = plan(scenario)
        tools = [tool(TOOLS[name], name=name, risk="low") for name in _tool_names(scenario)]
        loop = asyncio.new_event_loop()

        def answer(request: Request) -> Response:
            turn = sum(1 for m in request.messages if isinstance(m, AssistantMessage))
            if turn >= len(steps):
                return reply("all done")
            return reply(tool_calls=[ToolCall(id=i, name=n, arguments=dict(a)) for i, n, a in steps[turn]])

        def prepare() -> Any:
            return Agent(ScriptedModel(answer), tools, max_tool_turns=len(steps))

        def run(agent: Any) -> tuple[str, int]:
            result = loop.run_until_complete(agent.run("go"))
            return result.text, sum(1 for c in result.calls if c.result.kind != "error")

        return prepare, run

    return make


# pydantic-ai


def _pydantic_ai(scenario: str) -> Any:
    def make() -> tuple[Any, Any]:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel

        steps = plan(scenario)
        loop = asyncio.new_event_loop()

        def answer(messages: list[Any], info: AgentInfo) -> ModelResponse:
            turn = sum(1 for m in messages if isinstance(m, ModelResponse))
            if turn >= len(steps):
                return ModelResponse(parts=[TextPart("all done")])
            return ModelResponse(
                parts=[ToolCallPart(tool_name=n, args=dict(a), tool_call_id=i) for i, n, a in steps[turn]]
            )

        agent: Any = Agent(FunctionModel(answer))
        for name in _tool_names(scenario):
            agent.tool_plain(name=name)(TOOLS[name])

        def run(_: Any) -> tuple[str, int]:
            result = loop.run_until_complete(agent.run("go"))
            runs = sum(
                1
                for m in result.all_messages()
                for p in getattr(m, "parts", ())
                if isinstance(p, ToolReturnPart) and p.tool_name in TOOLS
            )
            return result.output, runs

        return None, run

    return make


# openai-agents


def _openai_agents(scenario: str) -> Any:
    def make() -> tuple[Any, Any]:
        from agents import Agent, Runner, function_tool, set_tracing_disabled
        from agents.items import ModelResponse
        from agents.models.interface import Model
        from agents.usage import Usage
        from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

        set_tracing_disabled(True)
        steps = plan(scenario)
        loop = asyncio.new_event_loop()

        class ScriptedAgentsModel(Model):
            async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
                items = kwargs.get("input", args[1] if len(args) > 1 else [])
                done = 0 if isinstance(items, str) else sum(1 for i in items if i.get("type") == "function_call_output")
                turn = next((t for t in range(len(steps)) if done == sum(len(s) for s in steps[:t])), len(steps))
                if turn >= len(steps):
                    text = ResponseOutputText(text="all done", type="output_text", annotations=[])
                    output: list[Any] = [
                        ResponseOutputMessage(
                            id="msg_final", content=[text], role="assistant", status="completed", type="message"
                        )
                    ]
                else:
                    output = [
                        ResponseFunctionToolCall(
                            id=f"fc_{i}", call_id=i, name=n, arguments=json.dumps(a), type="function_call"
                        )
                        for i, n, a in steps[turn]
                    ]
                return ModelResponse(output=output, usage=Usage(), response_id=None)

            def stream_response(self, *args: Any, **kwargs: Any) -> Any:
                raise NotImplementedError

        tools = [function_tool(TOOLS[name], name_override=name) for name in _tool_names(scenario)]
        agent = Agent(name="bench", tools=tools, model=ScriptedAgentsModel())

        def run(_: Any) -> tuple[str, int]:
            result = loop.run_until_complete(Runner.run(agent, "go", max_turns=len(steps) + 2))
            runs = sum(1 for item in result.new_items if item.type == "tool_call_output_item")
            return result.final_output, runs

        return None, run

    return make


def rows(scenario: str) -> list[RowSpec]:
    """The rows of one Agent table; `scenario` is "loop" or "sleep"."""
    return [
        RowSpec(
            "floor",
            "floor",
            "hand-written asyncio loop: scripted async model, `asyncio.gather` of the calls, dict history",
            _floor(scenario),
        ),
        RowSpec(
            "toolwire",
            "toolwire",
            "`toolwire.agent.Agent(ScriptedModel(fn), tools=@tool(risk='low') ...)`.run('go')",
            _toolwire(scenario),
        ),
        RowSpec(
            "pydantic-ai",
            "peer",
            "`pydantic_ai.Agent(FunctionModel(fn))` + `tool_plain` tools, `.run('go')`",
            _pydantic_ai(scenario),
        ),
        RowSpec(
            "openai-agents",
            "peer",
            "`agents.Runner.run(Agent(model=<Model subclass answering from the plan>, "
            "tools=function_tool(...)))`, tracing disabled",
            _openai_agents(scenario),
        ),
    ]
