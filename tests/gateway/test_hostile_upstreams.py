"""Hostile upstreams through every tool mode and both gateway paths: every client still gets one answer.

An OpenAI-compatible upstream sends what a broken or hostile server can: nesting past any parser's
stack, calls cut inside a string, garbage for a body, a stream reset after its opening, error
statuses with absurd `Retry-After` values, and random cuts and mutations of valid replies. The
gateway serves it to an OpenAI client (passthrough in native mode, the engine otherwise) and to an
Anthropic client (translation), whole and streamed, in every tool mode. Each request must get
exactly one answer with a status the rule allows (never a 500, never a dropped connection); a
200 never carries a call whose arguments were cut; and the gateway stays healthy.

The suite runs the fixed cases and `TOOLWIRE_HOSTILE_ROUNDS` (default 12) random ones per
combination; `make fuzz` runs 400.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Iterator

import httpx2
import pytest

from tests.gateway.conftest import Gateway
from toolwire.gateway import Route, create_app
from toolwire.testing import DropStream, ErrorReply, RawReply, ScriptedServer, Turn, reply

ROUNDS = int(os.environ.get("TOOLWIRE_HOSTILE_ROUNDS", "12"))
MODES = ["native", "text", "auto", "constrained"]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write",
            "description": "Write a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
        },
    }
]
ALLOWED = {200, 429, 502, 504}
CUT_COMPLETED = {"path": "o", "content": "li"}  # what the fixed cut calls would be, completed


def _chat(content: str | None, calls: list[tuple[str, str]] = (), finish: str = "stop") -> str:  # type: ignore[assignment]
    message: dict[str, object] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ]
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [choice]})


def _json(body: str) -> RawReply:
    return RawReply(body=body, content_type="application/json")


FIXED: dict[str, Turn] = {
    "megabyte-of-brackets": reply("[" * 1_000_000),
    "deep-arguments": reply('[{"name": "write", "arguments": {"path": ' + "[" * 5000 + "]" * 5000 + "}}]"),
    "deep-native-arguments": _json(_chat(None, [("write", '{"path": ' + "[" * 5000 + "]" * 5000 + "}")])),
    "unclosed-written-call": reply('TOOL_CALL: {"name": "write", "arguments": {"path": "o", "content": "li'),
    "unclosed-constrained-call": reply('[{"name": "write", "arguments": {"path": "o", "content": "li'),
    "unclosed-native-arguments": _json(_chat(None, [("write", '{"path": "o", "content": "li')], "tool_calls")),
    "html-for-a-body": RawReply(body="<html>nope</html>", content_type="text/html"),
    "json-not-a-reply": _json('{"choices": "no"}'),
    "empty-body": _json(""),
    "reset-after-opening": DropStream(response=reply("never finished"), after=1),
    "clean-stop-before-the-end": DropStream(response=reply("never finished"), after=2, clean=True),
    "retry-after-inf": ErrorReply(status=429, message="busy", headers={"retry-after": "inf"}),
    "retry-after-1e400": ErrorReply(status=503, message="busy", headers={"retry-after": "1e400"}),
    "retry-after-nan": ErrorReply(status=429, message="busy", headers={"retry-after": "nan"}),
    "retry-after-negative": ErrorReply(status=429, message="busy", headers={"retry-after": "-5"}),
    "retry-after-date": ErrorReply(
        status=429, message="busy", headers={"retry-after": "Fri, 01 Jan 9999 00:00:00 GMT"}
    ),
    "huge-header": ErrorReply(status=500, message="big", headers={"x-junk": "a" * 60_000}),
    "negative-usage": _json(
        json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": -1, "completion_tokens": -1, "total_tokens": -2},
            }
        )
    ),
}


def _random_turn(rng: random.Random) -> Turn:
    """A valid reply cut or mutated at a random place, or random nesting and bytes."""
    kind = rng.choice(["cut", "mutate", "nest", "bytes", "drop"])
    whole = _chat("hello", [("write", json.dumps({"path": "a", "content": "x" * rng.randint(0, 50)}))], "tool_calls")
    if kind == "cut":
        return _json(whole[: rng.randint(0, len(whole))])
    if kind == "mutate":
        at = rng.randrange(len(whole))
        return _json(whole[:at] + rng.choice(['"', "{", "]", "\\", "\x00", "\ud800", "1e999"]) + whole[at + 1 :])
    if kind == "nest":
        depth = rng.choice([10, 100, 1000, 20_000])
        return reply(rng.choice(["[", "{", '{"a":']) * depth)
    if kind == "bytes":
        return RawReply(
            body=bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 200))), content_type="application/json"
        )
    return DropStream(response=reply("x" * rng.randint(0, 40)), after=rng.randint(0, 4), clean=rng.random() < 0.5)


class Upstream:
    """The hostile turn for the next request, then a plain answer (constrained mode asks again)."""

    def __init__(self) -> None:
        self.turn: Turn = "unused"
        self.asked = 0

    def __call__(self, request: object) -> Turn:
        self.asked += 1
        return self.turn if self.asked == 1 else "the answer"

    def next(self, turn: Turn) -> None:
        self.turn, self.asked = turn, 0


@pytest.fixture(scope="module")
def script() -> Upstream:
    return Upstream()


@pytest.fixture(scope="module")
def upstream(script: Upstream) -> Iterator[ScriptedServer]:
    with ScriptedServer(script) as server:
        yield server


@pytest.fixture(scope="module")
def gateway(upstream: ScriptedServer) -> Iterator[Gateway]:
    routes = [
        Route(model=mode, target=f"openai-compatible:{mode}", base_url=upstream.base_url + "/v1", tool_mode=mode)  # type: ignore[arg-type]
        for mode in MODES
    ]
    with Gateway(create_app(routes, keys=[])) as running:
        yield running


def _ask(gateway: Gateway, client: str, mode: str, stream: bool) -> httpx2.Response:
    messages = [{"role": "user", "content": "write it"}]
    if client == "openai":
        body = {"model": mode, "messages": messages, "tools": TOOLS, "stream": stream}
        return httpx2.post(gateway.url + "/v1/chat/completions", json=body, timeout=120)
    tools = [{"name": "write", "description": "Write a file.", "input_schema": TOOLS[0]["function"]["parameters"]}]  # type: ignore[index]
    body = {"model": mode, "max_tokens": 100, "messages": messages, "tools": tools, "stream": stream}
    return httpx2.post(gateway.url + "/v1/messages", json=body, timeout=120)


def _calls(client: str, answer: httpx2.Response, stream: bool) -> list[str]:
    """The arguments of every call the client got, as JSON text (none from a body of another shape)."""
    try:
        return _read_calls(client, answer, stream)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):  # passed through as the upstream sent it
        return []


def _read_calls(client: str, answer: httpx2.Response, stream: bool) -> list[str]:
    if not stream:
        data = answer.json()
        if client == "openai":
            return [c["function"]["arguments"] for c in data["choices"][0]["message"].get("tool_calls") or []]
        return [json.dumps(b["input"]) for b in data["content"] if b["type"] == "tool_use"]
    events = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: {")]
    if client == "openai":
        calls: dict[int, str] = {}
        for event in events:
            for delta in (event.get("choices") or [{}])[0].get("delta", {}).get("tool_calls") or []:
                calls[delta["index"]] = calls.get(delta["index"], "") + (delta["function"].get("arguments") or "")
        return list(calls.values())
    pieces: dict[int, str] = {}
    for event in events:
        if event.get("type") == "content_block_start" and event["content_block"]["type"] == "tool_use":
            pieces[event["index"]] = ""
        if event.get("type") == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
            pieces[event["index"]] += event["delta"]["partial_json"]
    return [p or "{}" for p in pieces.values()]


def _check(gateway: Gateway, script: Upstream, turn: Turn, client: str, mode: str, stream: bool) -> None:
    script.next(turn)
    answer = _ask(gateway, client, mode, stream)  # read whole: the connection was not dropped
    assert answer.status_code in ALLOWED, answer.text[:500]
    if answer.status_code == 200:
        for arguments in _calls(client, answer, stream):
            # A cut call may reach the client as the upstream sent it (not JSON: nothing runs it),
            # never completed into a whole one by the gateway.
            with contextlib.suppress(ValueError, RecursionError):
                assert json.loads(arguments) != CUT_COMPLETED
    assert httpx2.get(gateway.url + "/health", timeout=30).status_code == 200


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("client", ["openai", "anthropic"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(FIXED))
def test_a_hostile_upstream_gets_every_client_one_allowed_answer(
    gateway: Gateway, script: Upstream, case: str, mode: str, client: str, stream: bool
) -> None:
    _check(gateway, script, FIXED[case], client, mode, stream)


@pytest.mark.parametrize("client", ["openai", "anthropic"])
@pytest.mark.parametrize("mode", MODES)
def test_random_cuts_and_mutations_of_upstream_replies(
    gateway: Gateway, script: Upstream, mode: str, client: str
) -> None:
    rng = random.Random(f"{mode}-{client}")
    for _ in range(ROUNDS):
        _check(gateway, script, _random_turn(rng), client, mode, rng.random() < 0.5)
