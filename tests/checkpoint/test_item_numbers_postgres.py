"""PostgreSQL numbers a thread's new items itself and stores them with the put that refers to them
(`_store_items`, deferred). A process that has not seen the thread cannot tell new items from stored
ones by its cache: its first write of the thread must look them up, whatever order its values come in."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint import open_checkpointer


def message(text: str) -> HumanMessage:
    return HumanMessage(text, id=text)


def checkpoint_of(values: dict[str, list[HumanMessage]], versions: dict[str, str]) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = values
    cp["channel_versions"] = versions
    return cp


async def test_a_new_process_stores_a_put_whose_first_value_is_new_and_second_was_stored(
    clean_postgres_url: str,
) -> None:
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    async with open_checkpointer(clean_postgres_url) as first:
        stored = await first.aput(
            config, checkpoint_of({"messages": [message("m1"), message("m2")]}, {"messages": "1"}),
            {"source": "input", "step": -1}, {"messages": "1"},
        )
    async with open_checkpointer(clean_postgres_url) as second:  # another process: an empty cache
        # `notes` first: all of it new; then `messages`, two of whose items the first process stored
        values = {"notes": [message("n1")], "messages": [message("m1"), message("m2"), message("m3")]}
        versions = {"notes": "2", "messages": "2"}
        head = await second.aput(stored, checkpoint_of(values, versions), {"source": "loop", "step": 0}, versions)
        read = await second.aget_tuple(head)
    assert read is not None
    assert [m.content for m in read.checkpoint["channel_values"]["messages"]] == ["m1", "m2", "m3"]
    assert [m.content for m in read.checkpoint["channel_values"]["notes"]] == ["n1"]

