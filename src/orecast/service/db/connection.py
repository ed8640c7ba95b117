"""One small connection layer over SQLite (stdlib sqlite3 in a worker thread), PostgreSQL (psycopg pool)
and MySQL / MariaDB (`mysql_db.py`).

Statements are written once with `?` placeholders; PostgreSQL and MySQL get `%s`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from importlib import resources
from typing import Any, Protocol

import psycopg
from psycopg import AsyncClientCursor, AsyncConnection, AsyncCursor
from psycopg_pool import AsyncConnectionPool

from orecast.checkpoint.errors import StoreUnavailable
from orecast.checkpoint.migrations import statements
from orecast.checkpoint.mysql.saver import Deadlock
from orecast.checkpoint.postgres.pool import Checkout, check_connection, first_line
from orecast.checkpoint.urls import parse_url
from orecast.service.db.mysql_db import MysqlDb

_NUMBERED = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")
CREATE_MIGRATIONS = (
    "CREATE TABLE IF NOT EXISTS service_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
)
SELECT_VERSION = "SELECT COALESCE(MAX(version), 0) FROM service_migrations"
INSERT_MIGRATION = "INSERT INTO service_migrations (version, applied_at) VALUES (?, ?)"
BUSY_TIMEOUT_MS = 30_000  # how long SQLite waits for another connection's write lock
PG_LOCK_MIGRATIONS = "SELECT pg_advisory_xact_lock(7245001)"
PG_LOCK_THREAD = "SELECT pg_advisory_xact_lock(hashtextextended(?, 7245))"
INTRANS, INERROR = psycopg.pq.TransactionStatus.INTRANS, psycopg.pq.TransactionStatus.INERROR
# On MySQL migrations take the named lock of a "thread" no real thread can be (ids hold no NUL).
MYSQL_MIGRATIONS_LOCK = "\x00service-migrations"
# How long a request waits for a free pooled PostgreSQL connection (a down server is told at once).
PG_CHECKOUT_SECONDS = 30.0


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def rolled_back_to_retry(exc: BaseException) -> bool:
    """The database rolled the transaction back to settle a conflict with another one (a deadlock's
    victim on MySQL or PostgreSQL, a serialization failure: SQLSTATE class 40): nothing of it was
    kept, and the same transaction run again may well go through."""
    if isinstance(exc, Deadlock):
        return True
    return isinstance(exc, psycopg.Error) and (exc.sqlstate or "").startswith("40")


class Tx(Protocol):
    """Statements inside one transaction."""

    async def send(self, sql: str, params: Sequence[Any] = ()) -> None:
        """A statement whose result is not needed: on PostgreSQL it goes to the server with the
        transaction's next statement that needs one, or with its COMMIT (no round trip of its own)."""
        ...

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int: ...
    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None: ...
    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...


class Db(Protocol):
    dialect: str

    def transaction(self, thread_id: str | None = None) -> contextlib.AbstractAsyncContextManager[Tx]:
        """A write transaction; with `thread_id`, serialised with every other one on that thread."""
        ...

    def read(self) -> contextlib.AbstractAsyncContextManager[Tx]:
        """Reads outside any write transaction."""
        ...

    async def ping(self) -> None: ...


