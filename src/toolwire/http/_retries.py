"""When a failed request is sent again, and how long toolwire waits before it does.

`RetryPolicy` is the caller's setting; `Attempt` counts one request's retries against it and
the request's deadline; `parse_retry_after` reads the server's own wish. Which errors a retry
follows is the transport's choice (a status from `retryable`, a connection that failed before
any reply byte). Imports only the standard library.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "MAX_RETRY_AFTER",
    "RETRY_AFTER_CAP",
    "RETRY_STATUSES",
    "Attempt",
    "RetryPolicy",
    "parse_retry_after",
    "retry_after_text",
    "retryable",
]

logger = logging.getLogger("toolwire.transport")  # the name it had before the package: log settings name it

RETRY_STATUSES = frozenset({408, 409, 429})
"""The 4xx statuses worth retrying (a timeout, a conflict, a rate limit); every 5xx is too."""
MAX_RETRY_AFTER = 60.0  # a longer Retry-After is treated as "give up", not as a sleep
RETRY_AFTER_CAP = 600.0
"""The longest wait a `Retry-After` is read as: `1e12`, `inf` or a date next year mean ten minutes."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait before retrying a failed request.

    Attributes:
        max_retries: Retries after the first attempt (0 disables retrying).
        base_delay: The first backoff delay in seconds; doubled on each retry.
        max_delay: The cap on a backoff delay.
    """

    max_retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` (0-based), honouring the server's wish."""
        if retry_after is not None and 0 <= retry_after <= MAX_RETRY_AFTER:
            return retry_after
        backoff = min(self.max_delay, self.base_delay * 2.0**attempt)
        return backoff * (1 - 0.25 * random.random())  # jitter spreads clients that failed together


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Read `retry-after-ms` (OpenAI) or `Retry-After` (seconds or an HTTP date) in seconds, bounded.

    The one reader of a server's wish, for the transport's retries and the gateway's cool-downs
    alike. A wait past `RETRY_AFTER_CAP` (`1e12`, `inf`, `1e400`) is read as the cap; a wait of
    none (`0`, `-5`, `nan`, a date gone by) or an unreadable value as no wish (None): the
    caller's own backoff or cool-down applies, so no value turns it off or benches a target.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        seconds = _number(millis)
        if seconds is not None:
            return _bounded(seconds / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is None:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        seconds = when.timestamp() - time.time()
    return _bounded(seconds)


def retry_after_text(seconds: float | None) -> str | None:
    """A bounded wait as a `Retry-After` value a client reads: whole seconds, rounded up."""
    return None if seconds is None else str(max(1, math.ceil(seconds)))


def _number(value: str) -> float | None:
    try:
        return float(value.strip())
    except ValueError:
        return None


def _bounded(seconds: float) -> float | None:
    if math.isnan(seconds) or seconds <= 0:
        return None
    return min(seconds, RETRY_AFTER_CAP)


def retryable(status: int) -> bool:
    """Whether a reply with this error status is worth sending the request again for."""
    return status in RETRY_STATUSES or status >= 500


@dataclass(slots=True)
class Attempt:
    """Bookkeeping for one logical request across retries."""

    policy: RetryPolicy
    provider: str
    ends_at: float | None = None
    number: int = 0
    errors: list[str] = field(default_factory=list)

    async def wait(self, reason: str, retry_after: float | None = None) -> bool:
        """Sleep before the next retry; `False` when retries are exhausted or not worth waiting for.

        A `Retry-After` longer than `MAX_RETRY_AFTER` gives up at once: sleeping minutes inside
        one call helps nobody; the error carries the wait so the caller can schedule it. So does
        a wait that would end after the request's deadline: sleeping into a `TimeoutError` would
        lose the provider's error and its `retry_after`.
        """
        if self.number >= self.policy.max_retries:
            return False
        if retry_after is not None and retry_after > MAX_RETRY_AFTER:
            return False
        delay = self.policy.delay(self.number, retry_after)
        if self.ends_at is not None and time.monotonic() + delay >= self.ends_at:
            return False
        logger.info("toolwire: retrying %s request in %.2fs after %s", self.provider, delay, reason)
        self.number += 1
        await asyncio.sleep(delay)
        return True
