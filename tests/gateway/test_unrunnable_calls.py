"""Gateway clients never get a call they could not run: one cut short, or of a tool they never offered."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest

from tests.gateway.conftest import Gateway, routes_to
from toolwire.gateway import create_app
from toolwire.testing import ScriptedServer, reply

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
CALLS = {
    "text": (
        'TOOL_CALL: {"name": "delete_everything", "arguments": {"path": "/"}}',
        'TOOL_CALL: {"name": "write", "arguments": {"path": "out.txt", "content": "line1\\nli',
    ),
    "constrained": (
        '[{"name": "delete_everything", "arguments": {"path": "/"}}]',
        '[{"name": "write", "arguments": {"path": "out.txt", "content": "line1\\nli',
    ),
}


@pytest.fixture(scope="module", params=["text", "auto", "constrained"])
def gateway(request: pytest.FixtureRequest, upstream_key: str) -> Iterator[tuple[Gateway, ScriptedServer, str]]:
    mode = request.param
    with ScriptedServer() as upstream:
        app = create_app(routes_to({"openai": upstream}, tool_mode=mode), keys=[])
        with Gateway(app) as running:
            yield running, upstream, mode


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("which", [0, 1], ids=["unoffered", "cut"])
def test_the_call_reaches_the_client_as_text(
    gateway: tuple[Gateway, ScriptedServer, str], stream: bool, which: int
) -> None:
    running, upstream, mode = gateway
    upstream.add(reply(CALLS["constrained" if mode == "constrained" else "text"][which]))
    body = {"model": "to-openai", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS, "stream": stream}
    answer = httpx2.post(running.url + "/v1/chat/completions", json=body, timeout=30)
    assert answer.status_code == 200
    if stream:
        chunks = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: {")]
        deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
        calls = [d for d in deltas if d.get("tool_calls")]
        text = "".join(d.get("content") or "" for d in deltas)
        finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    else:
        message = answer.json()["choices"][0]
        calls, text, finish = (
            message["message"].get("tool_calls") or [],
            message["message"]["content"],
            [message["finish_reason"]],
        )
    name = "delete_everything" if which == 0 else "write"
    assert calls == []
    assert finish == ["stop"]
    assert f"[toolwire: a call of {name!r} was not passed on (" in text
