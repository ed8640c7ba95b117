"""`PostgresCheckpointer`: a psycopg connection pool, one connection per operation, no instance lock."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg import AsyncConnection, errors
from psycopg.types.string import TextLoader
from psycopg_pool import AsyncConnectionPool

from orecast.checkpoint.base import OrecastCheckpointer, PendingWrites
from orecast.checkpoint.cache import ThreadItems
from orecast.checkpoint.core import StaleThreadError, ThreadTurn, put_parameters
from orecast.checkpoint.encoding import json_text
from orecast.checkpoint.errors import StoreError, StoreTimeout, StoreUnavailable
from orecast.checkpoint.postgres import queries
from orecast.checkpoint.postgres.pipeline import (
    BOOL_OID,
    INT8_OID,
    NO_SUCH_PREPARED_STATEMENT,
    TIMESTAMPTZ_OID,
    UNKNOWN_OID,
    Chain,
    GroupCommit,
    Prepared,
    PreparedStatements,
    Statement,
    run_statements,
)
from orecast.checkpoint.postgres.pool import Checkout, check_connection, first_line
from orecast.checkpoint.postgres.timeouts import Timeouts
from orecast.checkpoint.upcast import WRITE_VERSIONS

# Any stable number: serialises concurrent migrations of one database across processes.
MIGRATION_LOCK_KEY = 0x6F7265636173  # "orecas"
# Items per page (migration 003 packs existing items with the same number).
PAGE_ITEMS = 32
CONNECT_TIMEOUT_SECONDS = 10
# The statements of a put and a put_writes, prepared on each connection (pipeline.py).
_WRITE_TYPES = {
    "schema_version": INT8_OID,
    "clear": INT8_OID,
    "message_count": INT8_OID,
    "root": INT8_OID,
    "first_item": INT8_OID,
    "next_item": INT8_OID,
    "interrupted": BOOL_OID,
    "now": TIMESTAMPTZ_OID,
}
STORE_PUT = Prepared.of("orecast_store_put", queries.STORE_PUT, _WRITE_TYPES)
STORE_WRITES = Prepared.of("orecast_store_writes", queries.STORE_WRITES, _WRITE_TYPES)
STORE_SPECIAL_WRITES = Prepared.of("orecast_store_special_writes", queries.STORE_SPECIAL_WRITES, _WRITE_TYPES)
# Run with a group, as the write that completed the page was (a seal came every few turns of a thread,
# on a connection of its own through psycopg).
SEAL_ITEM_PAGES = Prepared.of(
    "orecast_seal_item_pages", queries.SEAL_ITEM_PAGES, {"upto": INT8_OID, "page": INT8_OID}
)
SELECT_CHECKPOINT_AND_WRITES = Prepared.positional(
    "orecast_checkpoint_and_writes", queries.SELECT_CHECKPOINT_AND_WRITES, (UNKNOWN_OID,) * 3
)
SELECT_LATEST_CHECKPOINT_AND_WRITES = Prepared.positional(
    "orecast_latest_checkpoint_and_writes", queries.SELECT_LATEST_CHECKPOINT_AND_WRITES, (UNKNOWN_OID,) * 2
)
POOL_TIMEOUT_SECONDS = 30.0
# How long the read after a thread's deletion waits for older transactions (queries.ENDED_SINCE).
HORIZON_WAIT_SECONDS = 1.0
HORIZON_POLL_SECONDS = 0.005


def _store_error(exc: psycopg.Error, broken: bool, timeouts: Timeouts) -> StoreError | None:
    """Our error for a driver error that is the database's doing, or None to let it through."""
    if isinstance(exc, errors.LockNotAvailable):
        return StoreTimeout(
            f"database lock timeout: a row stayed locked by another session for over {timeouts.lock:g} s"
        )
    if isinstance(exc, errors.QueryCanceled) and "statement timeout" in str(exc):
        return StoreTimeout(f"database statement timeout: a statement ran over {timeouts.statement:g} s")
    if broken or isinstance(exc, errors.AdminShutdown | errors.CannotConnectNow):
        return StoreUnavailable(f"database unavailable: {first_line(exc)}")
    return None


