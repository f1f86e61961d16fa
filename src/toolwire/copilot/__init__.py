"""GitHub Copilot CLI as a model backend: JSON-RPC to a child `copilot --headless` process.

`connect_copilot(model, ...)` returns a `CopilotClient` with the same `complete`/`stream`/
`session()` interface as the HTTP clients, so `toolwire.Agent` runs on it unchanged. The CLI
runs its own agent loop; the client maps each of toolwire's turns onto it (see
`toolwire.copilot._client`). With `provider=CopilotProvider(...)` (bring your own key) the
CLI calls your own model endpoint and needs no GitHub sign-in. The protocol facts here were
read off the CLI (1.0.102) and its SDKs, and `toolwire.testing.fake_copilot` replays them. This
package sits at the edge layer: it imports the client and runtime layers only.
"""

from __future__ import annotations

from toolwire.copilot._byok import BYOK_TYPES, CopilotProvider
from toolwire.copilot._client import CONNECTION_TOKEN_ENV, CopilotClient, connect_copilot
from toolwire.copilot._framing import FrameDecoder, encode_frame
from toolwire.copilot._process import CliCommand, resolve_cli
from toolwire.copilot._rpc import CopilotAuthenticationError, CopilotRpcError

__all__ = [
    "BYOK_TYPES",
    "CONNECTION_TOKEN_ENV",
    "CliCommand",
    "CopilotAuthenticationError",
    "CopilotClient",
    "CopilotProvider",
    "CopilotRpcError",
    "FrameDecoder",
    "connect_copilot",
    "encode_frame",
    "resolve_cli",
]
