"""The offline scripted model: the CLI's built-in provider, and a gateway route target, with no key.

A `ScriptedServer` from `toolwire.testing` runs in-process on 127.0.0.1 and answers in one
wire protocol with a fixed plan. Offered toolwire's standard tools (the CLI's agent), it works
over a small demo folder: look around (parallel `glob` and `read`), write a summary (`write`,
high risk), search the code (`grep`), then answer. The plan restarts at every new prompt, so
`chat` works too. When the tools are described in the prompt instead (text mode) the same calls
are written as `TOOL_CALL:` lines for the text parser.

Offered other tools (a client of `toolwire serve`), it makes one round trip: it calls tools
with example arguments built from their parameters, then answers with what they returned (a
conversation that already holds results is answered, never called on again). Which tools: the
one `tool_choice` names; else those the prompt names (each once, in parallel, in the prompt's
order); else the first. How many calls: one per chosen tool, or `parallel` (cycling through
them); `parallel_tool_calls: false` makes it one. `tool_choice: "none"`, or no tools, gets a
one-line answer. A prompt that is one of its own example values (`"example"`: a sub-agent it
started with one of its calls, as Claude Code's `Agent` tool does) is answered, not called on,
so agents that nest conversations end too. Either way a client sees every step of a
tool-calling loop without a model.
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
    NamedToolChoice,
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
        parallel: Calls per turn for a client's own tools (default: one per tool chosen).

    Raises:
        ValueError: For a `parallel` below 1.
    """

    def __init__(self, provider: str, *, keep_requests: bool = True, parallel: int | None = None) -> None:
        from toolwire.testing import ScriptedServer

        if parallel is not None and parallel < 1:
            raise ValueError(f"parallel must be a whole number of calls >= 1, got {parallel!r}.")
        self.parallel = parallel
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
            text, calls = _any_tools(request, self.parallel)
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


def _any_tools(request: Request, parallel: int | None) -> _Plan:
    """A client's own tools: one round of calls with example arguments, then say what they returned.

    The prompt is the last text of the latest user message: agents put their own notes (Claude
    Code's `<system-reminder>` blocks) before what the user typed. Results anywhere in the
    conversation end it, so an agent's later notices get an answer, not another round.
    """
    prompt = _asked(request.messages)
    shown = prompt if len(prompt) <= 60 else prompt[:59] + "…"
    outputs = _progress([m for m in request.messages if not _is_prompt(m)])[2]  # the whole conversation's
    if outputs:
        said = "; ".join(_said(o) for o in outputs[-_MAX_SAID:])
        return f"The offline scripted model called {_names(outputs)}, which returned: {said}", []
    if not request.tools or request.tool_choice == "none":
        return f"Hello from the offline scripted model (no model, no key). You said: {shown!r}", []
    if prompt.strip() in _EXAMPLE_PROMPTS and not isinstance(request.tool_choice, NamedToolChoice):
        return "The offline scripted model answers its own example prompt without calling tools.", []
    tools = _chosen(prompt, request)
    count = 1 if request.parallel_tool_calls is False else parallel or len(tools)
    picked = [tools[i % len(tools)] for i in range(count)]
    text = f"I am the offline scripted model: I call {_names(picked)} with example arguments."
    return text, [(tool.name, example_arguments(tool)) for tool in picked]


_MAX_SAID = 8
_EXAMPLE_PROMPTS = frozenset({"example"})
"""What `example_arguments` puts in a string: a prompt that is one of these came from a call of ours."""


def _asked(messages: list[Message]) -> str:
    prompt = next((m for m in reversed(messages) if _is_prompt(m)), None)
    if not isinstance(prompt, UserMessage):
        return ""
    if isinstance(prompt.content, str):
        return prompt.content
    return next((p.text for p in reversed(prompt.content) if isinstance(p, TextPart) and p.text.strip()), "")


def _chosen(prompt: str, request: Request) -> list[ToolDefinition]:
    """The tool `tool_choice` names; else those the prompt names, in its order; else the first."""
    by_name = {tool.name: tool for tool in request.tools}
    if isinstance(request.tool_choice, NamedToolChoice) and request.tool_choice.name in by_name:
        return [by_name[request.tool_choice.name]]
    places = {name: m.start() for name in by_name if (m := re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", prompt))}
    return [by_name[name] for name in sorted(places, key=places.__getitem__)] or request.tools[:1]


def _names(items: list[_Output] | list[ToolDefinition]) -> str:
    names = list(dict.fromkeys(item.name for item in items))
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _said(output: _Output) -> str:
    return output.text if len(output.text) <= 200 else output.text[:199] + "…"


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
