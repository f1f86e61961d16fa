"""Dependency injection for tools: `ToolContext`, `Dependency` and the `Depends` marker.

A tool asks for what it needs (a root directory, an HTTP client, a clock) instead of
reaching for globals, so an agent, a test or a CLI can hand it different things. Imports
only the standard library.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Protocol, TypeVar, cast, overload

__all__ = ["DEFAULT_TOOL_TIMEOUT", "CancelSignal", "Dependency", "Depends", "ToolContext"]

DEFAULT_TOOL_TIMEOUT = 900.0
"""Seconds an agent lets a tool run when neither the tool nor the agent says otherwise.

Longer than the longest `exec` command (600 s), so only a tool that hangs meets it."""

T = TypeVar("T")

_logger = logging.getLogger("toolwire.tools")
# Ids being created by the current task, to report a cycle instead of deadlocking on it.
_creating: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("toolwire_creating", default=())


class CancelSignal(Protocol):
    """Anything with `is_set()`: an `asyncio.Event`, or a `threading.Event` for sync tools."""

    def is_set(self) -> bool:
        """Whether cancellation was requested."""
        ...


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Dependency(Generic[T]):
    """Something a tool needs, identified by `id` and built by `create` when nobody supplies it.

    `create` may be sync or async and takes either no argument or the `ToolContext` (so one
    dependency can resolve another). Sync factories run on the event loop; do slow I/O in an
    async one. A `ToolContext` built for one call creates each dependency at most once.

    Attributes:
        id: The key that `ToolContext(deps=..., overrides=...)` use to supply the value.
        create: The factory used when neither overrides nor deps hold the id.
    """

    __slots__ = ("_wants_ctx", "create", "id")

    # Two overloads so type checkers infer `T` from an async factory's awaited value.
    @overload
    def __init__(self, id: str, create: Callable[..., Awaitable[T]]) -> None: ...

    @overload
    def __init__(self, id: str, create: Callable[..., T]) -> None: ...

    def __init__(self, id: str, create: Callable[..., Any]) -> None:
        self.id = id
        self.create = create
        self._wants_ctx = _takes_one_argument(create)

    async def build(self, ctx: ToolContext) -> T:
        """Run `create` (awaiting it when async); `ToolContext.resolve` is the cached way in."""
        value = self.create(ctx) if self._wants_ctx else self.create()
        if inspect.isawaitable(value):
            value = await value
        return cast(T, value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Dependency):
            return NotImplemented
        return (self.id, self.create) == (other.id, other.create)

    def __hash__(self) -> int:
        return hash((self.id, self.create))

    def __repr__(self) -> str:
        return f"Dependency(id={self.id!r}, create={self.create!r})"


def _is_factory(value: Any) -> bool:
    """Functions, methods and partials in `overrides` are factories; classes and objects are values."""
    return inspect.isfunction(value) or inspect.ismethod(value) or isinstance(value, functools.partial)


def _takes_one_argument(func: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # builtins such as dict have no signature
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in positional and p.default is inspect.Parameter.empty]
    return len(required) == 1


@dataclass(frozen=True, slots=True)
class Injected:
    """The default value `Depends` puts on a parameter; tools resolve it per call."""

    dependency: Dependency[Any]


def Depends(dependency: Dependency[T]) -> T:
    """Mark a tool parameter as injected; it leaves the schema and gets its value per call.

    Usage: `root: Path = Depends(ROOT)`. Typed as returning `T` so the parameter's annotation
    and default agree for type checkers.
    """
    return cast(T, Injected(dependency))


class ToolContext:
    """What a tool call may use besides its arguments: dependencies, a logger, a clock, cancellation.

    `ToolContext()` is valid; everything has a default. Values are found in this order:
    `overrides[id]`, then `deps[id]`, then `Dependency.create`. A value in `overrides` or `deps`
    may itself be a `Dependency`, whose factory then runs instead (once per call). In
    `overrides`, a function (sync or async, taking nothing or the context) is such a factory
    too; to override with a function as the value itself, wrap it in a `Dependency`.

    One context is one call's scope: it caches what it resolves. `Tool.execute_raw` runs every
    call in `ctx.for_call()`, a child that shares everything but the cache.

    Args:
        deps: Default values by dependency id (an agent's or application's defaults).
        overrides: Values by dependency id that win over `deps` and factories (tests, the CLI).
        logger: Where tools log; defaults to the `toolwire.tools` logger.
        now: The clock, returning an aware `datetime`; defaults to UTC now.
        cancel: A signal with `is_set()` that says the run is being cancelled.
    """

    __slots__ = ("_locks", "_now", "_values", "cancel", "deps", "logger", "overrides")

    def __init__(
        self,
        *,
        deps: Mapping[str, Any] | None = None,
        overrides: Mapping[str, Any] | None = None,
        logger: logging.Logger | None = None,
        now: Callable[[], datetime] | None = None,
        cancel: CancelSignal | None = None,
    ) -> None:
        self.deps: Mapping[str, Any] = deps if deps is not None else {}
        self.overrides: Mapping[str, Any] = overrides if overrides is not None else {}
        self.logger = logger if logger is not None else _logger
        self.cancel = cancel
        self._now = now if now is not None else _utc_now
        self._values: dict[str, Any] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def now(self) -> datetime:
        """The current time from the context's clock (replaceable in tests)."""
        return self._now()

    @property
    def cancelled(self) -> bool:
        """Whether the cancellation signal is set; long-running tools should check it."""
        return self.cancel is not None and self.cancel.is_set()

    def for_call(self) -> ToolContext:
        """A fresh per-call child: same deps, overrides, logger, clock and signal; empty cache."""
        return ToolContext(
            deps=self.deps, overrides=self.overrides, logger=self.logger, now=self._now, cancel=self.cancel
        )

    async def resolve(self, dependency: Dependency[T]) -> T:
        """The value for `dependency`, created at most once in this context."""
        key = dependency.id
        if key in self._values:
            return cast(T, self._values[key])
        chain = _creating.get()
        if key in chain:
            raise RuntimeError(f"Dependency cycle: {' -> '.join((*chain, key))}; break it by supplying one in deps.")
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            if key not in self._values:
                token = _creating.set((*chain, key))
                try:
                    self._values[key] = await self._produce(dependency)
                finally:
                    _creating.reset(token)
        return cast(T, self._values[key])

    async def _produce(self, dependency: Dependency[T]) -> T:
        if dependency.id in self.overrides:
            value = self.overrides[dependency.id]
            if _is_factory(value):  # a test's `overrides={"db": make_fake_db}`: built per call
                value = Dependency(dependency.id, value)
            return cast(T, await value.build(self) if isinstance(value, Dependency) else value)
        if dependency.id in self.deps:
            value = self.deps[dependency.id]
            return cast(T, await value.build(self) if isinstance(value, Dependency) else value)
        return await dependency.build(self)

    def __repr__(self) -> str:
        return f"ToolContext(deps={sorted(self.deps)!r}, overrides={sorted(self.overrides)!r})"
