"""Shared by the tests of the request fields coding agents send (`test_*_request_fields.py`).

Each fixture there is a body as the newest official SDK types it (validated with them), decoded
and encoded again for the same provider (the same body back), and encoded for other providers
(what has no place there is dropped, and the log says so once, word for word).
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pydantic
import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming as BetaParams
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from openai.types.responses.response_input_item_param import ResponseInputItemParam

from tests.sdk_types import drain
from toolwire.codecs.anthropic import blocks as anthropic_blocks
from toolwire.codecs.common import guard
from toolwire.codecs.openai import requests as openai_requests
from toolwire.codecs.openai_responses import items as responses_items

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BASH_SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
EPHEMERAL = {"type": "ephemeral"}
# Module-level on purpose: pydantic-core panics when a lazy iterator outlives its adapter.
ANTHROPIC_PARAMS = pydantic.TypeAdapter(BetaParams)
RESPONSES_PARAMS = pydantic.TypeAdapter(ResponseCreateParamsNonStreaming)
RESPONSES_ITEM = pydantic.TypeAdapter(ResponseInputItemParam)
CHAT_PARAMS = pydantic.TypeAdapter(CompletionCreateParamsNonStreaming)


def load(provider: str, name: str) -> Any:
    return json.loads((FIXTURES / provider / name).read_text(encoding="utf-8"))


def check_anthropic_body(body: dict[str, Any]) -> None:
    """Valid for anthropic-sdk-python's beta `messages.create` (where `context_management` lives)."""
    drain(ANTHROPIC_PARAMS.validate_python(copy.deepcopy({k: v for k, v in body.items() if k != "stream"})))


def messages_of(records: list[logging.LogRecord]) -> list[str]:
    return [r.getMessage() for r in records if r.name.startswith("toolwire")]


@contextmanager
def fresh_warnings(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Every once-per-process warning shows again inside, whatever ran before."""
    sets = [anthropic_blocks.warned, responses_items.warned, guard._warned, openai_requests._warned]
    saved = [set(s) for s in sets]
    for s in sets:
        s.clear()
    caplog.set_level(logging.WARNING, logger="toolwire")
    try:
        yield
    finally:
        for s, old in zip(sets, saved, strict=True):
            s.clear()
            s.update(old)
