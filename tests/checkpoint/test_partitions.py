"""deploy/postgres/partition_by_month.sql on a real PostgreSQL store holding real conversations: after the
conversion every thread loads and goes on as before, new threads land in their month, and dropping the
old months removes those threads' rows from every table while the rest stays whole."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.ids import new_thread_id
from tests.checkpoint.graphs import human, tool_loop
from tests.conftest import new_schema_url

RECIPE = Path(__file__).parents[2] / "deploy" / "postgres" / "partition_by_month.sql"


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def thread_tables(conn: psycopg.Connection) -> list[str]:
    """The store's partitioned tables (keyed by thread)."""
    return [row[0] for row in conn.execute("SELECT orecast_partitioned_tables()")]


def rows_of(conn: psycopg.Connection, thread_id: str) -> dict[str, int]:
    """A thread's rows in each table keyed by thread, partitioned or not."""
    return {
        table: conn.execute(f'SELECT count(*) FROM "{table}" WHERE thread_id = %s', (thread_id,)).fetchone()[0]
        for table in thread_tables(conn)
    }


async def history(saver: Any, thread_id: str) -> list[tuple[str, list[str]]]:
    graph = tool_loop(saver)
    return [
        (s.config["configurable"]["checkpoint_id"], [m.content for m in s.values.get("messages", [])])
        async for s in graph.aget_state_history(cfg(thread_id))
    ]


@pytest.fixture
def pg_url(postgres_url: str) -> str:
    return new_schema_url(postgres_url, "part")


async def test_partition_by_month_and_drop_old_threads(pg_url: str) -> None:
    old = new_thread_id(datetime(2026, 1, 20, tzinfo=UTC))
    spring = new_thread_id(datetime(2026, 4, 2, tzinfo=UTC))
    # a UUIDv4 from before, its first digit set so that it falls in no month: the default partition
    legacy = "f" + str(uuid.uuid4())[1:]
    custom = "customer-42/support"  # a client's own id
    async with open_checkpointer(pg_url) as saver:
        graph = tool_loop(saver)
        for thread in (old, spring, legacy, custom):
            await graph.ainvoke({"messages": [human(1)]}, cfg(thread))
            await graph.ainvoke({"messages": [human(2)]}, cfg(thread))
        before = {thread: await history(saver, thread) for thread in (old, spring, legacy, custom)}

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(RECIPE.read_text())
        done = [row[0] for row in conn.execute("SELECT * FROM orecast_partition_by_month('2026-01-01', 2)")]
        tables = thread_tables(conn)
        # (`writes` and `items` are views over task_writes and the item tables: made again, below)
        assert {"threads", "checkpoints", "channel_values", "task_writes", "item_pages"} <= set(tables) <= set(done)
        assert conn.execute("SELECT count(*) FROM checkpoints_p202601 WHERE thread_id = %s", (old,)).fetchone()[0] > 0
        assert {f"channel_values_p2026{m:02d}" for m in range(1, 13)} <= set(done)
        # each thread's rows sit in its month's partition, in every table; other ids in the default
        # (the messages: this graph's other values are small, kept in the checkpoints' rows)
        assert conn.execute("SELECT count(*) FROM item_tail_p202601 WHERE thread_id = %s", (old,)).fetchone()[0] > 0
        assert conn.execute("SELECT count(*) FROM item_tail_p202604 WHERE thread_id = %s", (spring,)).fetchone()[0] > 0
        assert conn.execute("SELECT count(*) FROM task_writes_p202601 WHERE thread_id = %s", (old,)).fetchone()[0] > 0
        for thread in (legacy, custom):
            assert conn.execute("SELECT count(*) FROM threads_default WHERE thread_id = %s", (thread,)).fetchone()[0] == 1
        # the schema's views (items, tool_calls) were made again on the partitioned tables
        assert conn.execute("SELECT count(*) FROM items WHERE thread_id = %s", (old,)).fetchone()[0] > 0
        old_rows = rows_of(conn, old)
        assert old_rows["threads"] == 1 and old_rows["checkpoints"] > 0 and old_rows["item_tail"] > 0

    # the saver works on the partitioned store as before: same histories, threads go on, new ones land
    async with open_checkpointer(pg_url) as saver:
        for thread, expected in before.items():
            assert await history(saver, thread) == expected
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(3)]}, cfg(spring))
        fresh = new_thread_id()
        await graph.ainvoke({"messages": [human(1)]}, cfg(fresh))
        assert len((await graph.aget_state(cfg(spring))).values["messages"]) > len(before[spring][0][1])
        assert (await saver.aget_thread(old)) is not None
        stats = await saver.astats()
        assert stats["tables"]["items"]["bytes"] > 0  # sizes count the partitions
    month = datetime.now(UTC).strftime("%Y%m")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute(f"SELECT count(*) FROM item_tail_p{month} WHERE thread_id = %s", (fresh,)).fetchone()[0] > 0

        # a UUIDv4 thread whose random bits fall into an old month is not dropped with the month
        unlucky = "019b8000-0000-4000-8000-000000000000"  # January 2026's range, version 4
        conn.execute(
            "INSERT INTO threads (thread_id, incarnation, created_at, updated_at) VALUES (%s, 'x', now(), now())",
            (unlucky,),
        )
        with pytest.raises(psycopg.errors.RaiseException, match="not UUIDv7"):
            conn.execute("SELECT * FROM orecast_drop_threads_before('2026-03-01')")
        conn.execute("DELETE FROM threads WHERE thread_id = %s", (unlucky,))

        dropped = [row[0] for row in conn.execute("SELECT * FROM orecast_drop_threads_before('2026-03-01')")]
        assert "channel_values_p202601" in dropped and "threads_p202602" in dropped
        assert not any(name.endswith("p202604") for name in dropped)
        assert sum(rows_of(conn, old).values()) == 0  # every table's rows of the January thread
        for thread in (spring, legacy, custom, fresh):
            assert rows_of(conn, thread)["threads"] == 1
        # the monthly job: idempotent, and a month's rows already in the default move into its partition
        conn.execute("SELECT * FROM orecast_add_month_partitions(2)").fetchall()
        late = new_thread_id(datetime(2027, 9, 1, tzinfo=UTC))
        conn.execute(
            "INSERT INTO threads (thread_id, incarnation, created_at, updated_at) VALUES (%s, 'x', now(), now())",
            (late,),
        )
        assert conn.execute("SELECT count(*) FROM threads_default WHERE thread_id = %s", (late,)).fetchone()[0] == 1
        made = [row[0] for row in conn.execute("SELECT * FROM orecast_add_month_partitions(12)")]
        assert "threads_p202709" in made
        assert conn.execute("SELECT count(*) FROM threads_p202709 WHERE thread_id = %s", (late,)).fetchone()[0] == 1

    async with open_checkpointer(pg_url) as saver:
        assert await saver.aget_thread(old) is None
        assert await history(saver, old) == []
        assert await history(saver, legacy) == before[legacy]
        listed = {t.thread_id for t in await saver.asearch_threads(limit=100)}
        assert old not in listed and {spring, legacy, custom, fresh} <= listed
