from __future__ import annotations

import asyncio
import functools
import logging
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from toolwire.tools import Dependency, Depends, ToolContext, define_tool, tool
from toolwire.types import ToolCall, ToolResult

CALL = ToolCall(id="call_1", name="t", arguments={})


class Counter:
    def __init__(self) -> None:
        self.count = 0

    def make(self) -> dict[str, int]:
        self.count += 1
        return {"n": self.count}


async def test_defaults_of_an_empty_context() -> None:
    ctx = ToolContext()
    before = datetime.now(UTC)
    now = ctx.now()
    assert before <= now <= datetime.now(UTC)
    assert now.tzinfo is UTC
    assert ctx.logger is logging.getLogger("toolwire.tools")
    assert ctx.cancelled is False
    assert (ctx.deps, ctx.overrides, ctx.cancel) == ({}, {}, None)


async def test_cancelled_follows_the_signal() -> None:
    for signal in (asyncio.Event(), threading.Event()):
        ctx = ToolContext(cancel=signal)
        assert ctx.cancelled is False
        signal.set()
        assert ctx.cancelled is True
        assert ctx.for_call().cancelled is True


async def test_resolve_order_override_then_deps_then_create() -> None:
    dep = Dependency("db", lambda: "created")
    assert await ToolContext().resolve(dep) == "created"
    assert await ToolContext(deps={"db": "default"}).resolve(dep) == "default"
    assert await ToolContext(deps={"db": "default"}, overrides={"db": "override"}).resolve(dep) == "override"
    assert await ToolContext(overrides={"other": "x"}).resolve(dep) == "created"


async def test_value_supplied_as_a_dependency_is_built() -> None:
    dep = Dependency("db", lambda: "created")
    ctx = ToolContext(overrides={"db": Dependency("db", lambda: "replacement factory")})
    assert await ctx.resolve(dep) == "replacement factory"


async def test_async_create_and_create_taking_ctx() -> None:
    async def open_client(ctx: ToolContext) -> str:
        await asyncio.sleep(0)
        base = await ctx.resolve(BASE)
        return f"client for {base}"

    BASE = Dependency("base", lambda: "http://a")
    CLIENT = Dependency("client", open_client)
    assert await ToolContext().resolve(CLIENT) == "client for http://a"
    assert await ToolContext(overrides={"base": "http://b"}).resolve(CLIENT) == "client for http://b"


async def test_builtin_factory_without_signature() -> None:
    assert await ToolContext().resolve(Dependency("d", dict)) == {}


async def test_one_creation_per_context_even_concurrently() -> None:
    counter = Counter()

    async def slow_make() -> dict[str, int]:
        await asyncio.sleep(0.01)
        return counter.make()

    dep = Dependency("c", slow_make)
    ctx = ToolContext()
    values = await asyncio.gather(*(ctx.resolve(dep) for _ in range(5)))
    assert values == [{"n": 1}] * 5
    assert counter.count == 1
    assert await ctx.for_call().resolve(dep) == {"n": 2}


async def test_cycle_is_reported() -> None:
    A: Dependency[Any] = Dependency("a", lambda ctx: ctx.resolve(B))
    B: Dependency[Any] = Dependency("b", lambda ctx: ctx.resolve(A))
    with pytest.raises(RuntimeError, match=r"^Dependency cycle: a -> b -> a;"):
        await ToolContext().resolve(A)


async def test_for_call_shares_everything_but_the_cache() -> None:
    def clock() -> datetime:
        return datetime(2024, 1, 2, tzinfo=UTC)

    log = logging.getLogger("test.tools")
    signal = asyncio.Event()
    parent = ToolContext(deps={"a": 1}, overrides={"b": 2}, logger=log, now=clock, cancel=signal)
    child = parent.for_call()
    assert child is not parent
    assert (child.deps, child.overrides, child.logger, child.now(), child.cancel) == (
        {"a": 1},
        {"b": 2},
        log,
        datetime(2024, 1, 2, tzinfo=UTC),
        signal,
    )


# --- injection into tools ---------------------------------------------------------------------

COUNTER = Counter()
SHARED = Dependency("shared", COUNTER.make)


@tool(name="t")
def twice(label: str, first: dict[str, int] = Depends(SHARED), again: dict[str, int] = Depends(SHARED)) -> list[Any]:
    return [label, first["n"], again["n"], first is again]


