"""JSON-RPC 2.0 over framed byte streams: requests by id, notifications routed by session.

One reader task owns the incoming side and classifies each message:
`id` + no `method` is a response, `id` + `method` a request from the CLI, no `id` a
notification. Responses resolve the waiting request; `session.event` notifications go to
the queue of their session, registered before `session.create` is sent so no early event
is lost (quorum #248). When the stream ends or breaks, every waiter gets the error.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from toolwire.copilot._framing import FrameDecoder, encode_frame
from toolwire.errors import AuthenticationError, ProviderError, StreamError, ToolwireError
from toolwire.errors import TimeoutError as ToolwireTimeoutError

__all__ = ["Closed", "CopilotAuthenticationError", "CopilotRpcError", "RpcConnection"]

logger = logging.getLogger("toolwire.copilot")


class CopilotRpcError(ProviderError):
    """The Copilot CLI answered a request with a JSON-RPC error.

    Attributes:
        code: The JSON-RPC error code (-32601 unknown method, -32602 bad params, -32603 failure).
        method: The method that failed.
    """

    def __init__(self, message: str, *, code: int | None, method: str, **kwargs: Any) -> None:
        super().__init__(message, provider="copilot", **kwargs)
        self.code = code
        self.method = method


class CopilotAuthenticationError(CopilotRpcError, AuthenticationError):
    """The CLI refused a request because it is not signed in to GitHub."""


class Closed:
    """Put in every session queue when the connection ends; `error` says why."""

    def __init__(self, error: ToolwireError) -> None:
        self.error = error


def _rpc_error(method: str, error: Any) -> CopilotRpcError:
    code = error.get("code") if isinstance(error, dict) else None
    text = error.get("message") if isinstance(error, dict) else None
    text = text if isinstance(text, str) else repr(error)
    message = f"The Copilot CLI refused {method!r}: {text!r}."
    number = code if isinstance(code, int) else None
    if "Not authenticated" in text:
        fix = " Run `copilot login`, or pass token=... to connect()."
        return CopilotAuthenticationError(message + fix, code=number, method=method, body=error)
    return CopilotRpcError(message, code=number, method=method, body=error)


class RpcConnection:
    """A JSON-RPC peer over a reader/writer pair (child pipes or a TCP socket).

    Args:
        reader: Where the CLI's frames arrive.
        writer: Where our frames go.
        on_request: Answers a request the CLI sends us: returns `(result, error)`.
        describe_exit: Builds the error for a stream that ended (adds the CLI's stderr).
        record: Called with `("out"|"in", message)` for every frame, for debugging.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_request: Callable[[dict[str, Any]], tuple[Any, Any]],
        describe_exit: Callable[[str], Awaitable[ToolwireError]],
        record: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_request = on_request
        self._describe_exit = describe_exit
        self._record = record
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._queues: dict[str, asyncio.Queue[dict[str, Any] | Closed]] = {}
        self._orphans: Callable[[str, dict[str, Any]], None] | None = None
        self._write_lock = asyncio.Lock()
        self.error: ToolwireError | None = None
        self._task = asyncio.get_running_loop().create_task(self._read_loop(), name="toolwire-copilot-reader")

    @property
    def closed(self) -> bool:
        """Whether the connection ended (see `error`)."""
        return self.error is not None

    def on_orphan_event(self, handler: Callable[[str, dict[str, Any]], None]) -> None:
        """Call `handler(session_id, event)` for events of sessions nobody listens to."""
        self._orphans = handler

    def subscribe(self, session_id: str) -> asyncio.Queue[dict[str, Any] | Closed]:
        """Start queueing the events of `session_id` (before creating it, so none is lost)."""
        queue: asyncio.Queue[dict[str, Any] | Closed] = asyncio.Queue()
        if self.error is not None:
            queue.put_nowait(Closed(self.error))
        self._queues[session_id] = queue
        return queue

    def unsubscribe(self, session_id: str) -> None:
        """Stop queueing events of `session_id`."""
        self._queues.pop(session_id, None)

    async def request(self, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
        """Send a request and return its result; raises `CopilotRpcError`, `StreamError` or `TimeoutError`."""
        if self.error is not None:
            raise self.error
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = (method, future)
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            async with asyncio.timeout(timeout):
                return await future
        except builtins.TimeoutError:
            raise ToolwireTimeoutError(
                f"The Copilot CLI did not answer {method!r} within {timeout} s; raise timeout=... or check the CLI.",
                provider="copilot",
            ) from None
        finally:
            self._waiting.pop(request_id, None)

    async def _send(self, message: dict[str, Any]) -> None:
        if self._record is not None:
            self._record("out", message)
        async with self._write_lock:
            try:
                self._writer.write(encode_frame(message))
                await self._writer.drain()
            except (ConnectionError, RuntimeError, OSError) as exc:
                error = await self._describe_exit(f"closed its input ({type(exc).__name__})")
                self._fail(error)
                raise error from None

    async def aclose(self) -> None:
        """Stop reading and close the writer; waiters get a `StreamError`."""
        self._fail(StreamError("The Copilot connection was closed by toolwire.", provider="copilot"))
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task
        with contextlib.suppress(Exception):
            self._writer.close()

    # reading

    async def _read_loop(self) -> None:
        decoder = FrameDecoder()
        try:
            while data := await self._reader.read(65536):
                for message in decoder.feed(data):
                    await self._dispatch(message)
            reason = "stopped mid-frame" if decoder.pending else "ended its output"
            self._fail(await self._describe_exit(reason))
        except ToolwireError as error:
            self._fail(error)
        except (ConnectionError, OSError) as exc:
            self._fail(await self._describe_exit(f"broke the connection ({type(exc).__name__})"))

    async def _dispatch(self, message: dict[str, Any]) -> None:
        if self._record is not None:
            self._record("in", message)
        has_id = "id" in message and message["id"] is not None
        method = message.get("method")
        if has_id and method is None:
            self._resolve(message)
        elif has_id and isinstance(method, str):
            result, error = self._on_request(message)
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
            reply.update({"error": error} if error is not None else {"result": result})
            with contextlib.suppress(ToolwireError):
                await self._send(reply)
        elif method == "session.event":
            self._route(message.get("params"))
        else:
            logger.debug("Copilot notification %r ignored.", method)

    def _resolve(self, message: dict[str, Any]) -> None:
        waiting = self._waiting.get(message["id"]) if isinstance(message["id"], int) else None
        if waiting is None:
            # A response nobody waits for (a timed-out request, or a confused peer): drop it.
            logger.warning("The Copilot CLI answered unknown request id %r; ignored.", message["id"])
            return
        method, future = waiting
        if future.done():
            return
        if "error" in message:
            future.set_exception(_rpc_error(method, message["error"]))
        else:
            future.set_result(message.get("result"))

    def _route(self, params: Any) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("event"), dict):
            return
        session_id = params.get("sessionId")
        event: dict[str, Any] = params["event"]
        queue = self._queues.get(session_id) if isinstance(session_id, str) else None
        if queue is not None:
            queue.put_nowait(event)
        elif self._orphans is not None and isinstance(session_id, str):
            self._orphans(session_id, event)

    def _fail(self, error: ToolwireError) -> None:
        if self.error is not None:
            return
        self.error = error
        for _, future in self._waiting.values():
            if not future.done():
                future.set_exception(error)
        for queue in self._queues.values():
            queue.put_nowait(Closed(error))
