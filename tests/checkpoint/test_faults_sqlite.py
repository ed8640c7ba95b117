"""SQLite under faults: writes cancelled while another process holds the lock, URLs that cannot be
put in WAL mode, read-only files."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint import open_checkpointer
from tests.checkpoint.graphs import human, tool_loop

HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
"""

WRITE_ONCE = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
conn.execute("BEGIN IMMEDIATE")
conn.execute("CREATE TABLE IF NOT EXISTS other_process (x)")
conn.execute("COMMIT")
"""


def cfg(thread_id: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **extra}}


@contextmanager
def write_lock_held_elsewhere(path: Path) -> Iterator[None]:
    """Another process holds the database's write lock until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        assert holder.wait(timeout=10) == 0


def another_process_can_write(path: Path) -> bool:
    done = subprocess.run([sys.executable, "-c", WRITE_ONCE, str(path)], capture_output=True, text=True)
    return done.returncode == 0


def a_checkpoint(text: str) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [HumanMessage(text, id=text)]}
    cp["channel_versions"] = {"messages": "1"}
    return cp


WRITES: dict[str, Callable[[Any], Awaitable[Any]]] = {
    "aput": lambda s: s.aput(cfg("new"), a_checkpoint("blocked"), {"source": "input", "step": -1}, {"messages": "1"}),
    "aput_writes": lambda s: s.aput_writes(cfg("a", checkpoint_id="c-1"), [("messages", [human(9)])], "task"),
    "adelete_thread": lambda s: s.adelete_thread("a"),
    "acopy_thread": lambda s: s.acopy_thread("a", "copy"),
    "aprune": lambda s: s.aprune(["a"]),
    "aupdate_thread": lambda s: s.aupdate_thread("a", title="blocked"),
}


@pytest.mark.parametrize("write", list(WRITES))
async def test_cancelled_write_leaves_the_store_usable(tmp_path: Path, write: str) -> None:
    path = tmp_path / "store.sqlite3"
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(0)]}, cfg("a"))
        with write_lock_held_elsewhere(path):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(WRITES[write](saver), 1)
        # The cancelled write took no lock after its caller was gone: other processes write …
        assert another_process_can_write(path)
        # … and so does this saver, with nothing of the cancelled write stored.
        await graph.ainvoke({"messages": [human(1)]}, cfg("a"))
        state = (await graph.aget_state(cfg("a"))).values
        assert [m.content for m in state["messages"] if isinstance(m, HumanMessage)] == [
            human(0).content,
            human(1).content,
        ]
        await saver.aput(cfg("new"), a_checkpoint("after"), {"source": "input", "step": -1}, {"messages": "1"})
        assert (await saver.aget_tuple(cfg("new"))).checkpoint["channel_values"]["messages"][0].content == "after"
        assert (await saver.aget_thread("a")).metadata.get("title") is None
    assert another_process_can_write(path)
