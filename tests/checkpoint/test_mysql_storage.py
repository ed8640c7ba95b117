"""MySQL migration 007: the growing tables store compressed pages; data and JSON queries unchanged."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.store import open_store
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import human, tool_loop

GROWING = ("channel_values", "checkpoints", "items", "writes")


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def row_formats(url: str) -> dict[str, str]:
    rows = raw_sql(
        url,
        "SELECT table_name, row_format FROM information_schema.tables "
        "WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'",
    )
    return {name: row_format for name, row_format in rows}


async def _chat(saver: Any, thread_id: str, turns: int, start: int = 0) -> list[Any]:
    graph = tool_loop(saver)
    for turn in range(start, start + turns):
        await graph.ainvoke({"messages": [human(turn, f"问题 {turn} 🚢")]}, cfg(thread_id))
    return (await graph.aget_state(cfg(thread_id))).values["messages"]


async def test_growing_tables_are_compressed(fresh_mysql_url: str) -> None:
    async with open_checkpointer(fresh_mysql_url) as saver:
        messages = await _chat(saver, "packed", 3)
        assert len(messages) == 12
        calls = await saver.atool_calls("packed")
    formats = row_formats(fresh_mysql_url)
    assert {t: formats[t] for t in GROWING} == dict.fromkeys(GROWING, "Compressed")
    assert formats["threads"] == "Dynamic"  # one row per thread, updated by every write: left as it was
    # JSON stays queryable with the server's JSON functions, Chinese text and emoji intact.
    contents = raw_sql(
        fresh_mysql_url,
        "SELECT JSON_UNQUOTE(JSON_EXTRACT(value, '$.data.content')) FROM items "
        "WHERE JSON_UNQUOTE(JSON_EXTRACT(value, '$.cls')) = 'HumanMessage' ORDER BY item_no",
    )
    assert [c for (c,) in contents] == [f"问题 {turn} 🚢" for turn in range(3)]
    assert len(calls) == 3


async def test_upgrade_compresses_a_store_with_data(fresh_mysql_url: str) -> None:
    url = fresh_mysql_url
    async with open_checkpointer(url) as saver:
        before = await _chat(saver, "old", 2)
    # A store as version 6 left it: the tables in the default row format.
    for table in GROWING:
        raw_sql(url, f"ALTER TABLE {table} ROW_FORMAT = DYNAMIC KEY_BLOCK_SIZE = 0")
    raw_sql(url, "DELETE FROM orecast_migrations WHERE version >= 7")  # (8 runs again: a no-op)
    assert set(row_formats(url).values()) == {"Dynamic"}
    async with open_checkpointer(url) as saver:
        after = (await tool_loop(saver).aget_state(cfg("old"))).values["messages"]
        assert [m.model_dump() for m in after] == [m.model_dump() for m in before]
        more = await _chat(saver, "old", 3, start=2)
    assert len(more) == 20
    assert {t: row_formats(url)[t] for t in GROWING} == dict.fromkeys(GROWING, "Compressed")
    assert raw_sql(url, "SELECT COUNT(*) FROM orecast_migrations WHERE version = 7") == [(1,)]


async def test_opening_an_existing_store_logs_nothing(fresh_mysql_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """`CREATE TABLE IF NOT EXISTS` finding its table is a note, which the driver fetched in a round trip of
    its own and logged as a warning at every start (saver, LangGraph's store)."""
    for _ in range(2):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            async with open_checkpointer(fresh_mysql_url) as saver, open_store(fresh_mysql_url) as store:
                await store.aput(("notes",), "k", {"v": 1})
                await tool_loop(saver).ainvoke({"messages": [human(0)]}, {"configurable": {"thread_id": "n"}})
        assert [r.getMessage() for r in caplog.records] == []
