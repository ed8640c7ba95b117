"""The service's tables on MySQL 8 / MariaDB: an asyncmy pool, a thread's transactions serialised by a
named lock (the counterpart of PostgreSQL's advisory lock).

Statements are written once with `?` placeholders; MySQL gets `%s`. Connections report rows *changed*
(not FOUND_ROWS, unlike the checkpoint store's): an `INSERT … ON DUPLICATE KEY UPDATE key = key` that
finds the row then counts 0, as `ON CONFLICT DO NOTHING` does elsewhere.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import asyncmy
from asyncmy import errors

from orecast.checkpoint.mysql.saver import (
    connect_kwargs,
    conversions,
    session_settings,
    store_error,
)
from orecast.checkpoint.postgres.timeouts import Timeouts

# Named locks are server-wide: the name carries the database, hashed to the 64 characters allowed.
# DATABASE() is utf8mb3 on MariaDB: concatenated as it is with a key holding a 4-byte character (an
# emoji thread id) it was "Illegal mix of collations". Converted, an ASCII name hashes as before.
_LOCK_NAME = "LEFT(SHA2(CONCAT('orecast-service:', CONVERT(DATABASE() USING utf8mb4), ':', %s), 256), 64)"
LOCK = f"SELECT GET_LOCK({_LOCK_NAME}, %s)"
UNLOCK = f"SELECT RELEASE_LOCK({_LOCK_NAME})"
LOCK_WAIT_SECONDS = 30
ER_DUP_ENTRY = 1062


class UniqueViolation(Exception):
    """A unique index refused a row (MySQL says "Duplicate entry"; callers look for "unique")."""


class _MysqlTx:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def _cursor_run(self, cur: Any, sql: str, params: Sequence[Any]) -> None:
        try:
            await cur.execute(sql.replace("?", "%s"), tuple(params) or None)
        except errors.IntegrityError as exc:
            if exc.args and exc.args[0] == ER_DUP_ENTRY:
                raise UniqueViolation(f"unique constraint violated: {exc.args[1]}") from exc
            raise

    async def send(self, sql: str, params: Sequence[Any] = ()) -> None:
        await self.execute(sql, params)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        async with self.conn.cursor() as cur:
            await self._cursor_run(cur, sql, params)
            return cur.rowcount

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        async with self.conn.cursor() as cur:
            await self._cursor_run(cur, sql, params)
            return await cur.fetchone()

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        async with self.conn.cursor() as cur:
            await self._cursor_run(cur, sql, params)
            return list(await cur.fetchall())


@contextlib.asynccontextmanager
async def _database_errors() -> AsyncIterator[None]:
    """The server gone or a lock timed out: the store's StoreError (a 503 for the API), not a driver's."""
    try:
        yield
    except (errors.Error, OSError) as exc:
        error = store_error(exc, Timeouts())
        if error is None:
            raise
        raise error from exc


class MysqlDb:
    """A small pool; a thread's transactions wait for each other on a named lock."""

    dialect = "mysql"

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    @classmethod
    async def open(cls, url: str) -> MysqlDb:
        options = {**connect_kwargs(url), "charset": "utf8mb4", "autocommit": True, "conv": conversions()}
        probe = await asyncmy.connect(**options)
        try:
            async with probe.cursor() as cur:
                await cur.execute("SELECT VERSION()")
                (version,) = await cur.fetchone()
        finally:
            probe.close()
        pool = await asyncmy.create_pool(
            minsize=1, maxsize=6, init_command=session_settings(version, Timeouts()), **options
        )
        return cls(pool)

    @contextlib.asynccontextmanager
    async def transaction(self, thread_id: str | None = None) -> AsyncIterator[_MysqlTx]:
        async with _database_errors(), self.pool.acquire() as conn:
            tx = _MysqlTx(conn)
            if thread_id is not None:
                got = await tx.fetchone(LOCK, (thread_id, LOCK_WAIT_SECONDS))
                if not got or got[0] != 1:
                    raise TimeoutError(f"thread {thread_id} stayed locked for over {LOCK_WAIT_SECONDS} s")
            try:
                await conn.begin()
                try:
                    yield tx
                except BaseException:
                    # A statement cancelled mid-way closed the connection (its stream is cut): the server
                    # rolls back, and frees the thread's lock, when it sees it go.
                    if conn.connected:
                        await conn.rollback()
                    raise
                await conn.commit()
            finally:
                if thread_id is not None and conn.connected:
                    await tx.fetchone(UNLOCK, (thread_id,))

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[_MysqlTx]:
        async with _database_errors(), self.pool.acquire() as conn:
            yield _MysqlTx(conn)

    async def ping(self) -> None:
        async with self.read() as tx:
            await tx.fetchone("SELECT 1")

    async def close(self) -> None:
        self.pool.close()
        await self.pool.wait_closed()
