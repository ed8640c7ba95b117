"""A thread's writes queue in order where the thread's lock lets the next write in once the last one is
queued, not committed (queued.py: PostgreSQL's group commit, MySQL's group writer). The next write of a
thread is prepared while the last one waits at the server, and goes to the server after it; a write
prepared after one that failed, was cancelled unsent, or stored nothing starts again from what is
stored; a write on a transaction of its own waits for the thread's queued writes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncmy
import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint import StoreTimeout, open_checkpointer
from orecast.checkpoint.mysql import groups
from orecast.checkpoint.mysql.saver import connect_kwargs
from orecast.checkpoint.observe import observe
from tests.checkpoint.checkpoints import put
from tests.checkpoint.conftest import raw_sql

# Seconds within which a queued write settles once nothing holds it (a write left waiting for one that
# never settles would wait for ever).
SETTLES = 20


@pytest.fixture(params=["postgres", "mariadb", "mysql-way"])
def url(request: pytest.FixtureRequest) -> str:
    """A clean store on PostgreSQL, and on MariaDB sending groups both as MariaDB's compound statement
    and statement by statement, the way MySQL 8 runs them (`_mariadb` set in `opened`)."""
    request.node.mariadb = request.param == "mariadb"
    return request.getfixturevalue("clean_postgres_url" if request.param == "postgres" else "clean_mysql_url")


@contextlib.asynccontextmanager
async def opened(request: pytest.FixtureRequest, url: str, **options: Any) -> AsyncIterator[Any]:
    async with open_checkpointer(url, **options) as saver:
        if saver.dialect == "mysql":
            saver._mariadb = request.node.mariadb
        yield saver


def queued(saver: Any, thread_id: str) -> list[Any]:
    """The thread's writes queued and not settled yet, oldest first."""
    return saver._groups._queued.of(thread_id.encode() if saver.dialect == "postgresql" else thread_id)


def at_the_server(write: Any) -> bool:
    return write.group is not None


