"""Keep credentials out of error text: what a key can show up as, and its removal from an error.

The transport scrubs every error it raises with the values its headers carry; the client does
the same for errors its codec raises. Imports only `toolwire.errors` and the standard library.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any, TypeVar

from toolwire.errors import ToolwireError

__all__ = ["credential_parts", "scrub_error"]

_E = TypeVar("_E", bound=ToolwireError)

_SHORT_SECRET = 6
"""Shorter values are not redacted: no provider issues such keys, and replacing `a` or `test`
everywhere would mangle the very message meant to help (dummy keys for local servers are short)."""


def _redact(value: Any, secrets: Iterable[str]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            if len(secret) >= _SHORT_SECRET:
                value = value.replace(secret, "[redacted]")
        return value
    if isinstance(value, dict):
        return {k: _redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, secrets) for v in value]
    return value


def credential_parts(value: str) -> list[str]:
    """What a credential header value can show up as in a provider's error text.

    Providers echo the bare token ("Incorrect API key provided: TOK"), not `Bearer TOK`, and a
    `Basic` value is base64 of `user:password`: each of those parts is scrubbed too.
    """
    parts = [value]
    scheme, _, token = value.strip().partition(" ")
    token = token.strip()
    if not token:
        return parts
    parts.append(token)
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(token, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return parts
        parts.append(decoded)
        parts.extend(part for part in decoded.split(":", 1)[1:] if part)
    return parts


def scrub_error(error: _E, secrets: Iterable[str]) -> _E:
    """Remove every secret from an error's message, args and body, in place; returns it."""
    secrets = [s for s in secrets if s]
    if secrets:
        error.message = _redact(error.message, secrets)
        error.args = tuple(_redact(a, secrets) for a in error.args)
        error.body = _redact(error.body, secrets)
    return error
