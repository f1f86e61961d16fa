"""A mutation fuzzer for the codecs: fixture payloads, one field changed at a time.

Run in the suite (a fixed seed, a few thousand inputs per codec) and, longer, by `make fuzz`:

    .venv/bin/python -m tests.codecs._fuzz --count 200000

Every input must decode or raise `CodecError` (a `ProviderError` for error payloads); any
other exception is a bug and is printed with the input that caused it. `--reencode` also
hands what decoded to every codec's encoders, as the gateway does (a request to
`encode_request`; a reply to `encode_response`, `encode_stream` and, for a stream, its events
to `stream_encoder()`), and writes each body as the wire sends it (`dumps(...).encode()`):
that too must succeed or raise a `ToolwireError`.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import random
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolwire.codecs import CODEC_NAMES, get_codec
from toolwire.codecs.common.wire import dumps
from toolwire.errors import ToolwireError
from toolwire.types import Request, Response, StreamEvent

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

_ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    10**30,
    1.5,
    float("nan"),
    "",
    "x",
    "\ud800 lone surrogate",
    "[" * 1000,
    [],
    [1],
    [None],
    {},
    {"": None},
    {"type": []},
]


def seeds(codec: str) -> list[tuple[str, Any]]:
    """(kind, payload) pairs from the codec's fixtures: responses, stream events and requests."""
    folder = FIXTURES / codec
    found: list[tuple[str, Any]] = []
    for path in sorted(folder.glob("*.response.json")):
        found.append(("response", json.loads(path.read_text(encoding="utf-8"))))
    for path in sorted(folder.glob("*.request.json")):
        found.append(("request", json.loads(path.read_text(encoding="utf-8"))))
    for path in sorted(folder.glob("*.stream.jsonl")):
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        found.append(("stream", events))
    return found


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nodes(item, (*path, index))


def _deep(value: Any) -> Any:
    for _ in range(900):
        value = [value]
    return value


def mutate(payload: Any, rng: random.Random) -> Any:
    """A copy of `payload` with one node replaced, deleted or duplicated."""
    mutated = copy.deepcopy(payload)
    paths = list(_nodes(mutated))[1:]
    if not paths:
        return rng.choice(_ODD_VALUES)
    path = rng.choice(paths)
    parent = mutated
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    action = rng.random()
    if action < 0.15 and isinstance(parent, dict):
        del parent[key]
    elif action < 0.2:
        parent[key] = _deep(parent[key])
    elif action < 0.25 and isinstance(parent[key], str):
        parent[key] = parent[key] + "\ud800"
    else:
        parent[key] = rng.choice(_ODD_VALUES)
    return mutated


def decode(codec: str, kind: str, payload: Any) -> tuple[Request | Response, list[StreamEvent]]:
    """Feed one payload to the decoder of its kind; return what it decoded (and a stream's events)."""
    target = get_codec(codec)
    if kind == "response":
        return target.decode_response(payload), []
    if kind == "request":
        return target.decode_request(payload), []
    decoder = target.stream_decoder()
    events: list[StreamEvent] = []
    for event in payload if isinstance(payload, list) else [payload]:
        events.extend(decoder.feed(event))
    return decoder.finish(), events


def _send(body: Any) -> None:
    dumps(body).encode()  # what the gateway and the transport put on the wire


def reencode(decoded: Request | Response, events: list[StreamEvent]) -> None:
    """Encode a decoded value with every codec, as a gateway hands it on to any protocol."""
    for name in CODEC_NAMES:
        target = get_codec(name)
        if isinstance(decoded, Request):
            _send(target.encode_request(decoded))
            continue
        _send(target.encode_response(decoded))
        _send(target.encode_stream(decoded))
        encoder = target.stream_encoder("model", "resp_1")
        for event in events:
            for wire in encoder.feed(event):
                _send(wire.data)
        for wire in encoder.finish():
            _send(wire.data)


def _check(codec: str, kind: str, payload: Any, again: bool) -> str | None:
    try:
        decoded, events = decode(codec, kind, payload)
    except ToolwireError:
        return None
    except Exception as exc:
        return f"{codec} {kind}: {type(exc).__name__}: {exc} <- {json.dumps(payload, default=str)[:300]}"
    if not again:
        return None
    try:
        reencode(decoded, events)
    except ToolwireError:
        return None
    except Exception as exc:
        where = _where(exc)
        return (
            f"{codec} {kind} re-encoded: {type(exc).__name__} at {where}: {exc} <- "
            + json.dumps(payload, default=str)[:300]
        )
    return None


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "toolwire" in f.filename] or frames
    return f"{Path(own[-1].filename).name}:{own[-1].lineno}"


def run(codec: str, count: int, seed: int = 0, *, reencoded: bool = False) -> list[str]:
    """Decode `count` mutated payloads (and re-encode them); describe each undocumented exception."""
    rng = random.Random(f"{codec}-{seed}")
    pool = seeds(codec)
    failures: list[str] = []
    with warnings_shown_again():
        for _ in range(count):
            kind, payload = rng.choice(pool)
            if kind == "stream" and payload:
                index = rng.randrange(len(payload))
                payload = [*payload[:index], mutate(payload[index], rng), *payload[index + 1 :]]
            else:
                payload = mutate(payload, rng)
            if (failure := _check(codec, kind, payload, reencoded)) is not None:
                failures.append(failure)
    return failures


def _warned_sets() -> dict[int, set[str]]:
    """The once-per-process warning sets of toolwire's modules (`_warned`, `warned`)."""
    found: dict[int, set[str]] = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("toolwire."):
            for key in ("_warned", "warned"):
                value = getattr(module, key, None)
                if isinstance(value, set):
                    found[id(value)] = value
    return found


@contextlib.contextmanager
def warnings_shown_again() -> Iterator[None]:
    """What the fuzz warned about once is warned about again for the tests after it in this process."""
    before = {key: (value, set(value)) for key, value in _warned_sets().items()}
    try:
        yield
    finally:
        for key, value in _warned_sets().items():
            value.clear()
            value.update(before[key][1] if key in before else ())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=200_000, help="inputs per codec")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reencode", action="store_true", help="also encode what decoded with every codec")
    args = parser.parse_args()
    total = 0
    for codec in CODEC_NAMES:
        failures = run(codec, args.count, args.seed, reencoded=args.reencode)
        total += len(failures)
        print(f"{codec}: {args.count} inputs, {len(failures)} undocumented exceptions")
        for failure in failures[:10]:
            print("  " + failure)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
