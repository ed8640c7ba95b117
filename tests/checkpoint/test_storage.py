"""Storage is linear: each message is stored once, as queryable JSON, whatever the number of turns."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg

from orecast.checkpoint import open_checkpointer
from tests.checkpoint.checkpoints import a_checkpoint
from tests.checkpoint.conftest import dialect_of, ph, raw_sql, stored_values
from tests.checkpoint.graphs import TOOL_NAME, delta_graph, human, tool_loop

TURNS = 25


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _count_text_everywhere(url: str, text: str) -> dict[str, int]:
    """Occurrences of `text` in every JSON/text column of the store, per table."""
    p = ph(url)
    like = f"%{text}%"
    cast = "::text" if dialect_of(url) == "postgresql" else ""
    queries = {
        "items": f"SELECT count(*) FROM items WHERE value{cast} LIKE {p}",
        "channel_values": f"SELECT count(*) FROM channel_values WHERE value{cast} LIKE {p}",
        "writes": f"SELECT count(*) FROM writes WHERE value{cast} LIKE {p}",
        "checkpoints": f"SELECT count(*) FROM checkpoints WHERE checkpoint{cast} LIKE {p} "
        f"OR metadata{cast} LIKE {p}",
    }
    out = {}
    for table, sql in queries.items():
        params = (like, like) if table == "checkpoints" else (like,)
        out[table] = raw_sql(url, sql, params)[0][0]
    return out


async def test_items_equal_distinct_messages(saver, store_url: str) -> None:
    graph = tool_loop(saver)
    for turn in range(TURNS):
        await graph.ainvoke({"messages": [human(turn, f"unique-q-{turn:04d}-zeta")]}, cfg("lin"))
    state = await graph.aget_state(cfg("lin"))
    messages = state.values["messages"]
    assert len(messages) == 4 * TURNS
    assert len({m.id for m in messages}) == 4 * TURNS

    p = ph(store_url)
    items = raw_sql(store_url, f"SELECT count(*) FROM items WHERE thread_id = {p}", ("lin",))[0][0]
    assert items == 4 * TURNS  # not ~TURNS² copies

    # Every question text is stored once as an item; the only other copy allowed here is the graph
    # input (`__start__` channel), see test_input_messages_stored_once.
    for turn in (0, 7, TURNS - 1):
        found = _count_text_everywhere(store_url, f"unique-q-{turn:04d}-zeta")
        assert found["items"] == 1 and found["writes"] == 0 and found["checkpoints"] == 0, found
        assert found["channel_values"] <= 1, found
    answers = _count_text_everywhere(store_url, "answer-0007 after")
    assert answers == {"items": 1, "channel_values": 0, "writes": 0, "checkpoints": 0}, answers

    # Channel values of `messages` are references, one row per version, each small.
    rows = stored_values(store_url, "messages")
    assert rows and {r[1] for r in rows} == {"items"}
    assert len(rows) == 4 * TURNS  # input applied, agent, tools, agent: 4 versions per turn


async def test_input_messages_stored_once(saver, store_url: str) -> None:
    """A message given as graph input must not be stored a second time inline in `__start__`."""
    graph = tool_loop(saver)
    for turn in range(3):
        await graph.ainvoke({"messages": [human(turn, f"input-once-{turn}-kappa")]}, cfg("in"))
    for turn in range(3):
        found = _count_text_everywhere(store_url, f"input-once-{turn}-kappa")
        assert found == {"items": 1, "channel_values": 0, "writes": 0, "checkpoints": 0}, found


async def test_storage_grows_linearly(saver, store_url: str) -> None:
    graph = tool_loop(saver)
    size_at: dict[int, int] = {}
    length = "octet_length" if dialect_of(store_url) == "postgresql" else "length"
    cast = "::text" if dialect_of(store_url) == "postgresql" else ""
    for turn in range(1, 31):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("grow"))
        if turn in (10, 20, 30):
            total = 0
            for table, column in (
                ("items", "value"),
                ("channel_values", "value"),
                ("writes", "value"),
                ("checkpoints", "checkpoint"),
            ):
                total += raw_sql(
                    store_url, f"SELECT COALESCE(sum({length}({column}{cast})), 0) FROM {table}"
                )[0][0]
            size_at[turn] = int(total)
    growth_1 = size_at[20] - size_at[10]
    growth_2 = size_at[30] - size_at[20]
    # Quadratic storage would make the second ten turns cost far more than the first ten.
    assert growth_2 < growth_1 * 1.35, size_at


async def test_messages_are_queryable_json(saver, store_url: str) -> None:
    graph = tool_loop(saver)
    for turn in range(5):
        await graph.ainvoke({"messages": [human(turn, f"what is the price {turn}?")]}, cfg("sql"))
    if dialect_of(store_url) == "sqlite":
        contents = raw_sql(
            store_url,
            "SELECT json_extract(value, '$.data.content') FROM items "
            "WHERE thread_id = ? AND json_extract(value, '$.cls') = 'HumanMessage' ORDER BY item_no",
            ("sql",),
        )
        names = raw_sql(
            store_url,
            "SELECT json_extract(value, '$.data.tool_calls[0].name'), "
            "json_extract(value, '$.data.tool_calls[0].args.turn') FROM items "
            "WHERE thread_id = ? AND json_array_length(value, '$.data.tool_calls') > 0 ORDER BY item_no",
            ("sql",),
        )
    elif dialect_of(store_url) == "mysql":
        contents = raw_sql(
            store_url,
            "SELECT JSON_UNQUOTE(JSON_EXTRACT(value, '$.data.content')) FROM items "
            "WHERE thread_id = %s AND JSON_UNQUOTE(JSON_EXTRACT(value, '$.cls')) = 'HumanMessage' "
            "ORDER BY item_no",
            ("sql",),
        )
        names = raw_sql(
            store_url,
            "SELECT JSON_UNQUOTE(JSON_EXTRACT(value, '$.data.tool_calls[0].name')), "
            "JSON_EXTRACT(value, '$.data.tool_calls[0].args.turn') FROM items "
            "WHERE thread_id = %s AND JSON_LENGTH(value, '$.data.tool_calls') > 0 ORDER BY item_no",
            ("sql",),
        )
        found = raw_sql(
            store_url,
            "SELECT count(*) FROM items WHERE JSON_CONTAINS(value, %s)",
            ('{"data": {"content": "what is the price 3?"}}',),
        )
        assert found[0][0] == 1
    else:
        contents = raw_sql(
            store_url,
            "SELECT value->'data'->>'content' FROM items "
            "WHERE thread_id = %s AND value->>'cls' = 'HumanMessage' ORDER BY item_no",
            ("sql",),
        )
        names = raw_sql(
            store_url,
            "SELECT value->'data'->'tool_calls'->0->>'name', "
            "(value->'data'->'tool_calls'->0->'args'->>'turn')::int FROM items "
            "WHERE thread_id = %s AND jsonb_array_length(value->'data'->'tool_calls') > 0 "
            "ORDER BY item_no",
            ("sql",),
        )
        found = raw_sql(
            store_url,
            "SELECT count(*) FROM items WHERE value @> %s::jsonb",
            ('{"data": {"content": "what is the price 3?"}}',),
        )
        assert found[0][0] == 1
    assert [r[0] for r in contents] == [f"what is the price {t}?" for t in range(5)]
    assert [(r[0], int(r[1])) for r in names] == [(TOOL_NAME, t) for t in range(1, 6)]

    # Checkpoint metadata is queryable too.
    p = ph(store_url)
    step_expr = {
        "sqlite": "json_extract(metadata, '$.step')",
        "mysql": "CAST(JSON_EXTRACT(metadata, '$.step') AS SIGNED)",
        "postgresql": "(metadata->>'step')::int",
    }[dialect_of(store_url)]
    steps = raw_sql(
        store_url, f"SELECT max({step_expr}) FROM checkpoints WHERE thread_id = {p}", ("sql",)
    )
    assert int(steps[0][0]) == (await saver.aget_tuple(cfg("sql"))).metadata["step"]


async def test_delta_thread_items_linear(saver, store_url: str) -> None:
    graph = delta_graph(saver)
    for step in range(15):
        await graph.ainvoke(
            {"messages": [human(step, f"delta-q-{step:03d}-omega")], "log": []}, cfg("d")
        )
    p = ph(store_url)
    items = raw_sql(store_url, f"SELECT count(*) FROM items WHERE thread_id = {p}", ("d",))[0][0]
    # 15 questions + 15 answers, plus the `log` entries (dicts, also stored as items).
    assert items == 45
    found = _count_text_everywhere(store_url, "delta-q-003-omega")
    assert found["items"] == 1 and found["writes"] == 0 and found["checkpoints"] == 0, found
    assert found["channel_values"] <= 1, found  # the `__start__` input copy, see above


async def test_postgres_metadata_index_keeps_no_pending_list(fresh_postgres_url: str) -> None:
    """PostgreSQL migration 008: the threads' metadata index (GIN) takes new entries into its tree at
    once; with a pending list it held three pages and a free-space map for one thread's row."""
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    async with open_checkpointer(fresh_postgres_url) as saver:
        for step in range(30):
            metadata = {"source": "loop", "step": step, "user_id": f"u{step % 3}", f"key{step}": step}
            await saver.aput(config, a_checkpoint(f"step {step}"), metadata, {"messages": "1"})
            await asyncio.sleep(0.011)  # past the 10 ms after which a put moves `updated_at`: a new index entry
        found = [thread.thread_id for thread in await saver.asearch_threads(metadata={"key29": 29})]
    assert found == ["t"]
    ((main, fsm),) = raw_sql(
        fresh_postgres_url,
        "SELECT pg_relation_size('threads_metadata', 'main'), pg_relation_size('threads_metadata', 'fsm')",
    )
    assert (main, fsm) == (16384, 0)


