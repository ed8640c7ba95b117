"""The threads table: kept with each put, searchable, updatable, deleted with the thread."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

import asyncmy
import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

import orecast.checkpoint.base as base
from orecast.checkpoint import core
from orecast.checkpoint.mysql.saver import connect_kwargs
from orecast.checkpoint.urls import parse_url
from tests.checkpoint.conftest import dialect_of, ph, raw_sql
from tests.checkpoint.graphs import deep_agent, human, tool_loop


def cfg(thread_id: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, **extra}}


def checkpoint_with(values: dict[str, Any], versions: dict[str, str]) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = values
    cp["channel_versions"] = versions
    return cp


async def test_thread_row_created_by_first_put(saver) -> None:
    assert await saver.aget_thread("t") is None
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(1)]}, cfg("t"))
    thread = await saver.aget_thread("t")
    assert thread is not None
    assert thread.thread_id == "t"
    assert thread.status == "idle"
    checkpoints = [c async for c in saver.alist(cfg("t"))]
    assert thread.checkpoint_count == len(checkpoints) == 5
    assert thread.head_checkpoint_id == checkpoints[0].config["configurable"]["checkpoint_id"]
    assert thread.message_count == 4
    assert thread.preview == "answer-0001 after 3 messages: price-0001: 101.5 USD/dmt"
    assert thread.created_at <= thread.updated_at
    first_updated = thread.updated_at

    # PostgreSQL moves `updated_at` at most every 10 ms (a turn's puts update the row in place): a turn
    # as quick as this graph's may come within that.
    await asyncio.sleep(0.02)
    await graph.ainvoke({"messages": [human(2)]}, cfg("t"))
    thread = await saver.aget_thread("t")
    assert thread.message_count == 8
    assert thread.checkpoint_count == 10
    assert thread.updated_at > first_updated
    latest = await saver.aget_tuple(cfg("t"))
    assert thread.head_checkpoint_id == latest.config["configurable"]["checkpoint_id"]
    d = thread.to_dict()
    assert d["thread_id"] == "t" and isinstance(d["created_at"], str) and d["title"] is None


async def test_preview_of_tool_call_message(saver) -> None:
    cp = checkpoint_with(
        {
            "messages": [
                HumanMessage("hi", id="1"),
                AIMessage("", id="2", tool_calls=[{"name": "get_price", "args": {}, "id": "c1"}]),
            ]
        },
        {"messages": "1"},
    )
    await saver.aput(cfg("p"), cp, {"source": "loop", "step": 0}, {"messages": "1"})
    thread = await saver.aget_thread("p")
    assert thread.preview == "→ get_price"
    assert thread.message_count == 2


async def test_failed_put_leaves_no_thread_row(saver) -> None:
    class NotSerialisable:
        pass

    cp = checkpoint_with({"x": NotSerialisable()}, {"x": "1"})
    with pytest.raises(Exception):  # noqa: B017 - whatever the serializer raises
        await saver.aput(cfg("broken"), cp, {"source": "loop", "step": 0}, {"x": "1"})
    # The thread row is written in the same transaction as the checkpoint: rolled back together.
    assert await saver.aget_thread("broken") is None
    assert await saver.aget_tuple(cfg("broken")) is None
    assert await saver.acount_threads() == 0


async def test_metadata_seeded_from_config(saver) -> None:
    graph = tool_loop(saver)
    config = {
        "configurable": {"thread_id": "seed", "user_id": "u1", "__secret": "no"},
        "metadata": {"tenant": "acme", "priority": 3},
    }
    await graph.ainvoke({"messages": [human(1)]}, config)
    thread = await saver.aget_thread("seed")
    assert thread.metadata["user_id"] == "u1"
    assert thread.metadata["tenant"] == "acme"
    assert thread.metadata["priority"] == 3
    for key in ("__secret", "thread_id", "source", "step", "parents", "run_id"):
        assert key not in thread.metadata, key


async def _make_threads(saver) -> None:
    graph = tool_loop(saver)
    users = ["alice", "bob", "alice", "carol", "alice"]
    for n, user in enumerate(users):
        await graph.ainvoke(
            {"messages": [human(n)]}, {"configurable": {"thread_id": f"th-{n}", "user_id": user}}
        )
        await asyncio.sleep(0.002)  # distinct timestamps


async def test_search_count_sort_paginate(saver) -> None:
    await _make_threads(saver)
    assert await saver.acount_threads() == 5
    assert await saver.acount_threads(metadata={"user_id": "alice"}) == 3
    alice = await saver.asearch_threads(
        metadata={"user_id": "alice"}, sort_by="thread_id", sort_order="asc"
    )
    assert [t.thread_id for t in alice] == ["th-0", "th-2", "th-4"]
    assert await saver.asearch_threads(metadata={"user_id": "nobody"}) == []

    newest = await saver.asearch_threads()
    assert [t.thread_id for t in newest] == ["th-4", "th-3", "th-2", "th-1", "th-0"]
    oldest = await saver.asearch_threads(sort_by="created_at", sort_order="asc")
    assert [t.thread_id for t in oldest] == ["th-0", "th-1", "th-2", "th-3", "th-4"]
    page = await saver.asearch_threads(sort_by="thread_id", sort_order="asc", limit=2, offset=1)
    assert [t.thread_id for t in page] == ["th-1", "th-2"]
    assert await saver.asearch_threads(limit=2, offset=4, sort_by="thread_id") == [
        await saver.aget_thread("th-0")
    ]
    assert await saver.asearch_threads(limit=0) == []

    # Touching an old thread moves it to the top of the default (updated_at desc) order.
    await tool_loop(saver).ainvoke({"messages": [human(9)]}, cfg("th-1"))
    assert (await saver.asearch_threads(limit=1))[0].thread_id == "th-1"

    assert await saver.acount_threads(status="idle") == 5
    assert await saver.acount_threads(status="error") == 0
    assert [t.thread_id for t in await saver.asearch_threads(status="idle", limit=100)] == [
        "th-1",
        "th-4",
        "th-3",
        "th-2",
        "th-0",
    ]


async def test_update_thread_and_title_search(saver) -> None:
    await _make_threads(saver)
    info = await saver.aupdate_thread(
        "th-2", title="Iron ore OUTLOOK Q3", metadata={"tags": ["ore"], "n": 1}
    )
    assert info.title == "Iron ore OUTLOOK Q3"
    assert info.metadata == {
        "user_id": "alice",
        "title": "Iron ore OUTLOOK Q3",
        "tags": ["ore"],
        "n": 1,
    }
    info = await saver.aupdate_thread("th-2", metadata={"n": 2})
    assert info.metadata == {
        "user_id": "alice",
        "title": "Iron ore OUTLOOK Q3",
        "tags": ["ore"],
        "n": 2,
    }
    assert info.message_count == 4  # counters untouched by an update

    found = await saver.asearch_threads(title="outlook")
    assert [t.thread_id for t in found] == ["th-2"]
    assert await saver.acount_threads(title="OUTLOOK q3") == 1
    assert await saver.acount_threads(title="missing") == 0
    assert await saver.acount_threads(metadata={"tags": ["ore"]}) == 1
    assert await saver.acount_threads(metadata={"user_id": "alice", "n": 2}) == 1
    assert await saver.acount_threads(metadata={"user_id": "bob", "n": 2}) == 0

    info = await saver.aupdate_thread("th-3", status="error")
    assert info.status == "error"
    assert [t.thread_id for t in await saver.asearch_threads(status="error")] == ["th-3"]

    # Updating a thread that has no checkpoint yet creates its row.
    info = await saver.aupdate_thread("new", title="draft")
    assert info.checkpoint_count == 0 and info.title == "draft"
    assert await saver.acount_threads() == 6


async def test_delete_thread_removes_row_and_data(saver, store_url: str) -> None:
    await _make_threads(saver)
    await saver.adelete_thread("th-1")
    assert await saver.aget_thread("th-1") is None
    assert await saver.acount_threads() == 4
    assert await saver.aget_tuple(cfg("th-1")) is None
    p = ph(store_url)
    for table in ("checkpoints", "channel_values", "items", "writes", "threads"):
        assert raw_sql(
            store_url, f"SELECT count(*) FROM {table} WHERE thread_id = {p}", ("th-1",)
        ) == [(0,)]
    assert (await saver.aget_thread("th-2")).message_count == 4

    # Re-creating the deleted thread starts from scratch (no stale cached items).
    await tool_loop(saver).ainvoke({"messages": [human(5, "again")]}, cfg("th-1"))
    state = await tool_loop(saver).aget_state(cfg("th-1"))
    assert [m.content for m in state.values["messages"]][0] == "again"
    assert (await saver.aget_thread("th-1")).message_count == 4


@pytest.mark.parametrize(
    "kwargs",
    [
        {"status": "sleeping"},
        {"sort_by": "title"},
        {"sort_by": "updated_at; DROP TABLE threads"},
        {"sort_order": "sideways"},
        {"limit": -1},
        {"offset": -5},
    ],
)
async def test_bad_search_input(saver, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        await saver.asearch_threads(**kwargs)


async def test_bad_count_and_update_input(saver) -> None:
    with pytest.raises(ValueError):
        await saver.acount_threads(status="unknown")
    with pytest.raises(ValueError):
        await saver.aupdate_thread("x", status="paused")
    assert await saver.aget_thread("x") is None


async def test_interrupt_write_before_its_checkpoint_keeps_status(saver) -> None:
    """LangGraph's async durability may store an interrupt write before its checkpoint's put commits."""
    parent = checkpoint_with({"messages": [HumanMessage("hi", id="1")]}, {"messages": "1"})
    parent_cfg = await saver.aput(
        cfg("race"), parent, {"source": "input", "step": -1}, {"messages": "1"}
    )
    child = checkpoint_with({"messages": [HumanMessage("hi", id="1")]}, {"messages": "1"})
    child_cfg = cfg("race", checkpoint_ns="", checkpoint_id=child["id"])
    await saver.aput_writes(child_cfg, [("__interrupt__", [{"value": "approve?"}])], "task-1")
    assert (await saver.aget_thread("race")).status == "interrupted"
    await saver.aput(parent_cfg, child, {"source": "loop", "step": 0}, {})
    # The head checkpoint carries an interrupt: the thread is still waiting for the user.
    tup = await saver.aget_tuple(cfg("race"))
    assert [w[1] for w in tup.pending_writes] == ["__interrupt__"]
    assert (await saver.aget_thread("race")).status == "interrupted"


async def test_delta_thread_counts(saver) -> None:
    """deepagents keeps `messages` in a DeltaChannel: the thread's counters must still be right."""
    agent = deep_agent(saver)
    for turn in range(2):
        await agent.ainvoke(
            {"messages": [{"role": "user", "content": f"price {turn}?"}]}, cfg("da")
        )
    state = await agent.aget_state(cfg("da"))
    thread = await saver.aget_thread("da")
    assert thread.message_count == len(state.values["messages"]) == 8
    assert thread.preview is not None and thread.preview.startswith("Turn 2: tool said")


