"""Real-model tests: every test here is marked `e2e` (run by `make e2e`, left out of `make test`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.llama_server import LlamaServer, llama_cpp_server, llama_cpp_skip_reason, llama_server, skip_reason

_HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in item.path.parents:
            item.add_marker(pytest.mark.e2e)


def _server(chat_format: str, factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    with llama_server(chat_format, factory.mktemp("llama-logs")) as server:
        yield server


@pytest.fixture(scope="session")
def native_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The server with `chatml-function-calling`: native tool calls."""
    yield from _server("chatml-function-calling", tmp_path_factory)


@pytest.fixture(scope="session")
def text_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The server with plain `chatml`, for text mode (`chatml-function-calling` HTML-escapes messages)."""
    yield from _server("chatml", tmp_path_factory)


@pytest.fixture(scope="session")
def llama_cpp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama.cpp's own llama-server with `--jinja` (provider and profile `llamacpp`)."""
    reason = llama_cpp_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    with llama_cpp_server(tmp_path_factory.mktemp("llama-cpp-logs")) as server:
        yield server
