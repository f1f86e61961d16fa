"""A stream decoder's fast path against its full path, on every short run of odd frames.

The fast paths (`checked_fast`) take plain dicts only: the same frames wrapped in `Unfast`, a dict
subclass, go the full way through the decoder and the codec boundary's checks.
"""

from __future__ import annotations

import itertools
from typing import Any

from toolwire.errors import CodecError

__all__ = ["runs_read_differently"]


class Unfast(dict):  # type: ignore[type-arg]
    """A frame the decoder reads on its full path."""


def _outcome(codec: Any, frames: list[dict[str, Any]]) -> tuple[list[Any], Any]:
    """Each frame's events (or error message), then the reply (or its error message)."""
    decoder = codec.stream_decoder()
    out: list[Any] = []
    for frame in frames:
        try:
            out.append(decoder.feed(frame))
        except CodecError as exc:
            out.append(exc.message)
    try:
        return out, decoder.finish()
    except CodecError as exc:
        return out, exc.message


def runs_read_differently(
    codec: Any, opening: list[dict[str, Any]], odd: list[dict[str, Any]], longest: int = 3
) -> list[tuple[dict[str, Any], ...]]:
    """The runs of up to `longest` odd frames after `opening` that the two paths read differently."""
    return [
        run
        for size in range(1, longest + 1)
        for run in itertools.product(odd, repeat=size)
        if _outcome(codec, [*opening, *run]) != _outcome(codec, [Unfast(f) for f in (*opening, *run)])
    ]
