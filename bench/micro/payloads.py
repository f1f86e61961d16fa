"""The one shared payload module: every benchmark row (toolwire, floor and peers) uses these.

Deterministic (no randomness, no clock), pure stdlib, so the peers' interpreter can import it.

- `openai_request()`: a realistic OpenAI Chat Completions request body: 30 tools with nested
  JSON Schemas (enums, arrays of objects, optional fields, `$defs`/`$ref`), 60+ messages with
  20 assistant turns of 2 parallel calls each and their results (text, data, error, unicode).
- `openai_stream()`: 20,000 OpenAI `chat.completion.chunk` dicts: text, then 4 parallel calls
  whose arguments arrive in ~5-character fragments interleaved by index, then finish + usage.
- `text_corpus(size)`, `adversarial_text(size)`: inputs for the text-fallback parser.
- `cache_output(size)`: a large tool output (log-like lines) for the cache grep.
"""

from __future__ import annotations

import json
from typing import Any

MODEL = "gpt-4o-2024-08-06"
N_TOOLS = 30
N_TURNS = 20
STREAM_CHUNKS = 20_000
STREAM_CALLS = 4
FRAGMENT = 5

_VERBS = ("search", "read", "list", "create", "update", "delete", "get", "run", "summarize", "translate")
_NOUNS = ("files", "issues", "orders", "users", "events")


def _tool_names() -> list[str]:
    names = [f"{verb}_{noun}" for noun in _NOUNS for verb in _VERBS]
    return names[:N_TOOLS]


def _schema(i: int) -> dict[str, Any]:
    """A nested JSON Schema: enums, arrays of objects, optional fields, `$defs` with `$ref`."""
    return {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": f"What to look for (tool {i}); supports wildcards like *.py."},
            "mode": {"type": "string", "enum": ["fast", "thorough", "exhaustive"], "description": "Search depth."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50},
            "filters": {
                "type": "array",
                "description": "Conditions that must all hold.",
                "items": {"$ref": "#/$defs/Filter"},
            },
            "sort": {
                "type": "object",
                "properties": {
                    "field": {"type": "string", "enum": ["created", "updated", "name", "size"]},
                    "order": {"type": "string", "enum": ["asc", "desc"]},
                },
                "required": ["field"],
            },
            "owner": {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}], "description": "Optional owner."},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
            "dry_run": {"type": "boolean", "description": "Only report what would change."},
        },
        "required": ["query", "mode"],
        "$defs": {
            "Filter": {
                "type": "object",
                "properties": {
                    "field": {"type": "string"},
                    "op": {"type": "string", "enum": ["eq", "ne", "lt", "gt", "contains", "in"]},
                    "value": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "array", "items": {}}]},
                },
                "required": ["field", "op", "value"],
            },
            "Person": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "email": {"type": "string", "format": "email"},
                    "roles": {"type": "array", "items": {"type": "string", "enum": ["admin", "dev", "viewer"]}},
                },
                "required": ["name"],
            },
        },
    }


