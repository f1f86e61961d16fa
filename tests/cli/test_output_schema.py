"""`toolwire run --output-schema FILE`: the answer validated against the schema, re-asked, printed as JSON."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import at, project, toolwire
from toolwire.testing import ScriptedServer

__all__ = ["project"]  # the fixture, used by name

SCHEMA = {
    "type": "object",
    "properties": {"file": {"type": "string"}, "lines": {"type": "integer"}},
    "required": ["file", "lines"],
}


def test_run_prints_the_validated_json_after_a_re_ask(project: Path) -> None:
    (project / "answer.schema.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    turns = ['{"file": "hello.txt", "lines": "one"}', '{"file": "hello.txt", "lines": 1}']
    with ScriptedServer(turns) as server:
        done = toolwire(
            "run", *at(server), "--output-schema", "answer.schema.json", "--no-stream", "count", "lines", cwd=project
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"file": "hello.txt", "lines": 1}
    first, second = (r.body for r in server.requests)
    assert first["response_format"]["json_schema"]["schema"]["required"] == ["file", "lines"]  # native, strict form
    assert second["messages"][-1] == {
        "role": "user",
        "content": "The answer does not validate:\nlines: 'one' is not of type 'integer'\n"
        "Answer again with the corrected JSON only.",
    }


def test_a_strategy_and_a_schema_that_is_not_one(project: Path) -> None:
    (project / "bad.json").write_text('{"type": "objekt"}', encoding="utf-8")
    with ScriptedServer(['{"file": "a", "lines": 2}']) as server:
        bad = toolwire("run", *at(server), "--output-schema", "bad.json", "hi", cwd=project)
        (project / "answer.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
        prompted = toolwire(
            "run", *at(server), "--output-schema", "answer.json", "--output-strategy", "prompted", "hi", cwd=project
        )
    assert bad.returncode == 2
    assert "The output schema is not a valid JSON Schema: 'objekt' is not valid" in bad.stderr
    assert (prompted.returncode, json.loads(prompted.stdout)) == (0, {"file": "a", "lines": 2})
    assert "response_format" not in server.requests[-1].body
    assert "matches this JSON Schema" in server.requests[-1].body["messages"][0]["content"]
