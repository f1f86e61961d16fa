"""A scripted stand-in for the GitHub Copilot CLI: `python -m toolwire.testing.fake_copilot`.

It speaks what the real CLI speaks in `--headless` mode (checked against CLI
1.0.102): `Content-Length` framing over stdio (`--stdio`) or a loopback TCP port (prints
`CLI server listening on port <N>`), the `connect`/`ping` handshake, the session methods,
and the event sequence of a model turn, including parallel tool calls through
`external_tool.requested` and `session.tools.handlePendingToolCall`.

The scenario is a JSON file named by `TOOLWIRE_FAKE_COPILOT_SCENARIO`::

    {"version": "1.0.102-fake", "protocol_version": 3, "connect": "ok" | "unhandled",
     "authenticated": true, "models": null | ["model-id", ...], "early_events": false,
     "port_line": true,
     "sends": [[step, ...], ...]}     # one list of steps per session.send, in order

Steps: `{"text": "...", "chunks": [...]}` and `{"text": "...", "tool_calls": [{"id", "name",
"arguments"}]}` (model turns), `{"error": {...session.error data}}`, `{"exit": code,
"stderr": "..."}`, `{"hang": true}` (never idle), `{"garbage": "..."}` (raw bytes),
`{"respond_unknown_id": true}`, `{"request": {"method", "params"}}` (a request to the
client), `{"event": {"type", "data"}}`, `{"sleep": seconds}`. After the steps (or as soon as
the client answers a call with `resultType` `rejected`/`denied`, which ends the real CLI's
loop): `assistant.idle` and `session.idle`. With `COPILOT_CONNECTION_TOKEN` in its
environment it refuses a `connect` without that token, as the real CLI does. Every frame in
both directions, and what the "model" saw of each tool result, goes to the JSONL file named
by `TOOLWIRE_FAKE_COPILOT_TRANSCRIPT`. Standard library only; it imports nothing from
toolwire, so it is an independent implementation of the protocol.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import sys
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

__all__ = ["ENV_SCENARIO", "ENV_TRANSCRIPT", "main"]

ENV_SCENARIO = "TOOLWIRE_FAKE_COPILOT_SCENARIO"
ENV_TRANSCRIPT = "TOOLWIRE_FAKE_COPILOT_TRANSCRIPT"
_DENIED = (
    "Permission denied and could not request permission from user. "
    "Copilot needed the user's approval and no one could answer."
)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class _Peer:
    """Framing and the transcript: reads frames from `reader`, writes them to `writer`."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any, transcript: TextIO | None) -> None:
        self.reader = reader
        self.writer = writer
        self.transcript = transcript
        self.ids = itertools.count(1000)

    def log(self, entry: dict[str, Any]) -> None:
        if self.transcript is not None:
            self.transcript.write(json.dumps(entry) + "\n")
            self.transcript.flush()

    async def read(self) -> dict[str, Any] | None:
        """The next message; `None` at the end of input. Unreadable frames get a -32700 error."""
        while True:
            length = None
            while True:
                line = await self.reader.readline()
                if not line:
                    return None
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.strip().lower() == "content-length" and value.strip().isdigit():
                    length = int(value.strip())
            if length is None:
                continue
            body = await self.reader.readexactly(length)
            try:
                message = json.loads(body)
            except ValueError:
                self.log({"dir": "in", "raw": body.decode("utf-8", "replace")})
                self.error(None, -32700, "Parse error")
                continue
            self.log({"dir": "in", "frame": message})
            return message if isinstance(message, dict) else {}

    def write(self, message: dict[str, Any]) -> None:
        self.log({"dir": "out", "frame": message})
        body = json.dumps(message, separators=(",", ":")).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body, log=False)

    def raw(self, data: bytes, *, log: bool = True) -> None:
        if log:
            self.log({"dir": "out", "raw": data.decode("utf-8", "replace")})
        self.writer.write(data)

    def respond(self, request_id: Any, result: Any) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


