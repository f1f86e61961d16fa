"""`Tool`, the `@tool` decorator and `define_tool`.

A `Tool` owns everything decided once, when it is defined — its definition (name,
description, JSON Schema), its Pydantic validator and its call plan — and `execute_raw`, which
turns a model's raw arguments into a `ToolResult` without ever raising for the model's mistakes
or the tool's failures. Imports `toolwire.types`, `toolwire.errors`, pydantic and json_repair.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import json
import threading
from collections.abc import Callable
from typing import Any, Literal, TypeAlias, cast, get_args, overload

from pydantic import BaseModel, ConfigDict, ValidationError

from toolwire.codecs.common.arguments import MAX_REPAIR_CHARS
from toolwire.tools._context import DEFAULT_TOOL_TIMEOUT, ToolContext
from toolwire.tools._docstrings import parse_docstring
from toolwire.tools._jsonschema import tidy_schema
from toolwire.tools._results import ToolError, error_result, to_result, validation_message
from toolwire.tools._signature import Plan, call_arguments, execute_plan, function_plan
from toolwire.types import ToolCall, ToolDefinition, ToolResult

__all__ = ["DEFAULT_TOOL_TIMEOUT", "Risk", "Tool", "define_tool", "tool"]

Risk: TypeAlias = Literal["low", "high"]
"""`low`: read-only, safe to run without review and concurrently; `high`: has side effects."""

_RISKS: tuple[str, ...] = get_args(Risk)


class Tool:
    """A callable the model can use: its definition plus a way to run it from raw arguments.

    Build one with `@tool` or `define_tool`, not directly.

    Attributes:
        definition: The `ToolDefinition` sent to providers (schema built once, here).
        risk: `"low"` (read-only) or `"high"` (side effects; the default).
        risk_declared: Whether the tool's author said its risk (`risk=`); an `Agent` without a
            reviewer refuses tools declared `"high"`, and runs undeclared ones as the caller chose.
        input_model: The Pydantic model that validates the arguments.
        function: The wrapped function (call it directly in your own tests).
        timeout: Seconds an agent lets one call run before stopping it; `None` takes the agent's
            `tool_timeout` (by default `DEFAULT_TOOL_TIMEOUT`).
    """

    __slots__ = ("_is_async", "_plan", "definition", "function", "input_model", "risk", "risk_declared", "timeout")

    def __init__(
        self,
        *,
        definition: ToolDefinition,
        risk: Risk,
        input_model: type[BaseModel],
        function: Callable[..., Any],
        plan: Plan,
        timeout: float | None = None,
        risk_declared: bool = True,
    ) -> None:
        if timeout is not None and not timeout > 0:
            raise ValueError(
                f"Tool {definition.name!r}: timeout must be a positive number of seconds, got {timeout!r}."
            )
        self.timeout = timeout
        self.definition = definition
        self.risk = risk
        self.risk_declared = risk_declared
        self.input_model = input_model
        self.function = function
        self._plan = plan
        self._is_async = inspect.iscoroutinefunction(function)

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        return self.definition.name

    @property
    def description(self) -> str | None:
        """What the tool does, as the model reads it."""
        return self.definition.description

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments."""
        return self.definition.parameters or {}

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, risk={self.risk!r})"

    async def execute_raw(
        self,
        raw_args: str | dict[str, Any] | None,
        ctx: ToolContext | None = None,
        *,
        call: ToolCall | None = None,
        call_id: str | None = None,
    ) -> ToolResult:
        """Parse, validate and run one call; every failure comes back as an `error` result.

        The result is addressed to `call` (its id and name) when given, else to `call_id` (or
        `""`) and this tool's name. When `call.metadata` holds an `arguments_error` from the codec,
        the tool does not run and the error says why. The call runs in `ctx.for_call()`, so
        dependencies are created at most once per call and never shared between calls. Sync
        functions run in a worker thread. Only cancellation (`asyncio.CancelledError`) propagates.

        Args:
            raw_args: The arguments as JSON text or an already parsed object (`""`/`None` = `{}`).
            ctx: Dependencies, logger, clock and cancellation signal; `None` means `ToolContext()`.
            call: The model's call this result answers.
            call_id: The id to answer when there is no `ToolCall` at hand.
        """
        result_id = call.id if call is not None else (call_id or "")
        name = call.name if call is not None else self.name
        if call is not None and "arguments_error" in call.metadata:
            return error_result(result_id, name, self._broken_arguments(call.metadata["arguments_error"]))
        args = _parse_arguments(raw_args)
        if isinstance(args, str):
            return error_result(result_id, name, self._broken_arguments(args))
        try:
            data = self.input_model.model_validate(args)
        except ValidationError as exc:
            return error_result(result_id, name, validation_message(self.name, exc, self.parameters))
        scope = (ctx if ctx is not None else ToolContext()).for_call()
        if scope.cancelled:
            return error_result(result_id, name, f"Tool {self.name!r} was cancelled before it ran.")
        try:
            value = await self._run(data, scope)
        except ToolError as exc:
            return error_result(result_id, name, exc.message)
        except Exception as exc:  # a tool's failure goes back to the model, never up the loop
            scope.logger.warning("tool %r failed", self.name, exc_info=True)
            return error_result(result_id, name, f"Tool {self.name!r} failed with {type(exc).__name__}: {exc}")
        return to_result(value, result_id, name)

    async def _run(self, data: BaseModel, ctx: ToolContext) -> Any:
        args, kwargs = await call_arguments(self._plan, data, ctx)
        if self._is_async:
            return await self.function(*args, **kwargs)
        # Sync tools do blocking I/O; a thread keeps the event loop (and other tools) running.
        value = await _in_daemon_thread(functools.partial(self.function, *args, **kwargs), self.name, ctx)
        return await value if inspect.isawaitable(value) else value

    def _broken_arguments(self, reason: str) -> str:
        return (
            f"The arguments for tool {self.name!r} could not be read: {reason}. "
            "Send them again as one JSON object that matches the tool's parameters."
        )


