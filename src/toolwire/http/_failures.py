"""What a failed request becomes: the typed `toolwire.errors` error, with the provider's words and a fix.

`error_for_status` reads an error reply (OpenAI, Anthropic, Gemini and Ollama shapes);
`Failures` words the errors of one endpoint that are not a status (unreachable, too slow, a cut
stream, a passed deadline) and scrubs its secrets from them. Imports only `toolwire.errors`,
the http package's retry and secret modules, and the standard library (httpx2 inside a function).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from toolwire.errors import (
    AuthenticationError,
    BadRequestError,
    ProviderError,
    RateLimitError,
    StreamError,
    TimeoutError,
    ToolwireError,
)
from toolwire.http._retries import RETRY_STATUSES
from toolwire.http._secrets import scrub_error

__all__ = ["Failures", "error_for_status", "error_message", "request_id_from"]

_E = TypeVar("_E", bound=ToolwireError)

# Headers providers use for the id support staff ask for (OpenAI, Anthropic, Google, proxies).
_REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-goog-request-id", "x-amzn-requestid", "cf-ray")
_STATUS_ERRORS: dict[int, type[ToolwireError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: AuthenticationError,
    404: BadRequestError,
    422: BadRequestError,
    429: RateLimitError,
}
_HINTS: dict[type[ToolwireError], str] = {
    AuthenticationError: "check the API key or token and its permissions",
    RateLimitError: "slow down or raise max_retries",
    BadRequestError: "fix the request (model name, tools, parameters) before retrying",
    ProviderError: "the provider failed; retry later",
}


def error_message(body: Any, text: str) -> str:
    """The provider's own words from an error body (OpenAI, Anthropic, Gemini and Ollama shapes)."""
    if isinstance(body, list) and body:
        body = body[0]  # Gemini sometimes wraps its error object in a list
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, str):
            return error
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
        if isinstance(body.get("detail"), str):
            return str(body["detail"])
    return text.strip()[:500] or "no error message"


def request_id_from(headers: Mapping[str, str], body: Any = None) -> str | None:
    """The provider's request id, from the usual headers or an Anthropic-style body field."""
    named = {name.lower(): value for name, value in headers.items()}  # one pass: httpx2's `get` is one each
    for name in _REQUEST_ID_HEADERS:
        if value := named.get(name):
            return value
    if isinstance(body, dict) and isinstance(body.get("request_id"), str):
        return str(body["request_id"])
    return None


def error_for_status(
    status: int, body: Any, text: str, *, provider: str, request_id: str | None = None
) -> ToolwireError:
    """The typed error for an HTTP failure, with the provider's message and a hint how to fix it."""
    kind = _STATUS_ERRORS.get(status)
    if kind is None:
        kind = BadRequestError if 400 <= status < 500 and status not in RETRY_STATUSES else ProviderError
    message = f"{provider} answered HTTP {status}: {error_message(body, text)!r}; {_HINTS[kind]}."
    return kind(message, provider=provider, status=status, request_id=request_id, body=body)


def _url_of(exc: Exception) -> str | None:
    """The address a failed request went to, so the error names what to check."""
    try:
        return str(exc.request.url)  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # httpx raises RuntimeError when no request is attached
        return None


@dataclass(frozen=True, slots=True)
class Failures:
    """The errors of one endpoint that are not an error status, worded for its provider.

    Attributes:
        provider: The provider name the errors start with.
        secrets: Values scrubbed from an error's text (`scrub`).
        timeout: The transport's timeout, named when it passes.
        deadline: The transport's deadline, named when it passes.
    """

    provider: str
    secrets: tuple[str, ...]
    timeout: float | None
    deadline: float | None

    def scrub(self, error: _E) -> _E:
        """`error` with every secret removed from its text (in place)."""
        return scrub_error(error, self.secrets)

    def deadline_error(self) -> TimeoutError:
        """The request did not finish within `deadline` (scrubbed)."""
        return self.scrub(
            TimeoutError(
                f"{self.provider} did not finish within the deadline of {self.deadline:g}s; "
                "raise deadline= or ask for less.",
                provider=self.provider,
            )
        )

    def transport_error(self, exc: Exception) -> ToolwireError:
        """What an httpx2 exception means: too slow (`TimeoutError`) or not reached (`ProviderError`)."""
        import httpx2

        where = _url_of(exc)
        at = f" at {where}" if where else ""
        if isinstance(exc, httpx2.TimeoutException):
            return TimeoutError(
                f"{self.provider}{at} did not answer within {self.timeout}s ({type(exc).__name__}); "
                "raise timeout= or retry later.",
                provider=self.provider,
            )
        return ProviderError(
            f"Could not reach {self.provider}{at}: {type(exc).__name__}: {exc}; check base_url and the network.",
            provider=self.provider,
        )

    def stream_error(self, what: str) -> StreamError:
        """The stream `what` (was cut, stalled, ...): a `StreamError` saying to retry."""
        return StreamError(f"The {self.provider} stream {what}; retry the request.", provider=self.provider)
