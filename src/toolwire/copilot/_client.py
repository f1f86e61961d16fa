"""`CopilotClient`: toolwire's client interface over a Copilot CLI child process.

The CLI runs its own agent loop; toolwire's `Agent` runs tools itself. Each `complete`/
`stream` call maps one toolwire turn onto the CLI:

- a conversation the client has not seen creates a CLI session (`session.create` with the
  tools, then `setApproveAll`) and sends the user text (`session.send`);
- the turn ends at the next batch of `external_tool.requested` (a `tool_use` reply whose
  call ids are the CLI's `toolCallId`s) or at `session.idle` (`end_turn`);
- the next call carries the same history plus `ToolResult`s: they answer the pending
  requests (`session.tools.handlePendingToolCall`) and reading resumes.

Conversations are matched by history prefix, one CLI session each. Every pending request
is always answered — with a failure when no result came, on errors and on close — because
the CLI waits forever otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from toolwire.client import BaseClient
from toolwire.copilot._byok import CopilotProvider, provider_wire
from toolwire.copilot._encode import encode_result, encode_tool, prompt_for, split_system, user_text
from toolwire.copilot._process import CliCommand, CliProcess, resolve_cli
from toolwire.copilot._record import TrafficRecord
from toolwire.copilot._rpc import Closed, CopilotRpcError, RpcConnection
from toolwire.copilot._turn import TurnReader
from toolwire.errors import AuthenticationError, ProviderError, ToolwireError
from toolwire.types import (
    Done,
    Message,
    Request,
    Response,
    StopReason,
    StreamEvent,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

__all__ = ["PROTOCOL_VERSION", "CopilotClient", "PermissionMode", "connect_copilot"]

logger = logging.getLogger("toolwire.copilot")

PROTOCOL_VERSION = 3
"""The protocol toolwire speaks: `external_tool.requested` + `handlePendingToolCall` (CLI 1.0.25+)."""

PermissionMode = Literal["approve-all", "skip", "request", "none"]
_DEFAULT_TOKEN_ENV = "COPILOT_SDK_AUTH_TOKEN"
CONNECTION_TOKEN_ENV = "COPILOT_CONNECTION_TOKEN"
"""When the CLI's environment holds it, the CLI refuses a `connect` without it."""
_QUICK = 5.0  # seconds for housekeeping requests (abort, destroy, answers on the way out)


@dataclass(slots=True, eq=False)
class _Conversation:
    session_id: str
    queue: asyncio.Queue[dict[str, Any] | Closed]
    definitions: list[ToolDefinition]
    history: list[Message] = field(default_factory=list)
    pending: dict[str, str] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass(slots=True, eq=False)
class _Link:
    """One running CLI, its JSON-RPC connection, and the event loop both belong to."""

    loop: asyncio.AbstractEventLoop
    process: CliProcess
    rpc: RpcConnection
    version: str | None = None
    conversations: list[_Conversation] = field(default_factory=list)
    record: TrafficRecord | None = None


