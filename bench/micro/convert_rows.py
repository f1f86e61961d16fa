"""Convert: the shared OpenAI Chat request body → an Anthropic Messages body and → a Gemini body.

Every row starts from the same OpenAI-format dict (a fresh deep copy per run, made untimed,
so a row that mutates its input cannot help or hurt the next) and ends with the target body
(or, for peers that stop before the HTTP layer, the structures they hand to the SDK).
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

from bench.harness import RowSpec
from bench.micro import payloads

ANTHROPIC_MODEL = "claude-sonnet-4-5"
GEMINI_MODEL = "gemini-2.5-flash"
_OPTIONS = ("tools", "tool_choice", "parallel_tool_calls", "max_completion_tokens", "temperature")


def _fresh() -> Any:
    body = payloads.openai_request()
    return lambda: copy.deepcopy(body)


def check(result: Any) -> str | None:
    """The converted body must carry every tool, the unicode results and the last answer."""
    text = json.dumps(result, default=str, ensure_ascii=False)
    missing = [n for n in payloads._tool_names() if n not in text]
    if missing:
        return f"tools missing: {missing[:3]}"
    for needle in ("中文摘要", "Audit done", "Permission denied"):
        if needle not in text:
            return f"{needle!r} missing"
    return None


# toolwire and the floor


def _floor() -> tuple[Any, Any]:
    return _fresh(), lambda body: json.loads(json.dumps(body))


def _toolwire(target: str) -> Any:
    def make() -> tuple[Any, Any]:
        from toolwire.codecs import get_codec

        source, dest = get_codec("openai"), get_codec(target)
        return _fresh(), lambda body: dest.encode_request(source.decode_request(body))

    return make


# litellm


def _litellm_anthropic() -> tuple[Any, Any]:
    import litellm

    config = litellm.AnthropicConfig()

    def run(body: dict[str, Any]) -> Any:
        params = {k: body[k] for k in _OPTIONS}
        optional = config.map_openai_params(params, {}, ANTHROPIC_MODEL, drop_params=False)
        return config.transform_request(ANTHROPIC_MODEL, body["messages"], optional, {}, {})

    return _fresh(), run


def _litellm_gemini() -> tuple[Any, Any]:
    import litellm
    from litellm.llms.vertex_ai.gemini.transformation import transform_request_body

    config = litellm.GoogleAIStudioGeminiConfig()

    def run(body: dict[str, Any]) -> Any:
        params = {k: body[k] for k in _OPTIONS}
        optional = config.map_openai_params(params, {}, GEMINI_MODEL, drop_params=False)
        return transform_request_body(body["messages"], GEMINI_MODEL, optional, "gemini", {}, None)

    return _fresh(), run


# pydantic-ai: it has no reader for OpenAI bodies, so the row first builds its message objects
# from the dict with its public constructors (timed: that is the decode half of the work).


def _pydantic_messages(body: dict[str, Any]) -> tuple[list[Any], Any]:
    from pydantic_ai import messages as m
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.tools import ToolDefinition

    out: list[Any] = []
    names: dict[str, str] = {}
    pending: list[Any] = []
    for msg in body["messages"]:
        role = msg["role"]
        if role != "tool" and pending:
            out.append(m.ModelRequest(parts=pending))
            pending = []
        if role == "system":
            out.append(m.ModelRequest(parts=[m.SystemPromptPart(content=msg["content"])]))
        elif role == "user":
            out.append(m.ModelRequest(parts=[m.UserPromptPart(content=msg["content"])]))
        elif role == "assistant":
            parts: list[Any] = [m.TextPart(content=msg["content"])] if msg.get("content") else []
            for call in msg.get("tool_calls") or []:
                names[call["id"]] = call["function"]["name"]
                parts.append(
                    m.ToolCallPart(
                        tool_name=call["function"]["name"], args=call["function"]["arguments"], tool_call_id=call["id"]
                    )
                )
            out.append(m.ModelResponse(parts=parts))
        else:
            call_id = msg["tool_call_id"]
            pending.append(m.ToolReturnPart(tool_name=names[call_id], content=msg["content"], tool_call_id=call_id))
    if pending:
        out.append(m.ModelRequest(parts=pending))
    tools = [
        ToolDefinition(
            name=t["function"]["name"],
            description=t["function"].get("description"),
            parameters_json_schema=t["function"]["parameters"],
        )
        for t in body["tools"]
    ]
    return out, ModelRequestParameters(function_tools=tools)


def _pydantic_anthropic() -> tuple[Any, Any]:
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    # An SDK client passed in: the provider's own default http client trips over the SDK's httpx2 switch.
    model = AnthropicModel(
        ANTHROPIC_MODEL, provider=AnthropicProvider(anthropic_client=AsyncAnthropic(api_key="bench"))
    )
    loop = asyncio.new_event_loop()
    settings: Any = {"max_tokens": 4096, "temperature": 0.2}

    def run(body: dict[str, Any]) -> Any:
        messages, params = _pydantic_messages(body)
        settings_, params = model.prepare_request(settings, params)
        tools, choice = model._prepare_tools_and_tool_choice(settings_, params)
        system, wire = loop.run_until_complete(model._map_message(messages, params, settings_))
        return {"system": system, "messages": wire, "tools": tools, "tool_choice": choice}

    return _fresh(), run


def _pydantic_gemini() -> tuple[Any, Any]:
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    model = GoogleModel(GEMINI_MODEL, provider=GoogleProvider(api_key="bench"))
    loop = asyncio.new_event_loop()
    settings: Any = {"max_tokens": 4096, "temperature": 0.2}

    def run(body: dict[str, Any]) -> Any:
        messages, params = _pydantic_messages(body)
        settings_, params = model.prepare_request(settings, params)
        return loop.run_until_complete(model._build_content_and_config(messages, settings_, params))

    return _fresh(), run


# langchain


def _langchain_anthropic() -> tuple[Any, Any]:
    from langchain_anthropic import ChatAnthropic
    from langchain_core.messages import convert_to_messages

    llm = ChatAnthropic(model=ANTHROPIC_MODEL, api_key="bench", max_tokens=4096, temperature=0.2)  # type: ignore[call-arg]

    def run(body: dict[str, Any]) -> Any:
        messages = convert_to_messages(body["messages"])
        bound = llm.bind_tools(body["tools"], tool_choice="auto", parallel_tool_calls=True)
        return llm._get_request_payload(messages, **bound.kwargs)  # type: ignore[attr-defined]

    return _fresh(), run


def _unavailable(reason: str) -> Any:
    def make() -> tuple[Any, Any]:
        raise RuntimeError(reason)

    return make


def rows(target: str) -> list[RowSpec]:
    """The rows of one Convert table; `target` is "anthropic" or "gemini"."""
    floor = RowSpec("floor", "floor", "`json.loads(json.dumps(body))` of the OpenAI body", _floor)
    tw = RowSpec(
        "toolwire",
        "toolwire",
        f'`get_codec("openai").decode_request(body)` → `get_codec("{target}").encode_request(request)`',
        _toolwire(target),
    )
    agents = RowSpec("openai-agents", "peer", "—", _unavailable("openai-agents has no conversion to other providers"))
    if target == "anthropic":
        return [
            floor,
            tw,
            RowSpec(
                "litellm",
                "peer",
                "`litellm.AnthropicConfig().map_openai_params(...)` + `.transform_request(model, messages, ...)`",
                _litellm_anthropic,
            ),
            RowSpec(
                "pydantic-ai",
                "peer",
                "OpenAI dicts → `pydantic_ai.messages` parts (public constructors), then "
                "`AnthropicModel.prepare_request` + `_prepare_tools_and_tool_choice` + `_map_message` (private)",
                _pydantic_anthropic,
            ),
            RowSpec(
                "langchain",
                "peer",
                "`langchain_core.messages.convert_to_messages` + `ChatAnthropic.bind_tools(...).kwargs` + "
                "`ChatAnthropic._get_request_payload`",
                _langchain_anthropic,
            ),
            agents,
        ]
    return [
        floor,
        tw,
        RowSpec(
            "litellm",
            "peer",
            "`litellm.GoogleAIStudioGeminiConfig().map_openai_params(...)` + "
            "`litellm.llms.vertex_ai.gemini.transformation.transform_request_body(...)`",
            _litellm_gemini,
        ),
        RowSpec(
            "pydantic-ai",
            "peer",
            "OpenAI dicts → `pydantic_ai.messages` parts, then `GoogleModel.prepare_request` + "
            "`_build_content_and_config` (private)",
            _pydantic_gemini,
        ),
        RowSpec("langchain", "peer", "—", _unavailable("langchain-google-genai is not in the peer set")),
        agents,
    ]
