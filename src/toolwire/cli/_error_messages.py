"""Error messages in the CLI's words: flags and `toolwire.toml` keys, not `connect()` arguments.

The library's messages tell a Python caller what to pass to `connect()`; a person at the
command line has flags, the settings file and environment variables instead. Each rule below
rewrites one such hint; a message without one passes through unchanged.
"""

from __future__ import annotations

import re

__all__ = ["in_cli_terms"]

_BASE_URL = "--base-url (or base_url in [provider] of toolwire.toml)"

_SET = r"set ([A-Z0-9_ or]+)\."  # "set OPENAI_API_KEY." / "set GEMINI_API_KEY or GOOGLE_API_KEY."
_GITHUB = "set COPILOT_GITHUB_TOKEN"

# (what the library says, what the CLI says instead); applied in order, all of them.
_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"pass api_key=\.\.\. to connect\(\) or " + _SET, r"set \1, or api_key_env in toolwire.toml."),
        (r"needs the '(\w+)' option; pass \w+=\.\.\. to connect\(\) or " + _SET, r"needs its \1: set \2."),
        (r"needs base_url=\.\.\.,", f"needs {_BASE_URL},"),
        (r"\bcheck base_url\b", f"check {_BASE_URL}"),
        (r"; raise timeout= or retry later\.", "; retry later."),
        (r"pass token=\.\.\. to connect\(\), or " + _GITHUB, f"{_GITHUB}, or use your own key with --base-url"),
        (r"pass token=\.\.\. to connect\(\)", _GITHUB),
        (r"pass cli_path=\.\.\. to connect\(\)", "set COPILOT_CLI_PATH to it"),
        (r"point cli_path=\.\.\. at", "point COPILOT_CLI_PATH at"),
        (r"raise timeout=\.\.\. (?:in connect\(\)|or check the CLI)", "check the Copilot CLI"),
    )
)


def in_cli_terms(message: str) -> str:
    """`message` with each `connect()`-argument hint replaced by the CLI's flag, key or variable."""
    for pattern, replacement in _RULES:
        message = pattern.sub(replacement, message)
    return message