class _Db:
    def __init__(
        self,
        conn: AsyncConnection | None,
        prepared: PreparedStatements,
        groups: GroupCommit,
        replace: Callable[[AsyncConnection], Awaitable[AsyncConnection]] | None = None,
        checkout: Callable[[], Awaitable[AsyncConnection]] | None = None,
    ) -> None:
        # None until a statement needs it (`checkout`): a put, a put_writes or a checkpoint read whose
        # one statement goes with a group (`GroupCommit`) takes no connection of its own.
        self.conn = conn
        self._checkout = checkout
        self._prepared = prepared
        self._groups = groups
        self.in_transaction = False
        # Items numbered by this process and stored by the put or put_writes statement that refers to
        # them (`_store_items`): [[hash, JSON text], …] numbered from `first_item` on.
        self.defer_items = False
        self.new_items: list[list[str]] = []
        self.first_item = 0
        self.incarnation = ""
        # A put's or put_writes' place in its thread's queue: its grouped statements keep their order
        # with the thread's other writes (`GroupCommit`). None for other operations.
        self.chain: Chain | None = None
        # Set for reads outside a transaction: each statement stands alone, so one whose connection
        # died (a server restart, a killed backend) is run once more on a fresh connection.
        self._replace = replace

    async def connection(self) -> AsyncConnection:
        if self.conn is None:
            assert self._checkout is not None
            if self.chain is not None:
                # A statement of its own, outside the queue: after the thread's queued ones.
                await self._groups.settled(self.chain.thread)
            self.conn = await self._checkout()
        return self.conn

    async def _run(self, statement: Callable[[AsyncConnection], Awaitable[Any]]) -> Any:
        conn = await self.connection()
        try:
            return await statement(conn)
        except psycopg.OperationalError:
            if self._replace is None or not conn.broken:
                raise
        self.conn = await self._replace(conn)
        return await statement(self.conn)

    async def _run_prepared(self, prepared: Prepared, params: Any) -> list[tuple[str | None, ...]]:
        """The rows (as text) of a prepared statement: run with the statements of other operations
        (`GroupCommit`), unless this operation has a connection already (a transaction, say)."""
        values = prepared.values(params)
        if self.conn is None and not self.in_transaction:
            return await self._groups.run(prepared, values, self.chain)
        statement = Statement(prepared, values)
        await self._run(lambda conn: run_statements(conn, self._prepared, [statement]))
        if statement.error is not None and statement.error.sqlstate == NO_SUCH_PREPARED_STATEMENT and not self.in_transaction:
            # deallocated behind the saver's back (a manual DEALLOCATE ALL): prepared again
            await self._run(lambda conn: run_statements(conn, self._prepared, [statement]))
        if statement.error is not None:
            raise statement.error
        assert statement.rows is not None
        return statement.rows

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        await self._run(lambda conn: conn.execute(sql, params))

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async def many(conn: AsyncConnection) -> None:
            async with conn.cursor() as cur:
                await cur.executemany(sql, rows)

        await self._run(many)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        if isinstance(sql, Prepared):
            rows = await self._run_prepared(sql, params)
            return rows[0] if rows else None

        async def one(conn: AsyncConnection) -> tuple[Any, ...] | None:
            cur = await conn.execute(sql, params)
            return await cur.fetchone()

        return await self._run(one)

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if isinstance(sql, Prepared):
            return await self._run_prepared(sql, params)

        async def every(conn: AsyncConnection) -> list[tuple[Any, ...]]:
            cur = await conn.execute(sql, params)
            return await cur.fetchall()

        return await self._run(every)


def _completes_page(low: int, top: int) -> bool:
    """Whether items `low`…`top` complete a page (`PostgresCheckpointer._seal_pages`)."""
    return top // PAGE_ITEMS > (low - 1) // PAGE_ITEMS


def _b64(blob: bytes | None) -> str | None:
    return base64.b64encode(blob).decode("ascii") if blob is not None else None


def _configurer(timeouts: Timeouts) -> Callable[[AsyncConnection], Awaitable[None]]:
    statement, lock = timeouts.settings

    async def configure(conn: AsyncConnection) -> None:
        # JSON comes back as text: the saver decodes it itself, the same way on both dialects.
        conn.adapters.register_loader("jsonb", TextLoader)
        conn.adapters.register_loader("json", TextLoader)
        await conn.execute(
            "SELECT set_config('statement_timeout', %s, false), set_config('lock_timeout', %s, false)",
            (statement, lock),
        )

    return configure


