"""SQLite numbers new items without looking their hashes up first; an item the thread already stored
(here through another saver, whose cache this one does not share) keeps its number."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint import open_checkpointer


def cfg(thread_id: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **extra}}


def a_checkpoint(*texts: str) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [HumanMessage(t, id=t) for t in texts]}
    cp["channel_versions"] = {"messages": "1"}
    return cp


def items(path: Path) -> list[tuple[int, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT item_no, hash FROM items ORDER BY item_no").fetchall()
    finally:
        conn.close()


async def test_an_item_stored_elsewhere_keeps_its_number(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    url = f"sqlite:///{path}"
    async with open_checkpointer(url) as first:
        stored = await first.aput(cfg("t"), a_checkpoint("hello"), {"source": "input", "step": -1}, {"messages": "1"})
    before = items(path)
    assert len(before) == 1
    async with open_checkpointer(url) as second:
        # The same message (same content, same hash) and a new one, written by a saver that never read the thread.
        await second.aput_writes(stored, [("messages", [HumanMessage("hello", id="hello"), HumanMessage("new", id="new")])], "task")
        tup = await second.aget_tuple(cfg("t"))
        assert tup is not None
        ((_task, channel, value),) = tup.pending_writes
        assert channel == "messages" and [m.content for m in value] == ["hello", "new"]
        assert [m.content for m in tup.checkpoint["channel_values"]["messages"]] == ["hello"]
        # A later write of the same saver numbers its new items after the unused ones.
        await second.aput_writes(stored, [("messages", [HumanMessage("third", id="third")])], "task-2")
    after = items(path)
    hashes = [h for _n, h in after]
    assert len(hashes) == len(set(hashes)) == 3  # "hello" stored once
    assert after[0] == before[0]
    numbers = [n for n, _h in after]
    assert numbers == sorted(numbers)
