"""PostgreSQL group commit (postgres/pipeline.py): the puts, put_writes and checkpoint reads ready in one
pass of the event loop go to the server as one pipeline and one transaction; each caller gets its own
statement's outcome once that transaction committed, and a statement that fails fails its write alone."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from orecast.checkpoint import StoreTimeout, open_checkpointer
from orecast.checkpoint.postgres.pipeline import KEEP_SECONDS
from tests.checkpoint.checkpoints import put
from tests.checkpoint.graphs import human, tool_loop


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


def groups_of(saver: Any) -> list[int]:
    """The size of every group the saver sends from now on."""
    sizes: list[int] = []
    send = saver._groups._send

    async def counted(group: list[Any], conn: Any) -> Any:
        sizes.append(len(group))
        return await send(group, conn)

    saver._groups._send = counted
    return sizes


def stored_checkpoints(url: str) -> dict[str, int]:
    """Checkpoints per thread, as another connection sees them (only what was committed)."""
    with psycopg.connect(url, autocommit=True) as conn:
        return dict(conn.execute("SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id").fetchall())


async def test_concurrent_writes_share_a_round_trip_and_are_committed_on_return(clean_postgres_url: str) -> None:
    async with open_checkpointer(clean_postgres_url) as saver:
        threads = [f"t{i}" for i in range(8)]
        for thread_id in threads:  # a thread's first write is a transaction of its own
            await put(saver, thread_id, f"{thread_id}-first")
        sizes = groups_of(saver)
        await asyncio.gather(*(put(saver, thread_id, f"{thread_id}-second") for thread_id in threads))
        assert sum(sizes) == 8 and len(sizes) < 8 and max(sizes) > 1
        # each returned only once committed: another connection sees all of them
        assert stored_checkpoints(clean_postgres_url) == {thread_id: 2 for thread_id in threads}
        # a graph's turns on several threads at once read back what they wrote
        graph = tool_loop(saver)
        await asyncio.gather(*(graph.ainvoke({"messages": [human(i)]}, cfg(f"g{i}")) for i in range(6)))
        states = await asyncio.gather(*(graph.aget_state(cfg(f"g{i}")) for i in range(6)))
        assert [s.values["messages"][0].content for s in states] == [human(i).content for i in range(6)]


async def test_a_failing_write_fails_alone(clean_postgres_url: str) -> None:
    async with open_checkpointer(clean_postgres_url, lock_timeout=0.5) as saver:
        # sorted last in its group: the writes before it ran, and were rolled back with it
        threads = [*(f"t{i}" for i in range(5)), "zlocked"]
        for thread_id in threads:
            await put(saver, thread_id, f"{thread_id}-first")
        sizes = groups_of(saver)
        async with await psycopg.AsyncConnection.connect(clean_postgres_url) as other:
            await other.execute("SELECT 1 FROM threads WHERE thread_id = 'zlocked' FOR UPDATE")
            outcomes = await asyncio.gather(
                *(put(saver, thread_id, f"{thread_id}-second") for thread_id in threads), return_exceptions=True
            )
            await other.rollback()
        assert isinstance(outcomes[-1], StoreTimeout) and "lock" in str(outcomes[-1])
        assert outcomes[:-1] == [None] * 5
        assert max(sizes) > 1  # the locked write shared its group with others, which ran again without it
        assert stored_checkpoints(clean_postgres_url) == {"zlocked": 1, **{t: 2 for t in threads[:-1]}}
        await put(saver, "zlocked", "zlocked-third")  # and the saver writes that thread again
        assert stored_checkpoints(clean_postgres_url)["zlocked"] == 2


async def test_a_write_cancelled_before_its_group_left_never_runs(clean_postgres_url: str) -> None:
    async with open_checkpointer(clean_postgres_url, lock_timeout=5) as saver:
        saver._groups.max_groups = 1  # the second write waits for the first group
        for thread_id in ("locked", "waiting"):
            await put(saver, thread_id, f"{thread_id}-first")
        async with await psycopg.AsyncConnection.connect(clean_postgres_url) as other:
            await other.execute("SELECT 1 FROM threads WHERE thread_id = 'locked' FOR UPDATE")
            first = asyncio.create_task(put(saver, "locked", "locked-second"))
            while not saver._groups._groups or saver._groups._waiting:
                await asyncio.sleep(0.01)  # until its group is at the server, waiting for the lock
            second = asyncio.create_task(put(saver, "waiting", "waiting-second"))
            while not saver._groups._waiting:
                await asyncio.sleep(0.01)
            second.cancel()
            with pytest.raises(asyncio.CancelledError):
                await second
            await other.rollback()
        await first
        assert stored_checkpoints(clean_postgres_url) == {"locked": 2, "waiting": 1}
        await put(saver, "waiting", "waiting-third")
        assert stored_checkpoints(clean_postgres_url) == {"locked": 2, "waiting": 2}


async def test_a_write_cancelled_at_the_server_settles_before_its_caller_goes_on(clean_postgres_url: str) -> None:
    async with open_checkpointer(clean_postgres_url, lock_timeout=1) as saver:
        await put(saver, "locked", "first")
        async with await psycopg.AsyncConnection.connect(clean_postgres_url) as other:
            await other.execute("SELECT 1 FROM threads WHERE thread_id = 'locked' FOR UPDATE")
            write = asyncio.create_task(put(saver, "locked", "second"))
            while not saver._groups._groups or saver._groups._waiting:
                await asyncio.sleep(0.01)
            write.cancel()
            started = asyncio.get_running_loop().time()
            with pytest.raises(asyncio.CancelledError):
                await write
            # it returned once its statement ended (here: the lock timeout), not while still running
            assert asyncio.get_running_loop().time() - started > 0.5
            await other.rollback()
        assert stored_checkpoints(clean_postgres_url) == {"locked": 1}
        await put(saver, "locked", "third")  # the thread is written again (its cache was dropped)
        assert stored_checkpoints(clean_postgres_url) == {"locked": 2}
        assert (await saver.aget_thread("locked")).checkpoint_count == 2


async def test_statements_deallocated_behind_the_saver_are_prepared_again(clean_postgres_url: str) -> None:
    async with open_checkpointer(clean_postgres_url) as saver:
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(1)]}, cfg("t"))
        # every pooled connection loses its prepared statements (what a DEALLOCATE ALL by a pooler,
        # or by psycopg after a rolled-back transaction, does)
        held = [await saver.pool.getconn() for _ in range(saver.pool.get_stats()["pool_size"])]
        for conn in held:
            await conn.execute("DEALLOCATE ALL")
        for conn in held:
            await saver.pool.putconn(conn)
        await graph.ainvoke({"messages": [human(2)]}, cfg("t"))
        state = await graph.aget_state(cfg("t"))
        assert [m.content for m in state.values["messages"]][::4] == [human(1).content, human(2).content]
        assert (await saver.aget_thread("t")).message_count == 8


async def test_the_runners_connection_is_kept_between_groups_checked_and_given_back(clean_postgres_url: str) -> None:
    async with open_checkpointer(clean_postgres_url) as saver:
        await put(saver, "t", "first")  # (a transaction of its own)
        await put(saver, "t", "second")
        (kept,) = saver._groups._kept
        await put(saver, "t", "third")
        assert saver._groups._kept == [kept]  # the same connection, not one from the pool
        # its backend ends between groups (a killed backend, a restart): the next write does not fail
        with psycopg.connect(clean_postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (kept.conn.info.backend_pid,))
        for _ in range(100):
            if not kept.watched:  # its goodbye was seen
                break
            await asyncio.sleep(0.01)
        await put(saver, "t", "fourth")
        assert stored_checkpoints(clean_postgres_url) == {"t": 4}
        assert kept.gone and saver._groups._kept[0] is not kept
        # back to the pool once the writes stop
        await asyncio.sleep(KEEP_SECONDS + 0.5)
        stats = saver.pool.get_stats()
        assert not saver._groups._kept and stats["pool_available"] == stats["pool_size"]