async def _older_transactions_ended(conn: AsyncConnection) -> None:
    """Return once every transaction of the server running now has ended (queries.ENDED_SINCE), or
    after HORIZON_WAIT_SECONDS: a long one is not waited for."""
    row = await (await conn.execute(queries.NEXT_TRANSACTION)).fetchone()
    if row is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HORIZON_WAIT_SECONDS
    while True:
        ended = await (await conn.execute(queries.ENDED_SINCE, row)).fetchone()
        if (ended is not None and ended[0]) or loop.time() >= deadline:
            return
        await asyncio.sleep(HORIZON_POLL_SECONDS)


class _Lazy:
    """One operation outside a transaction whose connection is taken from the pool only when a statement
    needs it (`_Db.conn`), with the database's failures turned into StoreErrors.

    Every put, put_writes and checkpoint read of a thread this process has seen enters one, and most
    take no connection (their one statement goes with a group): a plain class, a fraction of the frames
    and objects of two nested generator-based context managers.
    """

    __slots__ = ("_saver", "_defer_items", "_chain", "_db")

    def __init__(self, saver: PostgresCheckpointer, *, defer_items: bool, chain: Chain | None = None) -> None:
        self._saver = saver
        self._defer_items = defer_items
        self._chain = chain

    async def __aenter__(self) -> _Db:
        saver = self._saver
        db = self._db = _Db(None, saver._prepared, saver._groups, saver._replace, saver._checkout)
        db.defer_items = self._defer_items
        db.chain = self._chain
        return db

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        db = self._db
        try:
            if isinstance(exc, psycopg.Error):
                error = _store_error(exc, db.conn is not None and db.conn.broken, self._saver.timeouts)
                if error is not None:
                    raise error from exc
        finally:
            if db.conn is not None:
                await self._saver.pool.putconn(db.conn)


