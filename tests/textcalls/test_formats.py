"""One or more cases per text format: exact text left over, exact calls and the format that matched."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.textcalls import parse_tool_calls
from toolwire.types import ToolDefinition

WEATHER = ToolDefinition(
    name="get_weather",
    description="Weather for a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "celsius": {"type": "boolean"},
            "threshold": {"type": "number"},
            "options": {"type": "object"},
            "tags": {"type": "array"},
            "note": {"type": ["string", "null"]},
        },
        "required": ["city"],
    },
)

DS_CALLS, DS_CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"  # noqa: RUF001 - DeepSeek's real tokens
DS_CALL, DS_SEP, DS_CALL_END = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"  # noqa: RUF001 - same


def summary(text: str, tools: Any = None) -> tuple[str, list[tuple[str, dict[str, Any], str]]]:
    rest, calls = parse_tool_calls(text, tools)
    return rest, [(c.name, c.arguments, c.metadata["textcalls"]["format"]) for c in calls]


CASES: list[tuple[str, str, str, list[tuple[str, dict[str, Any], str]]]] = [
    # toolwire's own format
    (
        "toolwire-one",
        'Let me look.\nTOOL_CALL: {"name": "read", "args": {"path": "a.py"}}',
        "Let me look.",
        [("read", {"path": "a.py"}, "toolwire")],
    ),
    (
        "toolwire-parallel-and-prose",
        'First.\nTOOL_CALL: {"name": "read", "args": {"path": "a"}}\n'
        'TOOL_CALL: {"name": "grep", "args": {"pattern": "x"}}\nThen wait.',
        "First.\nThen wait.",
        [("read", {"path": "a"}, "toolwire"), ("grep", {"pattern": "x"}, "toolwire")],
    ),
    (
        "toolwire-braces-in-strings-nested",
        'TOOL_CALL: {"name": "write", "args": {"path": "x.c", "content": "int f() { return \\"}\\"; }", '
        '"meta": {"a": [1, {"b": null}]}}}',
        "",
        [("write", {"path": "x.c", "content": 'int f() { return "}"; }', "meta": {"a": [1, {"b": None}]}}, "toolwire")],
    ),
    (
        "toolwire-arguments-key-and-inline",
        'Sure TOOL_CALL: {"name": "f", "arguments": {"x": 1}} done',
        "Sure done",
        [("f", {"x": 1}, "toolwire")],
    ),
    (
        "toolwire-marker-inside-string",
        'TOOL_CALL: {"name": "write", "args": {"content": "TOOL_CALL: {\\"name\\": \\"x\\"}"}}',
        "",
        [("write", {"content": 'TOOL_CALL: {"name": "x"}'}, "toolwire")],
    ),
    # Hermes / Qwen 2.5
    (
        "hermes-object",
        'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        "Checking.",
        [("get_weather", {"city": "Paris"}, "hermes")],
    ),
    (
        "hermes-string-arguments",
        '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>',
        "",
        [("f", {"a": 1}, "hermes")],
    ),
    (
        "hermes-parallel",
        '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "b", "arguments": {"x": [1]}}\n</tool_call>',
        "",
        [("a", {}, "hermes"), ("b", {"x": [1]}, "hermes")],
    ),
    (
        "hermes-array-xlam",
        '<tool_call>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]</tool_call>',
        "",
        [("a", {}, "hermes"), ("b", {}, "hermes")],
    ),
    (
        "hermes-seed",
        '<seed:tool_call>{"name": "a", "arguments": {"k": "v"}}</seed:tool_call>',
        "",
        [("a", {"k": "v"}, "hermes")],
    ),
    # Mistral
    (
        "mistral-pre-v11",
        '[TOOL_CALLS][{"name": "a", "arguments": {"x": 1}, "id": "abcDEF123"}, {"name": "b", "arguments": {}}]',
        "",
        [("a", {"x": 1}, "mistral"), ("b", {}, "mistral")],
    ),
    (
        "mistral-v11",
        'Ok.[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}[TOOL_CALLS]b[ARGS]{}',
        "Ok.",
        [("get_weather", {"city": "Rome"}, "mistral-v11"), ("b", {}, "mistral-v11")],
    ),
    (  # vLLM's Mistral parser input: special tokens skipped, so no [ARGS] between name and JSON
        "mistral-v11-special-tokens-skipped",
        'Let me compute.[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}',
        "Let me compute.",
        [("add", {"a": 3.5, "b": 4}, "mistral-v11"), ("multiply", {"a": 3, "b": 6}, "mistral-v11")],
    ),
    (
        "mistral-v11-call-id",
        '[TOOL_CALLS]a[CALL_ID]abcDEF123[ARGS]{"x": "y"}',
        "",
        [("a", {"x": "y"}, "mistral-v11")],
    ),
    # Llama 3.x
    (
        "llama-python-tag-parallel",
        '<|python_tag|>{"name": "a", "parameters": {"x": 1}}; {"name": "b", "parameters": {}}',
        "",
        [("a", {"x": 1}, "llama3-json"), ("b", {}, "llama3-json")],
    ),
    (
        "llama-bare-json",
        '{"name": "a", "parameters": {"x": 1}}',
        "",
        [("a", {"x": 1}, "json")],
    ),
    (
        "llama-bare-json-joined",
        '{"name": "a", "parameters": {"x": 1}}; {"name": "b", "arguments": {}}',
        "",
        [("a", {"x": 1}, "json"), ("b", {}, "json")],
    ),
    (
        "llama-builtin",
        '<|python_tag|>brave_search.call(query="weather in SF")',
        "",
        [("brave_search", {"query": "weather in SF"}, "llama3-python")],
    ),
    (
        "llama-function-tag",
        'Calling <function=spotify_top>{"n": 5}</function> now',
        "Calling now",
        [("spotify_top", {"n": 5}, "llama3-function")],
    ),
    (
        "openai-shaped-bare",
        '{"type": "function", "function": {"name": "a", "arguments": "{\\"x\\": 2}"}}',
        "",
        [("a", {"x": 2}, "json")],
    ),
    # fenced JSON
    (
        "fence-object",
        'I will call it:\n```json\n{"name": "a", "arguments": {"x": 1}}\n```\nWaiting.',
        "I will call it:\nWaiting.",
        [("a", {"x": 1}, "json-fence")],
    ),
    (
        "fence-array-no-language",
        '```\n[{"name": "a", "arguments": {}}, {"name": "b", "args": {"y": true}}]\n```',
        "",
        [("a", {}, "json-fence"), ("b", {"y": True}, "json-fence")],
    ),
    # pythonic
    (
        "pythonic-list",
        '[get_weather(city="SF", days=3), get_time(tz="PT", exact=true, offset=-1.5, extra=null)]',
        "",
        [
            ("get_weather", {"city": "SF", "days": 3}, "pythonic"),
            ("get_time", {"tz": "PT", "exact": True, "offset": -1.5, "extra": None}, "pythonic"),
        ],
    ),
    (
        "pythonic-line-with-prose",
        "Let me check.\n[search(query='a [b] (c)', filters={'lang': ['en'], 'n': (1, 2)})]\nOne moment.",
        "Let me check.\nOne moment.",
        [("search", {"query": "a [b] (c)", "filters": {"lang": ["en"], "n": [1, 2]}}, "pythonic")],
    ),
    (
        "pythonic-llama4",
        "<|python_start|>[a(x=1)]<|python_end|>",
        "",
        [("a", {"x": 1}, "pythonic")],
    ),
    (
        "pythonic-olmo3-lines",
        "<function_calls>\na(x=1)\nb(y='z')\n</function_calls>",
        "",
        [("a", {"x": 1}, "pythonic"), ("b", {"y": "z"}, "pythonic")],
    ),
    (
        "pythonic-tool-code-fence",
        "```tool_code\n[a(x=1)]\n```",
        "",
        [("a", {"x": 1}, "pythonic")],
    ),
    # Qwen3-Coder XML
    (
        "qwen3-coder",
        "<tool_call>\n<function=write>\n<parameter=path>\na.py\n</parameter>\n"
        "<parameter=content>\ndef f():\n    return 1\n\n</parameter>\n</function>\n</tool_call>",
        "",
        [("write", {"path": "a.py", "content": "def f():\n    return 1\n"}, "qwen3-coder")],
    ),
    (
        "qwen3-coder-missing-closers",
        "Doing it.\n<tool_call>\n<function=f>\n<parameter=a>\nx\n<parameter=b>\ny\n</tool_call>",
        "Doing it.",
        [("f", {"a": "x", "b": "y"}, "qwen3-coder")],
    ),
    (
        "qwen3-coder-parallel-no-wrapper",
        "<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n<function=b>\n</function>",
        "",
        [("a", {"x": "1"}, "qwen3-coder"), ("b", {}, "qwen3-coder")],
    ),
    # GLM-4.5
    (
        "glm",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
        "",
        [("get_weather", {"city": "Beijing", "days": "2"}, "glm")],
    ),
    (
        "glm-no-arguments",
        "<tool_call>list_files</tool_call>",
        "",
        [("list_files", {}, "glm")],
    ),
    # DeepSeek
    (
        "deepseek-v3",
        f'Sure.{DS_CALLS}{DS_CALL}function{DS_SEP}get_weather\n```json\n{{"city": "Hangzhou"}}\n```{DS_CALL_END}'
        f"{DS_CALL}function{DS_SEP}b\n```json\n{{}}\n```{DS_CALL_END}{DS_CALLS_END}",
        "Sure.",
        [("get_weather", {"city": "Hangzhou"}, "deepseek-v3"), ("b", {}, "deepseek-v3")],
    ),
    (
        "deepseek-v3.1",
        f'{DS_CALLS}{DS_CALL}get_weather{DS_SEP}{{"city": "Tokyo"}}{DS_CALL_END}{DS_CALLS_END}',
        "",
        [("get_weather", {"city": "Tokyo"}, "deepseek-v3.1")],
    ),
    (
        "deepseek-unclosed",
        f'{DS_CALLS}{DS_CALL}a{DS_SEP}{{"x": 1}}',
        "",
        [("a", {"x": 1}, "deepseek-v3.1")],
    ),
    # Kimi K2
    (
        "kimi",
        "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Oslo"}<|tool_call_end|><|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>{}'
        "<|tool_call_end|><|tool_calls_section_end|>",
        "Checking.",
        [("get_weather", {"city": "Oslo"}, "kimi-k2"), ("b", {}, "kimi-k2")],
    ),
    # Granite
    (
        "granite",
        '<|tool_call|>[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]',
        "",
        [("a", {"x": 1}, "granite"), ("b", {}, "granite")],
    ),
    # gpt-oss Harmony
    (
        "harmony",
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        '{"city": "SF"}<|call|>',
        "",
        [("get_weather", {"city": "SF"}, "harmony")],
    ),
    (
        "harmony-recipient-in-header-and-analysis-kept",
        "<|channel|>analysis<|message|>Need weather.<|end|>"
        '<|start|>assistant to=functions.a<|channel|>commentary json<|message|>{"x": 1}<|call|>',
        "<|channel|>analysis<|message|>Need weather.<|end|>",
        [("a", {"x": 1}, "harmony")],
    ),
    (  # as llama.cpp's server passes it through: no <|end|>, a content-type word, no <|call|>
        "harmony-llama-server",
        "<|channel|>analysis<|message|>We need to run pwd.<|start|>assistant<|channel|>commentary "
        'to=functions.run_command json<|message|>{"command":"pwd"}',
        "<|channel|>analysis<|message|>We need to run pwd.",
        [("run_command", {"command": "pwd"}, "harmony")],
    ),
    (
        "harmony-constrain-multiline",
        "<|channel|>analysis<|message|>We need to run pwd.<|start|>assistant<|channel|>commentary "
        'to=functions.run_command <|constrain|>json<|message|>{\n  "command": "pwd"\n}<|call|>',
        "<|channel|>analysis<|message|>We need to run pwd.",
        [("run_command", {"command": "pwd"}, "harmony")],
    ),
]


@pytest.mark.parametrize(("text", "rest", "calls"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_format(text: str, rest: str, calls: list[tuple[str, dict[str, Any], str]]) -> None:
    assert summary(text) == (rest, calls)


def test_kimi_keeps_native_ids() -> None:
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{}<|tool_call_end|>"
        "<|tool_call_begin|>functions.a:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"
    )
    _, calls = parse_tool_calls(text)
    assert [c.id for c in calls] == ["functions.a:0", "functions.a:1"]


def test_other_formats_get_fresh_unique_ids() -> None:
    text = '[TOOL_CALLS][{"name": "a", "arguments": {}, "id": "abcDEF123"}, {"name": "a", "arguments": {}}]'
    first = parse_tool_calls(text)[1]
    second = parse_tool_calls(text)[1]
    ids = [c.id for c in first + second]
    assert len(set(ids)) == 4
    assert all(i.startswith("call_") for i in ids)


def test_metadata_is_only_the_format_for_clean_calls() -> None:
    _, calls = parse_tool_calls('<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>')
    assert calls[0].metadata == {"textcalls": {"format": "hermes"}}


# Coercion of XML-ish values with the tools' schemas


def test_qwen3_coder_values_coerced_by_schema() -> None:
    text = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\n42\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
        "<parameter=celsius>\nTrue\n</parameter>\n<parameter=threshold>\n2.5\n</parameter>\n"
        '<parameter=options>\n{"unit": "C"}\n</parameter>\n<parameter=tags>\n["a", 1]\n</parameter>\n'
        "<parameter=note>\nnull\n</parameter>\n<parameter=unknown>\n7\n</parameter>\n</function>\n</tool_call>"
    )
    assert summary(text, [WEATHER])[1] == [
        (
            "get_weather",
            {
                "city": "42",
                "days": 3,
                "celsius": True,
                "threshold": 2.5,
                "options": {"unit": "C"},
                "tags": ["a", 1],
                "note": None,
                "unknown": "7",
            },
            "qwen3-coder",
        )
    ]


def test_glm_values_coerced_by_schema() -> None:
    text = (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>5</arg_value>\n<arg_key>celsius</arg_key>\n<arg_value>false</arg_value>\n"
        "</tool_call>"
    )
    assert summary(text, [WEATHER])[1] == [("get_weather", {"city": "Paris", "days": 5, "celsius": False}, "glm")]


def test_values_that_do_not_fit_the_schema_stay_strings() -> None:
    text = (
        "<tool_call>get_weather<arg_key>days</arg_key><arg_value>soon</arg_value>"
        "<arg_key>options</arg_key><arg_value>{bad</arg_value></tool_call>"
    )
    assert parse_tool_calls(text, [WEATHER])[1][0].arguments == {"days": "soon", "options": "{bad"}


def test_values_without_tools_stay_strings() -> None:
    text = "<tool_call>get_weather<arg_key>days</arg_key><arg_value>5</arg_value></tool_call>"
    assert summary(text)[1] == [("get_weather", {"days": "5"}, "glm")]


def test_tools_given_as_objects_with_definition_and_as_mapping() -> None:
    class Tool:
        definition = WEATHER

    text = "<tool_call>get_weather<arg_key>days</arg_key><arg_value>5</arg_value></tool_call>"
    assert summary(text, [Tool()])[1] == [("get_weather", {"days": 5}, "glm")]
    assert summary(text, {"get_weather": WEATHER})[1] == [("get_weather", {"days": 5}, "glm")]


def test_harmony_channels_become_reasoning_calls_and_the_answer() -> None:
    from toolwire import ThinkingPart
    from toolwire.testing import reply
    from toolwire.textcalls._text_mode import calls_from_text
    from toolwire.types import StopReason, TextPart, ToolDefinition

    weather = [ToolDefinition(name="get_weather")]
    calling = (
        "<|channel|>analysis<|message|>User wants weather. Call tool.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city":"Paris"}<|call|>'
    )
    first = calls_from_text(reply(calling), weather, "text")
    assert first.message.parts[0] == ThinkingPart(text="User wants weather. Call tool.")
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert (first.text, first.stop_reason) == ("", StopReason.TOOL_USE)
    answering = (
        "<|channel|>analysis<|message|>Think hard.<|end|><|start|>assistant<|channel|>final<|message|>It is sunny."
    )
    final = calls_from_text(reply(answering), weather, "text")
    assert final.message.parts == [ThinkingPart(text="Think hard."), TextPart(text="It is sunny.")]
    assert final.stop_reason == StopReason.END_TURN


@pytest.mark.parametrize(
    "text",
    [
        "<|channel|>analysis<|message|>We need to run pwd.<|start|>assistant<|channel|>commentary "
        'to=functions.run_command json<|message|>{"command":"pwd"}',
        "<|channel|>analysis<|message|>We need to run pwd.<|start|>assistant<|channel|>commentary "
        'to=functions.run_command <|constrain|>json<|message|>{\n  "command": "pwd"\n}<|call|>',
    ],
)
def test_harmony_analysis_is_thinking_never_visible_text(text: str) -> None:
    from toolwire import AssistantMessage, Response, StopReason, TextPart, ThinkingPart, ToolDefinition
    from toolwire.textcalls import calls_from_text

    reply = Response(message=AssistantMessage(parts=[TextPart(text=text)]), stop_reason=StopReason.END_TURN)
    tool = ToolDefinition(name="run_command", parameters={"type": "object"})
    parsed = calls_from_text(reply, [tool], "text")
    assert [type(p).__name__ for p in parsed.message.parts] == ["ThinkingPart", "ToolCall"]
    assert parsed.message.parts[0] == ThinkingPart(text="We need to run pwd.")
    assert (parsed.text, parsed.tool_calls[0].arguments, parsed.stop_reason) == (
        "",
        {"command": "pwd"},
        StopReason.TOOL_USE,
    )
