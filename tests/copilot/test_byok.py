"""Bring your own key, the connection token and the traffic record, against the fake CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.copilot._fake import Fake
from toolwire.copilot import CopilotProvider
from toolwire.copilot._record import REDACTED, redact


async def test_byok_sends_the_provider_and_needs_no_github_sign_in(fake: Fake) -> None:
    provider = CopilotProvider(base_url="http://127.0.0.1:8000/v1", api_key="sk-byok", wire_api="responses")
    scenario = {"authenticated": False, "sends": [[{"text": "From my own model."}]]}
    async with fake.client(scenario, provider=provider) as client:
        assert (await client.complete("hi")).text == "From my own model."
    assert "auth.getStatus" not in fake.methods()
    create = fake.received("session.create")[0]["params"]
    assert create["provider"] == {
        "type": "openai",
        "baseUrl": "http://127.0.0.1:8000/v1",
        "apiKey": "sk-byok",
        "wireApi": "responses",
    }


async def test_a_provider_given_through_session_options_skips_the_sign_in_check_too(fake: Fake) -> None:
    options = {"provider": {"type": "openai", "baseUrl": "http://127.0.0.1:8000/v1"}}
    async with fake.client({"authenticated": False, "sends": [[{"text": "ok"}]]}, session_options=options) as client:
        assert (await client.complete("hi")).text == "ok"
    assert "auth.getStatus" not in fake.methods()


async def test_byok_as_the_sdks_wire_mapping(fake: Fake) -> None:
    wire = {"type": "anthropic", "baseUrl": "https://api.anthropic.com", "apiKey": "k"}
    async with fake.client({"authenticated": False, "sends": [[{"text": "ok"}]]}, provider=wire) as client:
        assert (await client.complete("hi")).text == "ok"
    assert fake.received("session.create")[0]["params"]["provider"] == wire


def test_provider_wire_form_and_checks() -> None:
    azure = CopilotProvider(
        type="azure", base_url="https://r.openai.azure.com", bearer_token="t", azure_api_version="2025-04-01-preview"
    )
    assert azure.to_wire() == {
        "type": "azure",
        "baseUrl": "https://r.openai.azure.com",
        "bearerToken": "t",
        "azure": {"apiVersion": "2025-04-01-preview"},
    }
    assert "sk-secret" not in repr(CopilotProvider(base_url="u", api_key="sk-secret"))
    with pytest.raises(ValueError, match="Unknown Copilot provider type 'gemini'; use one of: openai, azure"):
        CopilotProvider(base_url="u", type="gemini")  # type: ignore[arg-type]
    from toolwire.copilot import connect_copilot

    with pytest.raises(ValueError, match=r"needs a 'baseUrl' string, got keys \['base_url'\]"):
        connect_copilot("m", cli_path=["copilot"], provider={"base_url": "u"})


async def test_the_connection_token_is_sent_when_the_cli_demands_one(fake: Fake) -> None:
    env = {"COPILOT_CONNECTION_TOKEN": "s3cret"}
    async with fake.client({"sends": [[{"text": "token ok"}]]}, env=env, transport="tcp") as client:
        assert (await client.complete("hi")).text == "token ok"
    assert fake.received("connect")[0]["params"] == {"token": "s3cret"}


async def test_the_connection_token_from_the_environment(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_CONNECTION_TOKEN", "from-env")
    async with fake.client({"sends": [[{"text": "ok"}]]}) as client:
        assert (await client.complete("hi")).text == "ok"
    assert fake.received("connect")[0]["params"] == {"token": "from-env"}
    # An empty value in env= unsets it for the CLI: no token is demanded, none is sent.
    async with fake.client({"sends": [[{"text": "ok"}]]}, env={"COPILOT_CONNECTION_TOKEN": ""}) as client:
        assert (await client.complete("hi")).text == "ok"
    assert fake.received("connect")[-1]["params"] == {}


async def test_the_traffic_record_holds_every_message_without_secrets(fake: Fake, tmp_path: Path) -> None:
    record = tmp_path / "copilot.jsonl"
    env = {"COPILOT_CONNECTION_TOKEN": "tok-123"}
    provider = CopilotProvider(base_url="http://127.0.0.1:1/v1", api_key="sk-456")
    async with fake.client({"sends": [[{"text": "recorded"}]]}, env=env, provider=provider, record=record) as client:
        assert (await client.complete("hi")).text == "recorded"
    text = record.read_text()
    assert "tok-123" not in text and "sk-456" not in text
    entries = [json.loads(line) for line in text.splitlines()]
    sent = [e["message"]["method"] for e in entries if e["dir"] == "out" and "method" in e["message"]]
    assert sent == ["connect", "session.create", "session.permissions.setApproveAll", "session.send", "session.destroy"]
    assert entries[0]["message"]["params"] == {"token": REDACTED}
    create = next(e["message"]["params"] for e in entries if e["message"].get("method") == "session.create")
    assert create["provider"] == {"type": "openai", "baseUrl": "http://127.0.0.1:1/v1", "apiKey": REDACTED}
    received = [e["message"] for e in entries if e["dir"] == "in"]
    assert any(m.get("method") == "session.event" for m in received) and all(
        isinstance(e["time"], float) for e in entries
    )


def test_redact_reaches_every_depth_and_keeps_the_rest() -> None:
    value = {"a": [{"token": "t", "b": 1}], "gitHubToken": "g", "apiKey": None, "c": "token"}
    assert redact(value) == {"a": [{"token": REDACTED, "b": 1}], "gitHubToken": REDACTED, "apiKey": None, "c": "token"}
