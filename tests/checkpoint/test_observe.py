"""`observe`: a real graph's checkpoint operations and SQL statements reach the hooks, on every dialect,
and the saver still does what it did; `pool_usage` follows connections really held."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterator
from typing import Any

from orecast.checkpoint.observe import observe, pool_usage
from tests.checkpoint.graphs import human, tool_loop
from tests.checkpoint.test_saver_api import Gadget, checkpoint_with


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def test_operations_and_statements_reach_the_hooks(saver) -> None:
    timings: list[tuple[str, float]] = []
    spans: list[str] = []
    statements: list[tuple[str, str, str]] = []  # (dialect, statement, the operation it ran in)

    @contextlib.contextmanager
    def span(name: str) -> Iterator[None]:
        spans.append(name)
        yield

    # Statements open at once, per task: a thread's writes overlap (the next one starts once the last
    # one's statement is queued), but within one operation a statement is entered once.
    depth: dict[Any, int] = {}

    @contextlib.contextmanager
    def statement(dialect: str, sql: str) -> Iterator[None]:
        statements.append((dialect, sql, spans[-1] if spans else ""))
        task = asyncio.current_task()
        depth[task] = depth.get(task, 0) + 1
        assert depth[task] == 1, "a statement is observed once, not once per connection opener"
        try:
            yield
        finally:
            depth[task] -= 1

    observe(saver, timing=lambda name, seconds: timings.append((name, seconds)), span=span, statement=statement)
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(1)]}, cfg("t"))
    history = [s async for s in graph.aget_state_history(cfg("t"))]
    state = await graph.aget_state(cfg("t"))

    names = {name for name, _ in timings}
    assert names == {"put", "put_writes", "get_tuple", "list"}
    assert all(seconds >= 0 for _, seconds in timings)
    assert sum(name == "put" for name, _ in timings) == len(history)  # one put per stored checkpoint
    assert sorted(spans) == sorted(name for name, _ in timings)
    # the statements are the dialect's real SQL, inside the operations that ran them
    assert {dialect for dialect, _, _ in statements} == {saver.dialect}
    assert any("INSERT" in sql.upper() for _, sql, op in statements if op in ("put", "put_writes"))
    assert any("SELECT" in sql.upper() for _, sql, op in statements if op == "get_tuple")
    # every put's checkpoint insert reached the hook (on MySQL inside the one batch a put sends)
    puts = sum(name == "put" for name, _ in timings)
    assert sum(bool(re.search(r"INSERT (OR IGNORE )?INTO checkpoints", sql)) for _, sql, _op in statements) >= puts
    # and what the graph stored reads back as before
    assert [m.content for m in state.values["messages"]][0] == human(1).content
    assert len(history) >= 3


async def test_a_listing_left_early_is_counted_once(saver) -> None:
    timings: list[str] = []
    observe(saver, timing=lambda name, seconds: timings.append(name))
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(1)]}, cfg("t"))
    timings.clear()
    listing = saver.alist(cfg("t"))
    first = await anext(listing)
    assert first is not None and timings == []
    await listing.aclose()
    assert timings == ["list"]


async def settled(saver) -> dict[str, int] | None:
    """The usage once background work (SQLite's WAL checkpoint after the migrations holds its
    writer) is done."""
    wal = getattr(saver, "_wal_checkpoint", None)
    if wal is not None:
        await wal  # (a worker thread's copy and sync of the WAL: its time depends on the machine's load)
    for _ in range(100):
        usage = pool_usage(saver)
        if usage is None or usage["in_use"] == 0:
            return usage
        await asyncio.sleep(0.05)
    return usage


async def test_pool_usage_follows_connections_held(saver) -> None:
    idle = await settled(saver)
    assert idle is not None and idle["in_use"] == 0 and idle["max"] >= 1 and idle["waiting"] == 0
    async with saver._write():
        held = pool_usage(saver)
    assert held is not None and held["in_use"] == 1
    assert (await settled(saver))["in_use"] == 0



async def test_a_clone_is_observed_on_its_own_state(strict_saver) -> None:
    """LangGraph copies a saver for a graph's allowlist (`with_allowlist`): the copy reports to the same
    hooks and works with its own serializer, not the original's."""
    timings: list[str] = []
    observe(strict_saver, timing=lambda name, seconds: timings.append(name))
    allowed = strict_saver.with_allowlist([Gadget])
    assert allowed is not strict_saver and type(allowed) is type(strict_saver)
    cp = checkpoint_with({"gadget": Gadget(11)})
    await allowed.aput(cfg("allowed"), cp, {"source": "loop", "step": 0}, {"gadget": "1"})
    tup = await allowed.aget_tuple(cfg("allowed"))
    assert tup.checkpoint["channel_values"]["gadget"] == Gadget(11)  # the clone's allowlist applied
    assert timings == ["put", "get_tuple"]
    strict_saver.items.clear()
    strict = await strict_saver.aget_tuple(cfg("allowed"))
    assert not isinstance(strict.checkpoint["channel_values"]["gadget"], Gadget)


async def test_a_state_schema_view_made_before_is_observed_too(saver) -> None:
    """A service builds its graphs (each on its view of the saver for the graph's state schema) before
    its metrics and tracing watch the saver: those views must report as the saver does."""
    from orecast.checkpoint.upcast import StateSchema

    view = saver.with_state_schema(StateSchema(1))
    timings: list[str] = []
    observe(saver, timing=lambda name, _seconds: timings.append(name))
    graph = tool_loop(view)
    await graph.ainvoke({"messages": [human(1)]}, cfg("v"))
    assert "put" in timings and "get_tuple" in timings
    assert view.schema_version == 1 and (await graph.aget_state(cfg("v"))).values["messages"]