@dataclass(slots=True)
class _Session:
    session_id: str
    params: dict[str, Any]
    approve_all: bool = False
    pending: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    permissions: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    last_event: str | None = None

    def tool(self, name: str) -> dict[str, Any] | None:
        tools = self.params.get("tools") or []
        return next((t for t in tools if isinstance(t, dict) and t.get("name") == name), None)


class FakeCli:
    """The fake's state and its method handlers."""

    def __init__(self, scenario: dict[str, Any], peer: _Peer) -> None:
        self.scenario = scenario
        self.peer = peer
        self.sends = list(scenario.get("sends") or [])
        self.sessions: dict[str, _Session] = {}
        self.counter = itertools.count(1)
        self.client_requests: dict[int, str] = {}

    async def serve(self) -> None:
        while (message := await self.peer.read()) is not None:
            method = message.get("method")
            if method is None:
                continue  # a response to a request we sent: the transcript has it
            handler = getattr(self, "_m_" + str(method).replace(".", "_"), None)
            if handler is None:
                self.peer.error(message.get("id"), -32601, f"Unhandled method {method}")
                continue
            await handler(message.get("id"), message.get("params") or {})

    # events

    def event(self, session: _Session, kind: str, data: dict[str, Any], *, ephemeral: bool = False) -> None:
        event: dict[str, Any] = {"type": kind, "id": str(uuid.uuid4()), "timestamp": _now()}
        event["parentId"] = session.last_event
        if ephemeral:
            event["ephemeral"] = True
        event["data"] = data
        session.last_event = event["id"]
        params = {"sessionId": session.session_id, "event": event}
        self.peer.write({"jsonrpc": "2.0", "method": "session.event", "params": params})

    # server methods

    async def _m_connect(self, rid: Any, params: dict[str, Any]) -> None:
        if self.scenario.get("connect") == "unhandled":
            self.peer.error(rid, -32601, "Unhandled method connect")
            return
        expected = os.environ.get("COPILOT_CONNECTION_TOKEN")
        if expected and params.get("token") != expected:
            self.peer.error(rid, -32603, "AUTHENTICATION_FAILED")  # what CLI 1.0.102 answers
            return
        version = self.scenario.get("version", "1.0.102-fake")
        protocol = self.scenario.get("protocol_version", 3)
        self.peer.respond(rid, {"ok": True, "protocolVersion": protocol, "version": version, "taskKinds": ["agent"]})

    async def _m_ping(self, rid: Any, params: dict[str, Any]) -> None:
        text = f"pong: {params['message']}" if params.get("message") else "pong"
        self.peer.respond(rid, {"message": text, "timestamp": _now(), "protocolVersion": self._protocol()})

    async def _m_status_get(self, rid: Any, params: dict[str, Any]) -> None:
        self.peer.respond(rid, {"version": self.scenario.get("version", "1.0.102-fake"), "protocolVersion": 3})

    async def _m_auth_getStatus(self, rid: Any, params: dict[str, Any]) -> None:
        if self.scenario.get("authenticated", True):
            self.peer.respond(rid, {"isAuthenticated": True, "authType": "token", "statusMessage": "fake (via token)"})
        else:
            self.peer.respond(rid, {"isAuthenticated": False, "statusMessage": "Not authenticated"})

    async def _m_models_list(self, rid: Any, params: dict[str, Any]) -> None:
        if not self.scenario.get("authenticated", True):
            message = "Request models.list failed with message: Not authenticated. Please authenticate first."
            self.peer.error(rid, -32603, message)
            return
        models = self.scenario.get("models") or ["fake-model"]
        self.peer.respond(rid, {"models": [{"id": m, "name": m} for m in models], "imageModels": []})

    def _protocol(self) -> int:
        return int(self.scenario.get("protocol_version", 3))

    # session methods

    async def _m_session_create(self, rid: Any, params: dict[str, Any]) -> None:
        models = self.scenario.get("models")
        model = params.get("model")
        if models and model not in models:
            self.peer.error(
                rid, -32603, f'Request session.create failed with message: Model "{model}" is not available.'
            )
            return
        session = _Session(str(params.get("sessionId") or uuid.uuid4()), params)
        self.sessions[session.session_id] = session
        result: dict[str, Any] = {"sessionId": session.session_id, "workspacePath": f"/fake/{session.session_id}"}
        result["modelState"] = {"modelId": model}
        if not self.scenario.get("early_events"):
            self.peer.respond(rid, result)
        lifecycle = {"type": "session.created", "sessionId": session.session_id, "metadata": {}}
        self.peer.write({"jsonrpc": "2.0", "method": "session.lifecycle", "params": lifecycle})
        start = {"sessionId": session.session_id, "version": 1, "producer": "copilot-agent", "selectedModel": model}
        self.event(session, "session.start", start)
        if self.scenario.get("early_events"):
            self.peer.respond(rid, result)

    def _session(self, rid: Any, method: str, params: dict[str, Any]) -> _Session | None:
        session = self.sessions.get(str(params.get("sessionId")))
        if session is None:
            message = (
                f"Request {method} failed with message: Session not found for sessionId: {params.get('sessionId')}"
            )
            self.peer.error(rid, -32603, message)
        return session

    async def _m_session_permissions_setApproveAll(self, rid: Any, params: dict[str, Any]) -> None:
        if (session := self._session(rid, "session.permissions.setApproveAll", params)) is not None:
            session.approve_all = bool(params.get("enabled"))
            self.peer.respond(rid, {"success": True})

    async def _m_session_send(self, rid: Any, params: dict[str, Any]) -> None:
        if (session := self._session(rid, "session.send", params)) is None:
            return
        message_id = f"M{next(self.counter)}"
        steps = self.sends.pop(0) if self.sends else [{"text": "(the fake CLI's script is exhausted)"}]
        if not params.get("wait"):
            self.peer.respond(rid, {"messageId": message_id})
        session.task = asyncio.create_task(self._play(session, params, steps, rid if params.get("wait") else None))

    async def _m_session_tools_handlePendingToolCall(self, rid: Any, params: dict[str, Any]) -> None:
        if (session := self._session(rid, "session.tools.handlePendingToolCall", params)) is None:
            return
        future = session.pending.get(str(params.get("requestId")))
        if future is None or future.done() or ("result" not in params and "error" not in params):
            self.peer.respond(rid, {"success": False})
            return
        self.event(session, "external_tool.completed", {"requestId": params.get("requestId")})
        future.set_result(params)
        self.peer.respond(rid, {"success": True})

    async def _m_session_permissions_handlePendingPermissionRequest(self, rid: Any, params: dict[str, Any]) -> None:
        if (session := self._session(rid, "session.permissions.handlePendingPermissionRequest", params)) is None:
            return
        future = session.permissions.get(str(params.get("requestId")))
        if future is None or future.done():
            self.peer.respond(rid, {"success": False})
            return
        future.set_result(params.get("result") or {})
        self.peer.respond(rid, {"success": True})

    async def _m_session_abort(self, rid: Any, params: dict[str, Any]) -> None:
        if (session := self._session(rid, "session.abort", params)) is None:
            return
        running = session.task is not None and not session.task.done()
        if running and session.task is not None:
            session.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await session.task
        self.peer.respond(rid, {"success": True})
        if running:
            self.event(session, "assistant.idle", {"aborted": True}, ephemeral=True)
            self.event(session, "session.idle", {"mode": "interactive", "aborted": True}, ephemeral=True)

    async def _m_session_destroy(self, rid: Any, params: dict[str, Any]) -> None:
        if (session := self._session(rid, "session.destroy", params)) is None:
            return
        if session.task is not None:
            session.task.cancel()
        self.event(session, "session.shutdown", {"shutdownType": "routine"})
        del self.sessions[session.session_id]
        self.peer.respond(rid, {"success": True})

    # scripted turns

    async def _play(self, session: _Session, params: dict[str, Any], steps: list[Any], wait_id: Any) -> None:
        self.event(session, "pending_messages.modified", {}, ephemeral=True)  # noise the client must ignore
        first = True
        for step in steps:
            if "tool_calls" in step or "text" in step:
                if first:
                    self.event(session, "user.message", {"content": params.get("prompt"), "messageId": "U1"})
                    first = False
                if await self._turn(session, step):
                    break  # the CLI ends its loop when a call was rejected or denied by the client
            else:
                await self._special(session, step)
        self.event(session, "assistant.idle", {}, ephemeral=True)
        self.event(session, "session.idle", {"mode": "interactive"}, ephemeral=True)
        if wait_id is not None:
            self.peer.respond(wait_id, {"messageId": "M0"})

    async def _special(self, session: _Session, step: dict[str, Any]) -> None:
        """Run a non-turn step."""
        if "error" in step:
            self.event(session, "session.error", step["error"])
        elif "exit" in step:
            sys.stderr.write(step.get("stderr", "") + "\n")
            sys.stderr.flush()
            os._exit(int(step["exit"]))
        elif step.get("hang"):
            await asyncio.get_running_loop().create_future()  # until session.abort cancels the turn
        elif "garbage" in step:
            self.peer.raw(step["garbage"].encode())
        elif step.get("respond_unknown_id"):
            self.peer.respond(987654, {"unexpected": True})
        elif "request" in step:
            request = step["request"]
            self.peer.write({"jsonrpc": "2.0", "id": next(self.peer.ids), **request})
        elif "event" in step:
            self.event(session, step["event"]["type"], step["event"].get("data", {}))
        elif "sleep" in step:
            await asyncio.sleep(float(step["sleep"]))

    async def _turn(self, session: _Session, step: dict[str, Any]) -> bool:
        """Play one model turn; return True when the client rejected a call (the loop stops)."""
        turn = str(next(self.counter))
        message_id = f"M{turn}"
        self.event(session, "assistant.turn_start", {"turnId": turn, "interactionId": "I1"})
        self.event(session, "model.call_start", {"model": session.params.get("model")}, ephemeral=True)
        text = str(step.get("text") or "")
        calls = [
            {"toolCallId": c["id"], "name": c["name"], "arguments": c.get("arguments", {}), "type": "function"}
            for c in step.get("tool_calls") or []
        ]
        if session.params.get("streaming"):
            self.event(session, "assistant.message_start", {"messageId": message_id}, ephemeral=True)
            for chunk in step.get("chunks") or _chunks(text):
                self.event(
                    session, "assistant.message_delta", {"messageId": message_id, "deltaContent": chunk}, ephemeral=True
                )
        usage = {"model": session.params.get("model"), "inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2}
        self.event(session, "assistant.usage", usage, ephemeral=True)
        message = {"messageId": message_id, "content": text, "toolRequests": calls, "turnId": turn}
        self.event(session, "assistant.message", message)
        stop = await self._tool_calls(session, calls, turn) if calls else False
        self.event(session, "assistant.turn_end", {"turnId": turn})
        return stop

    async def _tool_calls(self, session: _Session, calls: list[dict[str, Any]], turn: str) -> bool:
        for call in calls:
            start = {"toolCallId": call["toolCallId"], "toolName": call["name"], "arguments": call["arguments"]}
            self.event(session, "tool.execution_start", start | {"turnId": turn})
        waiting: list[tuple[dict[str, Any], asyncio.Future[Any]]] = []
        for call in calls:
            if not await self._permitted(session, call):
                self._complete(session, call, None, _DENIED)
                continue
            request_id = str(uuid.uuid4())
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            session.pending[request_id] = future
            data = {"requestId": request_id, "sessionId": session.session_id, "toolCallId": call["toolCallId"]}
            data |= {"toolName": call["name"], "arguments": call["arguments"], "workingDirectory": os.getcwd()}
            self.event(session, "external_tool.requested", data)
            waiting.append((call, future))
        stop = False
        for call, future in waiting:  # all requests are out before any answer is awaited
            answer = await future
            stop = self._complete(session, call, answer, None) in ("rejected", "denied") or stop
        return stop

    async def _permitted(self, session: _Session, call: dict[str, Any]) -> bool:
        tool = session.tool(call["name"])
        if tool is None:
            return False
        if session.approve_all or tool.get("skipPermission"):
            return True
        if not session.params.get("requestPermission"):
            return False
        request_id = f"P{next(self.counter)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        session.permissions[request_id] = future
        ask = {"kind": "custom-tool", "toolCallId": call["toolCallId"], "toolName": call["name"]}
        self.event(session, "permission.requested", {"requestId": request_id, "permissionRequest": ask})
        result = await future
        approved = result.get("kind") in ("approve-once", "approve-for-session", "approved")
        done = {"requestId": request_id, "result": {"kind": "approved" if approved else "denied-interactively-by-user"}}
        self.event(session, "permission.completed", done)
        return approved

    def _complete(self, session: _Session, call: dict[str, Any], answer: Any, denied: str | None) -> str:
        text, kind = _model_view(call, answer) if denied is None else (denied, "denied")
        self.peer.log({"dir": "model", "toolCallId": call["toolCallId"], "text": text, "resultType": kind})
        data: dict[str, Any] = {"toolCallId": call["toolCallId"], "success": kind == "success"}
        data |= {"result": {"content": text}} if kind == "success" else {"error": {"message": text, "code": kind}}
        self.event(session, "tool.execution_complete", data)
        return kind


def _model_view(call: dict[str, Any], answer: dict[str, Any]) -> tuple[str, str]:
    """What the model sees of an answer (probed on CLI 1.0.102)."""
    result = answer.get("result")
    if isinstance(result, str):
        return result, "success"
    if isinstance(result, dict):
        kind = result.get("resultType") or ("failure" if result.get("error") else "success")
        return str(result.get("textResultForLlm", "")), str(kind)
    arguments = json.dumps(call["arguments"], separators=(",", ":"))
    generic = f"Failed to execute `{call['name']}` tool with arguments: {arguments} due to error: "
    generic += "Error: Tool execution failed"
    return generic, "failure"


def _chunks(text: str) -> list[str]:
    size = max(1, -(-len(text) // 3))
    return [text[i : i + size] for i in range(0, len(text), size)]


# process entry


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="fake_copilot", add_help=False)
    for flag in ("--headless", "--server", "--no-auto-update", "--no-auto-login", "--stdio"):
        parser.add_argument(flag, action="store_true")
    for option in ("--log-level", "--auth-token-env", "--session-idle-timeout", "--port"):
        parser.add_argument(option)
    return parser.parse_known_args(argv)[0]


class _FdWriter:
    """Blocking writes to a file descriptor: frames go out whole, in order."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]


async def _serve_stdio(scenario: dict[str, Any], transcript: TextIO | None) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    await FakeCli(scenario, _Peer(reader, _FdWriter(sys.stdout.fileno()), transcript)).serve()


async def _serve_tcp(scenario: dict[str, Any], transcript: TextIO | None, port: int) -> None:
    finished = asyncio.Event()

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            await FakeCli(scenario, _Peer(reader, writer, transcript)).serve()
        finished.set()

    server = await asyncio.start_server(one, "127.0.0.1", port)
    bound = server.sockets[0].getsockname()[1]
    if scenario.get("port_line", True):
        sys.stdout.write(f"CLI server listening on port {bound}\n")
        sys.stdout.flush()
    await finished.wait()
    server.close()


def main(argv: list[str] | None = None) -> int:
    """Run the fake CLI; returns the exit code."""
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.stdio and args.port is not None:
        sys.stderr.write(
            "Cannot specify both --stdio and --port. Use --stdio for pipe communication or --port for TCP.\n"
        )
        return 1
    path = os.environ.get(ENV_SCENARIO)
    scenario: dict[str, Any] = {}
    if path:
        with open(path, encoding="utf-8") as file:
            scenario = json.load(file)
    target = os.environ.get(ENV_TRANSCRIPT)
    transcript = open(target, "a", encoding="utf-8") if target else None
    try:
        if args.stdio:
            asyncio.run(_serve_stdio(scenario, transcript))
        else:
            asyncio.run(_serve_tcp(scenario, transcript, int(args.port or 0)))
    except (ConnectionError, asyncio.IncompleteReadError, KeyboardInterrupt):
        pass
    finally:
        if transcript is not None:
            transcript.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
