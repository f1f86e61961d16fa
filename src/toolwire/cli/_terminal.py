"""Terminal plumbing: an event loop that survives Ctrl-C cleanly, and a prompt that can be abandoned.

`ConsoleReviewer` asks its question in a worker thread. A plain `input()` there would keep
that thread (and so the process) alive after Ctrl-C until the person pressed Enter; the
question asked here polls stdin and gives up as soon as the CLI is interrupted, or as soon
as the turn that asked it is cancelled (`Loop.run_turn`: chat's first Ctrl-C).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import select
import signal
import sys
import threading
from collections.abc import Coroutine
from types import FrameType
from typing import Any, Generic, Protocol, Self, TextIO, TypeVar

__all__ = ["Loop", "TurnCancelled", "ask_line"]

_T = TypeVar("_T")
_POLL_SECONDS = 0.1
_RELEASE_SECONDS = 5.0  # a prompt notices a cancelled turn within _POLL_SECONDS; this is the bound
_interrupted = threading.Event()


class TurnCancelled(Exception):
    """The person pressed Ctrl-C once during a turn: the turn stopped, the command goes on."""


class _Prompts:
    """The prompts waiting in worker threads, and the turn generation they belong to."""

    def __init__(self) -> None:
        self.generation = 0
        self.waiting = 0
        self.changed = threading.Condition()

    def enter(self, generation: int | None) -> int:
        """Count a waiting prompt; its generation is the turn's that asked (else the current one)."""
        with self.changed:
            self.waiting += 1
            return self.generation if generation is None else generation

    def leave(self) -> None:
        with self.changed:
            self.waiting -= 1
            self.changed.notify_all()

    def stale(self, generation: int) -> bool:
        return _interrupted.is_set() or generation != self.generation

    def release(self) -> None:
        """Abandon every waiting prompt and wait until they let go of stdin (the next prompt's)."""
        with self.changed:
            self.generation += 1
            self.changed.wait_for(lambda: self.waiting == 0, timeout=_RELEASE_SECONDS)


_prompts = _Prompts()
_asked_in = contextvars.ContextVar[int]("toolwire_turn_generation")
"""The generation of the turn whose task asks; `asyncio.to_thread` copies it into the worker thread.

Read in the worker, the generation could be a newer turn's: a question whose thread started only
after its turn was cancelled would then wait on, and take the next prompt's line.
"""


def ask_line(prompt: str, stream: TextIO | None = None) -> str:
    """Write `prompt` to `stream` (stdout by default) and read one line from stdin.

    Raises:
        EOFError: At the end of input, or when the CLI was interrupted (or the turn that asked
            was cancelled) while waiting.
    """
    out = stream or sys.stdout
    out.write(prompt)
    out.flush()
    if os.name == "nt" or not sys.stdin.isatty():
        line = sys.stdin.readline()  # pipes end with EOF; select() on a console is POSIX-only
    else:
        line = _poll_line()
    if not line:
        raise EOFError
    return line.rstrip("\n")


def _poll_line() -> str:
    generation = _prompts.enter(_asked_in.get(None))
    try:
        while not select.select([sys.stdin], [], [], _POLL_SECONDS)[0]:
            if _prompts.stale(generation):
                raise EOFError
        if _prompts.stale(generation):  # the line belongs to whoever asks next
            raise EOFError
        return sys.stdin.readline()
    finally:
        _prompts.leave()


class _Turn(Generic[_T]):
    """One cancellable turn: the task to cancel on the first Ctrl-C."""

    def __init__(self, coro: Coroutine[Any, Any, _T], loop: asyncio.AbstractEventLoop) -> None:
        self.coro = coro
        self.loop = loop
        self.task: asyncio.Task[Any] | None = None
        self.pressed = False

    async def main(self) -> _T:
        self.task = asyncio.current_task()
        _asked_in.set(_prompts.generation)
        return await self.coro

    def on_sigint(self, signum: int, frame: FrameType | None) -> None:
        # Runs in the main thread between bytecodes, as asyncio.Runner's own handler does.
        if self.pressed or self.task is None or self.task.done():
            raise KeyboardInterrupt
        self.pressed = True
        self.task.cancel()
        self.loop.call_soon_threadsafe(lambda: None)  # wake a loop blocked in select()


class _Closeable(Protocol):
    async def aclose(self) -> None: ...


class Loop:
    """One event loop for a whole command, so a client's pooled connections live across runs.

    Use it as a context manager; on the way out it closes `client` on the same loop.
    """

    def __init__(self, client: _Closeable | None = None) -> None:
        self._runner = asyncio.Runner()
        self._client = client

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._client is not None and not _interrupted.is_set():
                with contextlib.suppress(Exception):
                    self._runner.run(self._client.aclose())
        finally:
            self.close()

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run `coro`; on Ctrl-C, cancel it, release waiting prompts and raise `KeyboardInterrupt`."""
        try:
            return self._runner.run(coro)
        except KeyboardInterrupt:
            _interrupted.set()
            raise

    def run_turn(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run `coro` as one chat turn: a first Ctrl-C cancels it, a second one leaves.

        Raises:
            TurnCancelled: After the first Ctrl-C, once the turn has stopped (its waiting
                prompts released).
            KeyboardInterrupt: On a second Ctrl-C before the turn stopped.
        """
        main = threading.current_thread() is threading.main_thread()
        if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return self.run(coro)  # signals reach only the main thread; an ignored SIGINT stays ignored
        turn = _Turn(coro, self._runner.get_loop())
        previous = signal.signal(signal.SIGINT, turn.on_sigint)
        try:
            return self.run(turn.main())
        except asyncio.CancelledError:
            if not turn.pressed:
                raise
            _prompts.release()
            raise TurnCancelled from None
        finally:
            signal.signal(signal.SIGINT, previous)

    def close(self) -> None:
        """Close the loop (waits for worker threads, which interrupted prompts have released)."""
        self._runner.close()