def connect_copilot(
    model: str,
    *,
    cli_path: str | Sequence[str] | None = None,
    cwd: str | None = None,
    token: str | None = None,
    token_env: str | None = None,
    env: Mapping[str, str] | None = None,
    transport: Literal["stdio", "tcp"] = "stdio",
    timeout: float | None = 300.0,
    startup_timeout: float | None = 60.0,
    permission_mode: PermissionMode = "approve-all",
    system_mode: Literal["append", "replace"] = "append",
    check_auth: bool = True,
    log_level: str = "error",
    extra_args: Sequence[str] = (),
    session_options: Mapping[str, Any] | None = None,
    provider: CopilotProvider | Mapping[str, Any] | None = None,
    record: str | os.PathLike[str] | None = None,
) -> CopilotClient:
    """A client for a model behind the GitHub Copilot CLI (`connect("copilot:<model>")`).

    Args:
        model: The Copilot model id, e.g. `claude-sonnet-4.5` or `auto`.
        cli_path: The CLI executable, or a command as a list; default `COPILOT_CLI_PATH`,
            `copilot` on PATH, then `npx --yes @github/copilot`.
        cwd: The CLI's working directory (where its built-in tools would resolve paths).
        token: A GitHub token for the CLI, passed through `token_env` (never on the command line).
        token_env: The variable holding the token (`--auth-token-env`); default
            `COPILOT_SDK_AUTH_TOKEN` when `token` is given.
        env: Extra environment variables for the CLI (e.g. `COPILOT_HOME`).
        transport: `stdio` (default) or `tcp` (the CLI listens on a loopback port).
        timeout: Seconds to wait for any answer or event before giving up; `None` waits forever.
        startup_timeout: Seconds for the CLI to start and answer the handshake.
        permission_mode: How custom tools pass the CLI's permission gate (denied by default
            since CLI 1.0.65): `approve-all` (`setApproveAll`), `skip` (`skipPermission` on
            each tool), `request` (answer `permission.requested`), `none` (the CLI denies).
        system_mode: `append` the system prompt to the CLI's own, or `replace` it.
        check_auth: Ask `auth.getStatus` at start and fail fast when the CLI is not signed in
            to GitHub (never with `provider`, which needs no GitHub sign-in).
        log_level: The CLI's `--log-level`.
        extra_args: More CLI flags.
        session_options: Extra `session.create` fields (e.g. `reasoningEffort`).
        provider: Bring your own key: the model endpoint the CLI calls instead of GitHub's
            Copilot API (a `CopilotProvider`, or the SDKs' wire object as a mapping).
        record: A file to append the JSON-RPC traffic to (JSON Lines, secrets redacted).

    With `COPILOT_CONNECTION_TOKEN` in the environment (or in `env`), the CLI only accepts
    clients that send it: toolwire does, in the `connect` handshake.
    """
    variable = token_env or (_DEFAULT_TOKEN_ENV if token is not None else None)
    child_env = dict(env or {})
    if token is not None and variable is not None:
        child_env[variable] = token
    command = CliCommand(
        argv=resolve_cli(cli_path),
        transport=transport,
        cwd=cwd,
        env=child_env,
        token_env=variable,
        log_level=log_level,
        extra_args=tuple(extra_args),
    )
    return CopilotClient(
        model,
        command=command,
        timeout=timeout,
        startup_timeout=startup_timeout,
        permission_mode=permission_mode,
        system_mode=system_mode,
        check_auth=check_auth,
        session_options=session_options,
        provider=provider_wire(provider),
        record=record,
    )


