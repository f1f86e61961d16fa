"""How far a choice between two recorded reply shapes could go: the ceiling of any selector.

    python3 -m bench.bfcl.ceiling [--list bench/bfcl/results/bfcl-constrained.json] [SHAPE.json ...]

Reads constrained mode's recorded run (the list shape, `modes.py`) and recorded shape runs
(`shapes.py`, default: every file in bench/bfcl/results/shapes/), and prints, per category both
cover, how many cases each got right and two oracles that know the answer:

- `either`: the case counts when the list or the shape got it right (a perfect per-case choice);
- `gated`: the list decides whether to call (its `[]` stands, so irrelevance keeps what the list
  gets), and where it called, the better of the two replies counts. This is the most any design
  that asks the shape again after the list's calls could reach.

No model runs: only the verdicts recorded in the files are read (standard library only).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in rows}


def ceilings(listed: dict[str, dict[str, Any]], shape: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per category the two runs share: cases, each run's right answers and the two oracles."""
    rows = []
    for category in dict.fromkeys(row["category"] for row in shape.values()):
        ids = [i for i, row in shape.items() if row["category"] == category and i in listed]
        rows.append(
            {
                "category": category,
                "cases": len(ids),
                "list": sum(listed[i]["correct"] for i in ids),
                "shape": sum(shape[i]["correct"] for i in ids),
                "either": sum(listed[i]["correct"] or shape[i]["correct"] for i in ids),
                "gated": sum(listed[i]["correct"] or (bool(listed[i]["calls"]) and shape[i]["correct"]) for i in ids),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", type=Path, default=HERE / "results" / "bfcl-constrained.json")
    parser.add_argument("shapes", type=Path, nargs="*")
    args = parser.parse_args()
    listed = _by_id(json.loads(args.list.read_text())["results"])
    shapes = args.shapes or sorted((HERE / "results" / "shapes").glob("*.json"))
    print("| shape | category | cases | list | shape | either (oracle) | gated by the list (oracle) |")
    print("|---|---|---|---|---|---|---|")
    for path in shapes:
        for row in ceilings(listed, _by_id(json.loads(path.read_text()))):
            values = " | ".join(str(row[k]) for k in ("cases", "list", "shape", "either", "gated"))
            print(f"| {path.parent.name}/{path.stem} | {row['category']} | {values} |")


if __name__ == "__main__":
    main()
