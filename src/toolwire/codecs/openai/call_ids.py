"""Call ids as each OpenAI-compatible server accepts them, rewritten deterministically and mapped back.

OpenAI rejects ids over 40 characters (`string_above_max_length`); Mistral takes only exactly nine
letters and digits ("Tool call id was call_0fypS1hVX but must be a-z, A-Z, 0-9, with a length of
9"). A history made by another provider is rewritten the same way in calls and results, so they
still pair up; the mapping is kept so an id the server echoes reaches the caller as it wrote it.
"""

from __future__ import annotations

import hashlib
import re
import string
from typing import Literal

__all__ = ["CallIds"]

_ALNUM9 = re.compile(r"[a-zA-Z0-9]{9}")
_DIGITS = string.ascii_letters + string.digits
_REMEMBERED = 4096  # mappings kept per client: far more than one conversation's calls


def _digest(call_id: str) -> bytes:
    return hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).digest()


class CallIds:
    """One server's id rules: `wire` rewrites an id it would refuse, `original` maps it back."""

    def __init__(self, form: Literal["any", "alnum9"], max_length: int | None) -> None:
        self.form = form
        self.max_length = max_length
        self._originals: dict[str, str] = {}

    def wire(self, call_id: str) -> str:
        """The id as sent: unchanged when the server takes it, else a stable rewrite."""
        rewritten = self._rewrite(call_id)
        if rewritten != call_id:
            self._originals.pop(rewritten, None)
            self._originals[rewritten] = call_id
            if len(self._originals) > _REMEMBERED:
                del self._originals[next(iter(self._originals))]
        return rewritten

    def original(self, call_id: str) -> str:
        """The caller's id behind a rewritten one (any other id as it is)."""
        return self._originals.get(call_id, call_id)

    def _rewrite(self, call_id: str) -> str:
        if self.form == "alnum9":
            if _ALNUM9.fullmatch(call_id):
                return call_id
            number = int.from_bytes(_digest(call_id)[:8], "big")
            return "".join(_DIGITS[(number // len(_DIGITS) ** i) % len(_DIGITS)] for i in range(9))
        if self.max_length is None or len(call_id) <= self.max_length:
            return call_id
        return "call_" + _digest(call_id).hex()[: self.max_length - 5]
