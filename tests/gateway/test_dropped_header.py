"""`x-toolwire-dropped` names only what did not reach the upstream."""

from __future__ import annotations

import httpx2
import pytest

from tests.gateway.conftest import Gateway
from toolwire.gateway import Route, create_app
from toolwire.testing import ScriptedServer


def test_max_tokens_spelled_the_old_way_is_sent_not_named_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_TEST_DROPPED_KEY", "k")
    body = {"model": "m", "max_tokens": 77, "seed": 5, "messages": [{"role": "user", "content": "hi"}]}
    with ScriptedServer(["fine"]) as upstream:
        route = Route("*", "anthropic:up", base_url=upstream.base_url, api_key_env="TOOLWIRE_TEST_DROPPED_KEY")
        with Gateway(create_app([route])) as gateway:
            answer = httpx2.post(gateway.url + "/v1/chat/completions", json=body, timeout=30)
    sent = upstream.requests[0].body
    assert answer.status_code == 200 and sent["max_tokens"] == 77 and "seed" not in sent
    assert answer.headers["x-toolwire-dropped"] == "anthropic:seed"  # Anthropic has no seed; max_tokens went
