"""Tool loops driven by the official SDKs (and plain HTTP for Ollama) against a gateway URL.

Each driver runs one model turn at a time the way an application does: send the
conversation, read the reply (streamed or not), append the reply as the SDK returned it,
run the tools, append the results. `Turn` is what the client saw of one reply.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

GATEWAY_KEY = "gateway-key-for-tests"
TOOLS = [
    {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    {
        "name": "get_time",
        "description": "The time in a time zone.",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
    },
]


def run_tool(name: str, args: dict[str, Any]) -> str:
    """What the client's tools answer (deterministic, so the upstream's view can be asserted)."""
    return f"{name}:{json.dumps(args, sort_keys=True)}"


@dataclass
class Turn:
    text: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)


Driver = Callable[[str, str, bool, int], list[Turn]]


# openai chat completions


def openai_chat(url: str, model: str, stream: bool, turns: int) -> list[Turn]:
    import openai

    with openai.OpenAI(base_url=url + "/v1", api_key=GATEWAY_KEY, max_retries=0) as client:
        tools = [{"type": "function", "function": spec} for spec in TOOLS]
        messages: list[Any] = [{"role": "user", "content": "Weather and time, please."}]
        seen: list[Turn] = []
        for _ in range(turns):
            if stream:
                chunks = client.chat.completions.create(model=model, messages=messages, tools=tools, stream=True)
                message = _openai_stream(chunks)
            else:
                reply = client.chat.completions.create(model=model, messages=messages, tools=tools)
                message = reply.choices[0].message.model_dump(exclude_none=True)
            messages.append(message)
            calls = message.get("tool_calls") or []
            turn = Turn(
                text=message.get("content") or "",
                calls=[(c["function"]["name"], json.loads(c["function"]["arguments"] or "{}")) for c in calls],
                ids=[c["id"] for c in calls],
            )
            seen.append(turn)
            for call_id, (name, args) in zip(turn.ids, turn.calls, strict=True):
                messages.append({"role": "tool", "tool_call_id": call_id, "content": run_tool(name, args)})
        return seen


def _openai_stream(chunks: Any) -> dict[str, Any]:
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            delta = choice.delta
            text.append(delta.content or "")
            for piece in delta.tool_calls or []:
                empty = {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                call = calls.setdefault(piece.index, empty)
                call["id"] = piece.id or call["id"]
                if piece.function is not None:
                    call["function"]["name"] += piece.function.name or ""
                    call["function"]["arguments"] += piece.function.arguments or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


# openai responses


def openai_responses(url: str, model: str, stream: bool, turns: int) -> list[Turn]:
    import openai

    with openai.OpenAI(base_url=url + "/v1", api_key=GATEWAY_KEY, max_retries=0) as client:
        tools = [{"type": "function", **spec} for spec in TOOLS]
        items: list[Any] = [{"role": "user", "content": "Weather and time, please."}]
        seen: list[Turn] = []
        for _ in range(turns):
            if stream:
                with client.responses.stream(model=model, input=items, tools=tools) as events:
                    reply = events.get_final_response()
            else:
                reply = client.responses.create(model=model, input=items, tools=tools)
            output = [item.model_dump(exclude_none=True) for item in reply.output]
            items.extend(output)
            calls = [item for item in output if item["type"] == "function_call"]
            turn = Turn(
                text=reply.output_text,
                calls=[(c["name"], json.loads(c["arguments"] or "{}")) for c in calls],
                ids=[c["call_id"] for c in calls],
            )
            seen.append(turn)
            for call_id, (name, args) in zip(turn.ids, turn.calls, strict=True):
                items.append({"type": "function_call_output", "call_id": call_id, "output": run_tool(name, args)})
        return seen


# anthropic


def anthropic_messages(url: str, model: str, stream: bool, turns: int) -> list[Turn]:
    import anthropic

    with anthropic.Anthropic(base_url=url, api_key=GATEWAY_KEY, max_retries=0) as client:
        tools = [{"name": s["name"], "description": s["description"], "input_schema": s["parameters"]} for s in TOOLS]
        messages: list[Any] = [{"role": "user", "content": "Weather and time, please."}]
        seen: list[Turn] = []
        for _ in range(turns):
            if stream:
                with client.messages.stream(model=model, max_tokens=1024, messages=messages, tools=tools) as events:
                    reply = events.get_final_message()
            else:
                reply = client.messages.create(model=model, max_tokens=1024, messages=messages, tools=tools)
            blocks = [block.model_dump(exclude_none=True) for block in reply.content]
            messages.append({"role": "assistant", "content": blocks})
            calls = [b for b in blocks if b["type"] == "tool_use"]
            turn = Turn(
                text="".join(b["text"] for b in blocks if b["type"] == "text"),
                calls=[(c["name"], c["input"]) for c in calls],
                ids=[c["id"] for c in calls],
            )
            seen.append(turn)
            if calls:
                results = [
                    {"type": "tool_result", "tool_use_id": i, "content": run_tool(n, a)}
                    for i, (n, a) in zip(turn.ids, turn.calls, strict=True)
                ]
                messages.append({"role": "user", "content": results})
        return seen


# gemini


def gemini_generate(url: str, model: str, stream: bool, turns: int) -> list[Turn]:
    from google import genai
    from google.genai import types

    with genai.Client(api_key=GATEWAY_KEY, http_options=types.HttpOptions(base_url=url)) as client:
        declarations = [types.FunctionDeclaration(**spec) for spec in TOOLS]
        config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=declarations)],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="Weather and time, please.")])]
        seen: list[Turn] = []
        for _ in range(turns):
            if stream:
                parts = [
                    part
                    for chunk in client.models.generate_content_stream(model=model, contents=contents, config=config)
                    for candidate in chunk.candidates or []
                    for part in (candidate.content.parts if candidate.content else None) or []
                ]
            else:
                reply = client.models.generate_content(model=model, contents=contents, config=config)
                parts = list(reply.candidates[0].content.parts or [])
            contents.append(types.Content(role="model", parts=parts))
            calls = [p.function_call for p in parts if p.function_call is not None]
            turn = Turn(
                text="".join(p.text or "" for p in parts if p.function_call is None and not p.thought),
                calls=[(c.name or "", dict(c.args or {})) for c in calls],
                ids=[c.id or "" for c in calls],
            )
            seen.append(turn)
            if calls:
                responses = [
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=c.id, name=c.name, response={"output": run_tool(n, a)}
                        )
                    )
                    for c, (n, a) in zip(calls, turn.calls, strict=True)
                ]
                contents.append(types.Content(role="user", parts=responses))
        return seen


# ollama (no official Python SDK in the dev set: its HTTP API, as the ollama library sends it)


def ollama_chat(url: str, model: str, stream: bool, turns: int) -> list[Turn]:
    tools = [{"type": "function", "function": spec} for spec in TOOLS]
    messages: list[Any] = [{"role": "user", "content": "Weather and time, please."}]
    seen: list[Turn] = []
    headers = {"authorization": f"Bearer {GATEWAY_KEY}"}
    with httpx2.Client(timeout=30) as http:
        for _ in range(turns):
            body = {"model": model, "messages": messages, "tools": tools, "stream": stream}
            response = http.post(url + "/api/chat", json=body, headers=headers)
            assert response.status_code == 200, response.text
            lines = [json.loads(line) for line in response.text.splitlines() if line.strip()]
            message = _ollama_message(lines)
            messages.append(message)
            calls = message.get("tool_calls") or []
            turn = Turn(
                text=message.get("content") or "",
                calls=[(c["function"]["name"], c["function"]["arguments"]) for c in calls],
                ids=[c.get("id", "") for c in calls],
            )
            seen.append(turn)
            for name, args in turn.calls:
                messages.append({"role": "tool", "tool_name": name, "content": run_tool(name, args)})
    return seen


def _ollama_message(lines: list[dict[str, Any]]) -> dict[str, Any]:
    assert lines[-1]["done"] is True, lines[-1]
    content = "".join(line["message"].get("content") or "" for line in lines)
    calls = [c for line in lines for c in line["message"].get("tool_calls") or []]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message


# bedrock (boto3's bedrock-runtime client: SigV4-signed with the gateway key as its access key id)


def bedrock_client(url: str, **credentials: Any) -> Any:
    """boto3's `bedrock-runtime` client aimed at the gateway, no retries (a 429 must show)."""
    import boto3
    from botocore.config import Config

    credentials = credentials or {"aws_access_key_id": GATEWAY_KEY, "aws_secret_access_key": "not-checked"}
    config = Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=60)
    return boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1", config=config, **credentials)


