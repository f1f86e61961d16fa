"""The tool-mode engine: native, text, auto and constrained, whole and streamed, for every caller.

Sessions, the agent, `toolwire eval` and the gateway all ask a model through `complete` or
`stream` here; each keeps only its own `ModeState` (the gateway: one per route target). The
modes themselves are described in docs/tool-modes.md:

- `complete(client, request, state)` / `stream(client, request, state)`: one reply in the mode;
  `stream_batches` gives the stream's events in the lists the upstream delivered them in (a relay);
- `refuses_tools(exc)`: the one decision that a server takes no tools (never a 404, never a
  context-length or other parameter error);
- `text_sent`, `constrained_sent`, `answer_sent`: the request each mode sends;
- `CallFilter`, `read_written_calls`: calls written in a reply's text, read as native ones;
- `complete_output` / `stream_output`: a typed reply in an output strategy (`tool`, `native`,
  `prompted`, `constrained`), validated against an `OutputType` and re-asked with the errors;
- `format_strategy`, `complete_formatted` / `stream_formatted` (`stream_formatted_batches`): a
  request's own `response_format` carried to a model without that field (the gateway).

Imports the neutral types, the client contract, `toolwire.textcalls` and `toolwire.constrained`;
never a client, a codec module or httpx2.
"""

from __future__ import annotations

from toolwire.textcalls import TOOL_MODES, ToolMode
from toolwire.toolmodes._engine import BatchOpener, Opener, Written, complete, stream, stream_batches
from toolwire.toolmodes._formats import complete_formatted, format_strategy, stream_formatted, stream_formatted_batches
from toolwire.toolmodes._output import (
    OutputResult,
    PartialOutput,
    PartialReader,
    choose_strategy,
    complete_output,
    give_up,
    stream_output,
)
from toolwire.toolmodes._output_strategies import (
    OUTPUT_STRATEGIES,
    OUTPUT_TOOL,
    OutputReading,
    OutputStrategy,
    answer_messages,
    output_sent,
    read_output,
)
from toolwire.toolmodes._output_type import InvalidOutput, OutputType, as_output_type, find_json, partial_json
from toolwire.toolmodes._refusal import refuses_tools
from toolwire.toolmodes._requests import answer_sent, constrained_sent, text_sent
from toolwire.toolmodes._state import ModeState
from toolwire.toolmodes._written import CallFilter, read_written_calls

__all__ = [
    "OUTPUT_STRATEGIES",
    "OUTPUT_TOOL",
    "TOOL_MODES",
    "BatchOpener",
    "CallFilter",
    "InvalidOutput",
    "ModeState",
    "Opener",
    "OutputReading",
    "OutputResult",
    "OutputStrategy",
    "OutputType",
    "PartialOutput",
    "PartialReader",
    "ToolMode",
    "Written",
    "answer_messages",
    "answer_sent",
    "as_output_type",
    "choose_strategy",
    "complete",
    "complete_formatted",
    "complete_output",
    "constrained_sent",
    "find_json",
    "format_strategy",
    "give_up",
    "output_sent",
    "partial_json",
    "read_output",
    "read_written_calls",
    "refuses_tools",
    "stream",
    "stream_batches",
    "stream_formatted",
    "stream_formatted_batches",
    "stream_output",
    "text_sent",
]
