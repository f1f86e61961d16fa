"""Nothing is named dropped that was sent, and nothing is dropped unnamed.

Every neutral request field, from every codec's body to every other codec's: the conversion
reports a field as dropped (a degradation key, or the guard's "left out ... options" warning)
exactly when the target body has no place where it went.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolwire import Request, ResponseFormat, ToolDefinition, UserMessage
from toolwire.codecs import CODEC_NAMES, get_codec
from toolwire.codecs.common.degradations import collect_degradations

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
FIELDS: dict[str, Any] = {
    "max_tokens": 77,
    "temperature": 0.3,
    "top_p": 0.8,
    "stop": ["END"],
    "seed": 7,
    "user": "u-1",
    "parallel_tool_calls": False,
    "response_format": ResponseFormat(schema=SCHEMA, name="weather"),
}


def _at(*path: str) -> Callable[[dict[str, Any]], bool]:
    def found(body: dict[str, Any]) -> bool:
        node: Any = body
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        return True

    return found


def _any(*checks: Callable[[dict[str, Any]], bool]) -> Callable[[dict[str, Any]], bool]:
    return lambda body: any(check(body) for check in checks)


def _never(body: dict[str, Any]) -> bool:
    return False


# Where each target puts each field.
SENT: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "openai": {
        "max_tokens": _any(_at("max_completion_tokens"), _at("max_tokens")),
        "temperature": _at("temperature"),
        "top_p": _at("top_p"),
        "stop": _at("stop"),
        "seed": _at("seed"),
        "user": _at("user"),
        "parallel_tool_calls": _at("parallel_tool_calls"),
        "response_format": _at("response_format"),
    },
    "openai-responses": {
        "max_tokens": _at("max_output_tokens"),
        "temperature": _at("temperature"),
        "top_p": _at("top_p"),
        "stop": _never,
        "seed": _never,
        "user": _at("user"),
        "parallel_tool_calls": _at("parallel_tool_calls"),
        "response_format": _at("text", "format"),
    },
    "anthropic": {
        "max_tokens": _at("max_tokens"),
        "temperature": _at("temperature"),
        "top_p": _at("top_p"),
        "stop": _at("stop_sequences"),
        "seed": _never,
        "user": _at("metadata", "user_id"),
        "parallel_tool_calls": _at("tool_choice", "disable_parallel_tool_use"),
        "response_format": _at("output_config", "format"),
    },
    "bedrock": {
        "max_tokens": _at("inferenceConfig", "maxTokens"),
        "temperature": _at("inferenceConfig", "temperature"),
        "top_p": _at("inferenceConfig", "topP"),
        "stop": _at("inferenceConfig", "stopSequences"),
        "seed": _never,
        "user": _never,
        "parallel_tool_calls": _never,
        "response_format": _never,
    },
    "gemini": {
        "max_tokens": _at("generationConfig", "maxOutputTokens"),
        "temperature": _at("generationConfig", "temperature"),
        "top_p": _at("generationConfig", "topP"),
        "stop": _at("generationConfig", "stopSequences"),
        "seed": _at("generationConfig", "seed"),
        "user": _never,
        "parallel_tool_calls": _never,
        "response_format": _at("generationConfig", "responseJsonSchema"),
    },
    "ollama": {
        "max_tokens": _at("options", "num_predict"),
        "temperature": _at("options", "temperature"),
        "top_p": _at("options", "top_p"),
        "stop": _at("options", "stop"),
        "seed": _at("options", "seed"),
        "user": _never,
        "parallel_tool_calls": _never,
        "response_format": _at("format"),
    },
}
_ALIASES = {"parallel": "parallel_tool_calls"}


def _source_bodies(codec: str, field: str) -> list[dict[str, Any]]:
    """The bodies a client of `codec` sends with `field` set (every spelling the codec reads)."""
    tool = ToolDefinition(name="get_weather", parameters=SCHEMA)
    request = Request(model="m", messages=[UserMessage(content="hi")], tools=[tool], **{field: FIELDS[field]})
    body = get_codec(codec).encode_request(request)
    bodies = [body]
    if codec == "openai" and field == "max_tokens":  # the older spelling most clients still send
        spelled = {k: v for k, v in body.items() if k != "max_completion_tokens"} | {"max_tokens": 77}
        bodies.append(spelled)
    return bodies


def _reported(degraded: list[str]) -> set[str]:
    """The fields a conversion said it dropped: the last part of each degradation key.

    (`gemini:user`; the guard's `openai-responses:openai:max_tokens, seed` names several.)
    """
    named = {name.strip() for key in degraded for name in key.rsplit(":", 1)[-1].split(",")}
    return {_ALIASES.get(name, name) for name in named} & set(FIELDS)


CASES = [(s, t, f) for s in CODEC_NAMES for t in CODEC_NAMES if s != t for f in FIELDS]


@pytest.mark.parametrize(("source", "target", "field"), CASES, ids=[f"{s}->{t}:{f}" for s, t, f in CASES])
def test_a_field_is_named_dropped_exactly_when_the_target_body_lacks_it(source: str, target: str, field: str) -> None:
    if source == "anthropic" and field == "max_tokens":
        pytest.skip("an Anthropic body always carries max_tokens: it is never dropped, nor absent")
    bodies = [body for body in _source_bodies(source, field) if SENT[source][field](body)]
    if not bodies:
        pytest.skip(f"a {source} body has no place for {field}: nothing arrives to drop")
    for body in bodies:
        request = get_codec(source).decode_request(body)
        with collect_degradations() as degraded:
            sent = get_codec(target).encode_request(request)
        reported = field in _reported(degraded)
        assert reported == (not SENT[target][field](sent)), (body, sent, degraded)