async def _in_daemon_thread(function: Callable[[], Any], name: str, ctx: ToolContext) -> Any:
    """Run a sync function in its own daemon thread and await its value.

    Not the loop's default executor: a thread cannot be killed, and a sync tool that never
    returns would then hold `asyncio.run` (which joins the executor) and the interpreter's exit
    forever. A daemon thread is left behind instead, and said so when the call is given up.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def work() -> None:
        try:
            value, error = context.run(function), None
        except BaseException as exc:
            value, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed while the tool ran on
            loop.call_soon_threadsafe(settle, value, error)

    thread = threading.Thread(target=work, name=f"toolwire-tool-{name}", daemon=True)
    thread.start()
    try:
        return await future
    except asyncio.CancelledError:
        if thread.is_alive():
            ctx.logger.warning(
                "Tool %r was stopped but its sync function is still running in thread %r; its result will be "
                "ignored. Make the tool async, or have it check ctx.cancelled.",
                name,
                thread.name,
            )
        raise


def _parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any] | str:
    """The arguments as a dict, or a str saying why they are not one."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return f"expected a JSON object, got {type(raw).__name__}"
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        if len(raw) > MAX_REPAIR_CHARS:  # repair time grows faster than the text
            return f"they are not valid JSON ({len(raw)} characters, too long to repair)"
        import json_repair  # rare path: keeps import time low

        try:
            value = json_repair.loads(raw)
        except Exception:  # the repairer must never turn a bad argument into a crash
            value = None
        if not isinstance(value, dict) or not (value or raw.strip().startswith("{")):
            return f"they are not valid JSON ({raw[:200]!r})"
    if not isinstance(value, dict):
        return f"expected a JSON object, got {type(value).__name__} {str(value)[:200]!r}"
    return value


def _check_risk(risk: str | None, name: str) -> Risk:
    if risk is None:
        return "high"
    if risk not in _RISKS:
        raise ValueError(f"Tool {name!r}: risk {risk!r} is not one of {', '.join(map(repr, _RISKS))}.")
    return cast(Risk, risk)


def _built(
    definition: ToolDefinition,
    risk: str | None,
    model: type[BaseModel],
    function: Callable[..., Any],
    plan: Plan,
    timeout: float | None,
) -> Tool:
    checked = _check_risk(risk, definition.name)
    return Tool(
        definition=definition,
        risk=checked,
        input_model=model,
        function=function,
        plan=plan,
        timeout=timeout,
        risk_declared=risk is not None,
    )


