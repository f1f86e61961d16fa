"""Test doubles toolwire ships: a loopback HTTP server and an in-process scripted model.

- `ScriptedServer`: a real HTTP server on 127.0.0.1 speaking the openai, openai-responses,
  anthropic, gemini, ollama and bedrock wire protocols (streaming included), replaying a script of
  turns and recording every request. Point any client at `server.base_url`.
- `ScriptedModel`: the same client interface with no socket and no codec round trip.
- Turns: a `Response` (see `reply`), a `str`, `ErrorReply`, `DropStream`, `Delay`,
  `RawReply`, or a callable of the decoded `Request`.
- `toolwire.testing.fixtures`: pytest fixtures (`scripted_server`) to import in a conftest.
"""

from __future__ import annotations

from toolwire.testing._model import ScriptedModel
from toolwire.testing._script import Delay, DropStream, ErrorReply, RawReply, Turn, reply, stream_events
from toolwire.testing._server import RecordedRequest, ScriptedServer

__all__ = [
    "Delay",
    "DropStream",
    "ErrorReply",
    "RawReply",
    "RecordedRequest",
    "ScriptedModel",
    "ScriptedServer",
    "Turn",
    "reply",
    "stream_events",
]