async def test_metadata_seed_when_writes_arrive_first(saver) -> None:
    """With async durability a task's writes can commit before the first checkpoint's put."""
    first = checkpoint_with({}, {})
    await saver.aput_writes(
        cfg("seed-race", checkpoint_ns="", checkpoint_id=first["id"]), [("messages", "x")], "task-1"
    )
    config = {"configurable": {"thread_id": "seed-race", "user_id": "u9"}}
    await saver.aput(config, first, {"source": "input", "step": -1, "user_id": "u9"}, {})
    assert (await saver.aget_thread("seed-race")).metadata.get("user_id") == "u9"


async def test_credentials_in_the_run_config_are_never_stored(saver, store_url: str) -> None:
    graph = tool_loop(saver)
    config = {
        "configurable": {"thread_id": "creds", "user_id": "u7", "api_key": "sk-live-123", "auth_token": "t0k"},
        "metadata": {"DEEPSEEK_API_KEY": "sk-deep-456", "tenant": "acme"},
    }
    await graph.ainvoke({"messages": [human(1)]}, config)
    thread = await saver.aget_thread("creds")
    assert thread.metadata == {"user_id": "u7", "tenant": "acme"}
    async for tup in saver.alist({"configurable": {"thread_id": "creds"}}):
        assert not {"api_key", "auth_token", "DEEPSEEK_API_KEY"} & set(tup.metadata)
        assert tup.metadata["user_id"] == "u7"
    for secret in ("sk-live-123", "t0k", "sk-deep-456"):
        for table, column in (("checkpoints", "metadata"), ("threads", "metadata"), ("checkpoints", "checkpoint")):
            text = "CHAR" if dialect_of(store_url) == "mysql" else "TEXT"
            sql = f"SELECT count(*) FROM {table} WHERE CAST({column} AS {text}) LIKE {ph(store_url)}"
            rows = raw_sql(store_url, sql, (f"%{secret}%",))
            assert rows == [(0,)], (secret, table)


