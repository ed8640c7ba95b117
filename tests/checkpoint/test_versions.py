"""Channel versions are strings like the official savers'; stores written with float versions keep working."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from orecast.checkpoint import base, open_checkpointer
from orecast.checkpoint.migrations import pending, statements
from orecast.checkpoint.postgres.saver import PostgresCheckpointer
from orecast.checkpoint.sqlite.saver import SqliteCheckpointer
from tests.checkpoint.conftest import raw_sql, stored_values
from tests.checkpoint.graphs import delta_graph, human, tool_loop
from tests.checkpoint.test_graphs import assert_same_as_memory


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def float_version(current: Any, channel: None) -> float:
    """How earlier orecast versions numbered channel versions (stored as JSON numbers)."""
    if current is None:
        count = 0
    elif isinstance(current, str):
        count = int(current.split(".")[0])
    else:
        count = int(current)
    return count + 1 + random.randint(1, 999_999) / 1_000_000


async def test_versions_are_ordered_strings(saver) -> None:
    official = InMemorySaver()
    ours = [saver.get_next_version(None, None)]
    for _ in range(11):
        ours.append(saver.get_next_version(ours[-1], None))
    assert all(isinstance(v, str) and len(v) == 49 for v in ours)
    assert ours == sorted(ours)
    assert [int(v.split(".")[0]) for v in ours] == list(range(1, 13))
    # Either saver continues the other's versions, and the order holds across them.
    theirs = official.get_next_version(ours[-1], None)
    assert ours[-1] < theirs < saver.get_next_version(theirs, None)


async def test_store_written_with_float_versions_keeps_working(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference, delta_reference = tool_loop(InMemorySaver()), delta_graph(InMemorySaver())
    # The store as an earlier orecast wrote it: float versions, read back as floats.
    monkeypatch.setattr(base, "with_string_versions", lambda checkpoint: checkpoint)
    async with open_checkpointer(store_url) as old:
        old.get_next_version = float_version
        graph, delta = tool_loop(old), delta_graph(old)
        for turn in range(3):
            for g in (graph, reference):
                await g.ainvoke({"messages": [human(turn)]}, cfg("old"))
            for g in (delta, delta_reference):
                await g.ainvoke({"messages": [human(turn)], "log": [{"input": turn}]}, cfg("delta"))
    stored = [(version,) for version, _kind, _value in stored_values(store_url, "messages")]
    assert stored and all("." in v and len(v) < 20 for (v,) in stored)  # e.g. "3.139121"

    monkeypatch.undo()
    async with open_checkpointer(store_url) as new:
        graph, delta = tool_loop(new), delta_graph(new)
        await assert_same_as_memory(graph, reference, "old")
        checkpoint = (await new.aget_tuple(cfg("old"))).checkpoint
        assert all(isinstance(v, str) for v in checkpoint["channel_versions"].values())
        # Continue, fork from a checkpoint written with float versions, and prune.
        for turn in range(3, 5):
            for g in (graph, reference):
                await g.ainvoke({"messages": [human(turn)]}, cfg("old"))
            for g in (delta, delta_reference):
                await g.ainvoke({"messages": [human(turn)], "log": [{"input": turn}]}, cfg("delta"))
        await assert_same_as_memory(graph, reference, "old")
        await assert_same_as_memory(delta, delta_reference, "delta")
        old_snapshots = [s async for s in graph.aget_state_history(cfg("old"))]
        first_turn = next(s for s in reversed(old_snapshots) if s.values.get("messages"))
        forked = await graph.aupdate_state(first_turn.config, {"messages": [human(50)]})
        assert [m.id for m in (await graph.aget_state(forked)).values["messages"]] == [
            m.id for m in first_turn.values["messages"]
        ] + [human(50).id]
        await new.aprune(["old"], strategy="keep_latest")
        assert (await graph.aget_state(cfg("old"))).values["messages"][-1].id == human(50).id


@pytest.mark.parametrize("store_url", ["sqlite", "postgres"], indirect=True)
async def test_store_written_with_padded_versions_is_migrated(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Versions are stored short; a store that holds them padded (before migration sqlite/003,
    postgres/004) is shortened by the migration and reads, continues and prunes the same. No MySQL
    store ever held padded versions: that dialect stored short ones from its start."""
    reference = tool_loop(InMemorySaver())
    # The store as the previous orecast wrote it: padded versions in checkpoints and values.
    monkeypatch.setattr(base, "with_short_versions", lambda checkpoint: checkpoint)
    monkeypatch.setattr(base, "version_key", lambda version: version)
    # and every value in a row of its own (PostgreSQL keeps small ones in the checkpoint since 007,
    # SQLite since `inline_values`)
    monkeypatch.setattr(PostgresCheckpointer, "inline_values", False)
    monkeypatch.setattr(SqliteCheckpointer, "inline_values", False)
    async with open_checkpointer(store_url) as old:
        graph = tool_loop(old)
        for turn in range(3):
            for g in (graph, reference):
                await g.ainvoke({"messages": [human(turn)]}, cfg("padded"))
    monkeypatch.undo()
    stored = raw_sql(store_url, "SELECT version FROM channel_values WHERE channel = 'messages'")
    assert stored and all(len(v) == 49 for (v,) in stored)
    if store_url.startswith("sqlite"):
        raw_sql(store_url, "DELETE FROM orecast_migrations WHERE version >= 3")
        # SQLite cannot add a column "if not exists": take back what the later thread TTL migration
        # (sqlite/005) added, as a store from before it would be.
        for undo in (
            "DROP INDEX threads_own_ttl", "ALTER TABLE threads DROP COLUMN ttl_seconds",
            "ALTER TABLE threads DROP COLUMN ttl_strategy", "ALTER TABLE threads DROP COLUMN swept_updated_at",
            "DROP TABLE sweep_runs",
        ):
            raw_sql(store_url, undo)
    else:  # migration 004 again (the later ones changed the layout and do not run twice)
        (_version, script), *_later = pending("postgres", 3)
        for statement in statements(script):
            raw_sql(store_url, statement)

    async with open_checkpointer(store_url) as new:
        stored = raw_sql(store_url, "SELECT version FROM channel_values WHERE channel = 'messages'")
        assert stored and all(len(v) < 30 and not v.startswith("0") for (v,) in stored)
        graph = tool_loop(new)
        await assert_same_as_memory(graph, reference, "padded")
        checkpoint = (await new.aget_tuple(cfg("padded"))).checkpoint
        assert all(len(v) == 49 for v in checkpoint["channel_versions"].values())
        assert "short_versions" not in checkpoint
        for turn in range(3, 5):
            for g in (graph, reference):
                await g.ainvoke({"messages": [human(turn)]}, cfg("padded"))
        await assert_same_as_memory(graph, reference, "padded")
        before = (await graph.aget_state(cfg("padded"))).values["messages"]
        await new.aprune(["padded"], strategy="keep_latest")
        assert (await graph.aget_state(cfg("padded"))).values["messages"] == before


async def test_checkpoint_rows_hold_short_versions(saver, store_url: str) -> None:
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(1)]}, cfg("short"))
    rows = raw_sql(store_url, "SELECT checkpoint FROM checkpoints WHERE thread_id = 'short'")
    stored = [json.loads(c) if isinstance(c, str) else c for (c,) in rows]
    assert stored and all(c["short_versions"] == 1 and "000000000000" not in json.dumps(c) for c in stored)
    tup = await saver.aget_tuple(cfg("short"))
    assert all(len(v) == 49 for v in tup.checkpoint["channel_versions"].values())
    assert all(len(v) == 49 for node in tup.checkpoint["versions_seen"].values() for v in node.values())