async def _checkpoints_with_writes(saver: Any, thread_id: str, count: int) -> None:
    """`count` checkpoints of `thread_id` one after the other, each with one task's write."""
    config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    for step in range(count):
        config = await saver.aput(config, a_checkpoint(f"{thread_id} {step}"), {"step": step}, {"messages": "1"})
        await saver.aput_writes(config, [("branch:to:agent", None)], str(uuid.uuid4()))


async def test_postgres_deleted_thread_leaves_no_half_empty_index_pages(fresh_postgres_url: str) -> None:
    """A deleted thread whose keys sort after another's: its index entries are marked dead once the
    deletion committed, so that the other thread's next checkpoints and writes fill the primary keys'
    pages as a lone thread's do (90/10 splits at the right edge), not in halves before the dead entries
    (40 kB and 56 kB; without: 64 kB and 96 kB)."""
    async with open_checkpointer(fresh_postgres_url) as saver:
        await _checkpoints_with_writes(saver, "z", 10)
        await saver.adelete_thread("z")
        await asyncio.gather(*saver._marking)  # (the saver marks them in the background)
        await _checkpoints_with_writes(saver, "a", 400)
        assert len([c async for c in saver.alist({"configurable": {"thread_id": "a"}})]) == 400
    ((checkpoints, writes),) = raw_sql(
        fresh_postgres_url,
        "SELECT pg_relation_size('checkpoints_pkey'), pg_relation_size('task_writes_pkey')",
    )
    assert checkpoints <= 40960 and writes <= 57344, (checkpoints, writes)


