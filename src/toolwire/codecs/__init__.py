"""Codecs: pure, synchronous translators between the neutral format and each wire format.

`get_codec(name)` loads a codec package on first use, so `import toolwire` stays light.
Each codec is a folder with the same rooms — `requests.py` (request bodies both ways),
`replies.py` (whole replies both ways), `stream_decoder.py`, `stream_encoder.py` — and an
`__init__.py` that assembles its `CODEC` object (a `Codec`) from them; a provider's extras get
a room named for what they are (`openai/profiles.py`, `gemini/partial_arguments.py`).
What every codec shares lives in `common/`. Codecs never import each other.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from toolwire.codecs.common.protocols import Codec, StreamDecoder, StreamEncoder
from toolwire.codecs.common.stream_encoding import WireEvent

__all__ = ["CODEC_NAMES", "Codec", "StreamDecoder", "StreamEncoder", "WireEvent", "get_codec", "guarded"]

_MODULES: dict[str, str] = {
    "anthropic": "toolwire.codecs.anthropic",
    "bedrock": "toolwire.codecs.bedrock",
    "gemini": "toolwire.codecs.gemini",
    "ollama": "toolwire.codecs.ollama",
    "openai": "toolwire.codecs.openai",
    "openai-responses": "toolwire.codecs.openai_responses",
}

CODEC_NAMES: tuple[str, ...] = tuple(sorted(_MODULES))


def get_codec(name: str) -> Codec:
    """Return the codec for a wire format: one of `CODEC_NAMES`."""
    if name not in _MODULES:
        raise ValueError(f"Unknown codec {name!r}; known codecs: {', '.join(CODEC_NAMES)}.")
    return _guarded_codec(name)


@functools.cache
def _guarded_codec(name: str) -> Codec:
    """One guarded codec per wire format: codecs keep no state, and a gateway asks per request."""
    return guarded(importlib.import_module(_MODULES[name]).CODEC)


def guarded(codec: Any) -> Codec:
    """`codec` behind the decoding boundary: bad input raises `CodecError` naming the field."""
    from toolwire.codecs.common.guard import GuardedCodec

    return GuardedCodec(codec, respelled=_respelled)


def _respelled(name: str) -> frozenset[str]:
    """The `extra` keys codec `name` keeps only to write a neutral field back as its caller spelled it.

    Another codec drops them without naming them: the value went in the neutral field.
    """
    module_name = _MODULES.get(name)
    codec = importlib.import_module(module_name).CODEC if module_name else None
    return frozenset(getattr(codec, "respelled", ()))
