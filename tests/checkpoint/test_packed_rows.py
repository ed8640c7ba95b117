"""PostgreSQL's packed rows (migration 007): small channel values in their checkpoint's row, writes one row
per task; a store written before the migration is converted, and writes keep their per-index semantics.
MySQL's packed values (migration 008) and SQLite's (`inline_values`): the same for channel values (writes
keep a row each)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.types import ERROR

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.postgres.saver import PostgresCheckpointer
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import human, tool_loop
from tests.checkpoint.test_graphs import assert_same_as_memory


def cfg(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    configurable = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def count(url: str, sql: str) -> int:
    return raw_sql(url, sql)[0][0]


async def turns_and_values(saver: Any, reference: Any, values: dict[str, Any]) -> None:
    """Three turns of the tool loop on thread "t" (and on `reference`), and an input checkpoint holding
    `values` (each at version 1.5) on thread "values"."""
    graph = tool_loop(saver)
    for turn in range(3):
        for g in (graph, reference):
            await g.ainvoke({"messages": [human(turn)]}, {"configurable": {"thread_id": "t"}})
    versions = dict.fromkeys(values, "1.5")
    cp = empty_checkpoint()
    cp["channel_values"] = dict(values)
    cp["channel_versions"] = versions
    await saver.aput(cfg("values"), cp, {"source": "input", "step": -1}, versions)


@pytest.mark.parametrize("store_url", ["postgres"], indirect=True)
async def test_store_before_migration_007_is_converted(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reference = tool_loop(InMemorySaver())
    # The store as the previous orecast wrote it: every value a row, a row per write.
    monkeypatch.setattr(PostgresCheckpointer, "inline_values", False)
    big = "x" * 500  # a value too large for the checkpoint's row
    async with open_checkpointer(store_url) as old:
        await turns_and_values(old, reference, {"big": big, "small": 7})
    monkeypatch.undo()
    for sql in (
        "CREATE TABLE old_writes AS SELECT * FROM writes",
        "DROP VIEW writes",
        "DROP TABLE task_writes",
        "ALTER TABLE old_writes RENAME TO writes",
        "ALTER TABLE writes ADD PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)",
        "DELETE FROM orecast_migrations WHERE version >= 7",
    ):
        raw_sql(store_url, sql)
    writes_before = raw_sql(store_url, "SELECT * FROM writes ORDER BY 1, 2, 3, 4, 5")
    values_before = count(store_url, "SELECT count(*) FROM channel_values")
    assert values_before > 20

    async with open_checkpointer(store_url) as new:
        # Writes: one row per task, read through the `writes` view exactly as before.
        assert raw_sql(store_url, "SELECT * FROM writes ORDER BY 1, 2, 3, 4, 5") == writes_before
        assert count(store_url, "SELECT count(*) FROM task_writes") < len(writes_before)
        # Values: only the large one keeps a row; the small ones are in every checkpoint that has them.
        assert raw_sql(store_url, "SELECT thread_id, channel FROM channel_values") == [("values", "big")]
        docs = [
            d if isinstance(d, dict) else json.loads(d)
            for (d,) in raw_sql(store_url, "SELECT checkpoint FROM checkpoints WHERE thread_id = 't'")
        ]
        with_messages = [d for d in docs if "messages" in d["channel_versions"]]
        assert len(with_messages) == len(docs) - 1  # all but the first input's
        assert all(d["vals"]["messages"][0] == "items" for d in with_messages)
        graph = tool_loop(new)
        await assert_same_as_memory(graph, reference, "t")
        assert (await new.aget_tuple(cfg("values"))).checkpoint["channel_values"] == {"big": big, "small": 7}
        for turn in range(3, 5):
            for g in (graph, reference):
                await g.ainvoke({"messages": [human(turn)]}, {"configurable": {"thread_id": "t"}})
        await assert_same_as_memory(graph, reference, "t")
        before = (await graph.aget_state({"configurable": {"thread_id": "t"}})).values["messages"]
        await new.aprune(["t"], strategy="keep_latest")
        assert (await graph.aget_state({"configurable": {"thread_id": "t"}})).values["messages"] == before
        await new.acopy_thread("t", "t2")
        assert (await graph.aget_state({"configurable": {"thread_id": "t2"}})).values["messages"] == before


async def test_writes_of_one_task_merge_by_index(saver) -> None:
    """A task writing twice at one checkpoint: a regular write keeps the first value of its index, a
    special one (an error) replaces it — as with a row per write."""
    cp = empty_checkpoint()
    cp["channel_values"] = {"v": 1}
    cp["channel_versions"] = {"v": "1.1"}
    config = await saver.aput(cfg("w"), cp, {"source": "input", "step": -1}, {"v": "1.1"})
    await saver.aput_writes(config, [("a", 1)], "task-1")
    await saver.aput_writes(config, [("a", 2), ("b", 3)], "task-1")
    await saver.aput_writes(config, [("a", 1)], "task-1")  # the same again: nothing changes
    await saver.aput_writes(config, [(ERROR, "first")], "task-2")
    await saver.aput_writes(config, [(ERROR, "second")], "task-2")
    saver.items.clear()
    pending = (await saver.aget_tuple(config)).pending_writes
    assert sorted(pending) == [("task-1", "a", 1), ("task-1", "b", 3), ("task-2", ERROR, "second")]


async def test_small_values_live_in_the_checkpoint_row(saver, store_url: str) -> None:
    graph = tool_loop(saver)
    for turn in range(3):
        await graph.ainvoke({"messages": [human(turn)]}, {"configurable": {"thread_id": "s"}})
    if store_url.startswith("postgres"):
        assert count(store_url, "SELECT count(*) FROM channel_values") == 0
        # An unchanged value is copied into the next checkpoint's row: every checkpoint reads alone.
        assert count(store_url, "SELECT count(*) FROM checkpoints WHERE checkpoint->'vals'->'messages' IS NULL") == 1
    elif store_url.startswith("mysql"):
        assert count(store_url, "SELECT COUNT(*) FROM channel_values") == 0
        assert count(store_url, "SELECT COUNT(*) FROM checkpoints WHERE JSON_EXTRACT(checkpoint, '$.vals.messages') IS NULL") == 1
    else:
        assert count(store_url, "SELECT count(*) FROM channel_values") == 0
        assert count(store_url, "SELECT count(*) FROM checkpoints WHERE json_extract(checkpoint, '$.vals.messages') IS NULL") == 1
    saver.items.clear()
    history = [s async for s in graph.aget_state_history({"configurable": {"thread_id": "s"}})]
    assert [len(s.values.get("messages", [])) for s in history[:5]] == [12, 11, 10, 9, 8]


async def _every_tuple(saver: Any, thread_id: str) -> list[tuple[Any, ...]]:
    """Every checkpoint of a thread as the saver reads it (list and get), all namespaces."""
    out = []
    async for tup in saver.alist({"configurable": {"thread_id": thread_id}}):
        got = await saver.aget_tuple(tup.config)
        for t in (tup, got):
            out.append((t.config, t.checkpoint, t.metadata, t.parent_config, sorted(map(repr, t.pending_writes))))
    return out


@pytest.mark.parametrize("store_url", ["mysql"], indirect=True)
async def test_mysql_store_before_migration_008_reads_back_identically(
    store_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A MySQL store written before migration 008 (every value a row, no "vals") reads back exactly as
    before once upgraded; small values move into their checkpoints' documents (bytes and a channel name that
    needs quoting too), a large one keeps its row, a document whose versions are not short is left as it was and still reads; the
    thread goes on, prunes and copies."""
    from orecast.checkpoint import base
    from orecast.checkpoint.mysql.saver import MysqlCheckpointer

    reference = tool_loop(InMemorySaver())
    monkeypatch.setattr(MysqlCheckpointer, "inline_values", False)
    big = "x" * 500
    async with open_checkpointer(store_url) as old:
        await turns_and_values(old, reference, {"big": big, "small": 7, "bytes": b"\x00\x01", "名前 \"q\"": [1, 2]})
        # A document whose versions stay padded (as another writer may leave them): left without "vals".
        with monkeypatch.context() as padded:
            padded.setattr(base, "with_short_versions", lambda checkpoint: checkpoint)
            await tool_loop(old).ainvoke({"messages": [human(9)]}, {"configurable": {"thread_id": "padded"}})
        before = {t: await _every_tuple(old, t) for t in ("t", "values", "padded")}
    monkeypatch.undo()
    raw_sql(store_url, "DELETE FROM orecast_migrations WHERE version >= 8")
    values_before = count(store_url, "SELECT COUNT(*) FROM channel_values")
    assert values_before > 20
    assert count(store_url, "SELECT COUNT(*) FROM checkpoints WHERE JSON_EXTRACT(checkpoint, '$.vals') IS NOT NULL") == 0

    with caplog.at_level(logging.WARNING, logger="asyncmy"):
        async with open_checkpointer(store_url):
            pass
    # The migration made the server note nothing (asyncmy logs a statement's warnings and notes; the
    # CREATE TABLE IF NOT EXISTS of the migrations table notes that it exists at every open).
    assert [r.getMessage() for r in caplog.records if "orecast_migrations" not in r.getMessage()] == []
    async with open_checkpointer(store_url) as new:
        assert count(store_url, "SELECT MAX(version) FROM orecast_migrations") >= 8
        # Only the large value keeps a row, besides the padded thread's.
        assert raw_sql(store_url, "SELECT thread_id, channel FROM channel_values WHERE thread_id <> 'padded'") == [
            ("values", "big")
        ]
        assert count(store_url, "SELECT COUNT(*) FROM channel_values WHERE thread_id = 'padded'") > 0
        docs = [
            json.loads(d)
            for (d,) in raw_sql(store_url, "SELECT checkpoint FROM checkpoints WHERE thread_id IN ('t', 'values')")
        ]
        assert all("vals" in d for d in docs)
        with_messages = [d for d in docs if "messages" in d["channel_versions"]]
        assert all(d["vals"]["messages"][0] == "items" for d in with_messages)
        assert (
            count(store_url, "SELECT COUNT(*) FROM checkpoints WHERE thread_id = 'padded' AND JSON_EXTRACT(checkpoint, '$.vals') IS NULL")
            > 0
        )
        new.items.clear()
        after = {t: await _every_tuple(new, t) for t in ("t", "values", "padded")}
        assert after == before
        assert (await new.aget_tuple(cfg("values"))).checkpoint["channel_values"] == {
            "big": big, "small": 7, "bytes": b"\x00\x01", "名前 \"q\"": [1, 2]
        }
        graph = tool_loop(new)
        await assert_same_as_memory(graph, reference, "t")
        for turn in range(3, 5):
            for g in (graph, reference):
                await g.ainvoke({"messages": [human(turn)]}, {"configurable": {"thread_id": "t"}})
        await assert_same_as_memory(graph, reference, "t")
        await tool_loop(new).ainvoke({"messages": [human(10)]}, {"configurable": {"thread_id": "padded"}})
        messages = (await graph.aget_state({"configurable": {"thread_id": "t"}})).values["messages"]
        await new.aprune(["t", "padded"], strategy="keep_latest")
        assert (await graph.aget_state({"configurable": {"thread_id": "t"}})).values["messages"] == messages
        assert len((await graph.aget_state({"configurable": {"thread_id": "padded"}})).values["messages"]) == 8
        await new.acopy_thread("t", "t2")
        assert (await graph.aget_state({"configurable": {"thread_id": "t2"}})).values["messages"] == messages
    # The migration may run again (tests re-run earlier migrations): nothing changes.
    rows = raw_sql(store_url, "SELECT * FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id")
    raw_sql(store_url, "DELETE FROM orecast_migrations WHERE version >= 8")
    async with open_checkpointer(store_url):
        pass
    assert raw_sql(store_url, "SELECT * FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id") == rows


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
async def test_sqlite_store_with_every_value_in_a_row_reads_back_identically(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite store written before `inline_values` (every value a row, no "vals") is not converted: its
    checkpoints read their rows exactly as before, and the checkpoints written after them keep their
    small values in their documents, inherited ones too; the thread goes on, prunes and copies, and a
    DeltaChannel's history finds values of either kind."""
    from orecast.checkpoint.sqlite.saver import SqliteCheckpointer
    from tests.checkpoint.graphs import delta_graph

    reference, delta_reference = tool_loop(InMemorySaver()), delta_graph(InMemorySaver())
    monkeypatch.setattr(SqliteCheckpointer, "inline_values", False)
    big = "x" * 500
    values = {"big": big, "small": 7, "bytes": b"\x00\x01", "名前 \"q\"": [1, 2]}
    async with open_checkpointer(store_url) as old:
        await turns_and_values(old, reference, values)
        for turn in range(2):
            for g in (delta_graph(old), delta_reference):
                await g.ainvoke({"messages": [human(turn)], "log": [{"input": turn}]}, {"configurable": {"thread_id": "d"}})
        before = {t: await _every_tuple(old, t) for t in ("t", "values", "d")}
    monkeypatch.undo()
    # (a DeltaChannel's snapshots keep a row each, as on the other dialects)
    rows_before = count(store_url, "SELECT count(*) FROM channel_values WHERE kind <> 'delta'")
    assert rows_before > 20
    assert count(store_url, "SELECT count(*) FROM checkpoints WHERE json_extract(checkpoint, '$.vals') IS NOT NULL") == 0

    async with open_checkpointer(store_url) as new:
        new.items.clear()
        assert {t: await _every_tuple(new, t) for t in ("t", "values", "d")} == before
        assert (await new.aget_tuple(cfg("values"))).checkpoint["channel_values"] == values
        graph, delta = tool_loop(new), delta_graph(new)
        for turn in range(3, 5):
            for g in (graph, reference):
                await g.ainvoke({"messages": [human(turn)]}, {"configurable": {"thread_id": "t"}})
            for g in (delta, delta_reference):
                await g.ainvoke({"messages": [human(turn)], "log": [{"input": turn}]}, {"configurable": {"thread_id": "d"}})
        # no new rows of small values: the new checkpoints hold them, inherited ones too
        assert count(store_url, "SELECT count(*) FROM channel_values WHERE kind <> 'delta'") == rows_before
        newest = json.loads(raw_sql(store_url, "SELECT checkpoint FROM checkpoints WHERE thread_id = 't' ORDER BY checkpoint_id DESC LIMIT 1")[0][0])
        assert newest["vals"]["messages"][0] == "items"
        new.items.clear()
        await assert_same_as_memory(graph, reference, "t")
        await assert_same_as_memory(delta, delta_reference, "d")
        messages = (await graph.aget_state({"configurable": {"thread_id": "t"}})).values["messages"]
        await new.aprune(["t", "d"], strategy="keep_latest")
        assert (await graph.aget_state({"configurable": {"thread_id": "t"}})).values["messages"] == messages
        # the old checkpoints' rows went with them
        assert count(store_url, "SELECT count(*) FROM channel_values WHERE thread_id = 't'") == 0
        await new.acopy_thread("t", "t2")
        assert (await graph.aget_state({"configurable": {"thread_id": "t2"}})).values["messages"] == messages
