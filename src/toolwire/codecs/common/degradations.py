"""Degradations: a feature a provider lacks is said once per process, and per request to a proxy."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolwire.types import Request

__all__ = ["collect_degradations", "warn_missing_options", "warn_once"]


_DEGRADATIONS: ContextVar[list[str] | None] = ContextVar("toolwire_degradations", default=None)


@contextmanager
def collect_degradations() -> Iterator[list[str]]:
    """Collect the key of every degradation `warn_once` reports inside the block, repeats included.

    The log says it once per process; a proxy also needs it per request (the gateway names
    what it dropped in a response header), so the keys land in the yielded list too.
    """
    found: list[str] = []
    token = _DEGRADATIONS.set(found)
    try:
        yield found
    finally:
        _DEGRADATIONS.reset(token)


def warn_missing_options(
    logger: logging.Logger, seen: set[str], codec: str, request: Request, missing: tuple[str, ...]
) -> None:
    """Say once per option that `codec` has no place for a sampling option the request sets."""
    for option in missing:
        if getattr(request, option) is not None:
            message = f"{codec} has no {option!r} option; toolwire leaves it out of the request."
            warn_once(logger, seen, f"{codec}:{option}", message)


def warn_once(logger: logging.Logger, seen: set[str], key: str, message: str) -> None:
    """Log `message` as a warning the first time `key` is seen in `seen` (see `collect_degradations`)."""
    found = _DEGRADATIONS.get()
    if found is not None and key not in found:
        found.append(key)
    if key not in seen:
        seen.add(key)
        logger.warning(message)
