"""`PostgresCheckpointer`: a psycopg connection pool, one connection per operation, no instance lock."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.types.string import TextLoader
from psycopg_pool import AsyncConnectionPool

from orecast.checkpoint.base import OrecastCheckpointer
from orecast.checkpoint.core import StaleThreadError
from orecast.checkpoint.postgres import queries

# Any stable number: serialises concurrent migrations of one database across processes.
MIGRATION_LOCK_KEY = 0x6F7265636173  # "orecas"
HEALTH_CHECK_SECONDS = 30.0
# Items per page (migration 003 packs existing items with the same number).
PAGE_ITEMS = 32
CONNECT_TIMEOUT_SECONDS = 10


class _Db:
    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        await self.conn.execute(sql, params)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self.conn.cursor() as cur:
            await cur.executemany(sql, rows)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        cur = await self.conn.execute(sql, params)
        return await cur.fetchone()

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = await self.conn.execute(sql, params)
        return await cur.fetchall()


def _b64(blob: bytes | None) -> str | None:
    return base64.b64encode(blob).decode("ascii") if blob is not None else None


async def _configure(conn: AsyncConnection) -> None:
    # JSON comes back as text: the saver decodes it itself, the same way on both dialects.
    conn.adapters.register_loader("jsonb", TextLoader)
    conn.adapters.register_loader("json", TextLoader)


async def _check_periodically(pool: AsyncConnectionPool, every: float = HEALTH_CHECK_SECONDS) -> None:
    """Health-check idle connections in the background instead of one extra round trip per checkout."""
    while True:
        await asyncio.sleep(every)
        await pool.check()


class PostgresCheckpointer(OrecastCheckpointer):
    """LangGraph checkpoint saver on PostgreSQL (JSONB values, pooled connections, linear storage)."""

    dialect = "postgresql"
    keeps_key_order = True
    q = queries
    migrations_package = "postgres"

    def __init__(self, pool: AsyncConnectionPool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pool = pool
        self._vacuum: asyncio.Task[None] | None = None

    @classmethod
    @asynccontextmanager
    async def from_url(
        cls, url: str, *, pool_size: int = 10, **kwargs: Any
    ) -> AsyncIterator[PostgresCheckpointer]:
        """Open a pool on `url`, migrate the schema, and close the pool on exit."""
        # One direct connection first: a wrong URL fails at once with the server's own message
        # instead of the pool retrying in the background until its timeout.
        probe = await AsyncConnection.connect(url, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        await probe.close()
        pool = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            configure=_configure,
            max_idle=300,
            max_lifetime=3600,
            open=False,
        )
        await pool.open(wait=True, timeout=30)
        saver = cls(pool, **kwargs)
        saver.loop = asyncio.get_running_loop()
        health = asyncio.create_task(_check_periodically(pool))
        try:
            await saver.setup()
            yield saver
        finally:
            health.cancel()
            if saver._vacuum is not None:
                await asyncio.gather(saver._vacuum, return_exceptions=True)
            await pool.close()

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[_Db]:
        # No pipeline mode: a put is a handful of statements (the thread's row, items and the checkpoint
        # are one statement each), and psycopg's pipeline costs more client CPU than it saves here.
        async with self.pool.connection() as conn, conn.transaction():
            yield _Db(conn)

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[_Db]:
        async with self.pool.connection() as conn:
            yield _Db(conn)

    @asynccontextmanager
    async def _write_unit(self, thread_id: str) -> AsyncIterator[_Db]:
        if self.items.peek(thread_id) is None:
            # The first write of a thread in this process also creates or reads its row.
            async with self._write() as db:
                yield db
            return
        # No transaction: a put (or put_writes) ends in one atomic statement, and the item inserts
        # before it are idempotent (an item nothing refers to is collected by prune).
        async with self.pool.connection() as conn:
            yield _Db(conn)

    async def _store_put(
        self,
        db: _Db,
        value_rows: list[tuple[Any, ...]],
        checkpoint_row: Sequence[Any],
        record: Sequence[Any],
    ) -> bool:
        thread_id, ns, checkpoint_id, parent_id, checkpoint, metadata, run_id, schema_version = checkpoint_row
        now, seed, head, message_count, preview, root, _cid, _tid, incarnation = record
        rows = [
            {"channel": channel, "version": version, "kind": kind, "value": value, "blob": _b64(blob)}
            for _t, _ns, channel, version, kind, value, blob in value_rows
        ]
        params = {
            "thread_id": thread_id,
            "ns": ns,
            "incarnation": incarnation,
            "rows": json.dumps(rows, ensure_ascii=False),
            "checkpoint_id": checkpoint_id,
            "parent_id": parent_id,
            "checkpoint": checkpoint,
            "metadata": metadata,
            "run_id": run_id,
            "schema_version": schema_version,
            "now": now,
            "seed": seed,
            "head": head,
            "message_count": message_count,
            "preview": preview,
            "root": root,
        }
        return await db.fetchone(queries.STORE_PUT, params) is not None

    async def _store_writes(
        self,
        db: _Db,
        thread_id: str,
        rows: list[tuple[Any, ...]],
        special: bool,
        interrupted: bool,
        count: tuple[int, int, str | None] | None,
    ) -> None:
        _t, ns, checkpoint_id, task_id, _idx, _ch, task_path, *_rest = rows[0]
        clear, delta, preview = count or (0, 0, None)
        params = {
            "thread_id": thread_id,
            "ns": ns,
            "checkpoint_id": checkpoint_id,
            "task_id": task_id,
            "task_path": task_path,
            "rows": json.dumps(
                [
                    {"idx": idx, "channel": channel, "kind": kind, "value": value, "blob": _b64(blob)}
                    for _t, _ns, _c, _task, idx, channel, _path, kind, value, blob in rows
                ],
                ensure_ascii=False,
            ),
            "interrupted": interrupted,
            "counted": count is not None,
            "clear": bool(clear),
            "delta": delta,
            "preview": preview,
        }
        await db.execute(queries.STORE_SPECIAL_WRITES if special else queries.STORE_WRITES, params)

    async def _store_items(
        self, db: _Db, thread_id: str, incarnation: str, new: dict[str, str]
    ) -> dict[str, int]:
        params = {
            "n": len(new),
            "thread_id": thread_id,
            "incarnation": incarnation,
            "items": json.dumps(list(new.items()), ensure_ascii=False),  # [[hash, JSON text], …] in order
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
        numbers = found.values()
        top = max(numbers)
        if top // PAGE_ITEMS > (min(numbers) - 1) // PAGE_ITEMS:
            # These items complete a page: pack the tail up to it into one compressed row.
            upto = top // PAGE_ITEMS * PAGE_ITEMS
            await db.execute(queries.SEAL_ITEM_PAGES, {"thread_id": thread_id, "upto": upto, "page": PAGE_ITEMS})
            if self._vacuum is None or self._vacuum.done():
                self._vacuum = asyncio.create_task(self._vacuum_tail())
        return found

    async def _vacuum_tail(self) -> None:
        """Make the tail's deleted rows reusable now (the tail stays a few pages); best effort."""
        try:
            async with self.pool.connection() as conn:
                await conn.execute(queries.VACUUM_ITEM_TAIL)
        except psycopg.Error:
            pass  # e.g. a role that may write but not vacuum: autovacuum does it later

    def _ts(self, value: datetime) -> datetime:
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
        await db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))

    async def astats(self) -> dict[str, Any]:
        out = await super().astats()
        async with self._read() as db:
            total = 0
            for table in queries.TABLES:
                size = 0
                for relation in queries.STORAGE_TABLES.get(table, (table,)):
                    row = await db.fetchone("SELECT pg_total_relation_size(%s::regclass)", (relation,))
                    size += int(row[0]) if row else 0
                out["tables"][table]["bytes"] = size
                total += size
        out["bytes"] = total
        return out
