"""`chat.completion.chunk` streams read into neutral events, calls accumulated per index.

Targets openai-python 3.x `types/chat/chat_completion_chunk.py`, plus what OpenAI-compatible
servers (vLLM, llama.cpp, Ollama, Gemini's compat endpoint) really send.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from toolwire.codecs.common.accumulator import StreamAccumulator
from toolwire.codecs.common.ids import derived_call_id
from toolwire.codecs.common.wire import dumps, require_dict
from toolwire.codecs.openai.content_filter import FILTERED, filtered_categories, prompt_categories, reply_filter_error
from toolwire.codecs.openai.messages import (
    NAME,
    REASONING_FIELDS,
    REFUSAL,
    is_refusal,
)
from toolwire.codecs.openai.replies import build_response, decode_usage, optional_str, raise_if_error
from toolwire.types import (
    AssistantPart,
    Response,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkingPart,
    ToolCallDelta,
    Usage,
)

__all__ = ["OpenAIStreamDecoder"]


def _rank(part: AssistantPart) -> int:
    """Where a part sits in a decoded message: reasoning, text, refusal, calls."""
    if isinstance(part, ThinkingPart):
        return 0
    if isinstance(part, TextPart):
        return 2 if is_refusal(part) else 1
    return 3


def _same(call_id: str) -> str:
    return call_id


class OpenAIStreamDecoder:
    """Accumulates `chat.completion.chunk` objects; the client adds `Done(finish())` at `[DONE]`.

    Args:
        content_filter_errors: Raise `ContentFilterError` at a `content_filter` stop (Azure), naming
            the categories its filter-only chunks reported.
        original_id: Maps a call id the server sent back to the caller's own (rewritten ids).
        server: The server's name, for error messages.
    """

    def __init__(
        self, *, content_filter_errors: bool = False, original_id: Callable[[str], str] = _same, server: str = NAME
    ) -> None:
        self._content_filter_errors = content_filter_errors
        self._server = server
        self._original_id = original_id
        self._filtered: list[str] = []  # categories named by the stream's filter results so far
        self._acc = StreamAccumulator()
        self._head: dict[str, Any] = {}
        self._finish: Any = None
        self._usage: Usage | None = None
        self._calls = 0
        self._last_key: Hashable = None
        self._head_done = False  # id and model known: later chunks may take the fast path
        self._text: list[str] | None = None  # the live chunks of the text part, once it exists
        self._sinks: dict[Any, tuple[list[str], int]] = {}  # index -> live fragments of its current call

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Take one parsed chunk; an error chunk raises `ProviderError`."""
        fast = self._fast(event) if self._head_done else None
        return fast if fast is not None else self._feed(event)

    def checked_fast(self, event: dict[str, Any]) -> list[StreamEvent] | None:
        """`feed`'s fast path alone: events already checked (a string piece of the text or of a known call), or None."""
        return self._fast(event) if self._head_done else None

    def _fast(self, event: dict[str, Any]) -> list[StreamEvent] | None:
        """The two shapes nearly every chunk has: a text piece, or an argument fragment of a known call.

        Returns `None` for anything else (or anything unusual), which then takes the full path.
        """
        if event.__class__ is not dict:  # a mapping of another kind: the full path reads it
            return None
        try:
            (choice,) = event["choices"]
            delta = choice["delta"]
            # vLLM and others send every key, most of them null: count only the present ones.
            if choice["finish_reason"] is not None or _present(delta) != 1 or "error" in event or event.get("usage"):
                return None
            content = delta.get("content")
            if content is not None:
                if content.__class__ is not str or not content or self._text is None:
                    return None
                self._text.append(content)
                return [TextDelta(content)]
            (call,) = delta["tool_calls"]
            function = call["function"]
            if _present(call) != 2 or _present(function) != 1 or call.get("id") or function.get("name"):
                return None  # exactly `index` and `function: {arguments}`: no id, no name
            index, fragment = call["index"], function["arguments"]
            sink = self._sinks[index]
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        if fragment.__class__ is not str or not fragment:
            return None
        sink[0].append(fragment)
        self._last_key = index
        return [ToolCallDelta(sink[1], None, None, fragment)]

    def _feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        event = require_dict(event, NAME, "stream chunk")
        raise_if_error(event)
        for key in ("id", "model"):
            if not self._head.get(key):  # Azure's first chunk (prompt filter results only) has "" for both
                self._head[key] = event.get(key)
        self._head_done = bool(self._head["id"]) and bool(self._head["model"])
        if isinstance(event.get("usage"), dict):  # the last chunk (choices: []) with include_usage
            self._usage = decode_usage(event["usage"])
        self._filtered.extend(prompt_categories(event))
        choices = event.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return []  # Azure's prompt-filter chunk has `choices: []`
        choice = choices[0]
        self._filtered.extend(filtered_categories(choice.get("content_filter_results")))
        if choice.get("finish_reason") is not None:
            self._finish = choice["finish_reason"]
            if self._finish == FILTERED and self._content_filter_errors:
                raise reply_filter_error(self._server, list(dict.fromkeys(self._filtered)), event)
        delta = choice.get("delta")  # Azure's asynchronous filter sends choices without one
        return self._delta(delta) if isinstance(delta, dict) else []

    def plain(self) -> bool:
        """Whether the reply so far is text and calls without metadata (`StreamAccumulator.plain`)."""
        return self._acc.plain()

    def finish(self) -> Response:
        """Return the reply so far, its parts in the order a non-streaming decode gives."""
        message = self._acc.message()
        message.parts.sort(key=_rank)  # text may stream after calls; the whole reply has it first
        return build_response(message, self._finish, self._usage, self._head)

    def _delta(self, delta: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        field = next((f for f in REASONING_FIELDS if isinstance(delta.get(f), str) and delta[f]), None)
        if field is not None:
            thinking = self._acc.thinking(delta[field], "reasoning", provider=NAME, metadata={NAME: {"field": field}})
            events.extend([thinking] if thinking is not None else [])
        if isinstance(delta.get("content"), str) and delta["content"]:
            events.append(self._acc.text(delta["content"], "content"))
            sink = self._acc.sink("content")
            self._text = sink[0] if sink is not None else None
        if isinstance(delta.get("refusal"), str) and delta["refusal"]:
            events.append(self._acc.text(delta["refusal"], "refusal", metadata=REFUSAL))
        for call in delta.get("tool_calls") or []:
            event = self._call(call) if isinstance(call, dict) else None
            events.extend([event] if event is not None else [])
        return events

    def _call(self, wire: dict[str, Any]) -> ToolCallDelta | None:
        function = wire["function"] if isinstance(wire.get("function"), dict) else {}
        wire_id = optional_str(wire.get("id"))
        call_id = self._original_id(wire_id) if wire_id else None
        key = self._key(wire.get("index"), call_id)
        current = self._acc.call_id(key)
        if current is None or (call_id is not None and call_id != current):
            # A new id on an index in use is a new call: Ollama's compat endpoint repeats
            # index 0 (ollama #15457, langchain #34807 shows what merging them does).
            return self._start(key, call_id, function, wire)
        arguments = function.get("arguments")
        return self._acc.call_arguments(key, arguments) if isinstance(arguments, str) and arguments else None

    def _key(self, index: Any, call_id: str | None) -> Hashable:
        if isinstance(index, int) and not isinstance(index, bool):
            self._last_key = index
        elif (call_id is not None and call_id != self._acc.call_id(self._last_key)) or self._last_key is None:
            # Gemini's compat endpoint omits the index (docs/wire-formats.md, OpenAI Chat Completions):
            # a new id is a new call, a fragment without one continues the last call.
            self._last_key = ("unindexed", self._calls)
        return self._last_key

    def _start(
        self, key: Hashable, call_id: str | None, function: dict[str, Any], wire: dict[str, Any]
    ) -> ToolCallDelta:
        call_id = call_id or derived_call_id(optional_str(self._head.get("id")) or "", self._calls)
        self._calls += 1
        metadata = {NAME: {"extra_content": wire["extra_content"]}} if "extra_content" in wire else {}
        start = self._acc.start_call(key, call_id, str(function.get("name") or ""), metadata)
        self._sinks.pop(key, None)
        arguments = function.get("arguments")
        text = ""
        if isinstance(arguments, dict):  # Ollama's compat endpoint has sent objects (litellm #33678)
            self._acc.set_call_arguments(key, arguments)
            text = dumps(arguments)
        elif isinstance(arguments, str):
            self._acc.call_arguments(key, arguments)
            text = arguments
        sink = self._acc.sink(key)
        if sink is not None and isinstance(key, int):
            self._sinks[key] = sink
        return ToolCallDelta(start.index, start.id, start.name, text)


def _present(mapping: dict[str, Any]) -> int:
    """How many keys hold a value (null ones do not count); C-speed for the streaming fast path."""
    return len(mapping) - list(mapping.values()).count(None)
