"""`toolwire eval bfcl` in constrained mode against the real model: every reply parses, every call is valid.

A real `toolwire eval` process on the plain `chatml` server (llama-cpp-python's profile sends
the reply schema as `response_format: {"type": "json_object", "schema": ...}`). The assertions
are on what constrained decoding promises (the reply parses, each call matches its tool's
schema), never on the 135M model's accuracy; the table goes to the test log (`-rA`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.llama_server import MODEL_NAME, LlamaServer

CATEGORIES = "simple_python,multiple,parallel,irrelevance"


def eval_constrained(server: LlamaServer, tmp_path: Path, *more: str) -> dict[str, Any]:
    out = tmp_path / ("bfcl-streamed.json" if more else "bfcl-whole.json")
    command = [
        *(sys.executable, "-m", "toolwire.cli", "eval", "bfcl", "--categories", CATEGORIES, "--limit", "2"),
        *("--provider", "llama-cpp-python", "--model", MODEL_NAME, "--base-url", server.base_url),
        *("--tool-mode", "constrained", "--max-tokens", "256", "--json", str(out), *more),
    ]
    env = dict(os.environ, NO_COLOR="1", XDG_CONFIG_HOME=str(tmp_path / ".no-user-config"))
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    print(done.stdout)
    assert done.returncode == 0, done.stderr + "\n" + server.log_tail()
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


def test_eval_bfcl_in_constrained_mode_parses_every_reply_and_every_call_is_valid(
    text_server: LlamaServer, tmp_path: Path
) -> None:
    whole, streamed = eval_constrained(text_server, tmp_path), eval_constrained(text_server, tmp_path, "--stream")
    for report in (whole, streamed):
        assert report["tool_mode"] == "constrained"
        failures = [(r["id"], r["error"], r["text"][:200]) for r in report["results"] if not r["parsed"]]
        assert failures == []
        rows = {s["category"]: s for s in report["summary"]}
        assert [(c, rows[c]["cases"], rows[c]["parsed"]) for c in CATEGORIES.split(",")] == [
            (c, 2, 2) for c in CATEGORIES.split(",")
        ]
        assert rows["overall"]["valid_calls"] == rows["overall"]["calls"]  # every call matches its tool's schema
    # Streamed, a model that repeats a call is stopped there: the same calls from a prefix of the same text.
    pairs = list(zip(whole["results"], streamed["results"], strict=True))
    assert [(w["id"], w["calls"]) for w, _ in pairs] == [(s["id"], s["calls"]) for _, s in pairs]
    assert [s["id"] for w, s in pairs if not w["text"].startswith(s["text"])] == []
    stopped = [s["id"] for w, s in pairs if len(s["text"]) < len(w["text"])]
    print(f"streamed replies stopped at a repeated call: {stopped}")
