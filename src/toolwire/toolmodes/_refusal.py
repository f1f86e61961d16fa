"""The one decision "this server does not take the `tools` parameter", from the server's own words.

`auto` mode switches to text mode for good on it, so it must never fire on anything else: a 404
is a wrong address, a context-length error is about the prompt's size (its message may count the
tokens the tools took), and a malformed tool schema or a bad `tool_choice` value is a request to
fix, not a model without tools. Only the error body the server sent is read: toolwire's own
message adds hints that name tools to every 400.
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolwire.errors import BadRequestError

__all__ = ["refuses_tools"]

# What servers say when a model or a server build has no tool calling, as they say it:
#   Ollama            "registry.ollama.ai/library/gemma:2b does not support tools"
#   DeepSeek          "deepseek-reasoner does not support Function Calling"
#   Gemini            "Function calling is not enabled for models/..."
#   vLLM              '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
#   llama.cpp server  "tools param requires --jinja flag"
#   OpenAI            "Unsupported parameter: 'tools' is not supported with this model."
_TOOLS = r"(?:tools?|tool[ _-]?(?:use|calls?|calling|choice)|functions?|function[ _-]?call(?:s|ing)?)"
_REFUSED = re.compile(
    rf"(?:does not|doesn't|do not|don't|cannot|can't)\s+(?:support|use|accept)\s+(?:\w+\s+)?{_TOOLS}\b"
    rf"|\b{_TOOLS}\b[^.\n]{{0,60}}?\b(?:not supported|unsupported|not enabled|not available|requires\s+--)"
    rf"|\bunsupported\s+(?:parameter|field|argument)s?\W{{0,4}}{_TOOLS}\b"
)
# Errors that may mention tools while being about something else entirely.
_OTHER = re.compile(r"context[ _]length|context window|maximum context|too many tokens|token limit|reduce the length")
_TOOL_PARAMS = frozenset({"tools", "tool_choice", "functions", "function_call", "toolConfig"})
_STATUSES = frozenset({400, 422})


def refuses_tools(exc: BadRequestError) -> bool:
    """Whether a refused request was refused because the server takes no tools (so text mode would work)."""
    if exc.status not in _STATUSES or exc.body is None:
        return False
    said = _words(exc.body).lower()
    if _OTHER.search(said):
        return False
    return _REFUSED.search(said) is not None or _extra_tools_field(exc.body)


def _words(body: Any) -> str:
    """Every string in an error body, one per line (a JSON body's message, code and param alike)."""
    if isinstance(body, str):
        return body
    if isinstance(body, dict):
        return "\n".join(_words(v) for v in body.values())
    if isinstance(body, list):
        return "\n".join(_words(v) for v in body)
    return json.dumps(body) if body is not None else ""


def _extra_tools_field(body: Any) -> bool:
    """A validating server's "extra field" error whose location is the tools (FastAPI / pydantic bodies)."""
    details = body.get("detail") if isinstance(body, dict) else None
    for item in details if isinstance(details, list) else ():
        if not isinstance(item, dict) or item.get("type") not in ("extra_forbidden", "value_error.extra"):
            continue
        location = item.get("loc")
        if isinstance(location, list) and any(part in _TOOL_PARAMS for part in location):
            return True
    return False
