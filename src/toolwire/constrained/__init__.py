"""Constrained tool mode: the server decodes under a JSON Schema built from the tool definitions.

Most OpenAI-compatible servers can hold a model to a JSON Schema (llama.cpp, vLLM, Ollama,
OpenAI itself). Built from a request's tools, one schema allows either a final answer or calls
whose `name` is one of the tools and whose `arguments` match that tool's parameters, so even a
small model's reply parses, and its calls are valid by construction:

- `reply_schema(tools, tool_choice)` builds that schema (`_schema` explains its shape: the
  call count first, then the calls, a final answer being a call of `no_tool_fits`),
  loosened to what the server's engine enforces (`SchemaSupport`, `loosen`);
- `constrained_request(request)` rewrites a neutral request for the mode (tools in the system
  prompt, the schema as `response_format`);
- `calls_from_reply(response, reply)` / `parse_reply(text, tools)` turn the reply back into text
  and `ToolCall`s, validated against each tool's own schema; `AnswerStream` gives an answer's
  text while the reply still streams.

Pure conversion, no I/O. Imports `toolwire.types`, `toolwire.schema`, `toolwire.textcalls`,
`toolwire.codecs.common` and the standard library (plus `jsonschema` and `json_repair`,
lazily). Never imports a codec module.
"""

from __future__ import annotations

from toolwire.constrained._conversation import (
    SCHEMA_NAME,
    calls_from_reply,
    constrained_request,
    render_constrained_prompt,
)
from toolwire.constrained._events import ReplyFilter
from toolwire.constrained._loosen import PORTABLE, SchemaSupport, loosen
from toolwire.constrained._reply import ConstrainedReply, parse_reply
from toolwire.constrained._schema import (
    ANSWER_ARGUMENT,
    CALLS_KEY,
    COUNT_KEY,
    MAX_CALLS,
    NO_TOOL,
    ReplySchema,
    no_tool_definition,
    reply_schema,
)
from toolwire.constrained._stream import AnswerStream
from toolwire.constrained._validate import argument_errors

__all__ = [
    "ANSWER_ARGUMENT",
    "CALLS_KEY",
    "COUNT_KEY",
    "MAX_CALLS",
    "NO_TOOL",
    "PORTABLE",
    "SCHEMA_NAME",
    "AnswerStream",
    "ConstrainedReply",
    "ReplyFilter",
    "ReplySchema",
    "SchemaSupport",
    "argument_errors",
    "calls_from_reply",
    "constrained_request",
    "loosen",
    "no_tool_definition",
    "parse_reply",
    "render_constrained_prompt",
    "reply_schema",
]
