"""The gateway: an HTTP server that speaks every wire protocol toolwire has a codec for.

Clients (the official SDKs, Claude Code, Codex CLI, IDE plugins) keep their protocol; each
request is routed by the model it names (`[[route]]` tables of `toolwire.toml`) to any
upstream provider, and tools, calls, results and streams are translated exactly. Run it with
`toolwire serve`, or embed `create_app(config)` in any ASGI server.

Sits in the runtime layer: imports the client layer, the codecs and `toolwire.textcalls`,
plus starlette (the `serve` extra); nothing in toolwire's core imports it.
"""

from __future__ import annotations

from toolwire.gateway._app import KEYS_ENV, HasRoutes, create_app, gateway_keys
from toolwire.gateway._routing import Route, RouteConfigError, RouteLike, Router, RoutingError, Target

__all__ = [
    "KEYS_ENV",
    "HasRoutes",
    "Route",
    "RouteConfigError",
    "RouteLike",
    "Router",
    "RoutingError",
    "Target",
    "create_app",
    "gateway_keys",
]