class _SqliteTx:
    """Statements run on the event loop itself: they follow a `BEGIN IMMEDIATE` that already holds the
    write lock, or are WAL reads, so none of them waits for another connection (microseconds on these
    small tables, where a hop to a worker thread costs more than the statement)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    async def send(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.conn.execute(sql, params)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.conn.execute(sql, params).rowcount

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        return self.conn.execute(sql, params).fetchone()

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()


class SqliteDb:
    """One connection in WAL mode; `BEGIN IMMEDIATE` (which may wait for another process) runs in a
    worker thread and takes SQLite's write lock, which every process shares."""

    dialect = "sqlite"

    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self.conn.execute("PRAGMA journal_mode = WAL")
        # As the checkpoint store's own connections: a COMMIT on the event loop must not fsync (WAL +
        # NORMAL loses nothing when the application crashes) nor run an automatic WAL checkpoint (the
        # store checkpoints the shared WAL from a worker thread).
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute("PRAGMA wal_autocheckpoint = 0")
        self.lock = asyncio.Lock()

    def _begin_at_once(self) -> bool:
        """`BEGIN IMMEDIATE` if the write lock is free this instant (True), on the event loop: most
        transactions find it free, and a hop to a worker thread costs more CPU than the transaction,
        and a wait for the CPU on a busy machine. False: another connection writes; wait in a thread."""
        self.conn.execute("PRAGMA busy_timeout = 0")
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            return True
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
                return False
            raise
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    @contextlib.asynccontextmanager
    async def transaction(self, thread_id: str | None = None) -> AsyncIterator[Tx]:
        async with self.lock:
            if not self._begin_at_once():
                begin = asyncio.ensure_future(asyncio.to_thread(self.conn.execute, "BEGIN IMMEDIATE"))
                try:
                    await asyncio.shield(begin)
                except asyncio.CancelledError:
                    # The worker thread goes on and may still open the transaction: wait for it and undo
                    # it, or the connection stays inside a transaction and every later BEGIN fails.
                    with contextlib.suppress(Exception):
                        await begin
                    self._rollback()
                    raise
            try:
                yield _SqliteTx(self.conn)
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        async with self.lock:
            yield _SqliteTx(self.conn)

    async def ping(self) -> None:
        async with self.read() as tx:
            await tx.fetchone("SELECT 1")

    async def close(self) -> None:
        async with self.lock:
            self.conn.close()


class _PgTx:
    """Statements on one connection. In a transaction, a statement whose result is not needed (`send`)
    waits, and goes to the server in one message with the next statement that has a result, or with
    `COMMIT`: psycopg costs a socket write and an event-loop wait per statement (pipelined or not),
    and that write, with the kernel's loopback delivery charged to it, is most of a short statement's
    CPU. Such a batch is one simple query, its values bound by psycopg on the client (`ClientCursor`)."""

    def __init__(self, conn: AsyncConnection, *, batched: bool = False) -> None:
        self.conn = conn
        self.pending: list[tuple[str, Sequence[Any]]] | None = [] if batched else None

    async def send(self, sql: str, params: Sequence[Any] = ()) -> None:
        if self.pending is None:
            await self.conn.execute(sql.replace("?", "%s"), params)
        else:
            self.pending.append((sql, params))

    async def flush(self) -> None:
        """Send the statements waiting, if any."""
        if self.pending:
            await self._run(*self.pending.pop())

    async def _run(self, sql: str, params: Sequence[Any]) -> AsyncCursor[Any]:
        if not self.pending:
            return await self.conn.execute(sql.replace("?", "%s"), params)
        batch = [*self.pending, (sql, params)]
        self.pending.clear()
        cur = AsyncClientCursor(self.conn)
        await cur.execute(
            "; ".join(statement.replace("?", "%s") for statement, _ in batch),
            [value for _, values in batch for value in values],
        )
        while cur.nextset():  # the last statement's result is the one asked for
            pass
        return cur

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return (await self._run(sql, params)).rowcount

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        return await (await self._run(sql, params)).fetchone()

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await (await self._run(sql, params)).fetchall()


