"""LangGraph's store on the checkpoints' database (checkpoint/store.py), beside the saver."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.store import open_store

COUNT_CHECKPOINTS = """
import asyncio, sys
from orecast.checkpoint import open_checkpointer

async def main():
    async with open_checkpointer(sys.argv[1]) as saver:
        print(len([c async for c in saver.alist({"configurable": {"thread_id": "t"}})]))

asyncio.run(main())
"""

OPEN_AND_CLOSE = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
conn.close()
"""


def in_another_process(script: str, arg: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", script, arg], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


async def test_opening_the_store_keeps_this_process_sqlite_locks(tmp_path: Path) -> None:
    """SQLite's locks are POSIX record locks, which a process loses on *every* descriptor of the file
    when it closes any one of them. Had setting up the store opened and closed the database file
    itself, another process closing its last connection would have found the file unused: it would
    have deleted the WAL that this process still writes to, and every later checkpoint would be lost
    (`orecast serve` beside any `orecast` command; the cross-process service tests, 7 Dec)."""
    path = tmp_path / "s.sqlite"
    url = f"sqlite:///{path}"
    async with open_checkpointer(url) as saver, open_store(url):
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        for turn in range(3):
            cp = empty_checkpoint()
            cp["channel_values"] = {"messages": [HumanMessage(f"turn {turn}", id=f"m{turn}")]}
            cp["channel_versions"] = {"messages": str(turn + 1)}
            config = await saver.aput(config, cp, {"source": "loop", "step": turn}, {"messages": str(turn + 1)})
            in_another_process(OPEN_AND_CLOSE, str(path))
            assert Path(f"{path}-wal").exists(), "another process deleted the WAL this one writes"
    assert in_another_process(COUNT_CHECKPOINTS, url) == "3"

