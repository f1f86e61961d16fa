"""A loopback stand-in for GitHub's Copilot API, so the real Copilot CLI runs with no network.

`CopilotApiServer` is a `ScriptedServer` (the scripted turns answer the CLI's OpenAI-format
`POST /chat/completions`, streamed or not) that also answers what the CLI asks before a
model call (seen with CLI 1.0.102): `GET /copilot_internal/user` (the
signed-in user; its `endpoints.api` points back here), `GET /models` (one chat model with
tool calls and streaming), and 404 for anything else (team customizations, the GitHub MCP
server: both fail harmlessly). `cli_env()` gives the environment that points a CLI here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from toolwire.testing._script import Turn
from toolwire.testing._server import RecordedRequest, ScriptedServer, _Handler, _QuietServer

__all__ = ["CopilotApiServer"]


def _model_entry(model: str) -> dict[str, Any]:
    supports = {"tool_calls": True, "parallel_tool_calls": True, "streaming": True, "vision": False}
    limits = {"max_context_window_tokens": 128000, "max_output_tokens": 16000, "max_prompt_tokens": 100000}
    return {
        "id": model,
        "name": model,
        "object": "model",
        "vendor": "toolwire",
        "version": model,
        "preview": False,
        "model_picker_enabled": True,
        "capabilities": {
            "family": model,
            "type": "chat",
            "object": "model_capabilities",
            "supports": supports,
            "limits": limits,
        },
        "policy": {"state": "enabled", "terms": ""},
    }


class CopilotApiServer(ScriptedServer):
    """A `ScriptedServer` that also plays the Copilot API's user and model endpoints.

    Args:
        script: The model turns, one per `POST /chat/completions`.
        model: The one model `/models` lists (the CLI validates session models against it).

    Attributes:
        gets: Every GET the CLI made, in order (path, headers).
    """

    def __init__(self, script: Iterable[Turn] = (), *, model: str = "toolwire-test-model") -> None:
        super().__init__(script)
        self.model = model
        self.gets: list[RecordedRequest] = []

    def start(self) -> CopilotApiServer:
        """Start serving on a free port."""
        self._httpd = _QuietServer(("127.0.0.1", 0), _copilot_handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="toolwire-copilot-api", daemon=True
        )
        self._thread.start()
        return self

    def cli_env(self, token_env: str = "COPILOT_SDK_AUTH_TOKEN") -> dict[str, str]:
        """Variables that send a Copilot CLI here with a fake token, and nowhere else."""
        return {
            token_env: "toolwire-fake-token",
            "COPILOT_API_URL": self.base_url,
            "COPILOT_DEBUG_GITHUB_API_URL": self.base_url,
            "HTTP_PROXY": "http://127.0.0.1:9",
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }

    def answer_get(self, path: str) -> tuple[int, Any]:
        """The status and JSON body for a GET."""
        bare = path.split("?", 1)[0].rstrip("/")
        if bare.endswith("/copilot_internal/user"):
            return 200, {
                "login": "toolwire-test",
                "copilot_plan": "individual",
                "chat_enabled": True,
                "is_mcp_enabled": False,
                "endpoints": {"api": self.base_url, "proxy": self.base_url, "telemetry": self.base_url},
            }
        if bare.endswith("/models"):
            return 200, {"object": "list", "data": [_model_entry(self.model)]}
        return 404, {"message": "Not Found"}


def _copilot_handler(server: CopilotApiServer) -> type[_Handler]:
    class Handler(_CopilotHandler):
        owner = server

    return Handler


class _CopilotHandler(_Handler):
    owner: CopilotApiServer

    def do_GET(self) -> None:
        """Answer the CLI's user and model lookups."""
        record = RecordedRequest(path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, body=None)
        with self.owner._lock:
            self.owner.gets.append(record)
        status, body = self.owner.answer_get(self.path)
        self._send_json(status, body, {})
