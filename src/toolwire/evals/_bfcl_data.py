"""The Berkeley Function Calling Leaderboard's questions and possible answers, as toolwire cases.

The data are the `bfcl-eval` package's own files (`bfcl_eval/data/BFCL_v4_<category>.json` and
`possible_answer/BFCL_v4_<category>.json`, one JSON object per line). Only the files are read:
install the package without its (large) dependencies, `pip install --no-deps bfcl-eval`.

BFCL documents functions in its own dialect (`"type": "dict"`, `"float"`, `"tuple"`, `"any"`)
and names them with dots (`math.factorial`), which no tool API accepts; a case carries both the
BFCL documents (for the checker) and `ToolDefinition`s in JSON Schema with API-safe names, plus
the map back. Java and JavaScript cases offer every parameter as a string, as BFCL offers them
(`toolwire.evals._bfcl_languages`). Only single-turn categories run here: the multi-turn, memory,
web-search and format-sensitivity ones need BFCL's own harness (state, tools that run, several
prompt formats). Imports only `toolwire.types`, its sibling `_bfcl_languages` and the standard library.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolwire.evals._bfcl_languages import language_of, string_typed
from toolwire.types import Message, SystemMessage, ToolDefinition, UserMessage

__all__ = [
    "CATEGORIES",
    "DEFAULT_CATEGORIES",
    "BfclCase",
    "BfclDataError",
    "bfcl_data_dir",
    "load_cases",
    "to_json_schema",
]

CATEGORIES = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)
"""Every single-turn BFCL category: what `load_cases` runs."""
DEFAULT_CATEGORIES = ("simple_python", "multiple", "parallel", "irrelevance")
"""The categories `toolwire eval` runs unless told: the bench's, one of each kind of answer."""
_ELSEWHERE = {
    "multi_turn": "multi-turn (several user turns against tools with state)",
    "memory": "multi-turn with a memory backend",
    "web_search": "multi-turn with a live web search",
    "format_sensitivity": "a study of prompt formats",
}
INSTALL_HINT = "pip install --no-deps bfcl-eval"
_VERSION = "BFCL_v4"
# BFCL's dialect -> JSON Schema types (bfcl-eval's constants/type_mappings.py says the same).
_TYPES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "any": "string",
    "list": "array",
    "bool": "boolean",
}
# Keys of BFCL documents that are not JSON Schema and mean nothing to a validator.
_NOT_SCHEMA = frozenset({"optional"})
_UNSAFE_NAME = re.compile(r"[^a-zA-Z0-9_-]")


class BfclDataError(Exception):
    """The BFCL data files are missing or unreadable; the message says how to install them."""


@dataclass(slots=True)
class BfclCase:
    """One question: what the model is asked, with which tools, and what answers are accepted."""

    id: str
    category: str
    messages: list[Message]
    functions: list[dict[str, Any]]
    tools: list[ToolDefinition]
    possible_answer: list[dict[str, Any]] = field(default_factory=list)

    def bfcl_name(self, tool_name: str) -> str:
        """The BFCL name of the tool the model called (`math_factorial` -> `math.factorial`)."""
        for function, tool in zip(self.functions, self.tools, strict=True):
            if tool.name == tool_name:
                return str(function["name"])
        return tool_name


def bfcl_data_dir() -> Path:
    """Where the installed `bfcl-eval` package keeps its data (found without importing it)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise BfclDataError(f"The BFCL data are not installed; install them with `{INSTALL_HINT}`.")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def load_cases(
    categories: Sequence[str], *, limit: int | None = None, data_dir: Path | None = None
) -> Iterator[BfclCase]:
    """The first `limit` cases of each category, in the files' order (the whole file without a limit)."""
    for category in categories:
        _check_category(category)
    root = data_dir or bfcl_data_dir()
    for category in categories:
        questions = _read_lines(root / f"{_VERSION}_{category}.json", category)[:limit]
        answers = _answers(root / "possible_answer" / f"{_VERSION}_{category}.json", category)
        for question in questions:
            yield _case(category, question, answers.get(question["id"], []))


def _check_category(category: str) -> None:
    kind = next((what for prefix, what in _ELSEWHERE.items() if category.startswith(prefix)), None)
    if kind is not None:
        raise BfclDataError(
            f"BFCL category {category!r} is {kind}, which toolwire eval does not run; it runs the "
            f"single-turn categories: {', '.join(CATEGORIES)} (BFCL's own harness runs the others)."
        )
    if category not in CATEGORIES:
        raise BfclDataError(f"Unknown BFCL category {category!r}; the categories are {', '.join(CATEGORIES)}.")


def _read_lines(path: Path, category: str) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        known = ", ".join(CATEGORIES)
        raise BfclDataError(
            f"No BFCL data for category {category!r} at {str(path)!r}; the categories are {known} "
            f"(data from `{INSTALL_HINT}`)."
        ) from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise BfclDataError(
                f"BFCL data file {str(path)!r} line {number} is not JSON ({exc}); reinstall it with `{INSTALL_HINT}`."
            ) from None
        if not isinstance(row, dict):
            raise BfclDataError(f"BFCL data file {str(path)!r} line {number} is not a JSON object; reinstall it.")
        rows.append(row)
    return rows


def _answers(path: Path, category: str) -> dict[str, list[dict[str, Any]]]:
    if "relevance" in category:
        return {}  # (ir)relevance has no answer file: no call (a call) is the answer
    return {line["id"]: line["ground_truth"] for line in _read_lines(path, category)}


def _case(category: str, question: Mapping[str, Any], answer: list[dict[str, Any]]) -> BfclCase:
    turn = question["question"][0]
    messages: list[Message] = [
        SystemMessage(content=m["content"]) if m["role"] == "system" else UserMessage(content=m["content"])
        for m in turn
    ]
    functions = list(question["function"])
    language = language_of(category)
    return BfclCase(
        id=question["id"],
        category=category,
        messages=messages,
        functions=functions,
        tools=[_tool(string_typed(function, language)) for function in functions],
        possible_answer=answer,
    )


def _tool(function: Mapping[str, Any]) -> ToolDefinition:
    return ToolDefinition(
        name=_UNSAFE_NAME.sub("_", function["name"])[:64],
        description=function.get("description"),
        parameters=to_json_schema(function["parameters"]),
    )


def to_json_schema(node: Any) -> Any:
    """A BFCL parameter document as JSON Schema (`dict` -> `object`, `float` -> `number`, ...)."""
    if isinstance(node, list):
        return [to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NOT_SCHEMA:
            continue
        if key == "type" and isinstance(value, str):
            out[key] = _TYPES.get(value, value)
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
            out[key] = to_json_schema(value)
        else:
            out[key] = value
    return out
