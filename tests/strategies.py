"""Hypothesis strategies for neutral conversations: well-formed tool loops with every part kind."""

from __future__ import annotations

import operator
import string
from typing import Any

from hypothesis import strategies as st

from toolwire import (
    AssistantMessage,
    ImagePart,
    Message,
    Request,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

CODECS = ("anthropic", "bedrock", "gemini", "ollama", "openai", "openai-responses")

# Real text, without lone surrogates (they cannot be sent as UTF-8).
texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
# Built from characters, not `st.from_regex` (which costs a third of a round trip test's time).
_ALNUM = string.ascii_letters + string.digits
_LOWER_DIGITS = string.ascii_lowercase + string.digits
names = st.builds(operator.add, st.sampled_from(string.ascii_letters), st.text(_ALNUM + "_", max_size=15))
ids = st.one_of(
    st.builds("call_{}".format, st.text(_ALNUM, min_size=4, max_size=12)),
    st.builds(  # a Responses-style composite
        "fc_{}|call_{}".format,
        st.text(_LOWER_DIGITS, min_size=3, max_size=6),
        st.text(_LOWER_DIGITS, min_size=3, max_size=6),
    ),
    st.builds(
        "functions.{}:{}".format, st.text(string.ascii_lowercase, min_size=2, max_size=8), st.integers(0, 9)
    ),  # Kimi-style
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda f: f == f and abs(f) < 1e15),
    texts,
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(names, inner, max_size=3)),
    max_leaves=8,
)
json_objects = st.dictionaries(names, json_values, max_size=4)

images = st.one_of(
    st.builds(lambda d: ImagePart(data=d, media_type="image/png"), st.binary(min_size=1, max_size=16)),
    st.builds(lambda n: ImagePart(url=f"https://example.com/{n}.png", media_type="image/png"), names),
)
text_parts = st.builds(lambda t: TextPart(text=t), texts)


@st.composite
def tool_results(draw: st.DrawFn, call: ToolCall) -> ToolResult:
    kind = draw(st.sampled_from(["text", "data", "error", "multimodal"]))
    if kind == "text":
        return ToolResult.text(call, draw(texts))
    if kind == "data":
        return ToolResult.data(call, draw(st.one_of(json_objects, st.lists(json_scalars, max_size=3))))
    if kind == "error":
        return ToolResult.error(call, draw(texts))
    parts = draw(st.lists(st.one_of(text_parts, images), min_size=1, max_size=3))
    return ToolResult.multimodal(call, [TextPart(text=draw(texts)), *parts])


@st.composite
def assistant_turns(draw: st.DrawFn, provider: str | None) -> tuple[AssistantMessage, list[ToolCall]]:
    parts: list[Any] = []
    if provider is not None and draw(st.booleans()):
        parts.append(ThinkingPart(text=draw(texts), signature=draw(names), provider=provider))
    if draw(st.booleans()):
        parts.append(TextPart(text=draw(texts)))
    calls = [
        ToolCall(id=f"{draw(ids)}{i}", name=draw(names), arguments=draw(json_objects))
        for i in range(draw(st.integers(min_value=0 if parts else 1, max_value=3)))
    ]
    return AssistantMessage(parts=[*parts, *calls]), calls


@st.composite
def conversations(draw: st.DrawFn, provider: str | None = None) -> list[Message]:
    """A well-formed conversation: every call answered by one result, right after its turn."""
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(SystemMessage(content=draw(texts)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        if draw(st.booleans()):
            messages.append(UserMessage(content=draw(texts)))
        else:
            messages.append(UserMessage(content=draw(st.lists(st.one_of(text_parts, images), min_size=1, max_size=3))))
        assistant, calls = draw(assistant_turns(provider))
        messages.append(assistant)
        messages.extend(draw(tool_results(call)) for call in calls)
    return messages


tool_definitions = st.builds(
    lambda name, desc, props: ToolDefinition(
        name=name,
        description=desc,
        parameters={
            "type": "object",
            "properties": {p: {"type": "string", "description": f"the {p}"} for p in props},
            "required": sorted(props)[:1],
        },
    ),
    names,
    st.one_of(st.none(), texts),
    st.lists(names, max_size=3, unique=True),
)


@st.composite
def requests(draw: st.DrawFn, provider: str | None = None) -> Request:
    messages = draw(conversations(provider))
    used = {c.name for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    tools = draw(st.lists(tool_definitions, max_size=3, unique_by=lambda t: t.name))
    tools = [t for t in tools if t.name not in used] + [ToolDefinition(name=n) for n in sorted(used)]
    return Request(
        model="test-model",
        messages=messages,
        tools=tools,
        max_tokens=draw(st.one_of(st.none(), st.integers(min_value=1, max_value=8192))),
        temperature=draw(st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0]))),
    )
