"""Run BFCL cases against a model in one tool mode and score each reply.

One request per case, sent as the mode sends it: `native` offers the tools (`tool_choice`
auto), `text` describes them in the prompt and parses calls from the reply, `auto` is native
and parses the text when no native call came, `constrained` sends the reply schema
(`toolwire.constrained`) in the form the client's server profile names. Each reply is scored by
BFCL's AST rules (`check_calls`), and also for what toolwire promises: did it parse, and does
each call match its tool's schema.

Imports the client layer, the tool modes and this package; no I/O beyond the client's.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from toolwire import toolmodes
from toolwire.constrained import SchemaSupport, argument_errors
from toolwire.contract import ModelClient
from toolwire.errors import ToolwireError
from toolwire.evals._bfcl_checker import check_calls
from toolwire.evals._bfcl_data import BfclCase
from toolwire.toolmodes import ModeState, Written
from toolwire.types import Done, Request, Response, StreamEvent, ToolCall

__all__ = ["EVAL_MODES", "CaseResult", "EvalMode", "RequestOptions", "run_case", "run_cases"]

EvalMode = Literal["native", "text", "auto", "constrained"]
EVAL_MODES: tuple[EvalMode, ...] = ("native", "text", "auto", "constrained")


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """How every case is asked: temperature 0 and a fixed seed, for repeatable runs.

    Attributes:
        support: What the server's schema engine enforces (constrained mode loosens the rest);
            None takes the client's (its server profile's, `Client.schema_support`).
        stream: Ask as a streaming client does: the latency is then the one such a client
            sees, and constrained mode stops a model that begins to repeat a call there.
    """

    temperature: float | None = 0.0
    seed: int | None = 0
    max_tokens: int | None = 512
    support: SchemaSupport | None = None
    stream: bool = False


@dataclass(slots=True)
class CaseResult:
    """One case's outcome.

    Attributes:
        calls: The model's calls in BFCL's form, `[{bfcl_name: arguments}]`.
        parsed: The reply was readable as the mode asks (a final answer, or calls whose
            arguments decoded and whose names are tools; in constrained mode, the JSON shape whole).
        valid_calls: How many calls name a tool and match its schema.
        latency_s: Seconds from sending the request to having the decoded reply.
        error: Why the case is wrong (the broken rule), or the failure of the request.
        text: The reply's text (constrained mode: the raw JSON), for a look at what the model wrote.
        failed: The request failed (unreachable, an error status, a timeout): no reply was scored,
            so the case counts apart from the model's errors.
    """

    id: str
    category: str
    correct: bool
    parsed: bool
    calls: list[dict[str, Any]]
    valid_calls: int
    latency_s: float
    error: str = ""
    text: str = ""
    notes: list[str] = field(default_factory=list)
    failed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dataclasses.asdict(self)


def _request(case: BfclCase, options: RequestOptions, model: str) -> Request:
    return Request(
        model=model,
        messages=list(case.messages),
        tools=list(case.tools),
        tool_choice="auto",
        temperature=options.temperature,
        seed=options.seed,
        max_tokens=options.max_tokens,
        stream=options.stream,
    )


async def _ask(
    client: ModelClient, case: BfclCase, mode: EvalMode, options: RequestOptions
) -> tuple[Response, bool, str, list[str]]:
    """The reply as users get it in `mode`, whether it parsed, what the model wrote, and notes."""
    request = _request(case, options, client.model)
    written = Written()
    state, support = ModeState(mode), options.support
    if request.stream:
        events = toolmodes.stream(client, request, state, written=written, support=support)
        response = await _last_response(events)
    else:
        response = await toolmodes.complete(client, request, state, written=written, support=support)
    found = written.constrained
    if found is not None:
        return response, found.parsed, written.text, found.notes
    return response, _calls_parsed(response.tool_calls, case, mode), written.text, []


async def _last_response(events: AsyncIterator[StreamEvent]) -> Response:
    """The `Done` event's response, the stream read to its end (so it closes what it opened)."""
    last: Response | None = None
    async for event in events:
        if isinstance(event, Done):
            last = event.response
    assert last is not None  # the engine's streams end with Done or raise
    return last


def _calls_parsed(calls: list[ToolCall], case: BfclCase, mode: EvalMode) -> bool:
    """Calls that decoded and name tools; in text mode, a reply with no call parsed nothing.

    (Unless the case expects no call: then prose is the answer read whole.)
    """
    if mode == "text" and not calls and "irrelevance" not in case.category:
        return False
    names = {tool.name for tool in case.tools}
    return all(call.name in names and "arguments_error" not in call.metadata for call in calls)


def _valid_calls(calls: list[ToolCall], case: BfclCase) -> int:
    tools = {tool.name: tool for tool in case.tools}
    return sum(
        1
        for call in calls
        if call.name in tools
        and "arguments_error" not in call.metadata
        and argument_errors(call.arguments, tools[call.name].parameters) is None
    )


async def run_case(
    client: ModelClient, case: BfclCase, mode: EvalMode, options: RequestOptions = RequestOptions()
) -> CaseResult:
    """Ask the model one case in `mode` and score the reply; a failed request is a `failed` case, not raised."""
    started = time.perf_counter()
    try:
        response, parsed, text, notes = await _ask(client, case, mode, options)
    except ToolwireError as exc:
        elapsed = time.perf_counter() - started
        error = f"{type(exc).__name__}: {exc}"
        return CaseResult(case.id, case.category, False, False, [], 0, elapsed, error=error, failed=True)
    elapsed = time.perf_counter() - started
    calls = [{case.bfcl_name(call.name): call.arguments} for call in response.tool_calls]
    verdict = check_calls(case.category, case.functions, calls, case.possible_answer)
    return CaseResult(
        id=case.id,
        category=case.category,
        correct=verdict.valid,
        parsed=parsed,
        calls=calls,
        valid_calls=_valid_calls(response.tool_calls, case),
        latency_s=elapsed,
        error=verdict.error,
        text=text,
        notes=notes,
    )


async def run_cases(
    client: ModelClient, cases: Iterable[BfclCase], mode: EvalMode, options: RequestOptions = RequestOptions()
) -> AsyncIterator[CaseResult]:
    """Each case's result, one case at a time (so latencies are the model's own, unshared)."""
    for case in cases:
        yield await run_case(client, case, mode, options)
