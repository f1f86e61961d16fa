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

from toolwire.client import Client
from toolwire.constrained import (
    ReplyFilter,
    SchemaSupport,
    answer_request,
    argument_errors,
    calls_from_reply,
    constrained_request,
    with_usage_of,
)
from toolwire.errors import ToolwireError
from toolwire.evals._bfcl_checker import check_calls
from toolwire.evals._bfcl_data import BfclCase
from toolwire.session import stream_reply
from toolwire.textcalls import calls_from_text, to_text_messages
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
    client: Client, case: BfclCase, mode: EvalMode, options: RequestOptions
) -> tuple[Response, bool, str, list[str]]:
    """The decoded reply, whether it parsed, the raw text and notes, for one case in `mode`."""
    request = _request(case, options, client.model)
    if mode == "constrained":
        return await _ask_constrained(client, request, options)
    if mode == "text":
        sent = dataclasses.replace(
            request, messages=to_text_messages(request.messages, request.tools), tools=[], tool_choice=None
        )
        raw = await _complete(client, sent)
        response = calls_from_text(raw, request.tools, "text")
    else:
        raw = await _complete(client, request)
        response = calls_from_text(raw, request.tools, "auto-text") if mode == "auto" and not raw.tool_calls else raw
    return response, _calls_parsed(response.tool_calls, case), raw.text, []


async def _ask_constrained(
    client: Client, request: Request, options: RequestOptions
) -> tuple[Response, bool, str, list[str]]:
    """As users get it: the answer's request follows a reply without calls."""
    sent, reply = constrained_request(request, options.support or client.schema_support)
    assert reply is not None  # every BFCL case has tools
    if request.stream:
        held = ReplyFilter(reply)
        response = await _last_response(stream_reply(client, sent, held, answer_request(request)))
        assert held.found is not None  # stream_reply ends with Done or raises
        return response, held.found.parsed, held.text, held.found.notes
    raw = await client.complete_request(sent)
    response, found = calls_from_reply(raw, reply)
    if found.answer_due:
        response = with_usage_of(await client.complete_request(answer_request(request)), raw.usage)
    return response, found.parsed, raw.text, found.notes


async def _complete(client: Client, request: Request) -> Response:
    if not request.stream:
        return await client.complete_request(request)
    return await _last_response(client.stream_request(request))


async def _last_response(events: AsyncIterator[StreamEvent]) -> Response:
    """The `Done` event's response, the stream read to its end (so it closes what it opened)."""
    last: Response | None = None
    async for event in events:
        if isinstance(event, Done):
            last = event.response
    if last is None:
        raise RuntimeError("The stream ended without a Done event.")
    return last


def _calls_parsed(calls: list[ToolCall], case: BfclCase) -> bool:
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
    client: Client, case: BfclCase, mode: EvalMode, options: RequestOptions = RequestOptions()
) -> CaseResult:
    """Ask the model one case in `mode` and score the reply; a failed request is a wrong case, not an error."""
    started = time.perf_counter()
    try:
        response, parsed, text, notes = await _ask(client, case, mode, options)
    except ToolwireError as exc:
        elapsed = time.perf_counter() - started
        return CaseResult(case.id, case.category, False, False, [], 0, elapsed, error=f"{type(exc).__name__}: {exc}")
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
    client: Client, cases: Iterable[BfclCase], mode: EvalMode, options: RequestOptions = RequestOptions()
) -> AsyncIterator[CaseResult]:
    """Each case's result, one case at a time (so latencies are the model's own, unshared)."""
    for case in cases:
        yield await run_case(client, case, mode, options)