def one_group_at_a_time(saver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """One group at the server at a time, which holds the next ones back however long it waits."""
    if saver.dialect == "postgresql":
        saver._groups.max_groups = 1
    else:
        monkeypatch.setattr(groups, "IN_FLIGHT", 1)
        monkeypatch.setattr(groups, "STALL_SECONDS", 60)


def groups_sent(saver: Any) -> list[list[str]]:
    """The threads of every group's writes the saver sends from now on."""
    sent: list[list[str]] = []
    if saver.dialect == "postgresql":
        run_group = saver._groups._run_group

        async def counted(group: list[Any], kept: Any) -> Any:
            sent.append([write.chain.thread.decode() for write in group if write.chain is not None])
            return await run_group(group, kept)

        saver._groups._run_group = counted
    else:
        send = saver._groups._send

        async def counted(group: Any) -> Any:  # type: ignore[misc]
            sent.append([member.thread_id for member in group.members])
            return await send(group)

        saver._groups._send = counted
    return sent


async def until(condition: Any) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never happened")


@contextlib.asynccontextmanager
async def row_locked(url: str, thread_id: str) -> AsyncIterator[None]:
    """Another session holds the thread's row locked until the block ends."""
    sql = "SELECT 1 FROM threads WHERE thread_id = %s FOR UPDATE"
    if url.startswith("mysql"):
        holder = await asyncmy.connect(**connect_kwargs(url), autocommit=False)
        try:
            async with holder.cursor() as cur:
                await cur.execute(sql, (thread_id,))
            yield
        finally:
            await holder.rollback()
            holder.close()
        return
    async with await psycopg.AsyncConnection.connect(url) as other:
        await other.execute(sql, (thread_id,))
        yield
        await other.rollback()


def stored_checkpoints(url: str) -> dict[str, int]:
    """Checkpoints per thread, as another connection sees them (only what was committed)."""
    return dict(raw_sql(url, "SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id"))


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
    async with row_locked(url, "t"):
        held = asyncio.create_task(put_conversation(saver, "t", second, first))
        await until(lambda: queued(saver, "t") and at_the_server(queued(saver, "t")[0]))
        yield held, lambda: (asyncio.create_task(put_conversation(saver, "t", third, second)), third)


@contextlib.asynccontextmanager
async def behind_a_held_group(
    saver: Any, url: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[asyncio.Task[None]]:
    """Another thread's write held at the server (its row locked by another session until the block
    ends), and no other group sent meanwhile: the writes queued in the block wait together. Yields the
    held write's task."""
    one_group_at_a_time(saver, monkeypatch)
    await put(saver, "blocker", "blocker-first")
    async with row_locked(url, "blocker"):
        blocked = asyncio.create_task(put(saver, "blocker", "blocker-second"))
        await until(lambda: queued(saver, "blocker") and at_the_server(queued(saver, "blocker")[0]))
        yield blocked


async def second_and_third_queued(saver: Any, first: Any, second: Any, third: Any) -> list[asyncio.Task[None]]:
    """Thread t's second and third puts started, and both queued."""
    tasks = [
        asyncio.create_task(put_conversation(saver, "t", cp, parent))
        for cp, parent in ((second, first), (third, second))
    ]
    await until(lambda: len(queued(saver, "t")) == 2)
    return tasks


async def first_put_then_an_item_elsewhere(saver: Any, other: Any) -> tuple[dict[str, Any], ...]:
    """Thread t's first put (items 1 and 2), then another process's put of one message (item 3), which
    `saver` has not seen; the first, second and third conversations."""
    # (made in the order they are put: the thread's head is its newest checkpoint)
    first, elsewhere = conversation(2), conversation(1)
    await put_conversation(saver, "t", first, None)
    elsewhere["channel_values"]["messages"][0].content = "from the other process"
    await put_conversation(other, "t", elsewhere, None)
    second, third = conversation(4), conversation(6)
    return first, second, third


async def assert_the_third_is_the_head(saver: Any, third: dict[str, Any]) -> None:
    thread = await saver.aget_thread("t")
    assert thread.head_checkpoint_id == third["id"] and thread.message_count == 6
    saver.items.clear()  # read back from the database, not the cache
    assert await messages_of(saver, "t", third) == [f"m{i}" for i in range(6)]


async def test_a_threads_next_write_is_prepared_while_the_last_is_at_the_server_and_goes_after_it(
    request: pytest.FixtureRequest, url: str
) -> None:
    async with opened(request, url, lock_timeout=5) as saver:
        async with second_put_at_the_server(saver, url) as (second, put_third):
            following, third = put_third()
            # the thread's turn let the third put in while the second is held at the server ...
            await until(lambda: len(queued(saver, "t")) == 2)
            pending = queued(saver, "t")
            assert at_the_server(pending[0])
            # ... where the third does not go until the second has committed
            await asyncio.sleep(0.2)
            assert not at_the_server(pending[1]) and not following.done()
        await asyncio.wait_for(asyncio.gather(second, following), SETTLES)
        assert stored_checkpoints(url) == {"t": 3}
        await assert_the_third_is_the_head(saver, third)


async def test_writes_prepared_after_one_that_failed_start_again(request: pytest.FixtureRequest, url: str) -> None:
    async with opened(request, url, lock_timeout=1) as saver:
        async with second_put_at_the_server(saver, url) as (failing, put_third):
            # prepared on the second put's items (m2, m3), which its failure leaves unstored
            following, third = put_third()
            await until(lambda: len(queued(saver, "t")) == 2)
            await asyncio.wait([failing])
        with pytest.raises(StoreTimeout):
            await failing
        # started again from what is stored, and stored m2 and m3 itself
        await asyncio.wait_for(following, SETTLES)
        assert stored_checkpoints(url) == {"t": 2}
        await assert_the_third_is_the_head(saver, third)


async def test_writes_prepared_after_one_that_stored_nothing_start_again(
    request: pytest.FixtureRequest, url: str
) -> None:
    """The second put numbers its items from a next number another process has taken meanwhile: it stores
    nothing (MySQL: its check matches no row; PostgreSQL: its item fails on the key). The third,
    prepared on the second's numbers, would refer to numbers that are the other process's item or
    nobody's (MySQL would store it: the row's next number is below its own); it starts again."""
    async with opened(request, url, lock_timeout=5) as saver, open_checkpointer(url) as other:
        first, second, third = await first_put_then_an_item_elsewhere(saver, other)
        assert saver.items.peek("t").next_item == 3  # (as this process last saw it)
        async with row_locked(url, "t"):
            stale = asyncio.create_task(put_conversation(saver, "t", second, first))
            await until(lambda: queued(saver, "t") and at_the_server(queued(saver, "t")[0]))
            following = asyncio.create_task(put_conversation(saver, "t", third, second))
            await until(lambda: len(queued(saver, "t")) == 2)
        await asyncio.wait_for(asyncio.gather(stale, following), SETTLES)  # each started again, in order
        assert stored_checkpoints(url) == {"t": 4}
        await assert_the_third_is_the_head(saver, third)
        assert await messages_of(saver, "t", second) == [f"m{i}" for i in range(4)]


async def test_a_threads_writes_waiting_together_go_in_one_group_and_stop_at_one_that_stored_nothing(
    request: pytest.FixtureRequest, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As above, but the second and third puts wait together behind another thread's group and go to the
    server in one group: the third's statements run after the second's stored nothing (MySQL: its check
    matched no row), and must store nothing either."""
    async with opened(request, url, lock_timeout=5) as saver, open_checkpointer(url) as other:
        first, second, third = await first_put_then_an_item_elsewhere(saver, other)
        sent = groups_sent(saver)
        async with behind_a_held_group(saver, url, monkeypatch) as blocked:
            stale, following = await second_and_third_queued(saver, first, second, third)
        await asyncio.wait_for(asyncio.gather(blocked, stale, following), SETTLES)
        assert ["t", "t"] in sent  # the second and third in one group
        assert stored_checkpoints(url) == {"blocker": 2, "t": 4}
        await assert_the_third_is_the_head(saver, third)
        assert await messages_of(saver, "t", second) == [f"m{i}" for i in range(4)]


async def test_writes_prepared_after_one_cancelled_unsent_start_again(
    request: pytest.FixtureRequest, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with opened(request, url, lock_timeout=5) as saver:
        first, second, third = conversation(2), conversation(4), conversation(6)
        await put_conversation(saver, "t", first, None)
        async with behind_a_held_group(saver, url, monkeypatch) as blocked:
            cancelled, following = await second_and_third_queued(saver, first, second, third)
            assert not any(map(at_the_server, queued(saver, "t")))  # both waiting, neither sent
            cancelled.cancel()
            with pytest.raises(asyncio.CancelledError):
                await cancelled
        await asyncio.wait_for(asyncio.gather(blocked, following), SETTLES)
        assert stored_checkpoints(url) == {"blocker": 2, "t": 2}
        await assert_the_third_is_the_head(saver, third)


async def test_a_write_on_a_transaction_of_its_own_waits_for_the_threads_queued_writes(
    request: pytest.FixtureRequest, url: str
) -> None:
    async with opened(request, url, lock_timeout=5) as saver:
        ran: list[tuple[Any, str]] = []

        @contextlib.contextmanager
        def statement(dialect: str, sql: str) -> Iterator[None]:
            ran.append((asyncio.current_task(), sql))
            yield

        observe(saver, statement=statement)
        async with second_put_at_the_server(saver, url) as (held, put_third):
            saver.items.drop("t")  # forgotten (evicted): the next write is a transaction that reads the thread
            alone, third = put_third()
            await asyncio.sleep(0.3)
            assert not [sql for task, sql in ran if task is alone]  # it has not started
        await asyncio.wait_for(asyncio.gather(held, alone), SETTLES)
        await assert_the_third_is_the_head(saver, third)