class PostgresCheckpointer(OrecastCheckpointer):
    """LangGraph checkpoint saver on PostgreSQL (JSONB values, pooled connections, linear storage)."""

    dialect = "postgresql"
    keeps_key_order = True
    inline_values = True
    q = queries
    migrations_package = "postgres"

    def __init__(
        self, pool: AsyncConnectionPool, url: str, timeouts: Timeouts | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.pool = pool
        self.url = url
        self.timeouts = timeouts or Timeouts()
        self._checkout_from_pool = Checkout(pool, url, POOL_TIMEOUT_SECONDS)
        self._prepared = PreparedStatements()
        self._groups = GroupCommit(self._checkout, pool.putconn, self._prepared)
        self._vacuum: asyncio.Task[None] | None = None
        # Reads marking deleted threads' index entries dead (`_after_thread_deleted`), awaited at close.
        self._marking: set[asyncio.Task[None]] = set()

    @classmethod
    @asynccontextmanager
    async def from_url(
        cls, url: str, *, pool_size: int = 10, timeouts: Timeouts | None = None, **kwargs: Any
    ) -> AsyncIterator[PostgresCheckpointer]:
        """Open a pool on `url`, migrate the schema, and close the pool on exit."""
        timeouts = timeouts or Timeouts()
        # One direct connection first: a wrong URL fails at once with the server's own message
        # instead of the pool retrying in the background until its timeout.
        probe = await AsyncConnection.connect(url, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        await probe.close()
        pool = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={
                "autocommit": True,
                "connect_timeout": CONNECT_TIMEOUT_SECONDS,
                # The statements of pipeline.py send and read their text as UTF-8 themselves.
                "client_encoding": "utf8",
                # psycopg prepares nothing itself: after a rolled-back transaction it would deallocate
                # every prepared statement of the connection, pipeline.py's too (DEALLOCATE ALL).
                "prepare_threshold": None,
            },
            configure=_configurer(timeouts),
            check=check_connection,
            timeout=POOL_TIMEOUT_SECONDS,
            max_idle=300,
            max_lifetime=3600,
            open=False,
        )
        await pool.open(wait=True, timeout=30)
        saver = cls(pool, url, timeouts, **kwargs)
        saver.loop = asyncio.get_running_loop()
        try:
            await saver.setup()
            yield saver
        finally:
            if saver._vacuum is not None:
                await asyncio.gather(saver._vacuum, return_exceptions=True)
            await asyncio.gather(*saver._marking, return_exceptions=True)
            await saver._groups.close()
            await pool.close()

    async def _checkout(self) -> AsyncConnection:
        """A checked, working connection from the pool; StoreUnavailable at once if the server is down."""
        return await self._checkout_from_pool()

    async def _replace(self, conn: AsyncConnection) -> AsyncConnection:
        await self.pool.putconn(conn)  # a broken connection is closed and replaced by the pool
        return await self._checkout()

    @asynccontextmanager
    async def _transaction(self, after_writes_of: str | None = None) -> AsyncIterator[_Db]:
        """A connection in a transaction for one operation, with the database's failures turned into
        StoreErrors; `after_writes_of`: a thread whose queued writes settle first."""
        if after_writes_of is not None:
            await self._writes_settled(after_writes_of)
        conn = await self._checkout()
        db = _Db(conn, self._prepared, self._groups, None, self._checkout)
        try:
            async with conn.transaction():
                db.in_transaction = True
                yield db
        except psycopg.Error as exc:
            error = _store_error(exc, conn.broken, self.timeouts)
            if error is None:
                raise
            raise error from exc
        finally:
            await self.pool.putconn(conn)

    def _write(self) -> AbstractAsyncContextManager[_Db]:
        # Through psycopg, not psycopg's pipeline mode: a thread's first write is a handful of statements
        # (the thread's row, its items, then the put's one statement, prepared: pipeline.py), and
        # psycopg's pipeline costs more client CPU than it saves here.
        return self._transaction()

    def _read(self) -> AbstractAsyncContextManager[_Db]:
        # Lazy: reading a checkpoint (`_checkpoint_row`) goes with a group and takes no connection.
        return _Lazy(self, defer_items=False)

    def _write_unit(self, thread_id: str, turn: ThreadTurn) -> AbstractAsyncContextManager[_Db]:
        # A thread this process has seen: no transaction, since a put (or put_writes) ends in one
        # atomic statement, and the item inserts before it are idempotent (an item nothing refers to
        # is collected by prune); its statements join the thread's queue. The first write of a thread
        # also creates or reads its row, and finds its items by hash: with nothing cached, an item it
        # takes for new may be stored already, and numbered here it would fail the put on its hash,
        # again on the retry (which starts as empty). It reads what the thread's queued writes stored.
        entry = self.items.peek(thread_id)
        if entry is not None:
            return _Lazy(self, defer_items=True, chain=Chain(thread_id.encode(), entry, turn))
        return self._transaction(after_writes_of=thread_id)

    async def _writes_settled(self, thread_id: str) -> None:
        await self._groups.settled(thread_id.encode())

    def _deferred_items(self, db: _Db) -> dict[str, Any]:
        """The parameters that store the items `_store_items` numbered in the put's statement."""
        count = len(db.new_items)
        return {
            "items": json_text(db.new_items) if count else "[]",
            "first_item": db.first_item,
            "next_item": db.first_item + count if count else 0,
        }

    def _queue_last(self, db: _Db, last: bool) -> None:
        """Say whether the write's next statement is its last (then its thread's next write may start
        once it is queued): so unless the deferred items complete a page, which a statement seals."""
        if db.chain is not None:
            low, top = db.first_item, db.first_item + len(db.new_items) - 1
            db.chain.last = last and not (db.new_items and _completes_page(low, top))

    async def _after_deferred_items(self, db: _Db, thread_id: str, stored: bool, last: bool) -> None:
        """Check that the deferred items were stored, and seal the pages they complete."""
        if not db.new_items:
            return
        if not stored:
            raise StaleThreadError(thread_id)
        if db.chain is not None:
            db.chain.last = last
        await self._seal_pages(db, thread_id, db.first_item, db.first_item + len(db.new_items) - 1)
        db.new_items = []

    async def _store_put(
        self,
        db: _Db,
        value_rows: list[tuple[Any, ...]],
        checkpoint_row: Sequence[Any],
        record: Sequence[Any],
    ) -> bool:
        rows = [
            {"channel": channel, "version": version, "kind": kind, "value": value, "blob": _b64(blob)}
            for _t, _ns, channel, version, kind, value, blob in value_rows
        ]
        params = {**put_parameters(checkpoint_row, record), "rows": json_text(rows), **self._deferred_items(db)}
        thread_id = params["thread_id"]
        self._queue_last(db, True)
        try:
            stored = await db.fetchone(STORE_PUT, params) is not None
        except errors.UniqueViolation:
            # Items numbered here that another process numbered or stored meanwhile: start again.
            raise StaleThreadError(thread_id) from None
        await self._after_deferred_items(db, thread_id, stored, True)
        return stored

    async def _store_writes(
        self,
        db: _Db,
        thread_id: str,
        rows: list[tuple[Any, ...]],
        special: bool,
        interrupted: bool,
        *,
        incarnation: str,
        last: bool,
    ) -> None:
        _t, ns, checkpoint_id, task_id, _idx, _ch, task_path, *_rest = rows[0]
        # One row per task: [idx, channel, kind, JSON text, base64 blob] per write, one per index (as
        # a row per write had it: a special write replaces one of the same index, a regular one not).
        packed: dict[int, list[Any]] = {}
        for _t, _ns, _c, _task, idx, channel, _path, kind, value, blob in rows:
            if special or idx not in packed:
                packed[idx] = [idx, channel, kind, value, _b64(blob)]
        params = {
            "thread_id": thread_id,
            "ns": ns,
            "checkpoint_id": checkpoint_id,
            "task_id": task_id,
            "task_path": task_path,
            "rows": json_text(sorted(packed.values(), key=lambda write: write[0])),
            "interrupted": interrupted,
            "incarnation": incarnation,
            **self._deferred_items(db),
        }
        self._queue_last(db, last)
        try:
            row = await db.fetchone(STORE_SPECIAL_WRITES if special else STORE_WRITES, params)
        except errors.UniqueViolation:
            raise StaleThreadError(thread_id) from None
        if row is None:  # not the thread the cache knew: nothing was stored
            raise StaleThreadError(thread_id)
        await self._after_deferred_items(db, thread_id, True, last)

    async def _store_items(
        self, db: _Db, thread_id: str, incarnation: str, new: dict[str, str]
    ) -> dict[str, int]:
        thread = self.items.peek(thread_id)
        if (db.defer_items and thread is not None and thread.incarnation == incarnation and thread.next_item
                and thread.knows_every_hash()):
            # Numbered here and stored by the put's own statement: no round trip of their own. Should
            # another process have numbered items meanwhile, the statement fails on the item's key
            # and the write starts again the way below. (Not when this process has not seen every item
            # of the thread: one it has not seen, a message of a branch it forks from, is stored already.)
            if not db.new_items:
                db.first_item, db.incarnation = thread.next_item, incarnation
            found = {digest: thread.next_item + i for i, digest in enumerate(new)}
            db.new_items += [[digest, text] for digest, text in new.items()]
            thread.next_item += len(new)
            return found
        params = {
            "n": len(new),
            "thread_id": thread_id,
            "incarnation": incarnation,
            "items": json_text(list(new.items())),  # [[hash, JSON text], …] in order
        }
        found = {digest: number for digest, number in await db.fetchall(queries.STORE_ITEMS, params)}
        if len(found) < len(new):
            # Stored before (this process had not seen them), or the thread is not the one cached.
            for number, digest in await db.fetchall(
                queries.SELECT_ITEMS_BY_HASH, (thread_id, json.dumps([d for d in new if d not in found]))
            ):
                found[digest] = number
            if len(found) < len(new):
                raise StaleThreadError(thread_id)
        elif thread is not None and thread.incarnation == incarnation:
            # All numbered in one allocation: the thread's next number is known from here on.
            thread.next_item = max(thread.next_item, max(found.values()) + 1)
        await self._seal_pages(db, thread_id, min(found.values()), max(found.values()))
        return found

    async def _seal_pages(self, db: _Db, thread_id: str, low: int, top: int) -> None:
        if _completes_page(low, top):
            # These items complete a page: pack the tail up to it into one compressed row.
            upto = top // PAGE_ITEMS * PAGE_ITEMS
            await db.fetchall(SEAL_ITEM_PAGES, {"thread_id": thread_id, "upto": upto, "page": PAGE_ITEMS})
            if self._vacuum is None or self._vacuum.done():
                self._vacuum = asyncio.create_task(self._vacuum_tail())

    async def _vacuum_tail(self) -> None:
        """Make the tail's deleted rows and the threads' dead row versions reusable now (both stay a few
        pages); best effort."""
        try:
            async with self.pool.connection() as conn:
                await conn.execute(queries.VACUUM_ITEM_TAIL)
        except psycopg.Error:
            pass  # e.g. a role that may write but not vacuum: autovacuum does it later

    async def _after_thread_deleted(self, thread_id: str) -> None:
        # In the background: its wait for older transactions may last up to HORIZON_WAIT_SECONDS while
        # a long one runs on the server, which a deletion's caller should not wait for.
        task = asyncio.create_task(self._mark_deleted(thread_id))
        self._marking.add(task)
        task.add_done_callback(self._marking.discard)

    async def _mark_deleted(self, thread_id: str) -> None:
        """Mark the deleted thread's index entries dead (queries.READ_DELETED_THREAD); best effort."""
        try:
            async with self.pool.connection() as conn:
                await _older_transactions_ended(conn)
                async with conn.transaction():
                    await conn.execute(queries.INDEX_SCANS_ONLY)
                    await conn.execute(queries.READ_DELETED_THREAD, {"thread_id": thread_id})
        except psycopg.Error:
            pass  # the deletion stands; VACUUM removes the entries later

    async def _note_write_version(
        self, db: _Db, thread: ThreadItems, thread_id: str, ns: str, checkpoint_id: str, task_id: str
    ) -> None:
        # As the base class, but the document is written back only if it is still the one read: a
        # migrate-state in between (its new incarnation, restamp, upcast values) makes the put_writes
        # start again, which then finds the checkpoint at this version.
        row = await db.fetchone(queries.SELECT_STATE_VERSION, (thread_id, ns, checkpoint_id))
        if row is None or int(row[0]) == self.schema_version:
            return
        document = self.plain_codec.loads(row[1])
        versions = document.setdefault(WRITE_VERSIONS, {})
        if versions.get(task_id) == self.schema_version:
            return
        versions[task_id] = self.schema_version
        noted = await db.fetchone(
            queries.NOTE_WRITE_VERSION,
            (self.plain_codec.dumps(document), thread_id, ns, checkpoint_id, int(row[0]), row[1]),
        )
        if noted is None:
            raise StaleThreadError(thread_id)

    async def _checkpoint_row(
        self, db: _Db, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None
    ) -> tuple[Sequence[Any] | None, PendingWrites | None]:
        # One round trip: the checkpoint row joined with its tasks' packed writes (none: one row of NULLs).
        if checkpoint_id:
            rows = await db.fetchall(SELECT_CHECKPOINT_AND_WRITES, (thread_id, checkpoint_ns, checkpoint_id))
        else:
            rows = await db.fetchall(SELECT_LATEST_CHECKPOINT_AND_WRITES, (thread_id, checkpoint_ns))
        if not rows:
            return None, None
        # (as text: next_item and schema_version are numbers)
        *head, next_item, schema_version = rows[0][:-3]
        row = (*head, int(next_item or 0), int(schema_version or 0))
        pending = []
        for *_checkpoint, task_id, _path, packed in rows:
            if task_id is None:
                continue
            for _idx, channel, kind, value, blob in sorted(json.loads(packed), key=lambda write: write[0]):
                pending.append((task_id, channel, kind, value, base64.b64decode(blob) if blob is not None else None))
        return row, {(row[0], row[1], row[2]): pending}

    @staticmethod
    def _ts(value: datetime) -> datetime:
        return value

    def _json_param(self, text: str) -> str:
        return text

    def _metadata_filter_sql(self, filter: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
        return ["c.metadata @> %s::jsonb"], [json.dumps(dict(filter))]

    def _thread_search_sql(
        self, metadata: Mapping[str, Any] | None, status: str | None, title: str | None
    ) -> tuple[list[str], list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if metadata:
            clauses.append("metadata @> %s::jsonb")
            params.append(json.dumps(dict(metadata)))
        if status is not None:
            clauses.append("status = %s")
            params.append(status)
        if title:
            clauses.append("strpos(lower(COALESCE(metadata->>'title', '')), lower(%s)) > 0")
            params.append(title)
        return clauses, params

    async def _lock_migrations(self, db: _Db) -> None:
        # A migration may rewrite big tables, or wait for another process's migration: no timeouts.
        await db.execute("SET LOCAL statement_timeout = 0")
        await db.execute("SET LOCAL lock_timeout = 0")
        await db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))

    async def astats(self) -> dict[str, Any]:
        out = await super().astats()
        async with self._read() as db:
            total = 0
            for table in queries.TABLES:
                size = 0
                for relation in queries.STORAGE_TABLES.get(table, (table,)):
                    # a table partitioned by month (docs/operations.md) is the sum of its partitions
                    row = await db.fetchone(
                        "SELECT coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree("
                        "%(t)s::regclass)), pg_total_relation_size(%(t)s::regclass))",
                        {"t": relation},
                    )
                    size += int(row[0]) if row else 0
                out["tables"][table]["bytes"] = size
                total += size
        out["bytes"] = total
        return out
