"""How long broken tool arguments take to repair: the linear `repair_json` against json-repair.

    .venv/bin/python -m bench.micro.argument_repair [--json-repair-max-kb 20]

One row per breakage and size; times are the median of 5 runs of `parse_arguments` (which tries
the linear repairer first) and, up to `--json-repair-max-kb`, of `json_repair.loads` alone
(what parse_arguments called before it had a repairer of its own; it is far from linear, so
larger sizes are left out). Every row checks that the repaired value is the one meant.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from bench.harness import median_ms
from toolwire.codecs.common.arguments import parse_arguments

SIZES_KB = (6, 20, 60)


def _content(size: int) -> str:
    line = 'for item in items: print("item", item)  # a tab\there\n'
    return (line * (size // len(line) + 1))[:size]


def _python_dict(size: int) -> tuple[str, dict[str, Any]]:
    content = _content(size)
    value = {"path": "a.py", "content": content, "overwrite": True, "mode": None}
    return repr(value)[:-1] + ",}", value  # single quotes, True/None, a trailing comma


def _raw_newlines(size: int) -> tuple[str, dict[str, Any]]:
    content = _content(size)
    return '{"path": "a.py", "content": "' + content.replace('"', '\\"') + '"}', {"path": "a.py", "content": content}


def _many_values(size: int) -> tuple[str, dict[str, Any]]:
    rows = [{"id": i, "ok": i % 2 == 0, "tag": None} for i in range(size // 34)]
    return repr({"rows": rows})[:-2] + ",],}", {"rows": rows}  # ~30 tokens a row: the densest case


BREAKAGES: dict[str, Callable[[int], tuple[str, dict[str, Any]]]] = {
    "python dict, 1 long string": _python_dict,
    "raw newlines in a string": _raw_newlines,
    "python dict, many values": _many_values,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json-repair-max-kb", type=int, default=20)
    args = parser.parse_args()
    import json_repair

    print("| breakage | size | parse_arguments ms | json_repair.loads ms |")
    print("|---|---|---|---|")
    for name, make in BREAKAGES.items():
        for kb in SIZES_KB:
            raw, expected = make(kb * 1000)
            assert parse_arguments(raw)[0] == expected, name
            ours = median_ms(lambda raw=raw: parse_arguments(raw))  # type: ignore[misc]
            theirs = "-"
            if kb <= args.json_repair_max_kb:
                theirs = f"{median_ms(lambda raw=raw: json_repair.loads(raw), runs=1):.1f}"  # type: ignore[misc]
            print(f"| {name} | {len(raw) / 1000:.0f} KB | {ours:.1f} | {theirs} |")


if __name__ == "__main__":
    main()
