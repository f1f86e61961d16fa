"""The README's providers table is the providers data, row for row.

Any row of `toolwire.providers.PROVIDERS` appears here however it was added; after adding one,
`python -m tests.test_readme_providers` writes the table into README.md again.
"""

from __future__ import annotations

import sys
from pathlib import Path

from toolwire.providers import PROVIDERS, Provider

README = Path(__file__).resolve().parents[1] / "README.md"
START, END = "<!-- providers table: start -->", "<!-- providers table: end -->"
_AUTH = {"bearer": "Bearer", "x-api-key": "x-api-key", "x-goog-api-key": "x-goog-api-key", "api-key": "api-key"}


def _address(provider: Provider) -> str:
    if provider.base_url_option is not None:
        env = " or ".join(provider.options[provider.base_url_option][0])
        return f"your {provider.base_url_option} (`{env}`)"
    return f"`{provider.base_url}`" if provider.base_url else "`base_url=` (required)"


def _key(provider: Provider) -> str:
    if provider.auth == "none" or not provider.key_env:
        return "none"
    if provider.auth == "aws":  # a Bedrock API key, else SigV4 from the AWS variables (the options)
        return f"`{provider.key_env[0]}` (Bearer), else AWS SigV4"
    optional = "" if provider.key_required else ", optional"
    shown = f"{' or '.join(f'`{v}`' for v in provider.key_env)} ({_AUTH.get(provider.auth, provider.auth)}{optional})"
    tokens = " or ".join(f"`{v}`" for v in provider.token_env)
    return f"{shown} or {tokens} (Bearer)" if tokens else shown


def _options(provider: Provider) -> str:
    shown = []
    for name, (env, default) in provider.options.items():
        if name == provider.base_url_option:
            continue
        fallback = f", default `{default}`" if default else ""
        shown.append(f"`{name}` (`{' or '.join(env)}`{fallback})")
    return ", ".join(shown)


def providers_table() -> str:
    """The Markdown table, one row per provider, in the data's order."""
    lines = [
        "| Provider | Wire format | Address | Key | Options | Notes |",
        "|---|---|---|---|---|---|",
    ]
    for p in PROVIDERS.values():
        lines.append(f"| `{p.name}` | {p.codec} | {_address(p)} | {_key(p)} | {_options(p)} | {p.notes} |")
    return "\n".join(lines)


def _with_table(text: str) -> str:
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{providers_table()}\n{END}{tail}"


def test_the_readme_table_is_the_providers_data() -> None:
    text = README.read_text(encoding="utf-8")
    assert START in text and END in text
    assert text == _with_table(text), "the README's providers table is stale: run python -m tests.test_readme_providers"


if __name__ == "__main__":
    README.write_text(_with_table(README.read_text(encoding="utf-8")), encoding="utf-8")
    sys.stdout.write(f"wrote {len(PROVIDERS)} providers into {README}\n")
