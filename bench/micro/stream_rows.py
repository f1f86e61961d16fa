"""Stream: 20,000 OpenAI chunk dicts → the final reply (text and 4 calls with parsed arguments).

Every row returns `(text, [(name, arguments dict), ...])`, built inside the timed region, so
each ends where a user can act on the calls. Rows built on the openai SDK's types need
`ChatCompletionChunk` objects: they get them ready-made (`ChatCompletionChunk.model_validate`,
untimed), so their rows are a LOWER bound for dict input; the "(validate)" info row shows what
making those objects costs on its own (the SDK's own per-event `construct_type` is ~20x slower still).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from bench.harness import RowSpec
from bench.micro import payloads

Result = tuple[str, list[tuple[str, dict[str, Any]]]]


def check(result: Result) -> str | None:
    """Text and every call's parsed arguments must equal the payload's."""
    text, calls = result
    if text != payloads.stream_text():
        return f"text differs ({len(text)} vs {len(payloads.stream_text())} chars)"
    expected = [json.loads(a) for a in payloads.stream_arguments()]
    got = [args for _, args in calls]
    if got != expected:
        return f"{len(got)} calls, arguments differ from the payload's"
    return None


def _chunks() -> list[dict[str, Any]]:
    return payloads.openai_stream()


def _floor() -> tuple[Any, Any]:
    chunks = _chunks()

    def run(_: Any) -> Result:
        text: list[str] = []
        calls: dict[int, list[Any]] = {}
        for chunk in chunks:
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                content = delta.get("content")
                if content:
                    text.append(content)
                for call in delta.get("tool_calls") or ():
                    slot = calls.get(call["index"])
                    if slot is None:
                        slot = calls[call["index"]] = [call["function"].get("name"), []]
                    fragment = call["function"].get("arguments")
                    if fragment:
                        slot[1].append(fragment)
        return "".join(text), [(name, json.loads("".join(parts))) for name, parts in calls.values()]

    return None, run


def toolwire_at(n: int) -> Any:
    """The toolwire row over an `n`-chunk stream (for the memory-scaling line)."""
    return lambda: _toolwire(n)


def _toolwire_nulls() -> tuple[Any, Any]:
    """The same stream with every delta key present and null where unused, as vLLM sends it."""
    return _toolwire(chunks=payloads.openai_stream_with_nulls())


def _toolwire(n: int = payloads.STREAM_CHUNKS, chunks: list[dict[str, Any]] | None = None) -> tuple[Any, Any]:
    from toolwire.codecs import get_codec
    from toolwire.types import Done

    codec = get_codec("openai")
    chunks = chunks if chunks is not None else payloads.openai_stream(n)

    def run(_: Any) -> Result:
        decoder = codec.stream_decoder()
        events: list[Any] = []
        for chunk in chunks:
            events.extend(decoder.feed(chunk))
        response = decoder.finish()
        events.append(Done(response))
        return response.text, [(c.name, c.arguments) for c in response.tool_calls]

    return None, run


def _litellm() -> tuple[Any, Any]:
    import litellm

    chunks = _chunks()

    def run(_: Any) -> Result:
        message = litellm.stream_chunk_builder(chunks=chunks).choices[0].message
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
        return message.content or "", calls

    return None, run


def _sdk_chunks(chunks: list[dict[str, Any]]) -> list[Any]:
    from openai.types.chat import ChatCompletionChunk

    return [ChatCompletionChunk.model_validate(chunk) for chunk in chunks]


def _validate_only() -> tuple[Any, Any]:
    chunks = _chunks()
    _sdk_chunks(chunks[:10])
    return None, lambda _: _sdk_chunks(chunks)


async def _aiter(items: list[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


def _openai_sdk() -> tuple[Any, Any]:
    from openai.lib.streaming.chat import ChatCompletionStreamState

    chunks = _sdk_chunks(_chunks())

    def run(_: Any) -> Result:
        state: Any = ChatCompletionStreamState()
        for chunk in chunks:
            state.handle_chunk(chunk)
        message = state.get_final_completion().choices[0].message
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
        return message.content or "", calls

    return None, run


def _agents() -> tuple[Any, Any]:
    from agents.models.chatcmpl_stream_handler import ChatCmplStreamHandler
    from openai.types.responses import Response

    chunks = _sdk_chunks(_chunks())
    loop = asyncio.new_event_loop()

    async def consume() -> Result:
        placeholder = Response(
            id="bench",
            created_at=time.time(),
            model=payloads.MODEL,
            object="response",
            output=[],
            tool_choice="auto",
            tools=[],
            parallel_tool_calls=True,
        )
        final: Any = None
        async for event in ChatCmplStreamHandler.handle_stream(placeholder, _aiter(chunks)):  # type: ignore[arg-type]
            if event.type == "response.completed":
                final = event.response
        text = "".join(c.text for item in final.output if item.type == "message" for c in item.content)
        calls = [(i.name, json.loads(i.arguments)) for i in final.output if i.type == "function_call"]
        return text, calls

    return None, lambda _: loop.run_until_complete(consume())


def _pydantic_ai() -> tuple[Any, Any]:
    from openai import AsyncOpenAI
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel(payloads.MODEL, provider=OpenAIProvider(openai_client=AsyncOpenAI(api_key="bench")))
    chunks = _sdk_chunks(_chunks())
    loop = asyncio.new_event_loop()

    async def consume() -> Result:
        streamed = await model._process_streamed_response(_aiter(chunks), ModelRequestParameters())  # type: ignore[arg-type]
        async for _ in streamed:
            pass
        response = streamed.get()
        text = "".join(p.content for p in response.parts if p.part_kind == "text")
        calls = [(p.tool_name, p.args_as_dict()) for p in response.parts if p.part_kind == "tool-call"]
        return text, calls

    return None, lambda _: loop.run_until_complete(consume())


def rows() -> list[RowSpec]:
    """The rows of the Stream table."""
    return [
        RowSpec(
            "floor",
            "floor",
            "a plain loop appending `delta.content` and per-index argument fragments, then "
            "`json.loads` of each call's arguments",
            _floor,
        ),
        RowSpec(
            "toolwire",
            "toolwire",
            '`get_codec("openai").stream_decoder()`: `feed(chunk)` per dict (events kept) + `finish()`',
            _toolwire,
        ),
        RowSpec(
            "toolwire (null keys)",
            "toolwire",
            "the toolwire row over the same chunks with every delta key present, unused ones `null` (vLLM); "
            "target ≤ 2\u00d7 the toolwire row",
            _toolwire_nulls,
        ),
        RowSpec(
            "litellm", "peer", "`litellm.stream_chunk_builder(chunks=dicts)` + `json.loads` of the arguments", _litellm
        ),
        RowSpec(
            "openai-agents",
            "peer",
            "`agents.models.chatcmpl_stream_handler.ChatCmplStreamHandler.handle_stream` "
            "over ready-made `ChatCompletionChunk`s, events consumed to `response.completed`",
            _agents,
        ),
        RowSpec(
            "pydantic-ai",
            "peer",
            "`OpenAIChatModel._process_streamed_response` (private; builds the public "
            "`OpenAIStreamedResponse`) over ready-made `ChatCompletionChunk`s, iterated, then `.get()`",
            _pydantic_ai,
        ),
        RowSpec(
            "openai SDK",
            "peer",
            "`openai.lib.streaming.chat.ChatCompletionStreamState().handle_chunk` per "
            "ready-made `ChatCompletionChunk` + `get_final_completion()`",
            _openai_sdk,
        ),
        RowSpec(
            "(validate)",
            "info",
            "info, not a peer: `ChatCompletionChunk.model_validate(dict)` of the 20,000 "
            "dicts alone — add it to an SDK-based row for dict input",
            _validate_only,
        ),
    ]