async def test_postgres_deleted_thread_index_entries_wait_for_older_transactions(fresh_postgres_url: str) -> None:
    """As above with another session's transaction running across the deletion: the rows are not dead
    to a scan before it ended, so the saver reads the deleted thread's keys once it has (without the
    wait: 64 kB and 96 kB)."""
    async with open_checkpointer(fresh_postgres_url) as saver:
        await _checkpoints_with_writes(saver, "z", 10)
        other = await psycopg.AsyncConnection.connect(fresh_postgres_url)
        try:
            await other.execute("CREATE TEMPORARY TABLE older (x int)")
            await other.execute("INSERT INTO older VALUES (1)")  # a transaction id from before the delete

            async def commit_soon() -> None:
                await asyncio.sleep(0.1)
                await other.commit()

            ending = asyncio.create_task(commit_soon())
            await saver.adelete_thread("z")
            await asyncio.gather(ending, *saver._marking)
        finally:
            await other.close()
        await _checkpoints_with_writes(saver, "a", 400)
    ((checkpoints, writes),) = raw_sql(
        fresh_postgres_url,
        "SELECT pg_relation_size('checkpoints_pkey'), pg_relation_size('task_writes_pkey')",
    )
    assert checkpoints <= 40960 and writes <= 57344, (checkpoints, writes)


async def test_postgres_vacuum_keeps_the_tail_and_threads_pages(fresh_postgres_url: str) -> None:
    """PostgreSQL migration 009: VACUUM leaves the emptied pages of the item tail and of the threads
    table for the next rows rather than waiting for the table's exclusive lock to cut them off; a store
    from before gets the setting."""
    reloptions = "SELECT relname, reloptions FROM pg_class WHERE oid IN ('item_tail'::regclass, 'threads'::regclass) ORDER BY 1"
    kept = [("item_tail", ["vacuum_truncate=false"]), ("threads", ["fillfactor=50", "vacuum_truncate=false"])]
    async with open_checkpointer(fresh_postgres_url):
        pass
    assert raw_sql(fresh_postgres_url, reloptions) == kept
    raw_sql(fresh_postgres_url, "ALTER TABLE item_tail RESET (vacuum_truncate)")
    raw_sql(fresh_postgres_url, "ALTER TABLE threads RESET (vacuum_truncate)")
    raw_sql(fresh_postgres_url, "DELETE FROM orecast_migrations WHERE version >= 9")
    assert raw_sql(fresh_postgres_url, reloptions) == [("item_tail", None), ("threads", ["fillfactor=50"])]
    async with open_checkpointer(fresh_postgres_url):
        pass
    assert raw_sql(fresh_postgres_url, reloptions) == kept
