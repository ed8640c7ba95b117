"""PostgreSQL faults: rows locked by another session, a server that goes away and comes back."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.base import copy_checkpoint
from langgraph.checkpoint.base.id import uuid6

from orecast.checkpoint import StoreTimeout, StoreUnavailable, open_checkpointer
from orecast.checkpoint.postgres import queries as pg_queries
from tests.checkpoint.checkpoints import put
from tests.checkpoint.graphs import human, tool_loop
from tests.checkpoint.throwaway_pg import ThrowawayServer


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def test_timeouts_are_set_on_every_connection(clean_postgres_url: str) -> None:
    async with open_checkpointer(clean_postgres_url) as saver:
        async with saver.pool.connection() as conn:
            cur = await conn.execute("SELECT current_setting('statement_timeout'), current_setting('lock_timeout')")
            assert await cur.fetchone() == ("30s", "10s")
    async with open_checkpointer(clean_postgres_url, statement_timeout=2.5, lock_timeout=0) as saver:
        async with saver.pool.connection() as conn:
            cur = await conn.execute("SELECT current_setting('statement_timeout'), current_setting('lock_timeout')")
            assert await cur.fetchone() == ("2500ms", "0")


async def test_timeouts_from_url_and_environment(clean_postgres_url: str, monkeypatch) -> None:
    monkeypatch.setenv("ORECAST_PG_STATEMENT_TIMEOUT", "7")
    monkeypatch.setenv("ORECAST_PG_LOCK_TIMEOUT", "3")
    async with open_checkpointer(clean_postgres_url + "&lock_timeout=0.5") as saver:
        async with saver.pool.connection() as conn:
            cur = await conn.execute("SELECT current_setting('statement_timeout'), current_setting('lock_timeout')")
            assert await cur.fetchone() == ("7s", "500ms")
    monkeypatch.setenv("ORECAST_PG_LOCK_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="ORECAST_PG_LOCK_TIMEOUT"):
        async with open_checkpointer(clean_postgres_url):
            pass


@pytest.mark.parametrize(
    ("timeouts", "what"),
    [({"lock_timeout": 0.3}, "lock"), ({"statement_timeout": 0.3, "lock_timeout": 0}, "statement")],
)
async def test_a_row_locked_elsewhere_times_out_with_a_clear_error(
    clean_postgres_url: str, timeouts: dict[str, float], what: str
) -> None:
    async with open_checkpointer(clean_postgres_url, **timeouts) as saver:
        await put(saver, "locked", "first")
        async with await psycopg.AsyncConnection.connect(clean_postgres_url) as other:
            await other.execute("SELECT 1 FROM threads WHERE thread_id = 'locked' FOR UPDATE")
            started = time.monotonic()
            with pytest.raises(StoreTimeout) as caught:
                # The bound only keeps a broken build from hanging the suite.
                await asyncio.wait_for(put(saver, "locked", "second"), 20)
            assert time.monotonic() - started < 5
            message = str(caught.value)
            assert "\n" not in message and what in message and "timeout" in message
            await other.rollback()
        # The saver is still usable once the lock is gone, and lost nothing stored before.
        await put(saver, "locked", "third")
        assert (await saver.aget_thread("locked")).checkpoint_count == 2


async def test_a_read_retries_once_on_a_dropped_connection(clean_postgres_url: str) -> None:
    async with open_checkpointer(clean_postgres_url) as saver:
        await put(saver, "kept", "hello")
        async with saver._read() as db:
            pid = (await db.connection()).info.backend_pid
            with psycopg.connect(clean_postgres_url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            await asyncio.sleep(0.2)
            row = await db.fetchone("SELECT thread_id FROM threads")
        assert row == ("kept",)


@pytest.fixture
def throwaway_server() -> Iterator[ThrowawayServer]:
    server = ThrowawayServer()
    server.start()
    try:
        yield server
    finally:
        server.remove()


@pytest.mark.slow
async def test_outage_fails_fast_and_recovers_without_a_failed_call(throwaway_server) -> None:
    async with open_checkpointer(throwaway_server.url, pool_size=4) as saver:
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(0)]}, cfg("t"))
        # Several pooled connections, all of which the restart will leave dead.
        await asyncio.gather(*(graph.aget_state(cfg("t")) for _ in range(4)))

        throwaway_server.stop()
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="database unavailable"):
            await asyncio.wait_for(saver.aget_tuple(cfg("t")), 60)
        with pytest.raises(StoreUnavailable, match="database unavailable"):
            await asyncio.wait_for(put(saver, "t2", "while down"), 60)
        assert time.monotonic() - started < 6

        throwaway_server.start()
        for _ in range(6):  # more calls than pooled connections: none may fail
            assert (await saver.aget_thread("t")).message_count == 4
        await graph.ainvoke({"messages": [human(1)]}, cfg("t"))
        state = await graph.aget_state(cfg("t"))
        assert len(state.values["messages"]) == 8
        assert (await saver.aget_thread("t")).message_count == 8


@pytest.mark.parametrize("write", ["put", "put_writes"])
async def test_a_write_racing_a_deletion_leaves_nothing_of_the_deleted_thread(
    clean_postgres_url: str, write: str
) -> None:
    """`delete_thread` in another process while a run writes: the write's statement saw the thread's
    row in its snapshot, stored its items and rows after the deletion's own deletes, and its thread's
    next incarnation (numbering from 1 again) later met an item number taken by them: every turn failed
    from then on (CorruptRowError or a duplicate item number)."""
    async with open_checkpointer(clean_postgres_url) as saver:
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(0)]}, cfg("d"))
        head = await saver.aget_tuple(cfg("d"))
        late = AIMessage("written while the thread was deleted", id="late")
        async with await psycopg.AsyncConnection.connect(clean_postgres_url) as other:
            for sql in pg_queries.DELETE_THREAD:  # what `adelete_thread` runs, left uncommitted
                await other.execute(sql, ("d",))
            if write == "put":
                child = copy_checkpoint(head.checkpoint)
                child["id"] = str(uuid6())
                child["channel_values"] = {"messages": [*head.checkpoint["channel_values"]["messages"], late]}
                child["channel_versions"] = {**child["channel_versions"], "messages": "9"}
                racing = saver.aput(head.config, child, {"source": "loop", "step": 9}, {"messages": "9"})
            else:
                racing = saver.aput_writes(head.config, [("messages", [late])], "late-task")
            task = asyncio.create_task(racing)
            await asyncio.sleep(0.5)  # its statement is on the server
            await other.commit()
        await asyncio.wait_for(task, 20)
        # It went to the thread as it is now (started again), with what it refers to.
        if write == "put":
            stored = await saver.aget_tuple(cfg("d"))
            assert stored.checkpoint["channel_values"]["messages"][-1].content == late.content
            assert (await saver.aget_thread("d")).checkpoint_count == 1
        for turn in range(1, 4):  # the new incarnation numbers items 1, 2, … again
            await graph.ainvoke({"messages": [human(turn)]}, cfg("d"))
        state = await graph.aget_state(cfg("d"))
        history = [s async for s in graph.aget_state_history(cfg("d"))]
        info = await saver.aget_thread("d")
        assert (info.message_count, info.checkpoint_count) == (len(state.values["messages"]), len(history))
