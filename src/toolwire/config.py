"""The CLI's settings file, `toolwire.toml`: where it is found, what it may hold, how it is checked.

Where: `./toolwire.toml` (the current directory) if it exists, else
`$XDG_CONFIG_HOME/toolwire/toolwire.toml` (`~/.config/toolwire/toolwire.toml` when
`XDG_CONFIG_HOME` is unset). Only the first file found is read; files are never merged.

```toml
[provider]
name = "vllm"                          # a provider of `toolwire.client.PROVIDERS`, or `scripted`
model = "Qwen/Qwen3-8B"
base_url = "http://localhost:8000/v1"
api_key_env = "MY_VLLM_KEY"            # the variable holding the key (default: the provider's own)
# name = "copilot" only: the GitHub Copilot CLI as the agent runtime. With base_url (or
# copilot_byok) it calls your own model endpoint (bring your own key) instead of GitHub's.
# copilot_byok = "openai"               # openai (and compatible servers) | azure | anthropic
# copilot_wire_api = "completions"      # completions | responses (openai, azure)
# copilot_record = "copilot.jsonl"      # append the JSON-RPC traffic here (secrets redacted)

[agent]
max_tool_turns = 10
tool_mode = "auto"                     # native | text | auto | constrained
output_budget_chars = 40000
system_prompt = "You are a careful coding agent."

[[route]]                              # for `toolwire serve`; first matching route wins
model = "claude-*"                     # the model a client asks for (fnmatch pattern)
target = "vllm:Qwen/Qwen3-8B"          # provider:model, as connect() takes it
base_url = "http://localhost:8000/v1"  # optional
api_key_env = "VLLM_KEY"               # optional
tool_mode = "auto"                     # native (default) | text | auto | constrained

[[route]]                              # several upstreams behind one model name
model = "*"
strategy = "fallback"                  # in order, the next on 429/5xx/timeout (or "balance")
cooldown = 30                          # seconds a failing target rests (Retry-After wins)
[[route.targets]]
target = "openai-compatible:qwen3"
base_url = "http://127.0.0.1:8000/v1"
[[route.targets]]
target = "anthropic:claude-sonnet-4-5"
weight = 1                             # balance: share of the traffic

[[mcp]]                                # tools from an MCP server run as a child process...
name = "fs"                            # optional: prefixes its tool names when they clash
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { LOG_LEVEL = "warn" }           # optional

[[mcp]]                                # ...or reached over streamable HTTP
url = "http://127.0.0.1:8000/mcp"
headers = { Authorization = "Bearer ..." }
```

Order, highest first: command-line flags, then this file, then built-in defaults. The
environment supplies only API keys (through `api_key_env` or the provider's standard
variable, e.g. `OPENAI_API_KEY`); it never overrides a flag or a setting of this file.
Unknown sections or keys and values of the wrong type raise `ConfigError` naming the key and
the file. Imports only the standard library.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypeVar

from toolwire.routes import STRATEGIES, RouteSettings, TargetSettings

__all__ = [
    "CONFIG_NAME",
    "AgentSettings",
    "Config",
    "ConfigError",
    "McpServerSettings",
    "ProviderSettings",
    "RouteSettings",
    "TargetSettings",
    "ToolMode",
    "find_config",
    "load_config",
]

CONFIG_NAME = "toolwire.toml"

ToolMode: TypeAlias = Literal["native", "text", "auto", "constrained"]
"""The agent's tool modes (the same as `toolwire.agent.ToolMode`, without importing the agent)."""
TOOL_MODES: tuple[ToolMode, ...] = ("native", "text", "auto", "constrained")


class ConfigError(ValueError):
    """A settings file that cannot be used: not TOML, an unknown key, or a value of the wrong type."""


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """The `[provider]` section: which model server to talk to (`None` = not set)."""

    name: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    copilot_byok: str | None = None
    copilot_wire_api: str | None = None
    copilot_record: str | None = None


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """The `[agent]` section, with the built-in defaults."""

    max_tool_turns: int = 10
    tool_mode: ToolMode = "auto"
    output_budget_chars: int | None = None
    system_prompt: str | None = None


