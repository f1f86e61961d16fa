"""Keep credentials out of error text and log lines: keys, and what a URL carries.

The transport scrubs every error it raises with the values its headers carry; the client does
the same for errors its codec raises. A URL's user and password and its query values are
credentials too (`http://admin:pw@host/v1?token=X`): `redact_urls` removes them from any text,
`scrub_error` from every error, and `SafeLogFormatter` from every log line, whose control
characters it escapes as well (a model name with a newline cannot forge a second line).
Imports only `toolwire.errors` and the standard library.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Iterable
from typing import Any, TypeVar

from toolwire.errors import ToolwireError

__all__ = ["SafeLogFormatter", "credential_parts", "redact_urls", "scrub_error"]

_E = TypeVar("_E", bound=ToolwireError)

_SHORT_SECRET = 6
"""Shorter values are not redacted: no provider issues such keys, and replacing `a` or `test`
everywhere would mangle the very message meant to help (dummy keys for local servers are short)."""


REDACTED = "[redacted]"
# scheme://[userinfo@]host/path[?query]: userinfo is what precedes the last @ before the path.
_URL = re.compile(
    r"""(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?:(?P<user>[^\s/?#@'"<>]*)@)?"""
    r"""(?P<rest>[^\s?#'"<>]*)(?:\?(?P<query>[^\s#'"<>]*))?"""
)
_QUERY_VALUE = re.compile(r"=[^&;]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _redact_url(found: re.Match[str]) -> str:
    user, query = found["user"], found["query"]
    out = found["scheme"] + (f"{REDACTED}@" if user is not None else "") + found["rest"]
    if query is not None:
        out += "?" + _QUERY_VALUE.sub("=" + REDACTED, query)
    return out


def redact_urls(text: str) -> str:
    """`text` with every URL's user, password and query values replaced by `[redacted]`.

    `http://admin:pw@host/v1?token=X` becomes `http://[redacted]@host/v1?token=[redacted]`: the
    host and path stay, so the message still says where a request went.
    """
    if "://" not in text:
        return text
    return _URL.sub(_redact_url, text)


class SafeLogFormatter(logging.Formatter):
    """A log formatter whose lines carry no URL credentials and no control characters.

    The message (its arguments included: a model name a client sent) has its URLs redacted and
    CR, LF, NUL and the other control characters escaped, so one record is one line whatever a
    client put in it; a traceback after it is left as Python wrote it, redacted too.
    """

    def formatMessage(self, record: logging.LogRecord) -> str:
        """The record's line, redacted and escaped."""
        record.message = _CONTROL.sub(_escaped, redact_urls(record.message))
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:
        """The traceback, with URL credentials redacted."""
        return redact_urls(super().formatException(ei))


def _escaped(found: re.Match[str]) -> str:
    return found[0].encode("unicode_escape").decode("ascii")


def _redact(value: Any, secrets: Iterable[str]) -> Any:
    if isinstance(value, str):
        value = redact_urls(value)
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
    """Remove every secret and every URL's credentials from an error's message, args and body, in place."""
    secrets = [s for s in secrets if s]
    error.message = _redact(error.message, secrets)
    error.args = tuple(_redact(a, secrets) for a in error.args)
    error.body = _redact(error.body, secrets)
    return error
