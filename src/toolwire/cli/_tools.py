"""`toolwire tools`: the tools as one provider's codec sends them, and the text-mode prompt.

Never talks to a model server: it builds a client only to use its exact codec (and server
profile). MCP servers (`--mcp`, `[[mcp]]`) are started just long enough to list their tools.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console

from toolwire.cache import cache_tools
from toolwire.cli._mcp import STANDARD_NAMES, describe_tools, listed_tools, mcp_servers
from toolwire.cli._output import print_json
from toolwire.cli._settings import SCRIPTED_PROVIDERS, Settings
from toolwire.client import PROVIDERS, Client, connect_http
from toolwire.stdtools import standard_tools
from toolwire.textcalls import render_tool_prompt

__all__ = ["tools_command"]


def tools_command(settings: Settings, args: argparse.Namespace) -> int:
    """Print the standard tools as the provider's codec sends them, and the text-mode prompt."""
    servers = mcp_servers(settings)
    # A clipped MCP result points to the cache tools, so they come with any server (as `run` gives them).
    tools = [*standard_tools(), *(cache_tools() if settings.output_budget_chars or servers else [])]
    remote = listed_tools(servers, STANDARD_NAMES)
    definitions = [t.definition for t in [*tools, *remote]]
    client = _offline_client(settings)
    with_tools = client.codec.encode_request(client.build_request("", tools=definitions))
    without = client.codec.encode_request(client.build_request(""))
    part = {key: value for key, value in with_tools.items() if without.get(key) != value}
    prompt = render_tool_prompt(definitions)
    codec = client.codec.name
    if args.json:
        listing = {"provider": settings.provider, "codec": codec, "request": part, "prompt": prompt}
        print_json(Console(), listing | ({"mcp": describe_tools(remote)} if remote else {}))
        return 0
    out = sys.stdout
    out.write(f"# The tools as the {codec} codec sends them to {settings.provider} (request body keys)\n")
    out.write(json.dumps(part, indent=2, ensure_ascii=False) + "\n\n")
    out.write("# The fallback prompt (tool mode text): added to the system prompt instead of sending tools\n")
    out.write(prompt.rstrip("\n") + "\n")
    if remote:
        out.write("\n# Tools from MCP servers (risk: low = read-only, runs without review; high = reviewed)\n")
        out.writelines(f"{t['name']}  {t['risk']}  {t['description']}\n" for t in describe_tools(remote))
    return 0


def _offline_client(settings: Settings) -> Client:
    """A client that is never used to send: it gives the exact codec (and server profile)."""
    name = SCRIPTED_PROVIDERS.get(settings.provider, settings.provider)
    required: dict[str, Any] = {
        option: "example" for option, (_, default) in PROVIDERS[name].options.items() if default is None
    }
    return connect_http(
        f"{name}:{settings.model or 'example-model'}",
        api_key="unused",
        base_url=settings.base_url or "http://127.0.0.1:1",
        **required,
    )
