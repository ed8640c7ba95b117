"""PostgreSQL group commit (postgres/pipeline.py): the puts, put_writes and checkpoint reads ready in one
pass of the event loop go to the server as one pipeline and one transaction; each caller gets its own
statement's outcome once that transaction committed, and a statement that fails fails its write alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint import StoreTimeout, open_checkpointer
from orecast.checkpoint.observe import observe
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


async def test_concurrent_writes_share_a_round_trip_and_are_committed_on_return(fresh_postgres_url: str) -> None:
    async with open_checkpointer(fresh_postgres_url) as saver:
        threads = [f"t{i}" for i in range(8)]
        for thread_id in threads:  # a thread's first write is a transaction of its own
            await put(saver, thread_id, f"{thread_id}-first")
        sizes = groups_of(saver)
        await asyncio.gather(*(put(saver, thread_id, f"{thread_id}-second") for thread_id in threads))
        assert sum(sizes) == 8 and len(sizes) < 8 and max(sizes) > 1
        # each returned only once committed: another connection sees all of them
        assert stored_checkpoints(fresh_postgres_url) == {thread_id: 2 for thread_id in threads}
        # a graph's turns on several threads at once read back what they wrote
        graph = tool_loop(saver)
        await asyncio.gather(*(graph.ainvoke({"messages": [human(i)]}, cfg(f"g{i}")) for i in range(6)))
        states = await asyncio.gather(*(graph.aget_state(cfg(f"g{i}")) for i in range(6)))
        assert [s.values["messages"][0].content for s in states] == [human(i).content for i in range(6)]


async def test_a_failing_write_fails_alone(fresh_postgres_url: str) -> None:
    async with open_checkpointer(fresh_postgres_url, lock_timeout=0.5) as saver:
        # sorted last in its group: the writes before it ran, and were rolled back with it
        threads = [*(f"t{i}" for i in range(5)), "zlocked"]
        for thread_id in threads:
            await put(saver, thread_id, f"{thread_id}-first")
        sizes = groups_of(saver)
        async with await psycopg.AsyncConnection.connect(fresh_postgres_url) as other:
            await other.execute("SELECT 1 FROM threads WHERE thread_id = 'zlocked' FOR UPDATE")
            outcomes = await asyncio.gather(
                *(put(saver, thread_id, f"{thread_id}-second") for thread_id in threads), return_exceptions=True
            )
            await other.rollback()
        assert isinstance(outcomes[-1], StoreTimeout) and "lock" in str(outcomes[-1])
        assert outcomes[:-1] == [None] * 5
        assert max(sizes) > 1  # the locked write shared its group with others, which ran again without it
        assert stored_checkpoints(fresh_postgres_url) == {"zlocked": 1, **{t: 2 for t in threads[:-1]}}
        await put(saver, "zlocked", "zlocked-third")  # and the saver writes that thread again
        assert stored_checkpoints(fresh_postgres_url)["zlocked"] == 2


async def test_a_write_cancelled_before_its_group_left_never_runs(fresh_postgres_url: str) -> None:
    async with open_checkpointer(fresh_postgres_url, lock_timeout=5) as saver:
        saver._groups.max_groups = 1  # the second write waits for the first group
        for thread_id in ("locked", "waiting"):
            await put(saver, thread_id, f"{thread_id}-first")
        async with await psycopg.AsyncConnection.connect(fresh_postgres_url) as other:
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
        assert stored_checkpoints(fresh_postgres_url) == {"locked": 2, "waiting": 1}
        await put(saver, "waiting", "waiting-third")
        assert stored_checkpoints(fresh_postgres_url) == {"locked": 2, "waiting": 2}


async def test_a_write_cancelled_at_the_server_settles_before_its_caller_goes_on(fresh_postgres_url: str) -> None:
    async with open_checkpointer(fresh_postgres_url, lock_timeout=1) as saver:
        await put(saver, "locked", "first")
        async with await psycopg.AsyncConnection.connect(fresh_postgres_url) as other:
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
        assert stored_checkpoints(fresh_postgres_url) == {"locked": 1}
        await put(saver, "locked", "third")  # the thread is written again (its cache was dropped)
        assert stored_checkpoints(fresh_postgres_url) == {"locked": 2}
        assert (await saver.aget_thread("locked")).checkpoint_count == 2


async def test_statements_deallocated_behind_the_saver_are_prepared_again(fresh_postgres_url: str) -> None:
    async with open_checkpointer(fresh_postgres_url) as saver:
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


async def test_the_runners_connection_is_kept_between_groups_checked_and_given_back(fresh_postgres_url: str) -> None:
    async with open_checkpointer(fresh_postgres_url) as saver:
        await put(saver, "t", "first")  # (a transaction of its own)
        await put(saver, "t", "second")
        (kept,) = saver._groups._kept
        await put(saver, "t", "third")
        assert saver._groups._kept == [kept]  # the same connection, not one from the pool
        # its backend ends between groups (a killed backend, a restart): the next write does not fail
        with psycopg.connect(fresh_postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (kept.conn.info.backend_pid,))
        for _ in range(100):
            if not kept.watched:  # its goodbye was seen
                break
            await asyncio.sleep(0.01)
        await put(saver, "t", "fourth")
        assert stored_checkpoints(fresh_postgres_url) == {"t": 4}
        assert kept.gone and saver._groups._kept[0] is not kept
        # back to the pool once the writes stop
        await asyncio.sleep(KEEP_SECONDS + 0.5)
        stats = saver.pool.get_stats()
        assert not saver._groups._kept and stats["pool_available"] == stats["pool_size"]


# -- a thread's writes queue in order (pipeline.Chain) -------------------------------------------------


def conversation(count: int) -> dict[str, Any]:
    """A checkpoint whose `messages` hold `count` human messages: each put adds new items."""
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [HumanMessage(f"m{i}", id=f"m{i}") for i in range(count)]}
    cp["channel_versions"] = {"messages": str(count)}
    return cp


async def put_conversation(saver: Any, thread_id: str, cp: dict[str, Any], parent: dict[str, Any] | None) -> None:
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    if parent is not None:
        config["configurable"]["checkpoint_id"] = parent["id"]
    await saver.aput(config, cp, {"source": "loop", "step": 1}, {"messages": cp["channel_versions"]["messages"]})


async def at_the_server(saver: Any, thread_id: str) -> None:
    """Until the thread's first queued statement is at the server."""
    while not (queued := saver._groups._unsettled.get(thread_id.encode())) or queued[0].group is None:
        await asyncio.sleep(0.01)


