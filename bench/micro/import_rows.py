"""Import: `python -I -c "import X"` in a fresh process, minus a bare interpreter start.

Each run is a new interpreter (nothing cached in memory; the OS file cache is warm after the
first, as it is for a user). The bare row is `python -I -c pass`; every other row shows its
time with the bare median subtracted.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from typing import Any

from bench.harness import RowSpec

MODULES = (
    ("toolwire", "toolwire", "toolwire"),
    ("toolwire.agent", "toolwire", "toolwire.agent"),  # what `Agent` costs: tools, Pydantic, the loop
    ("langchain_core", "peer", "langchain_core"),
    ("pydantic_ai", "peer", "pydantic_ai"),
    ("openai", "peer", "openai"),
    ("agents", "peer", "agents"),
    ("litellm", "peer", "litellm"),
)
REPS = {"bare": 15, "toolwire": 15, "toolwire.agent": 15, "litellm": 4}
DEFAULT_REPS = 7


def _spawn(code: str) -> Any:
    def make() -> tuple[Any, Any]:
        cwd = tempfile.gettempdir()

        def run(_: Any) -> None:
            proc = subprocess.run(
                [sys.executable, "-I", "-c", code], cwd=cwd, capture_output=True, text=True, check=False
            )
            if proc.returncode != 0:
                raise RuntimeError((proc.stderr.strip().splitlines() or ["failed"])[-1])

        return None, run

    return make


def rows() -> list[RowSpec]:
    out = [RowSpec("bare", "info", "`python -I -c pass` (raw time, not subtracted)", _spawn("pass"))]
    out += [
        RowSpec(name, kind, f"`python -I -c 'import {mod}'` \u2212 bare median", _spawn(f"import {mod}"))
        for name, kind, mod in MODULES
    ]
    return out