@dataclass(frozen=True, slots=True)
class McpServerSettings:
    """One `[[mcp]]` table: an MCP server whose tools the agent gets (`command` or `url`, not both)."""

    name: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Config:
    """Everything a settings file says; `path` is the file read (`None` when none was found)."""

    provider: ProviderSettings = field(default_factory=ProviderSettings)
    agent: AgentSettings = field(default_factory=AgentSettings)
    path: Path | None = None
    routes: tuple[RouteSettings, ...] = ()
    mcp: tuple[McpServerSettings, ...] = ()


def find_config(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """The settings file to read: `./toolwire.toml`, else the one in the user's config folder."""
    env = os.environ if env is None else env
    local = (cwd or Path.cwd()) / CONFIG_NAME
    if local.is_file():
        return local
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    user = base / "toolwire" / CONFIG_NAME
    return user if user.is_file() else None


def load_config(path: Path | None = None, *, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Read `path`, or the file `find_config` finds; the defaults when there is none.

    Raises:
        ConfigError: When the file cannot be read, is not TOML, or holds an unknown key or a
            value of the wrong type.
    """
    if path is None:
        path = find_config(cwd, env)
        if path is None:
            return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read the settings file {str(path)!r}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError:
        raise ConfigError(f"The settings file {str(path)!r} is not UTF-8 text; save it as UTF-8.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"The settings file {str(path)!r} is not valid TOML: {exc}.") from None
    return _parse(data, path)


# checking


_Check = Callable[[Any], bool]


def _is_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _is_mode(value: Any) -> bool:
    return value in TOOL_MODES


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _one_of(*choices: str) -> tuple[_Check, str]:
    return (lambda value: value in choices), "one of " + ", ".join(repr(c) for c in choices)


_STR = (_is_str, "a non-empty string")
_MODE = (_is_mode, "one of " + ", ".join(repr(m) for m in TOOL_MODES))


def _is_positive_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _is_tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


_TARGET: dict[str, tuple[_Check, str]] = {
    "target": _STR,
    "base_url": _STR,
    "api_key_env": _STR,
    "tool_mode": _MODE,
    "weight": (_is_positive_number, "a number > 0"),
    "timeout": (_is_positive_number, "a number of seconds > 0"),
    "parallel": (_is_positive, "a whole number >= 1"),
}
_ROUTE: dict[str, tuple[_Check, str]] = {
    "model": _STR,
    "target": _STR,
    "base_url": _STR,
    "api_key_env": _STR,
    "tool_mode": _MODE,
    "timeout": (_is_positive_number, "a number of seconds > 0"),
    "strategy": _one_of(*STRATEGIES),
    "cooldown": (_is_positive_number, "a number of seconds > 0"),
    "targets": (_is_tables, "an array of tables ([[route.targets]])"),
    "parallel": (_is_positive, "a whole number >= 1"),
}
_INHERITED = ("tool_mode", "timeout", "parallel")
_SECTIONS: dict[str, dict[str, tuple[_Check, str]]] = {
    "provider": {
        "name": _STR,
        "model": _STR,
        "base_url": _STR,
        "api_key_env": _STR,
        "copilot_byok": _one_of("openai", "azure", "anthropic"),
        "copilot_wire_api": _one_of("completions", "responses"),
        "copilot_record": _STR,
    },
    "agent": {
        "max_tool_turns": (_is_count, "an integer >= 0"),
        "tool_mode": _MODE,
        "output_budget_chars": (_is_positive, "an integer >= 1"),
        "system_prompt": (_is_text, "a string"),
    },
}


def _parse(data: dict[str, Any], path: Path) -> Config:
    routes = tuple(_routes(data.pop("route", []), path))
    for name, value in data.items():
        if name == "mcp":
            continue
        if name not in _SECTIONS:
            known = ", ".join([*(f"[{s}]" for s in _SECTIONS), "[[route]]", "[[mcp]]"])
            raise ConfigError(f"Unknown key {name!r} in {str(path)!r}; the file has the sections {known}.")
        if not isinstance(value, dict):
            raise ConfigError(f"{name!r} in {str(path)!r} must be a section ([{name}]), got {_shown(value)}.")
    provider = _section(data, "provider", path)
    agent = _section(data, "agent", path)
    return Config(
        provider=ProviderSettings(**provider),
        agent=AgentSettings(**agent),
        path=path,
        routes=routes,
        mcp=_mcp_tables(data.get("mcp", []), path),
    )


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_string_table(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(item, str) for item in value.values())


_MCP_KEYS: dict[str, tuple[_Check, str]] = {
    "name": _STR,
    "command": _STR,
    "args": (_is_strings, "an array of strings"),
    "env": (_is_string_table, "a table of strings"),
    "url": _STR,
    "headers": (_is_string_table, "a table of strings"),
}


def _mcp_tables(tables: Any, path: Path) -> tuple[McpServerSettings, ...]:
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(f"'mcp' in {str(path)!r} must be tables written [[mcp]], got {_shown(tables)}.")
    return tuple(_mcp_table(table, index, path) for index, table in enumerate(tables, 1))


def _mcp_table(table: dict[str, Any], index: int, path: Path) -> McpServerSettings:
    where = f"[[mcp]] number {index} in {str(path)!r}"
    for key, value in table.items():
        if key not in _MCP_KEYS:
            raise ConfigError(f"Unknown key {key!r} in {where}; [[mcp]] may hold: {', '.join(_MCP_KEYS)}.")
        check, wanted = _MCP_KEYS[key]
        if not check(value):
            raise ConfigError(f"'mcp.{key}' in {where} must be {wanted}, got {_shown(value)}.")
    if ("command" in table) == ("url" in table):
        raise ConfigError(f"{where} needs either command (a server to run) or url (a server to reach), not both.")
    return McpServerSettings(
        name=table.get("name"),
        command=table.get("command"),
        args=tuple(table.get("args", ())),
        env=tuple(table.get("env", {}).items()),
        url=table.get("url"),
        headers=tuple(table.get("headers", {}).items()),
    )


def _routes(tables: Any, path: Path) -> list[RouteSettings]:
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(f"'route' in {str(path)!r} must be an array of tables ([[route]]), got {_shown(tables)}.")
    routes = []
    for number, table in enumerate(tables, 1):
        label, where = f"[[route]] {number}", f"[[route]] {number} in {str(path)!r}"
        _check_keys(table, _ROUTE, label, path)
        if "model" not in table:
            raise ConfigError(f"{where} needs model.")
        if "target" not in table and "targets" not in table:
            raise ConfigError(f"{where} needs target (or [[route.targets]] tables, for several upstreams).")
        if "target" in table and "targets" in table:
            raise ConfigError(f"{where} has both target and [[route.targets]]; keep one.")
        for name in ("base_url", "api_key_env"):
            if name in table and "targets" in table:
                raise ConfigError(f"{where}: {name} goes in each [[route.targets]] table of a route with targets.")
        targets = []
        for index, target in enumerate(table.get("targets", ()), 1):
            _check_keys(target, _TARGET, f"[[route.targets]] {index} of {label}", path)
            if "target" not in target:
                raise ConfigError(f"[[route.targets]] {index} of {where} needs target.")
            inherited = {k: table[k] for k in _INHERITED if k in table}  # the route's, unless the target says
            targets.append(_settings(TargetSettings, inherited | target, where))
        routes.append(_settings(RouteSettings, table | {"targets": tuple(targets)}, where))
    return routes


_S = TypeVar("_S", RouteSettings, TargetSettings)


def _settings(kind: type[_S], values: dict[str, Any], where: str) -> _S:
    """The settings, or a `ConfigError` naming the table for a value out of range (`weight = inf`)."""
    try:
        return kind(**values)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _check_keys(table: dict[str, Any], checks: dict[str, tuple[_Check, str]], label: str, path: Path) -> None:
    for key, value in table.items():
        if key not in checks:
            raise ConfigError(f"Unknown key {key!r} in {label} of {str(path)!r}; known: {', '.join(checks)}.")
        check, wanted = checks[key]
        if not check(value):
            raise ConfigError(f"'{key}' of {label} in {str(path)!r} must be {wanted}, got {_shown(value)}.")


def _section(data: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    checks = _SECTIONS[name]
    values: dict[str, Any] = data.get(name, {})
    for key, value in values.items():
        if key not in checks:
            known = ", ".join(checks)
            raise ConfigError(f"Unknown key '{name}.{key}' in {str(path)!r}; [{name}] may hold: {known}.")
        check, wanted = checks[key]
        if not check(value):
            raise ConfigError(f"'{name}.{key}' in {str(path)!r} must be {wanted}, got {_shown(value)}.")
    return dict(values)


def _shown(value: Any) -> str:
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array"}
    return f"{value!r} ({kind.get(type(value), 'a ' + type(value).__name__)})"
