"""Which reply shape SmolLM2-135M gets right under constrained decoding: candidate shapes side by side.

    bench/.venv-bfcl/bin/python -m bench.bfcl.shapes [--shapes toolwire,trained,...]
        [--limits simple_python=50,multiple=30,irrelevance=30,parallel=20] [--threads 2]
        [--repeat-penalty 1.05] [--out DIR]

Each shape is a system prompt and a reply schema, sent as llama-cpp-python takes it
(`response_format: {"type": "json_object", "schema": ...}`, temperature 0, seed 0, 192 tokens,
the server's `repeat_penalty` unless `--repeat-penalty` names one),
to one `chatml` server (`modes.llama_server`). The calls are read from the reply (identical
calls kept once, as `parse_reply` does) and scored by `toolwire.evals.check_calls`. The tools'
parameters are loosened for the engine as constrained mode loosens them. Shapes:

- `toolwire`: constrained mode as it is (`constrained_request` through the provider); the recorded
  `toolwire.json` is the count shape it had before (commit 73e4278: check that out to rerun it),
  since constrained mode now sends `trained`;
- `trained-prompt`: toolwire's schema then (count first, `no_tool_fits`), SmolLM2's own tool
  prompt; recorded at commit 73e4278 (that schema is gone from toolwire: check it out to rerun);
- `trained`: SmolLM2's own tool prompt and format (the one its chat template on Ollama uses): a
  JSON list of calls, `[]` when no function fits;
- `trained-count`: that prompt, and a count first that may be 0;
- `trained-one-tool`: the list, but every call in one reply is of the same tool;
- `trained-object`: the list inside `{"tool_calls": [...]}`, and after an empty list an `answer`;
- `single-lines`: an earlier one-call prototype's shape: the tools one line each, exactly one call
  object (`{"name", "arguments"}`, no list, so no "no call" and no parallel calls);
- `single-json`: the same single call under SmolLM2's own prompt (the tools as JSON);
- `single-or-empty`: `single-lines`, or `[]` when no tool fits;
- `lines-list`: the list shape (`trained`'s schema) under the one-line tool prompt;
- `trained-tagged`: `trained`, with the `<tool_call>` ... `</tool_call>` its prompt shows written
  by the grammar too (a llama.cpp GBNF `grammar` around the list's, not `response_format`);
- `trained-untagged`: `trained`, with the tags left out of the prompt instead.

Results: `bench/bfcl/results/shapes/<shape>.json` (per case; `--out`) and a table on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

from bench.bfcl.modes import HERE, llama_server
from toolwire.client import Client, connect_http
from toolwire.constrained import SchemaSupport, loosen
from toolwire.evals import BfclCase, check_calls, load_cases
from toolwire.evals._runner import RequestOptions, run_case
from toolwire.types import SystemMessage

SHAPES = (
    "toolwire",
    "trained",
    "single-lines",
    "single-json",
    "single-or-empty",
    "lines-list",
    "trained-count",
    "trained-one-tool",
    "trained-object",
    "trained-tagged",
    "trained-untagged",
)

_EXPERT = (
    "You are an expert in composing functions. You are given a question and a set of possible functions.\n"
    "Based on the question, you will need to make one or more function/tool calls to achieve the purpose.\n"
    "If none of the functions can be used, point it out and refuse to answer.\n"
    "If the given question lacks the parameters required by the function, also point it out.\n"
    "You have access to the following tools:\n<tools>{tools}</tools>\n"
)
_STRICT = (
    "The output MUST strictly adhere to the following format, and NO other text MUST be included.\n"
    "The example format is as follows. Please make sure the parameter type is correct. "
)
_CALL = '{"name": "func_name1", "arguments": {"argument1": "value1", "argument2": "value2"}}'
_TRAINED = (
    _STRICT + "If no function call is needed, please make the tool calls an empty list '[]'.\n"
    f"<tool_call>[\n{_CALL},\n(more tool calls as required)\n]</tool_call>"
)
_TRAINED_COUNT = (
    _STRICT + "If no function call is needed, please make the call count 0 and the tool calls an empty list '[]'.\n"
    f'{{"call_count": <number of calls>, "tool_calls": [\n{_CALL},\n(more tool calls as required)\n]}}'
)
_TRAINED_OBJECT = (
    _STRICT + "If no function call is needed, please make the tool calls an empty list '[]' and write your reply "
    f'as the answer.\n{{"tool_calls": [\n{_CALL},\n(more tool calls as required)\n]}}'
)


_ONE_CALL = 'Reply {"name": "<tool>", "arguments": {...}} for the one tool call that answers the user'


def _tool_lines(tools: list[Any]) -> str:
    """The tools one line each, as constrained mode described them before it sent SmolLM2's own prompt."""
    lines = []
    for tool in tools:
        parameters = tool.parameters or {}
        properties, required = parameters.get("properties") or {}, parameters.get("required") or []
        params = ", ".join(
            f"{name}{'' if name in required else '?'}: {sub.get('type') if isinstance(sub, dict) else ''}"
            for name, sub in properties.items()
        )
        lines.append(f"- {tool.name}({params}): {' '.join((tool.description or '').split())}")
    return "You can use these tools:\n" + "\n".join(lines)