def bedrock_converse(url: str, model: str, stream: bool, turns: int) -> list[Turn]:
    client = bedrock_client(url)
    try:
        return _bedrock_loop(client, model, stream, turns)
    finally:
        client.close()  # its connection pool, or a later test sees an unclosed socket


def _bedrock_loop(client: Any, model: str, stream: bool, turns: int) -> list[Turn]:
    tools = {"tools": [{"toolSpec": _spec(s)} for s in TOOLS]}
    messages: list[Any] = [{"role": "user", "content": [{"text": "Weather and time, please."}]}]
    seen: list[Turn] = []
    for _ in range(turns):
        if stream:
            events = client.converse_stream(modelId=model, messages=messages, toolConfig=tools)["stream"]
            message = bedrock_stream_message(events)
        else:
            message = client.converse(modelId=model, messages=messages, toolConfig=tools)["output"]["message"]
        messages.append(message)
        uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
        turn = Turn(
            text="".join(b["text"] for b in message["content"] if "text" in b),
            calls=[(u["name"], u["input"]) for u in uses],
            ids=[u["toolUseId"] for u in uses],
        )
        seen.append(turn)
        if uses:
            results = [
                {"toolResult": {"toolUseId": i, "content": [{"text": run_tool(n, a)}]}}
                for i, (n, a) in zip(turn.ids, turn.calls, strict=True)
            ]
            messages.append({"role": "user", "content": results})
    return seen


def _spec(tool: dict[str, Any]) -> dict[str, Any]:
    return {"name": tool["name"], "description": tool["description"], "inputSchema": {"json": tool["parameters"]}}


def bedrock_stream_message(events: Any) -> dict[str, Any]:
    """A ConverseStream's events (as boto3 parses them) put together into the assistant message."""
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"]["toolUse"]
            blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            block = blocks.setdefault(delta["contentBlockIndex"], {"text": ""})
            if "text" in delta["delta"]:
                block["text"] += delta["delta"]["text"]
            elif "toolUse" in delta["delta"]:
                block["toolUse"]["input"] += delta["delta"]["toolUse"]["input"]
    for block in blocks.values():
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"] or "{}")
    return {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}


DRIVERS: dict[str, Driver] = {
    "openai": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic_messages,
    "gemini": gemini_generate,
    "ollama": ollama_chat,
    "bedrock": bedrock_converse,
}
