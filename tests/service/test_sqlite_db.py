"""The service's SQLite connection: a transaction begins at once when the write lock is free, and
waits for it (in a worker thread, the event loop free) when another connection holds it."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from orecast.service.db.connection import BUSY_TIMEOUT_MS, SqliteDb


async def test_a_transaction_waits_for_another_writer(tmp_path: Path) -> None:
    path = str(tmp_path / "service.sqlite3")
    db = SqliteDb(path)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        other.execute("CREATE TABLE t (x INTEGER)")
        async with db.transaction() as tx:  # the lock is free: no wait
            await tx.execute("INSERT INTO t VALUES (0)")

        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO t VALUES (1)")

        async def write() -> None:
            async with db.transaction() as tx:
                await tx.execute("INSERT INTO t VALUES (2)")

        waiting = asyncio.create_task(write())
        await asyncio.sleep(0.3)  # the event loop runs while the transaction waits for the lock
        assert not waiting.done()
        other.execute("COMMIT")
        await asyncio.wait_for(waiting, 10)
        assert [r[0] for r in other.execute("SELECT x FROM t ORDER BY x")] == [0, 1, 2]
        assert db.conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    finally:
        other.close()
        await db.close()
