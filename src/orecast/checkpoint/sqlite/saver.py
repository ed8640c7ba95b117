"""`SqliteCheckpointer`: one writer connection and one reader connection on a WAL database."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orecast.checkpoint.base import OrecastCheckpointer
from orecast.checkpoint.sqlite import queries

BUSY_TIMEOUT_MS = 30_000
WAL_CHECKPOINT_BYTES = 48 * 1024


class _Db:
    """Statements run inline on the event loop's thread: SQLite answers in microseconds, and a thread
    hop per statement (as aiosqlite does) costs more than the statement itself. A statement that
    finds the database locked by another process is retried in a worker thread, where it may wait."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    async def _run(self, statement: Callable[[], Any]) -> Any:
        try:
            return statement()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
        return await asyncio.to_thread(_waiting, self.conn, statement)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        await self._run(lambda: self.conn.execute(sql, params))

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self._run(lambda: self.conn.executemany(sql, rows))

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        def one() -> tuple[Any, ...] | None:
            # Closing the cursor ends the statement's read snapshot, which would block WAL checkpoints.
            cur = self.conn.execute(sql, params)
            try:
                return cur.fetchone()
            finally:
                cur.close()

        return await self._run(one)

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await self._run(lambda: self.conn.execute(sql, params).fetchall())


def _waiting(conn: sqlite3.Connection, statement: Callable[[], Any]) -> Any:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    try:
        return statement()
    finally:
        conn.execute("PRAGMA busy_timeout = 0")


def _connect(path: str) -> sqlite3.Connection:
    """Open and configure a connection; may wait for other processes (run it in a worker thread)."""
    # check_same_thread=False: the connection is then used from the loop's thread, except while a
    # worker thread waits for the write lock on it (the loop does not touch it meanwhile).
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if path != ":memory:":
        # WAL mode is stored in the file: only its first opener switches, and several processes
        # opening a new file at once wait for each other here instead of failing.
        _switch_to_wal(conn)
        # The saver checkpoints the WAL itself, from a worker thread (see `_after_commit`): an automatic
        # checkpoint would fsync inside a COMMIT on the event loop.
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        # When a write restarts the WAL from its start (after a complete checkpoint), the file is cut
        # to what that write used: its size then tells how much is left to checkpoint.
        conn.execute("PRAGMA journal_size_limit = 0")
    # WAL + NORMAL: a crash of the application never loses a committed checkpoint; only an OS crash
    # or power loss can drop the last transactions.
    conn.execute("PRAGMA synchronous = NORMAL")
    # On the loop, statements must not wait: a busy write lock is waited for in a worker thread.
    conn.execute("PRAGMA busy_timeout = 0")
    return conn


def _switch_to_wal(conn: sqlite3.Connection) -> None:
    # Switching needs an exclusive lock and SQLite reports a conflict at once, without its busy
    # handler (two openers could otherwise wait for each other): retry with a backoff.
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def _checkpoint_wal(conn: sqlite3.Connection) -> None:
    """Copy the WAL into the database; best effort (a later attempt catches up).

    PASSIVE: it never waits for readers or writers of other processes (the other modes hold the write
    lock through the copy and its fsync, and wait for readers). Run while this saver's writes are held
    back, it copies the whole WAL, so the next write restarts the WAL from its start.
    """
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    except sqlite3.OperationalError:
        pass  # busy or locked by another process: it will be done after a later commit


