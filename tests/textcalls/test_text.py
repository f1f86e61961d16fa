"""What stays text, what marker-less calls need, broken calls, and how the text is tidied."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.textcalls import parse_tool_calls
from toolwire.types import ToolDefinition

READ = ToolDefinition(name="read", parameters={"type": "object", "properties": {"path": {"type": "string"}}})


def summary(text: str, tools: Any = None) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    rest, calls = parse_tool_calls(text, tools)
    return rest, [(c.name, c.arguments) for c in calls]


STAYS_TEXT = [
    "",
    "Plain prose with no calls at all.",
    'A JSON object that is data: {"name": "Ada", "age": 36}',
    'Name and arguments plus unrelated keys: {"name": "x", "arguments": {}, "score": 3}',
    '{"user": {"name": "f", "arguments": {}}}',  # a call-shaped object nested in data is data
    '[{"name": "a", "arguments": {}}, "not a call"]',
    'A list: [1, 2, {"name": "x"}]',
    "```python\nimport os\n\nprint(os.getcwd())\n```",
    "```python\n[process(x=1)]\n```",  # a call-shaped line in a python block is an example without tools
    '```js\nconst call = {"name": "f", "arguments": {}};\n```',
    "Code: [x(1) for x in fs]\n[f(a)]\n[f(a=b)]\n[f(a=1) + 2]",  # positional, variable, expression
    "A markdown link: [click here](https://example.com) and [f](x)",
    "def f(x):\n    return {'a': [1, 2, (3, 4)]}\n",
    "<tool_call>not a call at all</tool_call>",
    '<tool_call>{"arguments": {"x": 1}}</tool_call>',
    "[TOOL_CALLS] nothing usable here",
    "to=functions.x mentioned without a message",
    "TOOL_CALL: please call me later",
    'Unclosed {"name": "f", "arguments": {"a": 1}',
    "<|python_tag|>print('hello world')",
    'Use the format TOOL_CALL: {"name": ..., "args": {...}} and wait.',
    'TOOL_CALL: {"name": "<tool name>", "args": {<arguments as a JSON object>}}',
]


@pytest.mark.parametrize("text", STAYS_TEXT)
def test_stays_text(text: str) -> None:
    assert parse_tool_calls(text) == (text, [])


def test_marker_less_calls_must_name_a_given_tool() -> None:
    text = (
        'Try {"name": "delete_all", "arguments": {}} or\n[delete_all(force=true)]\n'
        '```json\n{"name": "delete_all", "args": {}}\n```'
    )
    assert parse_tool_calls(text, [READ]) == (text, [])
    assert [c.name for c in parse_tool_calls(text)[1]] == ["delete_all", "delete_all", "delete_all"]


def test_marker_less_known_tool_is_a_call() -> None:
    assert summary('{"name": "read", "arguments": {"path": "a"}}', [READ]) == ("", [("read", {"path": "a"})])


def test_explicit_markers_keep_unknown_names_with_tools() -> None:
    # The marker shows intent: the agent reports "unknown tool" to the model instead of losing the call.
    text = 'TOOL_CALL: {"name": "delete_all", "args": {}}\n<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
    assert summary(text, [READ]) == ("", [("delete_all", {}), ("nope", {})])


def test_empty_tool_list_means_no_marker_less_calls() -> None:
    assert parse_tool_calls('{"name": "read", "arguments": {}}', []) == ('{"name": "read", "arguments": {}}', [])


# Broken calls


def test_missing_closing_brace_is_repaired_from_its_line() -> None:
    rest, calls = parse_tool_calls('TOOL_CALL: {"name": "read", "args": {"path": "a.py"}\nI will wait.')
    assert rest == "I will wait."
    assert [(c.name, c.arguments) for c in calls] == [("read", {"path": "a.py"})]
    assert calls[0].metadata["raw_arguments"] == '{"name": "read", "args": {"path": "a.py"}'


def test_trailing_comma_and_single_quotes_are_repaired() -> None:
    assert summary("<tool_call>{'name': 'a', 'arguments': {'x': 1,},}</tool_call>") == ("", [("a", {"x": 1})])


def test_python_dict_ish_llama_arguments_are_repaired() -> None:
    assert summary('<|python_tag|>{"name": "a", "parameters": {\'x\': True}}') == ("", [("a", {"x": True})])


def test_unparseable_arguments_become_empty_with_an_error() -> None:
    _, calls = parse_tool_calls('<tool_call>{"name": "a", "arguments": "not json at all {"}</tool_call>')
    assert calls[0].name == "a"
    assert calls[0].arguments == {}
    assert calls[0].metadata["raw_arguments"] == "not json at all {"
    assert calls[0].metadata["arguments_error"].startswith("the arguments are not valid JSON")


def test_non_object_arguments_become_empty_with_an_error() -> None:
    _, calls = parse_tool_calls('<tool_call>{"name": "a", "arguments": [1, 2]}</tool_call>')
    assert calls[0].arguments == {}
    assert "must be a JSON object" in calls[0].metadata["arguments_error"]


def test_truncated_reply_repairs_the_last_call() -> None:
    rest, calls = parse_tool_calls(
        'Writing.\n<tool_call>\n{"name": "write", "arguments": {"path": "a", "content": "hel'
    )
    assert rest == "Writing."
    assert [(c.name, c.arguments) for c in calls] == [("write", {"path": "a", "content": "hel"})]
    assert "raw_arguments" in calls[0].metadata


def test_unclosed_call_then_valid_call() -> None:
    text = 'TOOL_CALL: {"name": "a", "args": {\nTOOL_CALL: {"name": "b", "args": {"x": 1}}'
    assert summary(text)[1][-1] == ("b", {"x": 1})


def test_broken_hermes_among_good_ones() -> None:
    text = (
        '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>garbage here</tool_call>\n'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    )
    assert summary(text) == ("<tool_call>garbage here</tool_call>", [("a", {}), ("b", {})])


def test_mixed_formats_in_text_order() -> None:
    text = (
        'First TOOL_CALL: {"name": "a", "args": {}}\n'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>\n'
        "[c(x=1)]\n"
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.d:0<|tool_call_argument_begin|>{}<|tool_call_end|>"
        "<|tool_calls_section_end|>\nLast."
    )
    assert summary(text) == ("First\nLast.", [("a", {}), ("b", {}), ("c", {"x": 1}), ("d", {})])


# Tidying the text around removed calls


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ('A.\n\nTOOL_CALL: {"name": "a", "args": {}}\n\nB.', "A.\n\nB."),
        ('A.\nTOOL_CALL: {"name": "a", "args": {}}\nB.', "A.\nB."),
        ('A. TOOL_CALL: {"name": "a", "args": {}} B.', "A. B."),
        ('A.<tool_call>{"name": "a", "arguments": {}}</tool_call>B.', "A.B."),
        ('  TOOL_CALL: {"name": "a", "args": {}}\n\nB.\n', "B.\n"),
        ('Intro:\n```\nTOOL_CALL: {"name": "a", "args": {}}\n```\nDone.', "Intro:\nDone."),
        ('Code follows\nTOOL_CALL: {"name": "a", "args": {}}\n    indented()', "Code follows\n    indented()"),
        ('{"name": "a", "parameters": {}};\n{"name": "b", "parameters": {}};', ""),
    ],
)
def test_text_is_tidied(text: str, rest: str) -> None:
    assert parse_tool_calls(text)[0] == rest


def test_no_calls_returns_the_text_unchanged() -> None:
    text = "  Leading and trailing space stays exactly as it was.  \n\n"
    assert parse_tool_calls(text) == (text, [])


def test_calls_inside_thinking_stay_text() -> None:
    text = (
        '<think>Maybe <tool_call>{"name": "rm", "arguments": {"path": "/"}}</tool_call>? No.</think>\n'
        '<tool_call>{"name": "ls", "arguments": {"path": "."}}</tool_call>'
    )
    remaining, calls = parse_tool_calls(text)
    assert [(c.name, c.arguments) for c in calls] == [("ls", {"path": "."})]
    assert remaining.startswith('<think>Maybe <tool_call>{"name": "rm"')
    # DeepSeek-R1 distills often drop the opening tag; an unclosed <think> is still thinking.
    assert parse_tool_calls('TOOL_CALL: {"name": "a", "args": {}}\n</think>\nanswer')[1] == []
    assert parse_tool_calls('answer <think>TOOL_CALL: {"name": "a", "args": {}}')[1] == []


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("mode", ["text", "auto"])
async def test_a_llama_server_harmony_capture_gives_the_call_and_its_analysis_as_thinking(
    mode: str, stream: bool
) -> None:
    """gpt-oss on llama-server: the analysis channel first, no `<|start|>assistant` before it."""
    from toolwire import toolmodes
    from toolwire.testing import ScriptedModel
    from toolwire.toolmodes import ModeState
    from toolwire.types import Done, Request, ThinkingPart, ToolDefinition, UserMessage

    capture = (
        "<|channel|>analysis<|message|>The user wants the files listed; run ls."
        "<|start|>assistant<|channel|>commentary to=functions.run_command <|constrain|>json"
        '<|message|>{"command": "ls"}'
    )
    schema = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
    tool = ToolDefinition(name="run_command", description="Run a command.", parameters=schema)
    request = Request(model="m", messages=[UserMessage(content="List the files.")], tools=[tool], stream=stream)
    if stream:
        events = [e async for e in toolmodes.stream(ScriptedModel([capture]), request, ModeState(mode))]  # type: ignore[arg-type]
        assert isinstance(events[-1], Done)
        response = events[-1].response
    else:
        response = await toolmodes.complete(ScriptedModel([capture]), request, ModeState(mode))  # type: ignore[arg-type]
    assert response.text == ""
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("run_command", {"command": "ls"})]
    assert [p for p in response.message.parts if isinstance(p, ThinkingPart)] == [
        ThinkingPart(text="The user wants the files listed; run ls.")
    ]