def tools() -> list[dict[str, Any]]:
    """30 OpenAI tool definitions."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": f"{name.replace('_', ' ').capitalize()} in the workspace. Returns JSON; "
                "errors come back as {'error': ...}.",
                "parameters": _schema(i),
            },
        }
        for i, name in enumerate(_tool_names())
    ]


def _arguments(turn: int, k: int) -> dict[str, Any]:
    return {
        "query": f"TODO in módulo_{turn}_{k} — naïve café ☕ {'日本語' if k else 'Ελληνικά'}",
        "mode": ("fast", "thorough", "exhaustive")[(turn + k) % 3],
        "limit": 10 + turn,
        "filters": [
            {"field": "path", "op": "contains", "value": f"src/{turn}"},
            {"field": "size", "op": "lt", "value": 4096},
        ],
        "sort": {"field": "updated", "order": "desc"},
        "tags": ["bench", f"t{turn}"],
    }


def _result_content(turn: int, k: int) -> str:
    kind = (turn * 2 + k) % 4
    if kind == 0:  # text
        return f"Found 3 matches in src/{turn}/main.py:\n  12: # TODO refactor\n  40: # TODO ünïcödé ✓\n  77: pass"
    if kind == 1:  # data
        return json.dumps(
            {"items": [{"id": turn * 10 + j, "name": f"item-{j}", "score": j / 3, "ok": j % 2 == 0} for j in range(4)]},
            ensure_ascii=False,
        )
    if kind == 2:  # error
        return json.dumps({"error": f"Permission denied for src/{turn}: ask an admin (код {turn})"}, ensure_ascii=False)
    return f"Résumé: 🚀 {turn} tâches terminées; 中文摘要：完成了{turn}项任务。"  # noqa: RUF001 - unicode on purpose


def messages() -> list[dict[str, Any]]:
    """System + user, then 20 assistant turns x 2 parallel calls with their results, then a final answer."""
    names = _tool_names()
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful coding agent. Use the tools; answer concisely."},
        {"role": "user", "content": "Audit the repository: find TODOs, open issues and failing orders, then report."},
    ]
    for turn in range(N_TURNS):
        calls = [
            {
                "id": f"call_{turn:02d}_{k}_aBcDeFgHiJkLmNoP",
                "type": "function",
                "function": {"name": names[(turn * 2 + k) % N_TOOLS], "arguments": json.dumps(_arguments(turn, k))},
            }
            for k in range(2)
        ]
        content = f"Checking step {turn + 1}." if turn % 3 == 0 else None
        out.append({"role": "assistant", "content": content, "tool_calls": calls})
        for k, call in enumerate(calls):
            out.append({"role": "tool", "tool_call_id": call["id"], "content": _result_content(turn, k)})
        if turn % 5 == 4:
            out.append({"role": "user", "content": f"Progress check {turn // 5 + 1}: keep going, focus on errors."})
    out.append({"role": "assistant", "content": "Audit done: 12 TODOs, 3 permission errors, 2 failing orders."})
    return out


def openai_request() -> dict[str, Any]:
    """The OpenAI Chat Completions request body every Convert row starts from."""
    return {
        "model": MODEL,
        "messages": messages(),
        "tools": tools(),
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "max_completion_tokens": 4096,
        "temperature": 0.2,
    }


def _stream_arguments(k: int, size: int) -> str:
    """A JSON arguments string of at least `size` characters for call `k` (nested, with unicode)."""
    filler = "lorem ipsum dolor sit amet ünïcödé "
    lines: list[dict[str, Any]] = []
    body: dict[str, Any] = {"path": f"src/pkg_{k}/módulo.py", "lines": lines, "note": "ok"}
    raw = json.dumps(body, ensure_ascii=False)
    while len(raw) < size:
        lines.extend({"n": n, "text": filler[n % 7 :] + str(n)} for n in range(len(lines), len(lines) + 64))
        raw = json.dumps(body, ensure_ascii=False)
    return raw


def _split(raw: str, pieces: int) -> list[str]:
    """`raw` in exactly `pieces` consecutive fragments of near-equal length."""
    bounds = [len(raw) * i // pieces for i in range(pieces + 1)]
    return [raw[bounds[i] : bounds[i + 1]] for i in range(pieces)]


def _stream_layout(chunks: int) -> tuple[int, list[int]]:
    """How many text chunks, and how many argument fragments per call, make `chunks` in total."""
    fixed = 1 + STREAM_CALLS + 2  # role, one header per call, finish, usage
    text = chunks // 10
    fragments = chunks - fixed - text
    return text, [fragments // STREAM_CALLS + (1 if k < fragments % STREAM_CALLS else 0) for k in range(STREAM_CALLS)]


def stream_arguments(chunks: int = STREAM_CHUNKS) -> list[str]:
    """The full argument strings of the stream's calls, to check every row's result."""
    _, counts = _stream_layout(chunks)
    return [_stream_arguments(k, n * FRAGMENT) for k, n in enumerate(counts)]


def stream_text(chunks: int = STREAM_CHUNKS) -> str:
    """The stream's full text."""
    text, _ = _stream_layout(chunks)
    return "".join(f"word{i} ünï " for i in range(text))


