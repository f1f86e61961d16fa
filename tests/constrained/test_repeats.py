"""A model that repeats a call it already wrote is stopped there: read whole or streamed, the list ends before it.

The streamed tests talk to a real HTTP server on 127.0.0.1 that writes a looping model's reply
the way llama-cpp-python's server streams it, and never ends the stream on its own: the reply
only comes back if toolwire stopped reading at the repeat, and the server sees the connection
closed (a closed stream is what stops generation on the real server).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.gateway.conftest import Gateway
from toolwire.client import connect_http
from toolwire.constrained import parse_reply
from toolwire.constrained._repeats import RepeatWatch, close_at_repeat
from toolwire.evals import BfclCase
from toolwire.evals._runner import RequestOptions, run_case
from toolwire.gateway import Route, create_app
from toolwire.types import Done, ToolCallDelta, ToolDefinition, UserMessage

AREA = ToolDefinition(
    name="triangle_area",
    description="Area of a triangle.",
    parameters={
        "type": "object",
        "properties": {"base": {"type": "integer"}, "label": {"type": "string"}},
        "required": ["base"],
    },
)
FIRST = {"name": "triangle_area", "arguments": {"base": 3, "label": 'odd "]}[{" text \\'}}
SECOND = {"name": "triangle_area", "arguments": {"base": 4}}
REPEAT = '{"arguments": {"label": "odd \\"]}[{\\" text \\\\", "base": 3}, "name": "triangle_area"}'
LOOPING = f"[{json.dumps(FIRST)}, {json.dumps(SECOND)},\n {REPEAT}"  # the reply as written up to the repeat
CLOSED = f"[{json.dumps(FIRST)}, {json.dumps(SECOND)}]"


def test_the_list_closes_after_the_last_call_before_the_repeat() -> None:
    assert json.loads(REPEAT) == FIRST  # the same call, keys in another order, quotes and brackets in a string
    assert close_at_repeat(LOOPING + ", " + json.dumps(SECOND) + "]") == CLOSED
    assert close_at_repeat(LOOPING) == CLOSED  # cut right after the repeat
    assert close_at_repeat(LOOPING[:-1]) is None  # the repeat is not whole yet


@pytest.mark.parametrize(
    "text",
    [
        CLOSED,  # no call repeats
        json.dumps({"tool_calls": [FIRST, FIRST]}),  # not a list: the reader takes it as it is
        f'"[{json.dumps(FIRST)}, {json.dumps(FIRST)}]"',  # a string, whatever it holds
        "[1, 1, [2], [2]]",  # only calls (objects) are compared
        "[]",
        "",
    ],
)
def test_only_a_list_that_repeats_a_call_is_closed(text: str) -> None:
    assert close_at_repeat(text) is None


@given(st.lists(st.integers(min_value=1, max_value=len(LOOPING)), max_size=12))
def test_any_chunking_closes_the_list_at_the_same_place(cuts: list[int]) -> None:
    watch, closed, bounds = RepeatWatch(), None, [0, *sorted(cuts), len(LOOPING)]
    for start, end in itertools.pairwise(bounds):
        closed = watch.feed(LOOPING[start:end])
        if closed is not None:
            assert end == len(LOOPING)  # not before the repeat is whole
    assert closed == CLOSED
    assert watch.feed(", more") == CLOSED


def test_a_reply_read_whole_ends_before_the_repeat_and_counts_as_parsed() -> None:
    reply = parse_reply(LOOPING + ', {"name": "triangle_area", "argu', [AREA])  # cut by the token limit
    assert [c.arguments for c in reply.calls] == [FIRST["arguments"], SECOND["arguments"]]
    assert (reply.parsed, reply.notes) == (True, ["the model began to repeat a call; the list ends before the repeat"])


class LoopingModel:
    """A server that streams `LOOPING` as llama-cpp-python does, then goes on looping until the client leaves."""

    def __init__(self) -> None:
        self.left = threading.Event()
        self.requests: list[dict[str, Any]] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                model.requests.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                pieces = [LOOPING[i : i + 7] for i in range(0, len(LOOPING), 7)]
                try:
                    for piece in pieces:
                        self._send(piece)
                    for _ in range(3000):  # ~60 s: the test fails long before, unless the client left
                        self._send(", ")
                        model.left.wait(0.02)
                except OSError:  # the client closed the stream
                    model.left.set()

            def _send(self, text: str) -> None:
                chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]}
                data = f"data: {json.dumps(chunk)}\n\n".encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> LoopingModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def looping() -> Iterator[LoopingModel]:
    with LoopingModel() as model:
        yield model


def test_a_streamed_session_stops_the_model_at_the_repeat(looping: LoopingModel) -> None:
    with connect_http("llama-cpp-python:m", base_url=looping.base_url) as client:
        events = list(client.session(tools=[AREA], tool_mode="constrained").send_streaming_sync("Areas?"))
    assert [(e.index, e.name, json.loads(e.arguments_delta)) for e in events if isinstance(e, ToolCallDelta)] == [
        (0, "triangle_area", FIRST["arguments"]),
        (1, "triangle_area", SECOND["arguments"]),
    ]
    done = events[-1]
    assert isinstance(done, Done) and [c.arguments for c in done.response.tool_calls] == [
        FIRST["arguments"],
        SECOND["arguments"],
    ]
    assert done.response.tool_calls[0].metadata["constrained"] == {"parsed": True}
    assert looping.left.wait(30), "the model's stream was never closed"


def test_a_gateway_client_streaming_through_a_constrained_route_gets_the_calls_before_the_repeat(
    looping: LoopingModel,
) -> None:
    route = Route("small", "llama-cpp-python:m", base_url=looping.base_url, tool_mode="constrained")
    body = {
        "model": "small",
        "stream": True,
        "messages": [{"role": "user", "content": "Areas?"}],
        "tools": [{"type": "function", "function": {"name": AREA.name, "parameters": AREA.parameters}}],
    }
    with Gateway(create_app([route])) as gateway:
        answer = httpx2.post(gateway.url + "/v1/chat/completions", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    chunks = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: {")]
    called = [c for chunk in chunks for choice in chunk["choices"] for c in choice["delta"].get("tool_calls", [])]
    arguments: dict[int, str] = {}
    for call in called:
        arguments[call["index"]] = arguments.get(call["index"], "") + call["function"].get("arguments", "")
    assert {index: json.loads(text) for index, text in arguments.items()} == {
        0: FIRST["arguments"],
        1: SECOND["arguments"],
    }
    assert chunks[-1]["choices"] == [] or chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert looping.left.wait(30), "the model's stream was never closed"
    assert looping.requests[0]["stream"] is True


def test_toolwire_eval_streamed_scores_the_calls_before_the_repeat_and_keeps_the_text_as_written(
    looping: LoopingModel,
) -> None:
    function = {"name": AREA.name, "description": AREA.description, "parameters": {**AREA.parameters, "type": "dict"}}
    answer = [{AREA.name: {"base": [3], "label": [FIRST["arguments"]["label"]]}}, {AREA.name: {"base": [4]}}]
    case = BfclCase("parallel_0", "parallel", [UserMessage(content="Areas?")], [function], [AREA], answer)
    with connect_http("llama-cpp-python:m", base_url=looping.base_url) as client:
        result = client.run_sync(run_case(client, case, "constrained", RequestOptions(stream=True)))
    assert (result.correct, result.parsed, result.valid_calls, result.error) == (True, True, 2, "")
    assert result.calls == [{AREA.name: FIRST["arguments"]}, {AREA.name: SECOND["arguments"]}]
    assert result.text == LOOPING  # what the model wrote, up to the end of the repeat
    assert result.notes == ["the model began to repeat a call; the list ends before the repeat"]
    assert looping.left.wait(30), "the model's stream was never closed"