async def messages_of(saver: Any, thread_id: str, cp: dict[str, Any]) -> list[str]:
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": cp["id"]}}
    fetched = await saver.aget_tuple(config)
    return [m.content for m in fetched.checkpoint["channel_values"]["messages"]]


@contextlib.asynccontextmanager
async def second_put_at_the_server(saver: Any, url: str) -> AsyncIterator[tuple[asyncio.Task[None], Any]]:
    """Thread t's first put stored, its second held at the server by another session's lock on the
    thread's row (until the block ends); yields the second's task and a function that starts the third
    put (whose checkpoint it returns too)."""
    first, second, third = conversation(2), conversation(4), conversation(6)
    await put_conversation(saver, "t", first, None)
    async with await psycopg.AsyncConnection.connect(url) as other:
        await other.execute("SELECT 1 FROM threads WHERE thread_id = 't' FOR UPDATE")
        held = asyncio.create_task(put_conversation(saver, "t", second, first))
        await at_the_server(saver, "t")
        yield held, lambda: (asyncio.create_task(put_conversation(saver, "t", third, second)), third)
        await other.rollback()


async def assert_the_third_is_the_head(saver: Any, third: dict[str, Any]) -> None:
    thread = await saver.aget_thread("t")
    assert thread.head_checkpoint_id == third["id"] and thread.message_count == 6
    saver.items.clear()  # read back from the database, not the cache
    assert await messages_of(saver, "t", third) == [f"m{i}" for i in range(6)]


