"""Checkpoints written straight with `aput`, without a graph: for tests of how a saver stores them."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint


def a_checkpoint(text: str) -> dict[str, Any]:
    """A checkpoint whose `messages` channel holds one human message, `text` (also its id)."""
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [HumanMessage(text, id=text)]}
    cp["channel_versions"] = {"messages": "1"}
    return cp


async def put(saver: Any, thread_id: str, text: str) -> None:
    """Store `a_checkpoint(text)` as an input checkpoint of `thread_id`'s root namespace."""
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    await saver.aput(config, a_checkpoint(text), {"source": "input", "step": -1}, {"messages": "1"})
