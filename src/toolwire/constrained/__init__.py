"""Constrained tool mode: the server decodes under a JSON Schema built from the tool definitions.

Most OpenAI-compatible servers can hold a model to a JSON Schema (llama.cpp, vLLM, Ollama,
OpenAI itself). Built from a request's tools, one schema allows either a final answer or calls
whose `name` is one of the tools and whose `arguments` match that tool's parameters, so even a
small model's reply parses, and its calls are valid by construction:

- `reply_schema(tools, tool_choice)` builds that schema (`_schema` explains its shape: a JSON
  list of calls, `[]` when no tool fits, as small models learned it), loosened to what the
  server's engine enforces (`SchemaSupport`, `loosen`);
- `constrained_request(request)` rewrites a neutral request for the mode (tools in the system
  prompt, the schema as `response_format`); `answer_request(request)` is the plain request a
  final answer comes from once the model called nothing;
- `calls_from_reply(response, reply)` / `parse_reply(text, tools)` turn the reply back into
  `ToolCall`s, validated against each tool's own schema; `ReplyFilter` does it for a stream.

Pure conversion, no I/O. Imports `toolwire.types`, `toolwire.schema`, `toolwire.textcalls`,
`toolwire.codecs.common` and the standard library (plus `jsonschema` and `json_repair`,
lazily). Never imports a codec module.
"""

from __future__ import annotations

from toolwire.constrained._conversation import (
    SCHEMA_NAME,
    answer_request,
    calls_from_reply,
    constrained_request,
    render_constrained_prompt,
    with_usage_of,
)
from toolwire.constrained._events import ReplyFilter
from toolwire.constrained._loosen import PORTABLE, SchemaSupport, loosen
from toolwire.constrained._reply import ConstrainedReply, parse_reply
from toolwire.constrained._schema import MAX_CALLS, ReplySchema, reply_schema
from toolwire.constrained._validate import argument_errors

__all__ = [
    "MAX_CALLS",
    "PORTABLE",
    "SCHEMA_NAME",
    "ConstrainedReply",
    "ReplyFilter",
    "ReplySchema",
    "SchemaSupport",
    "answer_request",
    "argument_errors",
    "calls_from_reply",
    "constrained_request",
    "loosen",
    "parse_reply",
    "render_constrained_prompt",
    "reply_schema",
    "with_usage_of",
]
