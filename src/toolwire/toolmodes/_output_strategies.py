"""The four output strategies as request rewrites and reply readings: how a typed reply is asked for and read.

- `tool`: a final-answer tool (`final_result`) whose parameters are the type's schema, forced
  by `tool_choice` when it is the only tool, offered beside the others otherwise; its call's
  arguments are the answer. A re-ask is that call's `error` result.
- `native`: the type's schema as the request's `response_format`, which each codec sends in its
  provider's own form (OpenAI `json_schema`, Gemini `responseJsonSchema`, Anthropic
  `output_config.format`, Ollama `format`, a server profile's `schema_form`).
- `prompted`: the schema in the system prompt; the reply's JSON is found (fenced or bare),
  repaired and validated. Works on any model.
- `constrained`: the schema cut to what the server's decoding engine enforces (its
  `SchemaSupport`) as `response_format`, and described in the prompt as well, so that a small
  model's reply parses by construction and says what the fields mean.

A reply that does not validate is re-asked with the validation errors: as the output tool's
`error` result, or as a user turn. Pure conversion, no I/O.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Literal

from toolwire.codecs.common.wire import dumps
from toolwire.constrained import SchemaSupport, loosen
from toolwire.schema import inline_refs
from toolwire.toolmodes._output_type import InvalidOutput, OutputType
from toolwire.types import (
    Message,
    NamedToolChoice,
    Request,
    Response,
    ResponseFormat,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

__all__ = [
    "OUTPUT_STRATEGIES",
    "OUTPUT_TOOL",
    "OutputReading",
    "OutputStrategy",
    "answer_messages",
    "output_sent",
    "read_output",
]

OutputStrategy = Literal["tool", "native", "prompted", "constrained"]
OUTPUT_STRATEGIES: tuple[OutputStrategy, ...] = ("tool", "native", "prompted", "constrained")
OUTPUT_TOOL = "final_result"
"""The name of the `tool` strategy's final-answer tool."""


@dataclass(slots=True)
class OutputReading:
    """What one reply gave as the answer.

    Attributes:
        text: The answer's JSON as the model wrote it (the output tool's arguments, or the text).
        value: The validated value (None when `errors`).
        errors: Why it did not validate, one line per problem; None when it did.
        call: The output tool's call, for the `tool` strategy.
    """

    text: str
    value: Any = None
    errors: str | None = None
    call: ToolCall | None = None


def output_sent(request: Request, output: OutputType, strategy: OutputStrategy, support: SchemaSupport) -> Request:
    """`request` as `strategy` sends it to get an answer of `output`'s type."""
    if strategy == "tool":
        return _with_output_tool(request, output)
    if strategy == "native":
        fmt = ResponseFormat(schema=output.schema, name=output.name, strict=True)
        return dataclasses.replace(request, response_format=fmt)
    if strategy == "prompted":
        return _with_prompt(request, output)
    schema, _ = loosen(output.schema, support)
    fmt = ResponseFormat(schema=schema, name=output.name, strict=True)
    return dataclasses.replace(_with_prompt(request, output), response_format=fmt)


def _with_output_tool(request: Request, output: OutputType) -> Request:
    if request.tool_choice == "none":  # no call may be made: the answer is asked for in the prompt
        return _with_prompt(request, output)
    described = output.description or f"Give the final answer as a {output.name}."
    tool = ToolDefinition(name=OUTPUT_TOOL, description=described, parameters=output.schema)
    choice = request.tool_choice if request.tools else NamedToolChoice(OUTPUT_TOOL)
    return dataclasses.replace(request, tools=[*request.tools, tool], tool_choice=choice)


def schema_prompt(output: OutputType) -> str:
    """The instructions the `prompted` and `constrained` strategies add to the system prompt."""
    schema = json.dumps(inline_refs(output.schema), ensure_ascii=False)
    about = f" ({output.description})" if output.description else ""
    return (
        f"Answer with a JSON object{about} that matches this JSON Schema, and nothing else:\n{schema}\n"
        "Write only the JSON object: no explanation, no code fence."
    )


def _with_prompt(request: Request, output: OutputType) -> Request:
    prompt = schema_prompt(output)
    messages = list(request.messages)
    if messages and isinstance(messages[0], SystemMessage):
        messages[0] = SystemMessage(content=f"{messages[0].content}\n\n{prompt}")
    else:
        messages.insert(0, SystemMessage(content=prompt))
    return dataclasses.replace(request, messages=messages)


def read_output(response: Response, output: OutputType, strategy: OutputStrategy) -> OutputReading | None:
    """The answer in `response`, validated; None when the reply calls other tools instead."""
    calls = response.tool_calls
    mine = next((c for c in calls if c.name == OUTPUT_TOOL), None) if strategy == "tool" else None
    if mine is not None:
        return _read_call(mine, output)
    if calls:
        return None
    reading = _read_text(response.text, output)
    if reading.errors is not None and strategy == "tool":
        reading.errors = f"Call {OUTPUT_TOOL} with the answer.\n{reading.errors}"
    return reading


def _read_call(call: ToolCall, output: OutputType) -> OutputReading:
    raw = call.metadata.get("raw_arguments")
    text = raw if isinstance(raw, str) else dumps(call.arguments)
    broken = call.metadata.get("arguments_error")
    if isinstance(broken, str):
        return OutputReading(text=text, errors=broken, call=call)
    try:
        return OutputReading(text=text, value=output.validate(call.arguments), call=call)
    except InvalidOutput as exc:
        return OutputReading(text=text, errors=exc.errors, call=call)


def _read_text(text: str, output: OutputType) -> OutputReading:
    try:
        return OutputReading(text=text, value=output.validate_text(text))
    except InvalidOutput as exc:
        return OutputReading(text=text, errors=exc.errors)


def answer_messages(response: Response, reading: OutputReading | None) -> list[Message]:
    """What follows the reply in the history: the re-ask when it did not validate, results for its calls.

    Every call gets a result, so the history stays valid for the next turn: the output tool's
    says the answer was taken (or why not), other calls made beside it were not run.
    """
    errors = reading.errors if reading is not None else "The reply called tools instead of giving the answer."
    again = f"The answer does not validate:\n{errors}\nAnswer again with the corrected JSON only."
    out: list[Message] = []
    for call in response.tool_calls:
        if reading is not None and call is reading.call:
            out.append(ToolResult.error(call, again) if errors else ToolResult.text(call, "The answer was taken."))
        else:
            out.append(ToolResult.error(call, "Not run: only the answer is asked for here."))
    if errors and (reading is None or reading.call is None):
        out.append(UserMessage(content=again))
    return out
