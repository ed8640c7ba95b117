"""The threads table's message count and preview follow the head checkpoint's state, whatever is written.

Writes are a task's output *for* a checkpoint; they reach the state only when the next checkpoint is
stored. So a write repeated, a write whose next checkpoint never comes (a crash with
durability="async"), and a write for a checkpoint whose put failed must not move the counters.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.base import copy_checkpoint, empty_checkpoint
from langgraph.checkpoint.base.id import uuid6

from orecast.checkpoint.core import MESSAGE_COUNT
from tests.checkpoint.conftest import ph, raw_sql
from tests.checkpoint.graphs import delta_graph, human, sparse_delta_graph, tool_loop

GRAPHS = {"delta": delta_graph, "sparse-delta": sparse_delta_graph, "list": tool_loop}


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def assert_counts_match_state(saver: Any, graph: Any, thread_id: str) -> int:
    state = await graph.aget_state(cfg(thread_id))
    messages = state.values.get("messages", [])
    thread = await saver.aget_thread(thread_id)
    assert thread.message_count == len(messages)
    assert thread.preview == messages[-1].content[:200]
    return len(messages)


async def head_config(saver: Any, thread_id: str) -> dict[str, Any]:
    tup = await saver.aget_tuple(cfg(thread_id))
    return tup.config


@pytest.mark.parametrize("kind", GRAPHS)
async def test_repeated_and_unfinished_writes_do_not_count(saver, kind: str) -> None:
    graph = GRAPHS[kind](saver)
    for turn in range(4):  # past a DeltaChannel snapshot (every 3 updates)
        await graph.ainvoke({"messages": [human(turn)]}, cfg("t"))
        count = await assert_counts_match_state(saver, graph, "t")
    head = await head_config(saver, "t")
    write = [("messages", [AIMessage("written, never applied", id="w-1")])]
    # A task's writes stored twice (a retried put_writes), then the process dies before the next put.
    await saver.aput_writes(head, write, "task-1")
    await saver.aput_writes(head, write, "task-1")
    assert await assert_counts_match_state(saver, graph, "t") == count
    # The head stored again (as a retried put would) applies its parent's writes only once.
    tup = await saver.aget_tuple(head)
    await saver.aput(tup.parent_config, tup.checkpoint, tup.metadata, {})
    assert await assert_counts_match_state(saver, graph, "t") == count
    # The next turn goes on from the head: its counts are the state's again.
    await graph.ainvoke({"messages": [human(9)]}, cfg("t"))
    await assert_counts_match_state(saver, graph, "t")


async def _forks(graph: Any, thread_id: str) -> list[tuple[dict[str, Any], int]]:
    """Four turns on `thread_id`; then (config, messages) of each checkpoint of its first two turns, a
    DeltaChannel snapshot or not, to fork from."""
    for turn in range(4):
        await graph.ainvoke({"messages": [human(turn)]}, cfg(thread_id))
    history = [s async for s in graph.aget_state_history(cfg(thread_id))]
    early = [s for s in history if len(s.values.get("messages", [])) <= len(history[0].values["messages"]) // 2]
    return [(s.config, len(s.values.get("messages", []))) for s in early]


@pytest.mark.parametrize("kind", GRAPHS)
async def test_a_fork_counts_from_where_it_forks(saver, kind: str) -> None:
    """An edited earlier question (a fork) of a DeltaChannel thread counted the head's messages plus
    the new ones (`orecast threads list`: 13 where the state held 9)."""
    graph = GRAPHS[kind](saver)
    forks = await _forks(graph, "f")
    for i, (config, _) in enumerate(forks):
        await saver.acopy_thread("f", f"f{i}")
        fork = {"configurable": {**config["configurable"], "thread_id": f"f{i}"}}
        await graph.ainvoke({"messages": [human(7)]}, fork)
        await assert_counts_match_state(saver, graph, f"f{i}")


@pytest.mark.parametrize("kind", GRAPHS)
async def test_a_fork_by_another_process_counts_from_where_it_forks(saver, store_url: str, kind: str) -> None:
    """`orecast chat --from CHECKPOINT`: a new process, which has read nothing of the thread but the
    checkpoint it forks from. On PostgreSQL and MySQL its first write failed (StaleThreadError): it
    numbered the messages of the branch it forked from as new items."""
    from orecast.checkpoint import open_checkpointer

    graph = GRAPHS[kind](saver)
    forks = await _forks(graph, "p")
    for i, (config, _) in enumerate(forks):
        await saver.acopy_thread("p", f"p{i}")
        async with open_checkpointer(store_url) as other:
            other_graph = GRAPHS[kind](other)
            fork = {"configurable": {**config["configurable"], "thread_id": f"p{i}"}}
            await other_graph.ainvoke({"messages": [human(7)]}, fork)
            await assert_counts_match_state(other, other_graph, f"p{i}")


async def test_counts_after_a_restart_follow_the_stored_writes(saver, store_url: str) -> None:
    """A DeltaChannel thread continued by another process (a fresh saver) counts the same."""
    from orecast.checkpoint import open_checkpointer

    graph = delta_graph(saver)
    for turn in range(2):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("r"))
    async with open_checkpointer(store_url) as other:
        other_graph = delta_graph(other)
        for turn in range(2, 4):
            await other_graph.ainvoke({"messages": [human(turn)]}, cfg("r"))
        assert await assert_counts_match_state(other, other_graph, "r") == 8


async def test_writes_of_a_failed_put_neither_count_nor_survive_prune(saver, store_url: str) -> None:
    graph = delta_graph(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("f"))
    count = await assert_counts_match_state(saver, graph, "f")
    head = await head_config(saver, "f")

    class NotSerialisable:
        pass

    failed = empty_checkpoint()
    failed["channel_values"] = {"counter": NotSerialisable()}
    failed["channel_versions"] = {"counter": "99"}
    with pytest.raises(Exception):  # noqa: B017 - whatever the serializer raises
        await saver.aput(head, failed, {"source": "loop", "step": 9}, {"counter": "99"})
    orphan = {"configurable": {"thread_id": "f", "checkpoint_ns": "", "checkpoint_id": failed["id"]}}
    await saver.aput_writes(orphan, [("messages", [AIMessage("orphan", id="o-1")])], "task-o")
    assert await assert_counts_match_state(saver, graph, "f") == count

    for turn in range(1, 3):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("f"))
    await assert_counts_match_state(saver, graph, "f")
    await saver.aprune(["f"], strategy="keep_latest")
    left = raw_sql(
        store_url, f"SELECT COUNT(*) FROM writes WHERE checkpoint_id = {ph(store_url)}", (failed["id"],)
    )
    assert left == [(0,)]
    await assert_counts_match_state(saver, graph, "f")
    await graph.ainvoke({"messages": [human(5)]}, cfg("f"))
    await assert_counts_match_state(saver, graph, "f")


def _forget_stored_counts(url: str) -> int:
    """Make every stored checkpoint look as written before the per-checkpoint message count existed: its
    document without MESSAGE_COUNT, the rest byte for byte. Returns how many documents had one."""
    p = ph(url)
    changed = 0
    for thread_id, ns, cid, document in raw_sql(
        url, "SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint FROM checkpoints"
    ):
        parsed = json.loads(document) if isinstance(document, str | bytes) else document
        if parsed.pop(MESSAGE_COUNT, None) is None:
            continue
        changed += 1
        raw_sql(
            url,
            f"UPDATE checkpoints SET checkpoint = {p} WHERE thread_id = {p} AND checkpoint_ns = {p}"
            f" AND checkpoint_id = {p}",
            (json.dumps(parsed, separators=(",", ":")), thread_id, ns, cid),
        )
    return changed


@pytest.mark.parametrize("kind", ["delta", "sparse-delta"])
async def test_a_fork_from_checkpoints_stored_without_counts(saver, store_url: str, kind: str) -> None:
    """A store written before checkpoints kept their message count: a fork from an earlier step, by a
    process that has read only the checkpoint it forks from, counted the head's messages plus the new
    ones (`orecast threads list`), not those of its own branch."""
    from orecast.checkpoint import open_checkpointer

    graph = GRAPHS[kind](saver)
    forks = await _forks(graph, "o")
    for i in range(len(forks)):
        await saver.acopy_thread("o", f"o{i}")
    await saver.acopy_thread("o", "o-head")
    assert _forget_stored_counts(store_url) > 0
    async with open_checkpointer(store_url) as other:
        other_graph = GRAPHS[kind](other)
        for i, (config, _) in enumerate(forks):
            fork = {"configurable": {**config["configurable"], "thread_id": f"o{i}"}}
            await other_graph.ainvoke({"messages": [human(7)]}, fork)
            await assert_counts_match_state(other, other_graph, f"o{i}")
        # Continuing from the head counts as before.
        await other_graph.ainvoke({"messages": [human(8)]}, cfg("o-head"))
        await assert_counts_match_state(other, other_graph, "o-head")


async def test_a_put_another_process_overtook_leaves_the_head_alone(saver) -> None:
    """Two runs on one thread (two replicas): a put whose checkpoint is older than one the other run
    stored meanwhile moved the thread's head back to it, with its message count and preview, while a
    read without an id (`graph.aget_state`) loads the newest."""
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("o"))
    head = await saver.aget_tuple(cfg("o"))
    messages = head.checkpoint["channel_values"]["messages"]
    older_id, newer_id = str(uuid6()), str(uuid6())
    assert older_id < newer_id
    stored = {}
    for checkpoint_id, added in ((newer_id, ["newer-1", "newer-2"]), (older_id, ["older"])):
        child = copy_checkpoint(head.checkpoint)
        child["id"] = checkpoint_id
        child["channel_values"] = {"messages": [*messages, *(AIMessage(text, id=text) for text in added)]}
        child["channel_versions"] = {**child["channel_versions"], "messages": f"9{len(added)}"}
        stored[checkpoint_id] = child["channel_values"]["messages"]
        await saver.aput(head.config, child, {"source": "loop", "step": 9}, {"messages": f"9{len(added)}"})
    assert (await saver.aget_tuple(cfg("o"))).config["configurable"]["checkpoint_id"] == newer_id
    info = await saver.aget_thread("o")
    assert (info.head_checkpoint_id, info.message_count, info.preview) == (newer_id, len(stored[newer_id]), "newer-2")
