"""SQLite's migration 006: pending writes keyed by (thread, checkpoint id, namespace, task, index). A store
written before it (the old key) reads back identically once upgraded, and its threads go on."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from orecast.checkpoint import migrations, open_checkpointer
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import human, subgraph_parent, tool_loop
from tests.checkpoint.test_graphs import assert_same_as_memory
from tests.checkpoint.test_packed_rows import _every_tuple

OLD_KEY = ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"]
NEW_KEY = ["thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "idx"]


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def primary_key(url: str) -> list[str]:
    """The columns of `writes`' primary key, in key order."""
    columns = {r[5]: r[1] for r in raw_sql(url, "PRAGMA table_info(writes)") if r[5]}
    return [columns[n] for n in sorted(columns)]


@pytest.mark.parametrize("new_store_url", ["sqlite"], indirect=True)
async def test_store_before_migration_006_reads_back_identically(
    new_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_url = new_store_url  # migrated up to 005 only, here
    before_006 = migrations.pending

    def pending(dialect: str, current: int) -> list[tuple[int, str]]:
        return [(v, script) for v, script in before_006(dialect, current) if v < 6]

    monkeypatch.setattr(migrations, "pending", pending)
    sub_ref, loop_ref = subgraph_parent(InMemorySaver()), tool_loop(InMemorySaver())
    async with open_checkpointer(store_url) as old:
        # pending writes in a subgraph's namespace (its interrupt) and in the root one (several turns)
        for graph in (subgraph_parent(old), sub_ref):
            await graph.ainvoke({"messages": [human(1)], "notes": []}, cfg("sub"))
            await graph.ainvoke(Command(resume="fine"), cfg("sub"))
            await graph.ainvoke({"messages": [human(2)], "notes": []}, cfg("sub"))
        for graph in (tool_loop(old), loop_ref):
            for turn in range(3):
                await graph.ainvoke({"messages": [human(turn)]}, cfg("loop"))
        before = {t: await _every_tuple(old, t) for t in ("sub", "loop")}
    monkeypatch.undo()
    assert primary_key(store_url) == OLD_KEY
    assert raw_sql(store_url, "SELECT MAX(version) FROM orecast_migrations") == [(5,)]
    rows_before = sorted(raw_sql(store_url, "SELECT * FROM writes"))
    assert any(ns for _t, ns, *_ in rows_before) and len(rows_before) > 20

    async with open_checkpointer(store_url) as new:
        assert primary_key(store_url) == NEW_KEY
        assert raw_sql(store_url, "SELECT MAX(version) FROM orecast_migrations") == [(6,)]
        assert sorted(raw_sql(store_url, "SELECT * FROM writes")) == rows_before
        assert {t: await _every_tuple(new, t) for t in ("sub", "loop")} == before
        sub, loop = subgraph_parent(new), tool_loop(new)
        ours = await sub.aget_state(cfg("sub"), subgraphs=True)
        theirs = await sub_ref.aget_state(cfg("sub"), subgraphs=True)
        assert ours.tasks[0].state.values == theirs.tasks[0].state.values
        assert [i.value for i in ours.interrupts] == [i.value for i in theirs.interrupts] != []
        for graph in (sub, sub_ref):
            await graph.ainvoke(Command(resume="good"), cfg("sub"))
        await assert_same_as_memory(sub, sub_ref, "sub")
        for graph in (loop, loop_ref):
            await graph.ainvoke({"messages": [human(3)]}, cfg("loop"))
        await assert_same_as_memory(loop, loop_ref, "loop")
        kept = (await loop.aget_state(cfg("loop"))).values["messages"]
        await new.aprune(["loop", "sub"], strategy="keep_latest")
        assert (await loop.aget_state(cfg("loop"))).values["messages"] == kept
