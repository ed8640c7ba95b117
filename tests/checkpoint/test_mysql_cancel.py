"""MySQL/MariaDB: a write cancelled mid-statement. The driver closes the cut connection; the saver ends its
session on the server too (which went on with the statement and kept the transaction's locks), logs
nothing, and goes on; what was committed stays, what the cancelled transaction wrote does not."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import asyncmy
import pytest

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.mysql.saver import connect_kwargs
from orecast.checkpoint.urls import parse_url
from tests.checkpoint.conftest import raw_sql

CUT = "UPDATE threads SET status = 'busy' WHERE thread_id = 'held'"
RUNNING_CUT = "SELECT COUNT(*) FROM information_schema.processlist WHERE info = %s"


@contextlib.asynccontextmanager
async def holding(url: str, thread_id: str) -> AsyncIterator[None]:
    """Another session holding the thread's row (FOR UPDATE) until the block ends."""
    conn = await asyncmy.connect(**connect_kwargs(parse_url(url).target), autocommit=False)
    try:
        await conn.begin()
        async with conn.cursor() as cur:
            await cur.execute("SELECT 1 FROM threads WHERE thread_id = %s FOR UPDATE", (thread_id,))
            await cur.fetchall()
        yield
        await conn.rollback()
    finally:
        conn.close()


async def until(done: Any, what: str) -> None:
    deadline = time.monotonic() + 20
    while not done():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)


async def cut_write(saver: Any, url: str, *, cancels: int) -> asyncio.Task[None]:
    """A write transaction that changed `mine` and waits for `held`'s row, cancelled `cancels` times:
    the second time while the saver ends the cut connection."""
    changed = asyncio.Event()

    async def write() -> None:
        async with saver._write() as db:
            await db.execute("UPDATE threads SET status = 'error' WHERE thread_id = 'mine'")
            changed.set()
            await db.execute(CUT)

    task = asyncio.create_task(write())
    await asyncio.wait_for(changed.wait(), 20)
    await until(lambda: raw_sql(url, RUNNING_CUT, (CUT,))[0][0], "the statement reached the server")
    task.cancel()
    for _ in range(cancels - 1):
        await asyncio.sleep(0)  # one pass of the loop: the write runs into its cleanup and waits there
        task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 20)
    return task


@pytest.mark.parametrize("cancels", [1, 2])
async def test_a_write_cancelled_mid_statement_frees_its_locks_at_once(
    clean_mysql_url: str, cancels: int, caplog: pytest.LogCaptureFixture
) -> None:
    """The cut session went on waiting for the lock (up to the lock timeout, 10 s) and kept `mine`'s
    row locked meanwhile: the thread's next write waited for it. Cancelled again during the cleanup,
    asyncio logged the rollback's failure on the closed connection ("Task exception was never
    retrieved")."""
    url = clean_mysql_url
    async with open_checkpointer(url) as saver:
        for thread_id in ("mine", "held"):
            await saver.aupdate_thread(thread_id, metadata={"kept": thread_id}, status="idle")
        async with holding(url, "held"):
            with caplog.at_level(logging.WARNING):
                await cut_write(saver, url, cancels=cancels)
                gc.collect()  # a task's exception nobody retrieved is logged when it goes
                await asyncio.sleep(0)
            assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
            # while `held` stays locked: the cut session is gone, and `mine` free
            await asyncio.wait_for(saver.aupdate_thread("mine", metadata={"after": True}), 5)
            await until(lambda: not raw_sql(url, RUNNING_CUT, (CUT,))[0][0], "the cut session ended")
        mine, held = await saver.aget_thread("mine"), await saver.aget_thread("held")
    assert mine is not None and mine.metadata == {"kept": "mine", "after": True}
    assert mine.status == "idle", "the cancelled transaction's change was rolled back"
    assert held is not None and (held.metadata, held.status) == ({"kept": "held"}, "idle")