async def test_one_creation_per_call_and_fresh_per_call() -> None:
    start = COUNTER.count
    ctx = ToolContext()
    first = await twice.execute_raw({"label": "x"}, ctx, call=CALL)
    second = await twice.execute_raw({"label": "y"}, ctx, call=CALL)
    assert first.value == ["x", start + 1, start + 1, True]
    assert second.value == ["y", start + 2, start + 2, True]
    assert COUNTER.count == start + 2


ROOT = Dependency("root", lambda: Path("/default"))


@tool(name="t")
async def where(name: str, ctx: ToolContext, root: Path = Depends(ROOT)) -> dict[str, Any]:
    ctx.logger.info("looking up %s", name)
    return {"path": str(root / name), "at": ctx.now().isoformat()}


async def test_overrides_win_in_tools_and_ctx_is_injected(caplog: pytest.LogCaptureFixture) -> None:
    moment = datetime(2025, 5, 1, 12, tzinfo=UTC)
    ctx = ToolContext(
        deps={"root": Path("/deps")},
        overrides={"root": Path("/override")},
        now=lambda: moment,
        logger=logging.getLogger("test.where"),
    )
    with caplog.at_level(logging.INFO, logger="test.where"):
        result = await where.execute_raw('{"name": "f.txt"}', ctx, call=CALL)
    assert result == ToolResult(
        tool_call_id="call_1",
        name="t",
        kind="data",
        value={"path": "/override/f.txt", "at": "2025-05-01T12:00:00+00:00"},
    )
    assert [r.getMessage() for r in caplog.records] == ["looking up f.txt"]
    assert (await where.execute_raw({"name": "g"}, call=CALL)).value["path"] == "/default/g"


async def test_injected_names_cannot_be_sent_by_the_model() -> None:
    result = await where.execute_raw({"name": "f", "root": "/etc"}, call=CALL)
    assert result.kind == "error"
    assert "'root': unexpected argument; the accepted arguments are 'name'" in result.value


async def test_failing_dependency_becomes_error_result() -> None:
    def broken() -> str:
        raise ConnectionError("database is down")

    @tool(name="t")
    def uses(db: str = Depends(Dependency("db", broken))) -> str:
        return db

    assert (await uses.execute_raw({}, call=CALL)).value == "Tool 't' failed with ConnectionError: database is down"


class Empty(BaseModel):
    pass


async def test_define_tool_with_depends() -> None:
    async def execute(data: Empty, root: Path = Depends(ROOT)) -> str:
        return str(root)

    t = define_tool(name="t", description="d", input=Empty, execute=execute)
    assert (await t.execute_raw({}, ToolContext(overrides={"root": Path("/o")}), call=CALL)).value == "/o"


async def test_sync_tool_sees_cancel_signal_from_its_thread() -> None:
    signal = threading.Event()

    @tool(name="t")
    def poll(ctx: ToolContext) -> bool:
        signal.set()
        return ctx.cancelled

    assert (await poll.execute_raw({}, ToolContext(cancel=signal), call=CALL)).value is True


def test_dependency_repr_and_equality() -> None:
    def make() -> int:
        return 1

    assert Dependency("x", make) == Dependency("x", make)
    assert repr(Dependency("x", make)).startswith("Dependency(id='x', create=<function")


async def test_overrides_take_factories_created_once_per_call() -> None:
    made: list[str] = []

    def sync_factory() -> str:
        made.append("sync")
        return f"fake db {len(made)}"

    async def async_factory(ctx: ToolContext) -> str:
        made.append("async")
        return f"async db for {sorted(ctx.overrides)}"

    dep: Dependency[str] = Dependency("db", lambda: "real db")

    @tool(risk="low")
    async def query(db: str = Depends(dep)) -> str:
        """Query."""
        return db

    ctx = ToolContext(overrides={"db": sync_factory})
    assert [(await query.execute_raw({}, ctx)).value for _ in range(2)] == ["fake db 1", "fake db 2"]
    assert await ctx.resolve(dep) == await ctx.resolve(dep) == "fake db 3"  # cached within one context
    assert await ToolContext(overrides={"db": async_factory}).resolve(dep) == "async db for ['db']"
    assert await ToolContext(overrides={"db": functools.partial(str, "p")}).resolve(dep) == "p"
    assert await ToolContext(overrides={"db": str}).resolve(dep) is str  # a class is a value, not a factory
    assert made == ["sync", "sync", "sync", "async"]
