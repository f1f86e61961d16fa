"""The text fallback: tool calling for models and servers that have no native tool API.

`render_tool_prompt(tools)` describes the tools and toolwire's `TOOL_CALL: {...}` format for
the system prompt; `parse_tool_calls(text, tools)` reads calls back out of a reply, in that
format or in any of the formats open models emit (docs/tool-modes.md, text); `to_text_messages` and
`calls_from_text` implement the `text`/`auto` tool modes over a neutral conversation.

This package imports only `toolwire.types`, `toolwire.codecs.common` and the standard
library (plus `json_repair`, lazily, for small broken JSON). Never imports a codec module.
"""

from __future__ import annotations

from toolwire.textcalls._detection import HasDefinition, ToolLike
from toolwire.textcalls._parse import parse_tool_calls
from toolwire.textcalls._render import TOOL_CALL_PREFIX, example_arguments, render_tool_prompt
from toolwire.textcalls._text_mode import (
    TOOL_MODES,
    ToolMode,
    append_result_text,
    calls_from_text,
    result_message_text,
    result_text,
    to_text_messages,
)

__all__ = [
    "TOOL_CALL_PREFIX",
    "TOOL_MODES",
    "HasDefinition",
    "ToolLike",
    "ToolMode",
    "append_result_text",
    "calls_from_text",
    "example_arguments",
    "parse_tool_calls",
    "render_tool_prompt",
    "result_message_text",
    "result_text",
    "to_text_messages",
]