def _tools_json(tools: list[Any]) -> str:
    return json.dumps([{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools])


def _calls(case: BfclCase, support: SchemaSupport) -> list[dict[str, Any]]:
    empty = {"type": "object", "properties": {}}
    return [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": loosen(t.parameters or empty, support)[0]},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for t in case.tools
    ]


_EMPTY = {"type": "array", "items": {"type": "null"}, "maxItems": 0}  # `[]`, and nothing else


def _list(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The list shape: up to 4 calls, or none."""
    return {"type": "array", "items": _any(calls), "minItems": 0, "maxItems": 4}


def _any(schemas: list[dict[str, Any]]) -> dict[str, Any]:
    return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}


def prompt_and_schema(shape: str, case: BfclCase, support: SchemaSupport) -> tuple[str, dict[str, Any]]:
    calls = _calls(case, support)
    if shape in ("trained", "trained-tagged"):
        return _EXPERT.format(tools=_tools_json(case.tools)) + _TRAINED, _list(calls)
    if shape == "single-lines":
        return f"{_tool_lines(case.tools)}\n\n{_ONE_CALL}.", _any(calls)
    if shape == "single-json":
        expert = _EXPERT.format(tools=_tools_json(case.tools))
        return f"{expert}{_STRICT}\n<tool_call>{_CALL}</tool_call>", _any(calls)
    if shape == "single-or-empty":
        return f"{_tool_lines(case.tools)}\n\n{_ONE_CALL}, or [] if no tool fits.", {"anyOf": [_any(calls), _EMPTY]}
    if shape == "lines-list":
        wanted = (
            'Reply with the JSON list of tool calls that answer the user, like [{"name": "<tool>", "arguments": {...}}]'
        )
        return f"{_tool_lines(case.tools)}\n\n{wanted}, or [] if no tool fits.", _list(calls)
    if shape == "trained-untagged":
        prompt, schema = prompt_and_schema("trained", case, support)
        return prompt.replace("<tool_call>", "").replace("</tool_call>", ""), schema
    if shape == "trained-one-tool":
        per_tool = [{"type": "array", "items": call, "minItems": 1, "maxItems": 4} for call in calls]
        return _EXPERT.format(tools=_tools_json(case.tools)) + _TRAINED, {"anyOf": [_EMPTY, *per_tool]}
    if shape == "trained-object":
        calls_only = {"type": "array", "items": _any(calls), "minItems": 1, "maxItems": 4}
        return _EXPERT.format(tools=_tools_json(case.tools)) + _TRAINED_OBJECT, {
            "anyOf": [
                {"type": "object", "properties": {"tool_calls": calls_only}, "required": ["tool_calls"],
                 "additionalProperties": False},
                {"type": "object", "properties": {"tool_calls": _EMPTY, "answer": {"type": "string"}},
                 "required": ["tool_calls", "answer"], "additionalProperties": False},
            ]
        }  # fmt: skip
    if shape == "trained-count":
        counted = [
            {
                "type": "object",
                "properties": {
                    "call_count": {"const": n},
                    "tool_calls": {"type": "array", "items": _any(calls), "minItems": n, "maxItems": n},
                },
                "required": ["call_count", "tool_calls"],
                "additionalProperties": False,
            }
            for n in range(5)
        ]
        return _EXPERT.format(tools=_tools_json(case.tools)) + _TRAINED_COUNT, {"anyOf": counted}
    raise SystemExit(f"unknown shape {shape!r}; the shapes are {', '.join(SHAPES)}")


def tagged_grammar(schema: dict[str, Any]) -> str:
    """The list's grammar inside SmolLM2's `<tool_call>` tags (llama.cpp GBNF: JSON Schema cannot say it)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf  # the server's own converter, as for `response_format`

    calls = json_schema_to_gbnf(json.dumps(schema)).replace("root ::=", "calls ::=", 1)
    return f'root ::= "<tool_call>" calls "</tool_call>"\n{calls}'


def read_calls(text: str) -> list[dict[str, Any]]:
    try:
        value = json.loads(text)
    except ValueError:
        return []
    if isinstance(value, dict) and "name" in value:
        value = [value]  # a single call
    items = value.get("tool_calls", []) if isinstance(value, dict) else value
    kept: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, dict) and item.get("name") != "no_tool_fits" and item not in kept:
            kept.append(item)
    return kept


async def run_shape(
    shape: str, base: str, cases: list[BfclCase], repeat_penalty: float | None = None
) -> list[dict[str, Any]]:
    client = connect_http("llama-cpp-python:smollm2", base_url=base, timeout=600.0)
    assert isinstance(client, Client)
    out: list[dict[str, Any]] = []
    async with client, httpx2.AsyncClient(timeout=600) as http:
        for case in cases:
            started = time.perf_counter()
            if shape == "toolwire":
                result = await run_case(client, case, "constrained", RequestOptions(seed=0, max_tokens=192))
                text, calls = result.text, result.calls
            else:
                prompt, schema = prompt_and_schema(shape, case, client.schema_support)
                system = "\n\n".join([m.content for m in case.messages if isinstance(m, SystemMessage)] + [prompt])
                messages = [{"role": "system", "content": system}] + [
                    {"role": "user", "content": m.content} for m in case.messages if not isinstance(m, SystemMessage)
                ]
                body = {"model": "m", "messages": messages, "temperature": 0, "seed": 0, "max_tokens": 192}
                body |= {} if repeat_penalty is None else {"repeat_penalty": repeat_penalty}
                body |= {"grammar": tagged_grammar(schema)} if shape == "trained-tagged" else {
                    "response_format": {"type": "json_object", "schema": schema}
                }  # fmt: skip
                reply = (await http.post(base + "/chat/completions", json=body)).json()
                text = reply["choices"][0]["message"]["content"] or ""
                inner = text.removeprefix("<tool_call>").split("</tool_call>")[0]
                calls = [{case.bfcl_name(c["name"]): c.get("arguments", {})} for c in read_calls(inner)]
            verdict = check_calls(case.category, case.functions, calls, case.possible_answer)
            out.append({"id": case.id, "category": case.category, "correct": verdict.valid, "kind": verdict.kind,
                        "calls": calls, "text": text, "latency_s": time.perf_counter() - started})  # fmt: skip
            print(f"\r{shape}: {len(out)}/{len(cases)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--limits", default="simple_python=50,multiple=30,irrelevance=30,parallel=20")
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    parser.add_argument(
        "--repeat-penalty", type=float, help="sent with each shape's request (default: the server's, 1.1)"
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "shapes", help="where the per-case files go")
    args = parser.parse_args()
    limits = {k: int(v) for k, v in (kv.split("=") for kv in args.limits.split(","))}
    cases = [case for category, limit in limits.items() for case in load_cases([category], limit=limit)]
    out_dir = args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"| shape | {' | '.join(f'{c} ({n})' for c, n in limits.items())} | all |")
    print(f"|---|{'---|' * (len(limits) + 1)}")
    with llama_server("chatml", args.threads, out_dir / "server.log") as base:
        for shape in args.shapes.split(","):
            results = asyncio.run(run_shape(shape, base, cases, args.repeat_penalty))
            (out_dir / f"{shape}.json").write_text(json.dumps(results, indent=1) + "\n")
            right = [sum(r["correct"] for r in results if r["category"] == c) for c in limits]
            print(f"| {shape} | {' | '.join(map(str, right))} | {sum(right)} |", flush=True)


if __name__ == "__main__":
    main()
