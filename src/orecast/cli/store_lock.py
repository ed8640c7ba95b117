"""One restore or archive at a time per store: `db restore`, `threads import` and `db archive` of two
processes take turns.

Two restores of one archive into one store at once both wrote the same threads: each saw a thread the
other was writing as cut short and wrote it again over it, one of them failed with "corrupt stored row"
when it read the other's half-written rows, and one stopped (Ctrl-C, an error) deleted the thread it was
writing, which the other was writing too. Now the second waits, saying so in one line, then finds the
threads there already. Two archives at once wrote the same `.part` file: one failed its read-back
("CRC check failed"), the other "No such file" when it renamed it, and one could rename a garbled file
over the checked file of a thread the other had deleted. An archive and a restore at once would archive
what the restore writes. The lock is the database's own where it has one (a PostgreSQL advisory lock of
the store's schema, a MySQL named lock of its database), a lock file next to a SQLite file; either is
let go when the process ends, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import unquote

import asyncmy
import psycopg
import typer

from orecast.checkpoint.mysql.saver import connect_kwargs
from orecast.checkpoint.urls import StoreUrl, parse_url
from orecast.cli.store_probe import in_memory

POLL_SECONDS = 0.2
PG_TRY_LOCK = "SELECT pg_try_advisory_lock(hashtextextended('orecast restore:' || current_schema(), 0))"
MYSQL_TRY_LOCK = ("SELECT GET_LOCK(LEFT(SHA2(CONCAT('orecast-restore:', CONVERT(DATABASE() USING utf8mb4)), "
                  "256), 64), 0)")


class _SqliteLockFile:
    def __init__(self, target: str) -> None:
        path = unquote(target[len("file:"):].partition("?")[0]) if target.startswith("file:") else target
        self.fd = os.open(f"{path}-restore.lock", os.O_RDWR | os.O_CREAT, 0o644)

    async def try_lock(self) -> bool:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    async def close(self) -> None:
        os.close(self.fd)  # lets the lock go


class _PostgresLock:
    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self.conn = conn

    async def try_lock(self) -> bool:
        row = await (await self.conn.execute(PG_TRY_LOCK)).fetchone()
        return bool(row and row[0])

    async def close(self) -> None:
        await self.conn.close()  # a session's advisory locks end with it


class _MysqlLock:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def try_lock(self) -> bool:
        async with self.conn.cursor() as cur:
            await cur.execute(MYSQL_TRY_LOCK)
            row = await cur.fetchone()
        return bool(row and row[0] == 1)

    async def close(self) -> None:
        self.conn.close()  # a connection's named locks end with it


async def _lock_of(parsed: StoreUrl) -> _SqliteLockFile | _PostgresLock | _MysqlLock | None:
    if parsed.scheme == "sqlite":
        return None if in_memory(parsed.target) else _SqliteLockFile(parsed.target)
    if parsed.scheme == "postgresql":
        return _PostgresLock(await psycopg.AsyncConnection.connect(parsed.target, autocommit=True))
    if parsed.scheme == "mysql":
        return _MysqlLock(await asyncmy.connect(**connect_kwargs(parsed.target)))
    return None


@contextlib.asynccontextmanager
async def moving_threads_alone(url: str) -> AsyncIterator[None]:
    """Held while this process restores into or archives from the store at `url`; waits, saying so
    once, while another holds it. Call it once the store is open: its errors are the store's, said by `open_store`."""
    parsed = parse_url(url)
    lock = await _lock_of(parsed)
    if lock is None:
        yield
        return
    try:
        if not await lock.try_lock():
            typer.echo(f"waiting for another restore or archive of {parsed.redacted()} to finish…", err=True)
            while not await lock.try_lock():
                await asyncio.sleep(POLL_SECONDS)
        yield
    finally:
        await lock.close()