def openai_stream(chunks: int = STREAM_CHUNKS) -> list[dict[str, Any]]:
    """Exactly `chunks` chat.completion.chunk dicts: text, then 4 parallel calls interleaved by index, finish, usage."""
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": MODEL}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    text, counts = _stream_layout(chunks)
    names = _tool_names()
    fragments = [_split(raw, counts[k]) for k, raw in enumerate(stream_arguments(chunks))]
    out = [chunk({"role": "assistant", "content": ""})]
    out.extend(chunk({"content": f"word{i} ünï "}) for i in range(text))
    for k in range(STREAM_CALLS):
        call = {
            "index": k,
            "id": f"call_stream_{k}",
            "type": "function",
            "function": {"name": names[k], "arguments": ""},
        }
        out.append(chunk({"tool_calls": [call]}))
    for i in range(max(counts)):
        for k in range(STREAM_CALLS):
            if i < counts[k]:
                out.append(chunk({"tool_calls": [{"index": k, "function": {"arguments": fragments[k][i]}}]}))
    out.append(chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 1200, "completion_tokens": 9000, "total_tokens": 10200}
    out.append({**head, "choices": [], "usage": usage})
    return out


def openai_stream_with_nulls(chunks: int = STREAM_CHUNKS) -> list[dict[str, Any]]:
    """`openai_stream` as vLLM sends it: every delta and call key present, `null` where unused."""
    delta_keys = {"role": None, "content": None, "reasoning_content": None, "tool_calls": None, "function_call": None}
    out = []
    for chunk in openai_stream(chunks):
        choices = []
        for choice in chunk["choices"]:
            delta = delta_keys | choice["delta"]
            if delta["tool_calls"]:
                delta["tool_calls"] = [
                    {"id": None, "type": None, **call, "function": {"name": None, **call["function"]}}
                    for call in delta["tool_calls"]
                ]
            choices.append({**choice, "delta": delta, "logprobs": None})
        out.append({**chunk, "choices": choices, "usage": chunk.get("usage")})
    return out


_PROSE = (
    "The migration moved the billing service to the new queue; latency dropped by 40% and the "
    "error budget recovered. Next we look at caching {turn} and the retry policy.\n"
)
_CODE = (
    "```python\ndef handler(event, context):\n    items = [x for x in event['items'] if x]\n"
    "    return {'count': len(items), 'ok': True}\n```\n"
)
_CALLS = (
    'TOOL_CALL: {{"name": "search_files", "args": {{"query": "TODO {turn}", "mode": "fast"}}}}\n',
    '<tool_call>\n{{"name": "read_files", "arguments": {{"query": "src/{turn}.py", "mode": "thorough"}}}}\n'
    "</tool_call>\n",
    '[TOOL_CALLS][{{"name": "list_issues", "arguments": {{"query": "label:{turn}", "mode": "fast"}}}}]\n',
    '```json\n{{"name": "get_orders", "arguments": {{"query": "id:{turn}", "mode": "fast"}}}}\n```\n',
)


def text_corpus(size: int) -> str:
    """About `size` characters of prose, code and tool calls in several formats."""
    parts: list[str] = []
    total = 0
    turn = 0
    while total < size:
        block = _PROSE.format(turn=turn) + _CODE + _PROSE.format(turn=turn + 1) + _CALLS[turn % 4].format(turn=turn)
        parts.append(block)
        total += len(block)
        turn += 1
    return "".join(parts)[:size]


def adversarial_text(size: int) -> str:
    """Inputs that make naive parsers quadratic: unclosed braces, markers without calls, deep nesting."""
    unit = (
        "TOOL_CALL: {" * 3
        + '"name": "x", "args": {"a": [' * 4
        + "<tool_call>{{{{ [TOOL_CALLS][[[ "
        + '```json\n{"name": "x", '
        + "f(a=1, b=[" * 3
        + "\n"
    )
    return (unit * (size // len(unit) + 1))[:size]


def cache_output(size: int) -> str:
    """A tool output of about `size` characters: numbered log lines, a rare needle every 10,000 lines."""
    lines: list[str] = []
    total = 0
    n = 0
    while total < size:
        level = "ERROR needle-42 disk quota exceeded" if n % 10_000 == 5_000 else "INFO request served in 12ms"
        line = f"2024-05-01T12:{n % 60:02d}:{n % 60:02d}Z worker-{n % 8} {level} path=/api/v1/items/{n}"
        lines.append(line)
        total += len(line) + 1
        n += 1
    return "\n".join(lines)
