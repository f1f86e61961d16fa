"""The offline scripted model: the CLI's built-in provider, and a gateway route target, with no key.

A `ScriptedServer` from `toolwire.testing` runs in-process on 127.0.0.1 and answers in one
wire protocol with a fixed plan. Offered toolwire's standard tools (the CLI's agent), it works
over a small demo folder: look around (parallel `glob` and `read`), write a summary (`write`,
high risk), search the code (`grep`), then answer. The plan restarts at every new prompt, so
`chat` works too. When the tools are described in the prompt instead (text mode) the same calls
are written as `TOOL_CALL:` lines for the text parser.

Offered other tools (a client of `toolwire serve`), it calls the first one with example
arguments built from its parameters, then answers with what the tool returned; asked without
tools, it answers in one line. Either way a client sees every step of a tool-calling loop
without a model.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from toolwire.textcalls import TOOL_CALL_PREFIX, example_arguments, result_text
from toolwire.types import (
    AssistantMessage,
    Message,
    Request,
    Response,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

if TYPE_CHECKING:
    from toolwire.client import Client

__all__ = ["SCRIPTED_MODEL", "SCRIPTED_PROVIDERS", "OfflineModel"]

SCRIPTED_MODEL = "offline-scripted"

SCRIPTED_PROVIDERS: dict[str, str] = {
    "scripted": "openai",
    "scripted-openai": "openai",
    "scripted-openai-responses": "openai-responses",
    "scripted-anthropic": "anthropic",
    "scripted-gemini": "gemini",
    "scripted-ollama": "ollama",
    "scripted-bedrock": "bedrock",
}
"""`scripted-<wire>` runs the offline model in one wire protocol: the provider whose paths and codec it speaks."""

_DEMO_TOOLS = frozenset({"glob", "read", "write", "grep"})

_DEMO_FILES = {
    "README.md": "# Demo project\n\nA tiny project for toolwire's offline demo.\n",
    "notes/todo.md": "# To do\n\n- [x] write the codecs\n- [ ] ship the CLI\n- [ ] record the demo\n",
    "src/app.py": 'def main() -> None:\n    # TODO: read the config file\n    print("hello")\n\n\n# TODO: add tests\n',
}
_TEXT_RESULT = re.compile(r"TOOL_RESULT \((?:result|error)\) for (\S+) \[[^\]]*\]:\n")


@dataclass(slots=True)
class _Output:
    name: str
    text: str


class OfflineModel:
    """The scripted server plus its demo folder, for as long as a CLI command (or a gateway route) runs.

    Args:
        provider: A key of `SCRIPTED_PROVIDERS`.
        keep_requests: Record every request (for `report`); batch runs keep only the count.
    """

    def __init__(self, provider: str, *, keep_requests: bool = True) -> None:
        from toolwire.testing import ScriptedServer

        self.wire = SCRIPTED_PROVIDERS[provider]
        self._folder = tempfile.TemporaryDirectory(prefix="toolwire-demo-")
        self.root = Path(self._folder.name)
        for name, text in _DEMO_FILES.items():
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).write_text(text, encoding="utf-8")
        self.server = ScriptedServer(self._respond, keep_requests=keep_requests)

    def __enter__(self) -> Self:
        self.server.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.stop()
        self._folder.cleanup()

    def connect(self, model: str = SCRIPTED_MODEL, **options: Any) -> Client:
        """A real HTTP client for the server, in this model's wire protocol (`connect_http` options)."""
        return self.server.connect(f"{self.wire}:{model}", **options)

    def describe(self) -> str:
        """One line saying plainly what this is."""
        return (
            f"offline scripted model (no network, no key): {self.wire} wire protocol over HTTP at "
            f"{self.server.base_url}, tools in the demo folder {self.root}"
        )

    def report(self) -> str:
        """What the server saw, to show that the loop really went over HTTP."""
        paths = sorted({r.path for r in self.server.requests})
        return f"the scripted server answered {len(self.server.requests)} HTTP requests (POST {', '.join(paths)})"

    def _respond(self, request: Request) -> Response:
        from toolwire.testing import reply

        prompt, step, outputs = _progress(request.messages)
        in_prompt = not request.tools and _tools_in_prompt(request)
        if _DEMO_TOOLS <= {t.name for t in request.tools} or (in_prompt and _demo_tools_in_prompt(request)):
            text, calls = _STEPS[min(step, len(_STEPS) - 1)](prompt, outputs)
        else:
            text, calls = _any_tools(prompt, outputs, request.tools)
        ids = [ToolCall(id=f"call_{len(request.messages)}_{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls)]
        if not in_prompt or not ids:
            return reply(text, ids)
        lines = [TOOL_CALL_PREFIX + json.dumps({"name": c.name, "args": c.arguments}) for c in ids]
        return reply("\n".join([text, *lines]))


def _tools_in_prompt(request: Request) -> bool:
    """Whether tools are described in the prompt (text mode), as the model would read them."""
    return any(TOOL_CALL_PREFIX in text for text in _prompt_texts(request))


def _demo_tools_in_prompt(request: Request) -> bool:
    """Whether the standard tools are among those the prompt describes (`- **glob(...)`)."""
    return all(any(f"**{name}(" in text for text in _prompt_texts(request)) for name in _DEMO_TOOLS)


def _prompt_texts(request: Request) -> list[str]:
    return [_user_text(m) for m in request.messages if isinstance(m, SystemMessage | UserMessage)]


def _progress(messages: list[Message]) -> tuple[str, int, list[_Output]]:
    """The latest prompt, how many model turns answered it so far, and the tool outputs since."""
    start = max((i for i, m in enumerate(messages) if _is_prompt(m)), default=-1)
    first = messages[start] if start >= 0 else None
    prompt = _user_text(first) if isinstance(first, UserMessage) else ""
    step, outputs = 0, []
    for message in messages[start + 1 :]:
        if isinstance(message, AssistantMessage):
            step += 1
        elif isinstance(message, ToolResult):
            outputs.append(_Output(message.name, result_text(message)))
        elif isinstance(message, UserMessage):
            outputs.extend(_text_results(_user_text(message)))
    return prompt, step, outputs


def _any_tools(prompt: str, outputs: list[_Output], tools: list[ToolDefinition]) -> _Plan:
    """A client's own tools: call the first once with example arguments, then say what it returned."""
    shown = prompt if len(prompt) <= 60 else prompt[:59] + "…"
    if outputs:
        said = outputs[-1].text if len(outputs[-1].text) <= 200 else outputs[-1].text[:199] + "…"
        return f"The offline scripted model called {outputs[-1].name}, which returned: {said}", []
    if not tools:
        return f"Hello from the offline scripted model (no model, no key). You said: {shown!r}", []
    tool = tools[0]
    text = f"I am the offline scripted model: I call {tool.name} with example arguments."
    return text, [(tool.name, example_arguments(tool))]


def _is_prompt(message: Message) -> bool:
    return isinstance(message, UserMessage) and not _user_text(message).startswith("TOOL_RESULT")


def _user_text(message: SystemMessage | UserMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(p.text for p in message.content if isinstance(p, TextPart))


def _text_results(text: str) -> list[_Output]:
    """Results sent back as plain text (text mode): `TOOL_RESULT (...) for name [id]:` blocks."""
    pieces = _TEXT_RESULT.split(text)
    return [_Output(pieces[i], pieces[i + 1].strip()) for i in range(1, len(pieces) - 1, 2)]


_Plan = tuple[str, list[tuple[str, dict[str, Any]]]]


def _look(prompt: str, outputs: list[_Output]) -> _Plan:
    shown = prompt if len(prompt) <= 40 else prompt[:39] + "…"
    asked = f" (you asked: {shown!r})" if prompt else ""
    text = f"I am the offline scripted model, so I follow a fixed plan{asked}. First, a look around."
    return text, [("glob", {"pattern": "**/*.md"}), ("read", {"path": "notes/todo.md"})]


def _summarize(prompt: str, outputs: list[_Output]) -> _Plan:
    read = next((o.text for o in outputs if o.name == "read"), "")
    items = [line.split("\t", 1)[-1] for line in read.splitlines() if "- [ ]" in line]
    content = "# Open items\n\n" + "".join(f"{item}\n" for item in items)
    text = f"The to-do list has {len(items)} open items; I will write them to SUMMARY.md."
    return text, [("write", {"path": "SUMMARY.md", "content": content})]


def _search(prompt: str, outputs: list[_Output]) -> _Plan:
    return "Now the TODO comments in the code.", [("grep", {"pattern": "TODO", "glob": "*.py"})]


def _answer(prompt: str, outputs: list[_Output]) -> _Plan:
    found = next((o.text for o in outputs if o.name == "grep"), "")
    hits = [line.split(": ", 1)[0] for line in found.splitlines() if ": " in line]
    wrote = next((o.text for o in outputs if o.name == "write"), "")
    summary = (
        "wrote SUMMARY.md" if wrote.startswith(("Created", "Overwrote")) else f"did not write SUMMARY.md ({wrote})"
    )
    where = ", ".join(hits) or "nowhere"
    return f"Done: I {summary} and found {len(hits)} TODO comments in the code ({where}).", []


_STEPS: tuple[Callable[[str, list[_Output]], _Plan], ...] = (_look, _summarize, _search, _answer)
