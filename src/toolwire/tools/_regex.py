"""Regular expressions that match in linear time (RE2), for tools that search what a model asks.

Python's `re` backtracks: `(a+)+$` on a line of a's then a b, or `a*a*...b`, takes seconds
and doubles with each character, in a thread nobody can stop. RE2 cannot do that, at the
price of backreferences and lookaround. Imports only the stdlib and `google-re2`.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["InvalidPattern", "LinearPattern", "compile_linear"]


class InvalidPattern(ValueError):
    """The pattern is not valid RE2 syntax; the message is RE2's reason."""


class LinearPattern(Protocol):
    """A compiled RE2 pattern over UTF-8 bytes."""

    def search(self, text: bytes) -> object | None:
        """The first match in `text`, or None."""
        ...


def compile_linear(pattern: str) -> LinearPattern:
    """Compile `pattern` with RE2 for searching UTF-8 bytes; raises `InvalidPattern` with the reason."""
    import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

    options = re2.Options()
    options.log_errors = False  # its errors come back to the model, not to stderr
    try:
        compiled: LinearPattern = re2.compile(pattern.encode("utf-8", "surrogatepass"), options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise InvalidPattern(str(reason)) from None
    return compiled