class SqliteCheckpointer(OrecastCheckpointer):
    """LangGraph checkpoint saver on a SQLite file (WAL mode, busy timeout, linear storage)."""

    dialect = "sqlite"
    q = queries
    migrations_package = "sqlite"

    def __init__(self, path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path = path
        self._writer: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._write_lock = asyncio.Lock()
        self._wal_checkpoint: asyncio.Task[None] | None = None

    @classmethod
    @asynccontextmanager
    async def from_path(cls, path: str | Path, **kwargs: Any) -> AsyncIterator[SqliteCheckpointer]:
        """Open (creating if needed) the database at `path`, migrate it, and close it on exit."""
        path = str(path)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        saver = cls(path, **kwargs)
        saver._writer = await asyncio.to_thread(_connect, path)
        # An in-memory database exists per connection: reads must share the writer's.
        saver._reader = saver._writer if path == ":memory:" else await asyncio.to_thread(_connect, path)
        saver.loop = asyncio.get_running_loop()
        try:
            await saver.setup()
            yield saver
        finally:
            if saver._wal_checkpoint is not None:
                await saver._wal_checkpoint
            saver._writer.close()
            if saver._reader is not saver._writer:
                saver._reader.close()

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[_Db]:
        assert self._writer is not None, "saver is closed"
        conn = self._writer
        async with self._write_lock:
            db = _Db(conn)
            await db.execute("BEGIN IMMEDIATE")  # waits in a worker thread if another process writes
            try:
                yield db
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        self._after_commit()

    def _after_commit(self) -> None:
        """Start a WAL checkpoint once the WAL has grown (one at a time)."""
        if self.path == ":memory:" or (self._wal_checkpoint and not self._wal_checkpoint.done()):
            return
        try:
            size = os.stat(self.path + "-wal").st_size
        except FileNotFoundError:
            return
        if size >= WAL_CHECKPOINT_BYTES:
            self._wal_checkpoint = asyncio.ensure_future(self._checkpoint_wal())

    async def _checkpoint_wal(self) -> None:
        # Between two writes of this saver, so the copy catches up with the WAL: a checkpoint that
        # runs alongside the writes never finds the WAL fully copied, the WAL is never restarted,
        # and it grows without bound (2.4 MB after 60 turns), making every page lookup slower.
        # In a worker thread, so the event loop runs the graphs meanwhile; the writer connection is
        # not used by the loop while the write lock is held.
        async with self._write_lock:
            if self._writer is not None:
                await asyncio.to_thread(_checkpoint_wal, self._writer)

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[_Db]:
        assert self._reader is not None, "saver is closed"
        if self._reader is self._writer:
            async with self._write_lock:
                yield _Db(self._reader)
        else:
            yield _Db(self._reader)

    def _ts(self, value: datetime) -> str:
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")

    def _json_param(self, text: str) -> str:
        return text

    def _metadata_filter_sql(self, filter: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
        return _json_equalities("c.metadata", filter)

    def _thread_search_sql(
        self, metadata: Mapping[str, Any] | None, status: str | None, title: str | None
    ) -> tuple[list[str], list[Any]]:
        clauses, params = _json_equalities("metadata", metadata or {})
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        if title:
            clauses.append("instr(lower(COALESCE(json_extract(metadata, '$.title'), '')), lower(?)) > 0")
            params.append(title)
        return clauses, params

    async def astats(self) -> dict[str, Any]:
        out = await super().astats()
        async with self._read() as db:
            try:
                sizes = await db.fetchall(queries.TABLE_BYTES)
            except sqlite3.OperationalError:  # an SQLite built without the dbstat table
                sizes = []
        for table, size in sizes:
            if table in out["tables"]:
                out["tables"][table]["bytes"] = int(size)
        if self.path != ":memory:":
            files = [Path(self.path), Path(self.path + "-wal"), Path(self.path + "-shm")]
            out["bytes"] = sum(f.stat().st_size for f in files if f.exists())
        return out


def _json_equalities(column: str, wanted: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    """`column` contains each key with an equal value (JSON text comparison for containers)."""
    clauses: list[str] = []
    params: list[Any] = []
    for key, value in wanted.items():
        path = f'$."{key}"'
        if value is None:
            clauses.append(f"json_type({column}, ?) = 'null'")
            params.append(path)
        elif isinstance(value, bool):
            clauses.append(f"json_type({column}, ?) = ?")
            params += [path, "true" if value else "false"]
        elif isinstance(value, dict | list):
            clauses.append(f"json_extract({column}, ?) = json(?)")
            params += [path, json.dumps(value, separators=(",", ":"))]
        else:
            clauses.append(f"json_extract({column}, ?) = ?")
            params += [path, value]
    return clauses, params