@asynccontextmanager
async def status_set_uncommitted(url: str, thread_id: str, status: str) -> AsyncIterator[None]:
    """Another session sets the thread's status and holds its transaction open until the block ends,
    then commits (as a run's end does, a moment after a metadata edit began)."""
    dialect, target = dialect_of(url), parse_url(url).target
    if dialect == "sqlite":
        conn = sqlite3.connect(target, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE threads SET status = ? WHERE thread_id = ?", (status, thread_id))
        try:
            yield
        finally:
            conn.execute("COMMIT")
            conn.close()
    elif dialect == "mysql":
        conn = await asyncmy.connect(**connect_kwargs(url), autocommit=False)
        try:
            async with conn.cursor() as cur:
                await cur.execute("UPDATE threads SET status = %s WHERE thread_id = %s", (status, thread_id))
            yield
            await conn.commit()
        finally:
            conn.close()
    else:
        async with await psycopg.AsyncConnection.connect(target) as conn:
            await conn.execute("UPDATE threads SET status = %s WHERE thread_id = %s", (status, thread_id))
            yield
            await conn.commit()


async def test_a_metadata_edit_keeps_a_status_set_while_it_ran(saver, store_url: str) -> None:
    """The edit merged into the row as read and wrote the read status back: a run's end committed in
    between (busy -> idle) was undone, and the thread showed busy with no run."""
    await saver.aupdate_thread("t", metadata={"a": 1}, status="busy")
    async with status_set_uncommitted(store_url, "t", "idle"):
        edit = asyncio.create_task(saver.aupdate_thread("t", metadata={"b": 2}))
        await asyncio.sleep(0.5)
        assert not edit.done(), "the edit waits for the other session's transaction"
    thread = await edit
    assert thread.status == "idle"
    assert thread.metadata == {"a": 1, "b": 2}
    assert (await saver.aget_thread("t")).status == "idle"


def stop_clock(monkeypatch: pytest.MonkeyPatch, clock: list[datetime]) -> None:
    """Every module of the saver that took `core.utc_now` reads `clock[0]` instead: a thread row created
    by the real clock a little after the test's start was, with julianday's rounding to the ms, only 10 ms
    older than a put 11 ms after the start (CI failed when only `base` read the stopped clock)."""
    real = core.utc_now
    for module in list(sys.modules.values()):
        if module.__name__.startswith("orecast.checkpoint") and getattr(module, "utc_now", None) is real:
            monkeypatch.setattr(module, "utc_now", lambda: clock[0])


async def test_updated_at_moves_at_most_every_10_ms(saver, store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn's puts come a few ms apart: moving `updated_at` at each would rewrite its index entry each
    time (SQLite rewrites it whenever the column is assigned; PostgreSQL could not update the row in
    place). With the clock stopped, a put leaves it as it is; 10 ms later, a put moves it, and so does one
    right after a keep_latest sweep marked the thread. MySQL moves
    it at every put (the same rule there gave MariaDB no less work: docs/benchmarks.md)."""
    every_put = dialect_of(store_url) == "mysql"
    start = base.utc_now()
    clock = [start]
    stop_clock(monkeypatch, clock)
    config = await saver.aput(cfg("t", checkpoint_ns=""), checkpoint_with({"n": 1}, {"n": "1"}), {"step": 1}, {"n": "1"})
    first = (await saver.aget_thread("t")).updated_at
    clock[0] = start + timedelta(milliseconds=9)
    config = await saver.aput(config, checkpoint_with({"n": 2}, {"n": "2"}), {"step": 2}, {"n": "2"})
    thread = await saver.aget_thread("t")
    assert (thread.updated_at, thread.checkpoint_count) == (clock[0] if every_put else first, 2)
    clock[0] = start + timedelta(milliseconds=11)
    config = await saver.aput(config, checkpoint_with({"n": 3}, {"n": "3"}), {"step": 3}, {"n": "3"})
    thread = await saver.aget_thread("t")
    assert thread.updated_at == clock[0] and thread.checkpoint_count == 3
    # A keep_latest sweep marks the thread at its `updated_at`, and takes it for active again once that
    # moves: the next put moves it at once.
    raw_sql(store_url, "UPDATE threads SET swept_updated_at = updated_at")
    clock[0] = start + timedelta(milliseconds=12)
    await saver.aput(config, checkpoint_with({"n": 4}, {"n": "4"}), {"step": 4}, {"n": "4"})
    assert (await saver.aget_thread("t")).updated_at == clock[0]
