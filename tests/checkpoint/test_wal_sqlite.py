"""SQLite's WAL under this saver: its own checkpoints keep the WAL small, on a connection that closes
with the saver."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.sqlite.saver import WAL_CHECKPOINT_BYTES, WAL_HOLD_FACTOR


def cfg(thread_id: str, parent: str | None = None) -> dict[str, Any]:
    extra = {"checkpoint_id": parent} if parent else {}
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **extra}}


async def put_turns(saver: Any, thread_id: str, turns: int) -> None:
    """`turns` checkpoints in a row on one thread, each adding a 2 KB message, waiting for the WAL
    checkpoint each may start (a single writer's pace)."""
    messages: list[HumanMessage] = []
    parent = None
    for turn in range(turns):
        messages = [*messages, HumanMessage("x" * 2000 + str(turn), id=f"m{turn}")]
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": messages}
        cp["channel_versions"] = {"messages": str(turn + 1)}
        config = await saver.aput(cfg(thread_id, parent), cp, {"source": "loop", "step": turn}, {"messages": str(turn + 1)})
        parent = config["configurable"]["checkpoint_id"]
        if saver._wal_checkpoint is not None:
            await saver._wal_checkpoint


def open_files_under(path: Path) -> list[str]:
    """The files of this process's open descriptors that lie in `path`."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(path)):
            found.append(target)
    return found


async def test_a_single_writer_keeps_the_wal_small(tmp_path: Path) -> None:
    """Each checkpoint copies the whole WAL while the writes wait, so the next write restarts the WAL
    from its start: 120 checkpoints of 2 KB messages (over 250 KiB of new pages) leave the WAL within a
    few checkpoint thresholds, and every message reads back."""
    path = tmp_path / "s.sqlite"
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        await put_turns(saver, "t", 120)
        wal = os.stat(f"{path}-wal").st_size
        assert wal <= 4 * WAL_CHECKPOINT_BYTES, wal
        state = await saver.aget_tuple(cfg("t"))
        assert [m.id for m in state.checkpoint["channel_values"]["messages"]] == [f"m{i}" for i in range(120)]


async def test_closing_the_saver_closes_every_connection_it_opened(tmp_path: Path) -> None:
    """The WAL checkpoints' own connection is kept between checkpoints, and closed with the saver: no
    descriptor of the database, its WAL or its -shm file stays open, and the file opens again."""
    path = tmp_path / "s.sqlite"
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        await put_turns(saver, "t", 40)
        assert open_files_under(tmp_path)
    assert open_files_under(tmp_path) == []
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        assert len((await saver.aget_tuple(cfg("t"))).checkpoint["channel_values"]["messages"]) == 40


async def test_a_single_writer_writes_on_while_the_wal_is_copied(tmp_path: Path) -> None:
    """A WAL checkpoint's first copy runs alongside the writes (only its catch-up holds them back): a
    write committed while the first copy is held inside its worker thread completes. Writes go on until
    the WAL reaches `WAL_HOLD_FACTOR` times the threshold; then they wait for the checkpoint (a slow
    disk must not let the WAL grow without bound), which, let go, copies everything, so the next write
    restarts the WAL."""
    path = tmp_path / "s.sqlite"
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        copier = saver._wal_copier
        copying, release = threading.Event(), threading.Event()
        copies = []
        real_run = copier.run

        def held_first_copy() -> None:
            copies.append(os.stat(f"{path}-wal").st_size)
            if len(copies) == 1:
                copying.set()
                release.wait(10)
            real_run()

        copier.run = held_first_copy
        messages: list[HumanMessage] = []
        parent = None

        def put(turn: int) -> Any:
            messages.append(HumanMessage("x" * 2000 + str(turn), id=f"m{turn}"))
            cp = empty_checkpoint()
            cp["channel_values"] = {"messages": list(messages)}
            cp["channel_versions"] = {"messages": str(turn + 1)}
            return saver.aput(cfg("t", parent), cp, {"source": "loop", "step": turn}, {"messages": str(turn + 1)})

        turn = 0
        while saver._wal_checkpoint is None:  # until the WAL passes the threshold
            parent = (await put(turn))["configurable"]["checkpoint_id"]
            turn += 1
        assert await asyncio.to_thread(copying.wait, 10)
        while saver._wal_room.is_set():  # writes go on while the first copy is held
            parent = (await asyncio.wait_for(put(turn), 5))["configurable"]["checkpoint_id"]
            turn += 1
        held = os.stat(f"{path}-wal").st_size
        assert held >= WAL_HOLD_FACTOR * WAL_CHECKPOINT_BYTES
        waiting = asyncio.ensure_future(put(turn))
        await asyncio.sleep(0.3)
        assert not waiting.done()  # held back until the checkpoint ends
        release.set()
        await asyncio.wait_for(waiting, 10)
        await saver._wal_checkpoint
        assert len(copies) == 2  # the first copy, then the catch-up
        # The catch-up copied everything, so the write that waited started the WAL from its beginning
        # (journal_size_limit=0 cuts the file to what that write used).
        assert os.stat(f"{path}-wal").st_size < held
        state = await saver.aget_tuple(cfg("t"))
        assert [m.id for m in state.checkpoint["channel_values"]["messages"]] == [f"m{i}" for i in range(turn + 1)]