async def test_a_threads_next_write_is_prepared_while_the_last_is_at_the_server_and_goes_after_it(
    fresh_postgres_url: str,
) -> None:
    async with open_checkpointer(fresh_postgres_url, lock_timeout=5) as saver:
        async with second_put_at_the_server(saver, fresh_postgres_url) as (second, put_third):
            following, third = put_third()
            for _ in range(100):
                if len(saver._groups._unsettled[b"t"]) == 2:
                    break
                await asyncio.sleep(0.01)
            # the thread's turn let the third put in while the second is held at the server ...
            queued = saver._groups._unsettled[b"t"]
            assert len(queued) == 2 and queued[0].group is not None
            # ... where the third does not go until the second has committed
            await asyncio.sleep(0.2)
            assert queued[1].group is None and not following.done()
        await asyncio.gather(second, following)
        assert stored_checkpoints(fresh_postgres_url) == {"t": 3}
        await assert_the_third_is_the_head(saver, third)


async def test_writes_prepared_after_one_that_failed_start_again(fresh_postgres_url: str) -> None:
    async with open_checkpointer(fresh_postgres_url, lock_timeout=0.5) as saver:
        async with second_put_at_the_server(saver, fresh_postgres_url) as (failing, put_third):
            # prepared on the second put's items (m2, m3), which its failure leaves unstored
            following, third = put_third()
            await asyncio.wait([failing])
        with pytest.raises(StoreTimeout):
            await failing
        await following  # started again from what is stored, and stored m2 and m3 itself
        assert stored_checkpoints(fresh_postgres_url) == {"t": 2}
        await assert_the_third_is_the_head(saver, third)


async def test_writes_prepared_after_one_cancelled_unsent_start_again(fresh_postgres_url: str) -> None:
    async with open_checkpointer(fresh_postgres_url, lock_timeout=5) as saver:
        saver._groups.max_groups = 1  # the thread's writes wait behind another thread's group
        first, second, third = conversation(2), conversation(4), conversation(6)
        await put(saver, "blocker", "blocker-first")
        await put_conversation(saver, "t", first, None)
        async with await psycopg.AsyncConnection.connect(fresh_postgres_url) as other:
            await other.execute("SELECT 1 FROM threads WHERE thread_id = 'blocker' FOR UPDATE")
            blocked = asyncio.create_task(put(saver, "blocker", "blocker-second"))
            await at_the_server(saver, "blocker")
            cancelled = asyncio.create_task(put_conversation(saver, "t", second, first))
            following = asyncio.create_task(put_conversation(saver, "t", third, second))
            for _ in range(100):
                if len(saver._groups._unsettled.get(b"t", [])) == 2:
                    break
                await asyncio.sleep(0.01)
            assert len(saver._groups._unsettled[b"t"]) == 2  # both waiting, neither sent
            cancelled.cancel()
            with pytest.raises(asyncio.CancelledError):
                await cancelled
            await other.rollback()
        await asyncio.gather(blocked, following)
        assert stored_checkpoints(fresh_postgres_url) == {"blocker": 2, "t": 2}
        await assert_the_third_is_the_head(saver, third)


async def test_a_write_on_a_transaction_of_its_own_waits_for_the_threads_queued_writes(
    fresh_postgres_url: str,
) -> None:
    async with open_checkpointer(fresh_postgres_url, lock_timeout=5) as saver:
        ran: list[tuple[Any, str]] = []

        @contextlib.contextmanager
        def statement(dialect: str, sql: str) -> Iterator[None]:
            ran.append((asyncio.current_task(), sql))
            yield

        observe(saver, statement=statement)
        async with second_put_at_the_server(saver, fresh_postgres_url) as (queued, put_third):
            saver.items.drop("t")  # forgotten (evicted): the next write is a transaction that reads the thread
            alone, third = put_third()
            await asyncio.sleep(0.3)
            assert not [sql for task, sql in ran if task is alone]  # it has not started
        await asyncio.gather(queued, alone)
        await assert_the_third_is_the_head(saver, third)
