"""An in-process model with the client interface: no socket, no codec, just a script.

For fast agent tests and benchmarks, in the spirit of pydantic-ai's `FunctionModel`: the
script is a list of turns (a `Response`, a `str`, an exception to raise, or a callable of
the `Request`), or one callable answering every turn.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable

from toolwire.client import BaseClient
from toolwire.telemetry import chat_span
from toolwire.testing._script import Delay, Turn, resolve_turn, stream_events
from toolwire.types import Request, Response, StreamEvent

__all__ = ["ScriptedModel"]


class ScriptedModel(BaseClient):
    """A model that answers from a script, with the same interface as `toolwire.client.Client`.

    Args:
        script: Turns consumed one per call, or one callable `(Request) -> Turn` for every call.
        model: The model name reported in `repr` and put in each `Request`.

    Attributes:
        requests: Every `Request` the model received, in order.
    """

    def __init__(self, script: Iterable[Turn] | Callable[[Request], Turn] = (), *, model: str = "scripted") -> None:
        super().__init__()
        self.provider = "scripted"
        self.model = model
        self.requests: list[Request] = []
        self._function: Callable[[Request], Turn] | None = None
        self._script: deque[Turn] = deque()
        if callable(script):
            self._function = script
        else:
            self._script.extend(script)

    def add(self, *turns: Turn) -> None:
        """Append turns to the script."""
        self._script.extend(turns)

    @property
    def remaining(self) -> int:
        """How many scripted turns are still unanswered."""
        return len(self._script)

    async def complete_request(self, request: Request) -> Response:
        """Answer with the next scripted turn."""
        return await self._answer(request)

    async def stream_request(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Answer with the next scripted turn as stream events (text chunks, call fragments, `Done`)."""
        for event in stream_events(await self._answer(request)):
            yield event

    async def _answer(self, request: Request) -> Response:
        self.requests.append(request)
        # Traced like a real client, so users can check their instrumentation offline.
        with chat_span(
            provider=self.provider, model=self.model, messages=request.messages, tools=request.tools
        ) as span:
            response = await self._play(request)
            span.record_response(response)
            return response

    async def _play(self, request: Request) -> Response:
        turn = self._next_turn(request)
        while True:
            turn = resolve_turn(turn, request)
            if isinstance(turn, Delay):
                await asyncio.sleep(turn.seconds)
                turn = turn.then
                continue
            if isinstance(turn, BaseException):
                raise turn
            if isinstance(turn, Response):
                return turn
            raise TypeError(f"ScriptedModel cannot answer with {turn!r}; script Responses, strs or exceptions.")

    def _next_turn(self, request: Request) -> Turn:
        if self._function is not None:
            return self._function
        if not self._script:
            raise RuntimeError(
                f"ScriptedModel's script is exhausted (call {len(self.requests)}); add more turns to the script."
            )
        return self._script.popleft()