class PostgresDb:
    """A small pool; a thread's transactions are serialised by a transaction-scoped advisory lock."""

    dialect = "postgres"

    def __init__(self, pool: AsyncConnectionPool, url: str) -> None:
        self.pool = pool
        self.checkout = Checkout(pool, url, PG_CHECKOUT_SECONDS)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection]:
        """A pooled connection; an unreachable server is a StoreUnavailable (a 503 for the API)."""
        conn = await self.checkout()
        try:
            yield conn
        except psycopg.OperationalError as exc:
            if not conn.broken:
                raise
            raise StoreUnavailable(f"database unavailable: {first_line(exc)}") from exc
        finally:
            await self.pool.putconn(conn)

    @contextlib.asynccontextmanager
    async def transaction(self, thread_id: str | None = None) -> AsyncIterator[Tx]:
        """`BEGIN`, the thread's lock and the first statement go to the server in one message, and
        `COMMIT` with the statements sent after the last result read: a run's admission is two
        messages (was six: `BEGIN`, lock, active runs, insert, thread status, `COMMIT`), its end two."""
        async with self._connection() as conn:
            tx = _PgTx(conn, batched=True)
            await tx.send("BEGIN")
            if thread_id is not None:
                await tx.send(PG_LOCK_THREAD, (thread_id,))
            try:
                yield tx
                await tx.send("COMMIT")
                await tx.flush()
            except BaseException:
                if tx.pending is not None:
                    tx.pending.clear()
                if not conn.broken and conn.info.transaction_status in (INTRANS, INERROR):
                    with contextlib.suppress(psycopg.Error):
                        await conn.execute("ROLLBACK")
                raise

    async def fetchone_locked(self, thread_id: str, sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
        """One statement under the thread's lock (the one `transaction(thread_id)` takes), sent with the
        lock in one message: PostgreSQL runs a message's statements as one transaction, so this is a
        whole transaction in one round trip."""
        async with self._connection() as conn:
            tx = _PgTx(conn, batched=True)
            await tx.send(PG_LOCK_THREAD, (thread_id,))
            return await tx.fetchone(sql, params)

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        async with self._connection() as conn:
            yield _PgTx(conn)

    async def ping(self) -> None:
        async with self.read() as tx:
            await tx.fetchone("SELECT 1")

    async def close(self) -> None:
        await self.pool.close()


def _python_steps() -> dict[int, Callable[[Tx], Awaitable[None]]]:
    """Migrations done in Python after their version's script (which then only says so): rewriting JSON
    that each dialect's SQL would rewrite its own way (SQLite's JSON functions turn `true` into 1)."""
    from orecast.service.db.auth_fields import keep_identity_only  # it imports this module's Tx

    return {6: keep_identity_only}


async def _migrate(db: SqliteDb | PostgresDb | MysqlDb) -> None:
    folder = resources.files("orecast.service.db").joinpath(db.dialect)
    scripts = sorted(
        (int(m.group(1)), entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if (m := _NUMBERED.match(entry.name))
    )
    async with db.transaction(MYSQL_MIGRATIONS_LOCK if db.dialect == "mysql" else None) as tx:
        if db.dialect == "postgres":
            await tx.execute(PG_LOCK_MIGRATIONS)
        await tx.execute(CREATE_MIGRATIONS)
        row = await tx.fetchone(SELECT_VERSION)
        current = int(row[0]) if row else 0
        for version, script in scripts:
            if version > current:
                for statement in statements(script):
                    await tx.execute(statement)
                if (step := _python_steps().get(version)) is not None:
                    await step(tx)
                await tx.execute(INSERT_MIGRATION, (version, now_iso()))


@contextlib.asynccontextmanager
async def open_db(url: str) -> AsyncIterator[Db]:
    """The service tables on the database at `url` (a checkpoint store URL), migrated."""
    parsed = parse_url(url)
    db: SqliteDb | PostgresDb | MysqlDb
    if parsed.scheme == "sqlite":
        db = SqliteDb(parsed.target)
    elif parsed.scheme == "postgresql":
        pool = AsyncConnectionPool(
            parsed.target, min_size=1, max_size=6, kwargs={"autocommit": True}, open=False,
            check=check_connection,  # a connection left dead by a server restart is replaced, not used
        )
        await pool.open(wait=True)
        db = PostgresDb(pool, parsed.target)
    elif parsed.scheme == "mysql":
        db = await MysqlDb.open(parsed.target)
    else:
        raise ValueError(f"the service needs a sqlite, postgresql or mysql database, not {parsed.scheme!r}")
    try:
        await _migrate(db)
        yield db
    finally:
        await db.close()
