"""SQLite group commit: the writes ready in one pass of the event loop share one transaction, and each
returns only once that transaction has committed. A write that fails after changing something takes
the group's transaction down with it, and the group's other writes start again."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint import open_checkpointer
from tests.checkpoint.graphs import human, tool_loop


def cfg(thread_id: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **extra}}


def a_checkpoint(text: str) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [HumanMessage(text, id=text)]}
    cp["channel_versions"] = {"messages": "1"}
    return cp


def put(saver: Any, thread_id: str) -> Any:
    return saver.aput(cfg(thread_id), a_checkpoint(thread_id), {"source": "input", "step": -1}, {"messages": "1"})


def commits_of(saver: Any) -> list[str]:
    """The COMMITs the saver's write connection runs from now on."""
    seen: list[str] = []
    saver._writer.set_trace_callback(lambda sql: seen.append(sql) if sql.strip().upper() == "COMMIT" else None)
    return seen


async def wal_copied(saver: Any) -> None:
    """Wait for the WAL checkpoint that opening the store started (after the migrations): it holds the
    write lock while a worker thread copies the WAL and syncs it, which takes time, not passes of the
    event loop. Call before the writes `group_of` counts passes for."""
    if saver._wal_checkpoint is not None:
        await saver._wal_checkpoint


async def group_of(saver: Any, size: int) -> None:
    """Until `size` writes have run their statements in the open group (and wait for its commit)."""
    for _ in range(10_000):
        group = saver._groups.open
        if group is not None and group.size == size:
            return
        await asyncio.sleep(0)  # the group stays open only until its commit's task runs: every pass
    raise AssertionError(f"no group of {size} writes formed")


def stored_threads(path: Path) -> set[str]:
    """Thread ids with a checkpoint, as another connection sees them (only what was committed)."""
    conn = sqlite3.connect(path)
    try:
        return {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    finally:
        conn.close()


async def test_concurrent_writes_share_one_commit_and_are_durable_on_return(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        commits = commits_of(saver)
        threads = [f"t{i}" for i in range(8)]
        await asyncio.gather(*(put(saver, t) for t in threads))
        assert len(commits) == 1  # one transaction for the eight puts, not eight
        # Each put returned after the commit: another connection sees all of them.
        assert stored_threads(path) == set(threads)
        # Writes that come one after another still commit one by one.
        await put(saver, "later-1")
        await put(saver, "later-2")
        assert len(commits) == 3


async def test_a_failing_write_rolls_back_alone(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        await put(saver, "bad")
        commits = commits_of(saver)
        unstorable = saver.aput_writes(cfg("bad", checkpoint_id="x"), [("messages", object())], "task")
        results = await asyncio.gather(put(saver, "a"), unstorable, put(saver, "b"), return_exceptions=True)
        assert isinstance(results[1], Exception) and not isinstance(results[0], Exception)
        assert len(commits) == 1
        assert stored_threads(path) == {"bad", "a", "b"}
        # Nothing of the failed write was kept: its thread has no pending write.
        tup = await saver.aget_tuple(cfg("bad"))
        assert tup is not None and tup.pending_writes == []
        assert not saver._writer.in_transaction


def statements_of(saver: Any) -> list[str]:
    """The statements the saver's write connection runs from now on, each as its first line."""
    seen: list[str] = []
    saver._writer.set_trace_callback(lambda sql: seen.append(sql.strip().splitlines()[0]))
    return seen


def item_count(path: Path, thread_id: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM items WHERE thread_id = ?", (thread_id,)).fetchone()[0]
    finally:
        conn.close()


async def test_a_write_failing_after_its_changes_rolls_its_group_back_and_the_others_start_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.sqlite3"
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        await wal_copied(saver)
        await put(saver, "bad")
        items_before = item_count(path, "bad")
        statements = statements_of(saver)
        # Its first value stores a new message (an item) before its second cannot be encoded.
        half_done = saver.aput_writes(
            cfg("bad", checkpoint_id="x"), [("messages", [AIMessage("half", id="half")]), ("other", object())], "task"
        )
        results = await asyncio.gather(put(saver, "a"), half_done, put(saver, "b"), return_exceptions=True)
        assert isinstance(results[1], Exception)
        assert not isinstance(results[0], BaseException) and not isinstance(results[2], BaseException)
        # "a" ran in the group the failed write rolled back, then again: two checkpoint inserts for it.
        assert statements.count("ROLLBACK") == 1
        assert sum(s.startswith("INSERT") and " INTO checkpoints " in s for s in statements) == 3
        assert stored_threads(path) == {"bad", "a", "b"}
        assert item_count(path, "bad") == items_before  # the failed write's item went with it
        for thread_id in ("a", "b"):
            tup = await saver.aget_tuple(cfg(thread_id))
            assert tup is not None and [m.content for m in tup.checkpoint["channel_values"]["messages"]] == [thread_id]
        tup = await saver.aget_tuple(cfg("bad"))
        assert tup is not None and tup.pending_writes == []
        assert not saver._writer.in_transaction
        # The retried thread's cache was rebuilt from what was committed: its next turn stores as usual.
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(1)]}, cfg("a"))
        state = (await graph.aget_state(cfg("a"))).values
        assert [m.content for m in state["messages"]][:2] == ["a", human(1).content]


async def test_a_caller_cancelled_after_its_statements_leaves_the_saver_usable(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        await wal_copied(saver)
        tasks = [asyncio.ensure_future(put(saver, t)) for t in ("a", "b", "c")]
        await group_of(saver, 3)  # the three ran their statements and wait for the group's commit
        assert saver._writer.in_transaction
        tasks[1].cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert isinstance(results[1], asyncio.CancelledError)
        assert not isinstance(results[0], BaseException) and not isinstance(results[2], BaseException)
        # The transaction ended: nothing is left open, and the cancelled put committed with its group
        # (as if it had been cancelled just after its commit).
        assert not saver._writer.in_transaction
        assert stored_threads(path) == {"a", "b", "c"}
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(0)]}, cfg("b"))
        state = (await graph.aget_state(cfg("b"))).values
        assert [m.content for m in state["messages"] if isinstance(m, HumanMessage)][-1] == human(0).content


async def test_a_thread_edit_commits_the_open_group_first(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        await wal_copied(saver)
        pending = asyncio.ensure_future(put(saver, "a"))
        await group_of(saver, 1)
        assert saver._writer.in_transaction  # the put waits for its group's commit
        await saver.aupdate_thread("a", title="edited")  # a transaction of its own, after the group's
        await pending
        thread = await saver.aget_thread("a")
        assert thread is not None and thread.metadata.get("title") == "edited"
        assert not saver._writer.in_transaction