def _make_tool(
    func: Callable[..., Any], name: str | None, description: str | None, risk: str | None, timeout: float | None = None
) -> Tool:
    tool_name = name if name is not None else getattr(func, "__name__", None)
    if tool_name is None:
        raise ValueError(f"Cannot name a tool after {func!r}, which has no __name__; pass name=.")
    ToolDefinition(name=tool_name)  # validate the name before anything else mentions it
    if inspect.isasyncgenfunction(func) or inspect.isgeneratorfunction(func):
        raise TypeError(f"Tool {tool_name!r}: generators are not supported; return the whole result.")
    doc = parse_docstring(inspect.getdoc(func))
    model, plan = function_plan(func, tool_name, doc.params)
    definition = ToolDefinition(
        name=tool_name,
        description=description if description is not None else doc.summary,
        parameters=tidy_schema(model.model_json_schema()),
    )
    return _built(definition, risk, model, func, plan, timeout)


@overload
def tool(
    func: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    risk: Risk | None = None,
    timeout: float | None = None,
) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, risk: Risk | None = None, timeout: float | None = None
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    risk: Risk | None = None,
    timeout: float | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a `Tool` from a function, bare (`@tool`) or configured (`@tool(risk="low")`).

    The name is the function's, the description the docstring's first paragraph, and each
    parameter's description comes from the docstring (Google, NumPy or reST) unless its
    `Annotated[..., Field(description=...)]` gives one. Parameters annotated `ToolContext` or
    defaulting to `Depends(...)` are injected and left out of the schema.

    Args:
        func: The function, when used bare.
        name: The name the model sees, instead of the function's.
        description: The description the model sees, instead of the docstring summary.
        risk: `"low"` for read-only tools, `"high"` for side effects (the default when not given:
            high, undeclared; see `Tool.risk_declared`).
        timeout: Seconds an agent lets one call run (default: the agent's `tool_timeout`).
    """
    if func is not None:
        return _make_tool(func, name, description, risk, timeout)
    return lambda f: _make_tool(f, name, description, risk, timeout)


def _strict_input(model: type[BaseModel]) -> type[BaseModel]:
    # Pydantic ignores unknown keys by default; a model that says nothing about extras gets a
    # subclass that forbids them, so a misspelled argument is reported instead of dropped.
    if model.model_config.get("extra") is not None:
        return model
    namespace = {
        "model_config": ConfigDict(extra="forbid"),
        "__module__": model.__module__,
        "__qualname__": model.__qualname__,
        "__doc__": model.__doc__,
    }
    return type(model.__name__, (model,), namespace)


def define_tool(
    *,
    name: str,
    input: type[BaseModel],
    execute: Callable[..., Any],
    description: str | None = None,
    risk: Risk | None = None,
    timeout: float | None = None,
) -> Tool:
    """Make a `Tool` from a Pydantic model of its arguments and a function that runs it.

    `execute(data)` receives the validated model instance; it may also take a `ToolContext`
    (a second parameter annotated `ToolContext` or left unannotated) and `Depends(...)`
    parameters. A model that does not configure `extra` rejects unknown keys; an explicit
    `extra="allow"`/`"ignore"` is respected.

    Args:
        name: The name the model sees.
        input: The Pydantic model of the arguments; its fields' descriptions go into the schema.
        execute: The function (sync or async) that does the work.
        description: What the tool does; defaults to the model's docstring summary.
        risk: `"low"` for read-only tools, `"high"` for side effects (the default when not given:
            high, undeclared; see `Tool.risk_declared`).
        timeout: Seconds an agent lets one call run (default: the agent's `tool_timeout`).
    """
    ToolDefinition(name=name)
    if not (isinstance(input, type) and issubclass(input, BaseModel)):
        raise TypeError(f"Tool {name!r}: input must be a Pydantic model class, got {input!r}.")
    model = _strict_input(input)
    plan = execute_plan(execute, name)
    summary = parse_docstring(input.__doc__).summary
    parameters = tidy_schema(model.model_json_schema())
    parameters.pop("description", None)  # the model's docstring, already the tool's description
    definition = ToolDefinition(
        name=name,
        description=description if description is not None else summary,
        parameters=parameters,
    )
    return _built(definition, risk, model, execute, plan, timeout)
