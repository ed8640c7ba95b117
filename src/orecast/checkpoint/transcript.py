"""A thread's conversation as a list of messages, whichever channel type stores them."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple


async def thread_messages(
    saver: BaseCheckpointSaver, thread_id: str, *, channel: str = "messages"
) -> list[BaseMessage] | None:
    """The messages at the thread's latest checkpoint, or None if the thread has no checkpoint.

    A plain `add_messages` channel holds the list; a `DeltaChannel` (deepagents) holds it only at
    snapshots, so the list is rebuilt from the nearest snapshot and the writes after it (and the
    latest checkpoint's pending writes).
    """
    config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    tup = await saver.aget_tuple(config)
    if tup is None:
        return None
    messages = await checkpoint_messages(saver, tup, channel=channel)
    if channel in tup.checkpoint["channel_values"]:
        return messages
    for _task, written_channel, value in tup.pending_writes or []:
        if written_channel == channel:
            messages = _add_messages(messages, value)
    return messages


async def checkpoint_messages(
    saver: BaseCheckpointSaver, tup: CheckpointTuple, *, channel: str = "messages"
) -> list[BaseMessage]:
    """The messages in the state at checkpoint `tup`, whichever channel type stores them."""
    values = tup.checkpoint["channel_values"]
    if channel in values:
        value = values[channel]
        return list(getattr(value, "value", value))
    if channel not in tup.checkpoint["channel_versions"]:
        return []
    history = await saver.aget_delta_channel_history(config=tup.config, channels=[channel])
    entry = history.get(channel, {"writes": []})
    seed = entry.get("seed", [])
    messages: list[Any] = list(getattr(seed, "value", seed) or [])
    for _task, _channel, value in entry["writes"]:
        messages = _add_messages(messages, value)
    return messages


def _add_messages(messages: list[Any], value: Any) -> list[Any]:
    """LangGraph's `add_messages`, imported on first use: importing langgraph.graph takes ~0.5 s of CPU
    of its own, and `orecast threads …` needs it only for a DeltaChannel thread's messages."""
    from langgraph.graph.message import add_messages

    return add_messages(messages, value)
