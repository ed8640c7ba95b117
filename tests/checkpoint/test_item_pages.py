"""PostgreSQL packs a thread's items into pages (migration 003); SQL still sees one `items` row per message."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

from langchain_core.messages import AIMessage, RemoveMessage

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.migrations import statements
from orecast.checkpoint.postgres.saver import PAGE_ITEMS
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import TOOL_NAME, human, tool_loop

TURNS = 20  # 80 messages: pages 1-32 and 33-64, a tail of 16


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def _chat(saver: Any, thread_id: str, turns: int, start: int = 0) -> list[Any]:
    graph = tool_loop(saver)
    for turn in range(start, start + turns):
        await graph.ainvoke({"messages": [human(turn, f"question {turn}")]}, cfg(thread_id))
    return (await graph.aget_state(cfg(thread_id))).values["messages"]


async def test_items_packed_into_pages(fresh_postgres_url: str) -> None:
    url = fresh_postgres_url
    async with open_checkpointer(url) as saver:
        messages = await _chat(saver, "paged", TURNS)
        assert len(messages) == 4 * TURNS
        pages = raw_sql(url, "SELECT first_no, last_no, jsonb_array_length(items) FROM item_pages ORDER BY first_no")
        assert pages == [(1, PAGE_ITEMS, PAGE_ITEMS), (PAGE_ITEMS + 1, 2 * PAGE_ITEMS, PAGE_ITEMS)]
        tail = raw_sql(url, "SELECT min(item_no), max(item_no) FROM item_tail")
        assert tail == [(2 * PAGE_ITEMS + 1, 4 * TURNS)]
        # The view shows every message once, with its number, as JSONB.
        rows = raw_sql(url, "SELECT item_no, value->'data'->>'content' FROM items ORDER BY item_no")
        assert [r[0] for r in rows] == list(range(1, 4 * TURNS + 1))
        assert [r[1] for r in rows] == [m.content for m in messages]
        assert raw_sql(url, "SELECT count(*) FROM tool_calls WHERE tool = %s", (TOOL_NAME,)) == [(TURNS,)]

        # Read back cold (from pages and tail), the same conversation.
        saver.items.clear()
        cold = (await tool_loop(saver).aget_state(cfg("paged"))).values["messages"]
        assert [m.model_dump() for m in cold] == [m.model_dump() for m in messages]
        # Copies share the pages' rows; deleting one thread leaves the other whole.
        await saver.acopy_thread("paged", "copy")
        await saver.adelete_thread("paged")
        saver.items.clear()
        copied = (await tool_loop(saver).aget_state(cfg("copy"))).values["messages"]
        assert [m.model_dump() for m in copied] == [m.model_dump() for m in messages]
        assert raw_sql(url, "SELECT count(*) FROM items WHERE thread_id = 'paged'") == [(0,)]


async def test_prune_rewrites_pages(fresh_postgres_url: str) -> None:
    """Garbage collection removes dead items from inside pages and keeps the live ones readable."""
    url = fresh_postgres_url
    async with open_checkpointer(url) as saver:
        messages = await _chat(saver, "p", TURNS)
        graph = tool_loop(saver)
        # Drop the conversation's first messages from the state: after pruning, nothing refers to them.
        await graph.aupdate_state(cfg("p"), {"messages": [RemoveMessage(id=m.id) for m in messages[:3]]})
        await saver.aprune(["p"], strategy="keep_latest")
        numbers = {r[0] for r in raw_sql(url, "SELECT item_no FROM items WHERE thread_id = 'p'")}
        assert not numbers & {1, 2, 3}
        assert set(range(4, 4 * TURNS + 1)) <= numbers
        saver.items.clear()
        left = (await graph.aget_state(cfg("p"))).values["messages"]
        assert [m.id for m in left] == [m.id for m in messages[3:]]


async def test_migration_003_converts_existing_items(fresh_postgres_url: str) -> None:
    """A store written with one row per item (migrations 001-002) is packed by 003 and reads the same."""
    url = fresh_postgres_url
    async with open_checkpointer(url) as saver:
        before = await _chat(saver, "old", TURNS)
        calls_before = [c.to_dict() for c in await saver.atool_calls("old")]
    # Put the store back into the layout of migration 002, with the same rows.
    raw_sql(url, "CREATE TABLE items_old AS SELECT thread_id, item_no, hash, value FROM items")
    for statement in (
        "DROP VIEW tool_calls",
        "DROP VIEW items",
        "DROP TABLE item_tail",
        "DROP TABLE item_pages",
        "ALTER TABLE items_old RENAME TO items",
        "ALTER TABLE items ADD PRIMARY KEY (thread_id, item_no)",
        "ALTER TABLE items ADD UNIQUE (thread_id, hash)",
        "DELETE FROM orecast_migrations WHERE version >= 3",
    ):
        raw_sql(url, statement)
    script = (resources.files("orecast.checkpoint.postgres") / "migrations" / "002_tool_calls.sql").read_text()
    for statement in statements(script):
        raw_sql(url, statement)
    assert raw_sql(url, "SELECT count(*) FROM items") == [(4 * TURNS,)]

    async with open_checkpointer(url) as saver:
        assert raw_sql(url, "SELECT count(*) FROM item_pages") == [(2,)]
        assert raw_sql(url, "SELECT count(*) FROM item_tail") == [(4 * TURNS - 2 * PAGE_ITEMS,)]
        after = (await tool_loop(saver).aget_state(cfg("old"))).values["messages"]
        assert [m.model_dump() for m in after] == [m.model_dump() for m in before]
        assert [c.to_dict() for c in await saver.atool_calls("old")] == calls_before
        # The converted thread goes on: new items continue its numbering and its pages.
        more = await _chat(saver, "old", 3, start=TURNS)
        assert len(more) == 4 * (TURNS + 3)
        assert raw_sql(url, "SELECT max(item_no) FROM items WHERE thread_id = 'old'") == [(4 * (TURNS + 3),)]



async def items_numbered_meanwhile_elsewhere(url: str, items: Callable[[str, str], list[tuple[int, str]]]) -> None:
    """A saver numbers new items from the thread's next number as it last saw it. When another process
    numbered items since (here: a second saver, and a stale number set by hand, as a write racing
    between the first saver's read and its write), the write's statement stores nothing, the write
    starts again with numbers from the database, and nothing is lost or numbered twice. `items(url,
    thread)`: the thread's (item number, message text) rows. Also run on MySQL (test_mysql_batches)."""
    async with open_checkpointer(url) as first, open_checkpointer(url) as second:
        await _chat(first, "shared", 2)
        await _chat(second, "shared", 2, start=2)  # items 9-16, unknown to `first`
        tup = await first.aget_tuple(cfg("shared"))
        assert first.items.peek("shared").next_item == 17
        first.items.peek("shared").next_item = 9  # as if read before `second` wrote
        late = AIMessage(content="a late write", id="late")
        await first.aput_writes(tup.config, [("messages", [late])], task_id="task-late")
        assert first.items.peek("shared").next_item == 18
        for saver in (first, second):
            pending = (await saver.aget_tuple(tup.config)).pending_writes
            assert ("task-late", "messages", [late]) in pending
        messages = await _chat(first, "shared", 1, start=4)
    assert [m.id for m in messages if m.type == "human"] == [human(t).id for t in range(5)]
    numbers = items(url, "shared")
    assert len(numbers) == len({n for n, _ in numbers}) == 4 * 5 + 1
    assert (17, "a late write") in numbers


async def test_items_numbered_meanwhile_elsewhere(fresh_postgres_url: str) -> None:
    await items_numbered_meanwhile_elsewhere(
        fresh_postgres_url,
        lambda url, thread: raw_sql(
            url, "SELECT item_no, value->'data'->>'content' FROM items WHERE thread_id = %s", (thread,)
        ),
    )