class CopilotClient(BaseClient):
    """A model driven through the Copilot CLI; build one with `connect_copilot`.

    The CLI starts on first use, on the running event loop, and stops on `close`/`aclose`,
    when the client is garbage-collected, and at interpreter exit.
    """

    def __init__(
        self,
        model: str,
        *,
        command: CliCommand,
        timeout: float | None = 300.0,
        startup_timeout: float | None = 60.0,
        permission_mode: PermissionMode = "approve-all",
        system_mode: Literal["append", "replace"] = "append",
        check_auth: bool = True,
        session_options: Mapping[str, Any] | None = None,
        provider: dict[str, Any] | None = None,
        record: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__()
        self.provider = "copilot"
        self.model = model
        self.command = command
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.permission_mode = permission_mode
        self.system_mode = system_mode
        self.check_auth = check_auth
        self.session_options = dict(session_options or {})
        self.byok = provider
        self.record = record
        self._link: _Link | None = None
        self._start_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._warned: set[str] = set()

    @property
    def cli_version(self) -> str | None:
        """The version the running CLI reported in the handshake (`None` before it starts)."""
        return self._link.version if self._link else None

    @property
    def pid(self) -> int | None:
        """The running CLI's process id (`None` when it is not running)."""
        return self._link.process.pid if self._link else None

    async def complete_request(self, request: Request) -> Response:
        """One toolwire turn: the reply up to the next tool calls or the end of the CLI's loop."""
        events = self.stream_request(request)
        async with contextlib.aclosing(cast(AsyncGenerator[StreamEvent, None], events)):
            async for event in events:
                if isinstance(event, Done):
                    return event.response
        raise ProviderError("The Copilot turn ended without a reply.", provider="copilot")  # pragma: no cover

    async def stream_request(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Stream one toolwire turn: text deltas from `assistant.message_delta`, then `Done`."""
        self._note_unsupported(
            request.tool_choice, request.max_tokens, request.temperature, request.parallel_tool_calls, request.extra
        )
        history, definitions = list(request.messages), request.tools
        link = await self._ensure_link()
        conversation, rest = _match(link.conversations, history, definitions)
        if conversation is None:
            conversation = await self._open(link, history, definitions)
            rest = []
        async with conversation.lock:
            async for event in self._turn(link, conversation, history, rest):
                yield event

    async def _turn(
        self, link: _Link, conversation: _Conversation, history: list[Message], rest: list[Message]
    ) -> AsyncIterator[StreamEvent]:
        reader = TurnReader(
            conversation.queue,
            conversation.pending,
            timeout=self.timeout,
            on_permission=lambda data: self._permission(link, conversation, data),
            model=self.model,
        )
        finished = False
        try:
            await self._advance(link, conversation, history, rest)
            async for event in reader.events():
                if isinstance(event, Done):
                    conversation.history = [*history, event.response.message]
                    if event.response.stop_reason != StopReason.TOOL_USE:
                        conversation.pending.clear()
                    finished = True
                yield event
                if finished:
                    return
        except BaseException:
            # Errors, cancellation, or a consumer that stopped early: the CLI loop must not hang.
            if not finished:
                await self._discard(link, conversation, abort=True)
            raise

    async def _advance(
        self, link: _Link, conversation: _Conversation, history: list[Message], rest: list[Message]
    ) -> None:
        """Send what is new: results for pending calls, then any user text (the first prompt if new)."""
        if not conversation.history:
            _, messages = split_system(history)
            await self._send(link, conversation, prompt_for(messages))
            return
        results = [m for m in rest if isinstance(m, ToolResult)]
        users = [m for m in rest if isinstance(m, UserMessage)]
        unfinished = bool(conversation.pending)
        if unfinished:
            await self._answer_all(link, conversation, results)
        if users:
            if unfinished:
                await self._settle(link, conversation)
            await self._send(link, conversation, "\n\n".join(user_text(m) for m in users))

    # CLI requests

    async def _send(self, link: _Link, conversation: _Conversation, prompt: str) -> None:
        params = {"sessionId": conversation.session_id, "prompt": prompt}
        await link.rpc.request("session.send", params, self.timeout)

    async def _answer_all(self, link: _Link, conversation: _Conversation, results: list[ToolResult]) -> None:
        by_id = {r.tool_call_id: r for r in results}
        answers = []
        for call_id, request_id in list(conversation.pending.items()):
            result = by_id.get(call_id)
            wire = encode_result(result) if result else _failure("No result was given for this call.")
            answers.append(self._answer(link, conversation, request_id, wire))
        conversation.pending.clear()
        await asyncio.gather(*answers)

    async def _answer(self, link: _Link, conversation: _Conversation, request_id: str, result: dict[str, Any]) -> None:
        params = {"sessionId": conversation.session_id, "requestId": request_id, "result": result}
        answer = await link.rpc.request("session.tools.handlePendingToolCall", params, self.timeout)
        if not (isinstance(answer, dict) and answer.get("success")):
            logger.warning("The Copilot CLI did not accept the answer to tool request %r: %r.", request_id, answer)

    async def _settle(self, link: _Link, conversation: _Conversation) -> None:
        """Let an unfinished CLI loop run to idle (its further calls fail) before new user text."""
        reader = TurnReader(
            conversation.queue,
            conversation.pending,
            timeout=self.timeout,
            on_permission=lambda data: self._permission(link, conversation, data),
            model=self.model,
        )
        while True:
            response = None
            async for event in reader.events():
                response = event.response if isinstance(event, Done) else response
            if response is None or response.stop_reason != StopReason.TOOL_USE:
                return
            await self._answer_all(link, conversation, [])

    async def _permission(self, link: _Link, conversation: _Conversation, data: dict[str, Any]) -> None:
        # toolwire reviews calls itself (the agent's reviewer), so the CLI's gate approves our own
        # tools once and rejects anything else.
        request = data.get("permissionRequest")
        request = request if isinstance(request, dict) else {}
        ours = {d.name for d in conversation.definitions}
        approve = request.get("kind") == "custom-tool" and request.get("toolName") in ours
        result = {"kind": "approve-once"} if approve else {"kind": "reject", "feedback": "Only toolwire's tools run."}
        params = {"sessionId": conversation.session_id, "requestId": data.get("requestId"), "result": result}
        await link.rpc.request("session.permissions.handlePendingPermissionRequest", params, self.timeout)

    # sessions

    async def _open(self, link: _Link, history: list[Message], definitions: list[ToolDefinition]) -> _Conversation:
        session_id = str(uuid.uuid4())
        # Subscribe before creating: the CLI may send events before its response (quorum #248).
        conversation = _Conversation(session_id, link.rpc.subscribe(session_id), definitions)
        system, _ = split_system(history)
        params: dict[str, Any] = {
            "sessionId": session_id,
            "model": self.model,
            "streaming": True,
            "tools": [encode_tool(d, skip_permission=self.permission_mode == "skip") for d in definitions],
            "availableTools": [d.name for d in definitions],  # our tools only: the CLI's built-ins stay off
        }
        if system:
            params["systemMessage"] = {"mode": self.system_mode, "content": system}
        if self.permission_mode == "request":
            params["requestPermission"] = True
        if self.command.cwd:
            params["workingDirectory"] = self.command.cwd
        if self.byok is not None:
            params["provider"] = self.byok
        try:
            await link.rpc.request("session.create", params | self.session_options, self.timeout)
            if self.permission_mode == "approve-all":
                approve = {"sessionId": session_id, "enabled": True}
                await link.rpc.request("session.permissions.setApproveAll", approve, self.timeout)
        except BaseException:
            link.rpc.unsubscribe(session_id)
            raise
        link.conversations.append(conversation)
        return conversation

    async def _discard(self, link: _Link, conversation: _Conversation, *, abort: bool) -> None:
        """Forget a conversation: answer what is pending, abort its loop, destroy the CLI session."""
        if conversation in link.conversations:
            link.conversations.remove(conversation)
        if link.rpc.closed:
            return
        pending = list(conversation.pending.values())
        conversation.pending.clear()
        with contextlib.suppress(ToolwireError, asyncio.CancelledError):
            session = {"sessionId": conversation.session_id}
            for request_id in pending:
                await self._answer(link, conversation, request_id, _failure("The conversation was stopped."))
            if abort:
                await link.rpc.request("session.abort", session, _QUICK)
            await link.rpc.request("session.destroy", session, _QUICK)
        link.rpc.unsubscribe(conversation.session_id)

    # the CLI process

    async def _ensure_link(self) -> _Link:
        loop = asyncio.get_running_loop()
        if self._start_lock is None or self._start_lock[0] is not loop:
            self._start_lock = (loop, asyncio.Lock())
        async with self._start_lock[1]:
            link = self._link
            if link is not None and link.loop is loop and not link.rpc.closed:
                return link
            if link is not None:
                await self._drop_link(link)
            self._link = await self._start(loop)
            return self._link

    async def _start(self, loop: asyncio.AbstractEventLoop) -> _Link:
        process = await CliProcess.start(self.command, self.startup_timeout)
        record = TrafficRecord(self.record) if self.record is not None else None
        rpc = RpcConnection(
            process.reader,
            process.writer,
            on_request=_answer_cli_request,
            describe_exit=process.exit_error,
            record=record,
        )
        link = _Link(loop, process, rpc, record=record)
        rpc.on_orphan_event(lambda session_id, event: _fail_orphan(rpc, session_id, event))
        try:
            link.version = await self._handshake(rpc)
        except BaseException:
            await rpc.aclose()
            await process.aclose()
            if record is not None:
                record.close()
            raise
        return link

    async def _handshake(self, rpc: RpcConnection) -> str | None:
        """`connect`, or `ping` on CLIs that predate it; then the protocol version and auth checks."""
        token = _connection_token(self.command)
        try:
            hello = await rpc.request("connect", {"token": token} if token else {}, self.startup_timeout)
        except CopilotRpcError as error:
            if error.code != -32601 and "Unhandled method connect" not in error.message:
                raise
            hello = await rpc.request("ping", {"message": "toolwire"}, self.startup_timeout)
        hello = hello if isinstance(hello, dict) else {}
        version = hello.get("protocolVersion")
        if version != PROTOCOL_VERSION:
            raise ProviderError(
                f"The Copilot CLI speaks protocol version {version!r}, toolwire needs {PROTOCOL_VERSION}; "
                "upgrade it (npm install -g @github/copilot) or point cli_path=... at a CLI 1.0.25 or later.",
                provider="copilot",
                body=hello,
            )
        if self.check_auth and self.byok is None and "provider" not in self.session_options:
            status = await rpc.request("auth.getStatus", {}, self.startup_timeout)
            if not (isinstance(status, dict) and status.get("isAuthenticated")):
                said = status.get("statusMessage") if isinstance(status, dict) else status
                raise AuthenticationError(
                    f"The Copilot CLI is not signed in ({said!r}); run `copilot login`, pass token=... to "
                    "connect(), or set COPILOT_GITHUB_TOKEN.",
                    provider="copilot",
                    body=status,
                )
        cli_version = hello.get("version")
        return cli_version if isinstance(cli_version, str) else None

    async def _drop_link(self, link: _Link) -> None:
        self._link = None if self._link is link else self._link
        try:
            same_loop = asyncio.get_running_loop() is link.loop
        except RuntimeError:
            same_loop = False
        if not same_loop or link.loop.is_closed():
            link.process.kill_now()
        else:
            for conversation in list(link.conversations):
                await self._discard(link, conversation, abort=bool(conversation.pending))
            await link.rpc.aclose()
            await link.process.aclose()
        if link.record is not None:
            link.record.close()

    async def _aclose_resources(self) -> None:
        if self._link is not None:
            await self._drop_link(self._link)

    def close(self) -> None:
        """Stop the CLI (gracefully when its loop is the sync worker's) and the worker thread."""
        super().close()
        if self._link is not None:
            link, self._link = self._link, None
            link.process.kill_now()
            if link.record is not None:
                link.record.close()

    def _note_unsupported(self, *values: Any) -> None:
        names = ("tool_choice", "max_tokens", "temperature", "parallel_tool_calls", "extra")
        for name, value in zip(names, values, strict=True):
            if value not in (None, "auto", {}) and name not in self._warned:
                self._warned.add(name)
                logger.warning("The Copilot CLI has no %s setting; %s=%r is ignored.", name, name, value)


# module helpers


def _connection_token(command: CliCommand) -> str | None:
    """The connection token the CLI will demand: its environment's `COPILOT_CONNECTION_TOKEN`."""
    value = command.env[CONNECTION_TOKEN_ENV] if CONNECTION_TOKEN_ENV in command.env else None
    return (value if value is not None else os.environ.get(CONNECTION_TOKEN_ENV)) or None


def _failure(text: str) -> dict[str, Any]:
    return {"textResultForLlm": text, "resultType": "failure", "error": text}


def _match(
    conversations: list[_Conversation], history: list[Message], definitions: list[ToolDefinition]
) -> tuple[_Conversation | None, list[Message]]:
    """The conversation `history` continues, and what is new: tool results and/or user text."""
    for conversation in conversations:
        size = len(conversation.history)
        if conversation.definitions != definitions or len(history) <= size or history[:size] != conversation.history:
            continue
        rest = history[size:]
        first_user = next((i for i, m in enumerate(rest) if not isinstance(m, ToolResult)), len(rest))
        shape_ok = all(isinstance(m, UserMessage) for m in rest[first_user:])
        if shape_ok and (conversation.pending or first_user == 0):
            return conversation, rest
    return None, history


def _answer_cli_request(message: dict[str, Any]) -> tuple[Any, Any]:
    """Answer a request from the CLI: toolwire serves none (protocol v2 `tool.call` gets a failure result)."""
    method = message.get("method")
    if method == "tool.call":
        text = f"toolwire speaks Copilot protocol {PROTOCOL_VERSION}; upgrade the Copilot CLI to run tools."
        return {"result": _failure(text)}, None
    return None, {"code": -32601, "message": f"Unhandled method {method}"}


def _fail_orphan(rpc: RpcConnection, session_id: str, event: dict[str, Any]) -> None:
    """A tool request for a session nobody reads would hang the CLI forever: fail it now."""
    data = event.get("data")
    if event.get("type") != "external_tool.requested" or not isinstance(data, dict):
        return
    params = {
        "sessionId": session_id,
        "requestId": data.get("requestId"),
        "result": _failure("Session no longer active."),
    }
    task = asyncio.get_running_loop().create_task(rpc.request("session.tools.handlePendingToolCall", params, _QUICK))
    _BACKGROUND.add(task)
    task.add_done_callback(_forget)


_BACKGROUND: set[asyncio.Task[Any]] = set()


def _forget(task: asyncio.Task[Any]) -> None:
    _BACKGROUND.discard(task)
    if not task.cancelled() and task.exception() is not None:
        logger.debug("Failing an orphaned Copilot tool request failed: %r", task.exception())
