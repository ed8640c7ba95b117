"""Each saver under test on a fresh store, with a probe that reports the store's size.

* official-sqlite   `AsyncSqliteSaver.from_conn_string(file)`        size: file + -wal + -shm
* official-postgres `AsyncPostgresSaver.from_conn_string(url)`       size: pg_total_relation_size of its tables
* orecast-sqlite    `open_checkpointer("sqlite:////…/file")`          size: `bench_stats()` (file + -wal + -shm)
* orecast-postgres  `open_checkpointer("postgresql://…")`            size: `bench_stats()` (pg_total_relation_size)
* community-mysql   `AsyncMySaver.from_conn_string(url)` (langgraph-checkpoint-mysql, asyncmy; there is no
                    official MySQL saver)                              size: InnoDB data + index length
* orecast-mysql     `open_checkpointer("mysql://…")`                 size: `bench_stats()` (InnoDB sizes)
* floor             `InMemorySaver` that keeps the objects themselves (no serialization, no I/O): what
                    LangGraph costs with *any* checkpointer, the lower bound for every saver (reference only)

SQLite stores live in a temporary directory; PostgreSQL stores in a database created for the run from
`ORECAST_TEST_PG_URL` and dropped afterwards; MySQL stores likewise in a database created on the server
`tests.mysql_server.ensure()` finds (the machine's MariaDB). InnoDB reports sizes as statistics: both
MySQL savers' tables are analysed before they are read. The savers run with their defaults (the official PostgreSQL
saver on one connection, as `from_conn_string` sets it up; ours on its pool).
"""

from __future__ import annotations

import contextlib
import copy
import os
import secrets
import sqlite3
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from psycopg import sql

SAVERS = ("official-sqlite", "official-postgres", "orecast-sqlite", "orecast-postgres", "community-mysql",
          "orecast-mysql", "floor")
OURS = ("orecast-sqlite", "orecast-postgres", "orecast-mysql")


@dataclass
class Store:
    saver: BaseCheckpointSaver
    stats: Callable[[], Awaitable[dict[str, Any]]]  # {"storage_bytes", "rows", maybe "payload_bytes"}
    facts: dict[str, Any] = field(default_factory=dict)


class _KeepObjects:
    """A "serializer" that stores the objects themselves (shallow copies of dicts and lists)."""

    def dumps_typed(self, obj: Any) -> tuple[str, Any]:
        return "object", copy.copy(obj)

    def loads_typed(self, data: tuple[str, Any]) -> Any:
        return copy.copy(data[1])


def pg_admin_url() -> str:
    url = os.environ.get("ORECAST_TEST_PG_URL")
    if not url:
        raise SystemExit(
            "ORECAST_TEST_PG_URL is not set: run `make bench`, or export a PostgreSQL URL such as "
            "postgresql://postgres@127.0.0.1:5432/postgres (or leave the *-postgres savers out)"
        )
    return url


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@contextlib.asynccontextmanager
async def fresh_database(admin_url: str) -> AsyncIterator[str]:
    """A new, empty database on the server of `admin_url` (its URL), dropped on exit."""
    name = f"orecast_bench_{os.getpid()}_{secrets.token_hex(3)}"
    async with await psycopg.AsyncConnection.connect(admin_url, autocommit=True) as admin:
        await admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield _with_database(admin_url, name)
    finally:
        async with await psycopg.AsyncConnection.connect(admin_url, autocommit=True) as admin:
            await admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _sqlite_file_bytes(path: str) -> int:
    return sum(os.path.getsize(path + s) for s in ("", "-wal", "-shm") if os.path.exists(path + s))


async def _pg_facts(url: str) -> dict[str, Any]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT current_setting('server_version'), current_setting('synchronous_commit'), "
            "current_setting('fsync'), current_setting('shared_buffers')"
        )
        version, sync_commit, fsync, shared_buffers = await cur.fetchone()
    return {"postgres": version, "synchronous_commit": sync_commit, "fsync": fsync,
            "shared_buffers": shared_buffers}


async def _pg_tables_stats(url: str, tables: tuple[str, ...]) -> dict[str, Any]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        total, rows = 0, {}
        for table in tables:
            cur = await conn.execute(
                sql.SQL("SELECT pg_total_relation_size(%s::regclass), (SELECT count(*) FROM {})").format(
                    sql.Identifier(table)), (table,))
            size, count = await cur.fetchone()
            total += size
            rows[table] = count
    return {"storage_bytes": total, "rows": rows}


def mysql_available() -> bool:
    from tests import mysql_server

    return mysql_server.ensure() is not None


def mysql_admin_url() -> str:
    from tests import mysql_server

    url = mysql_server.ensure()
    if url is None:
        raise SystemExit(mysql_server.NO_SERVER + " (leave the *-mysql savers out)")
    return url


@contextlib.asynccontextmanager
async def fresh_mysql_database() -> AsyncIterator[str]:
    from tests import mysql_server

    admin_url = mysql_admin_url()
    name = f"orecast_bench_{os.getpid()}_{secrets.token_hex(3)}"
    mysql_server.run_sql(admin_url, f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    try:
        yield mysql_server.with_database(admin_url, name)
    finally:
        mysql_server.run_sql(admin_url, f"DROP DATABASE IF EXISTS `{name}`")


async def _mysql_tables_stats(url: str, tables: tuple[str, ...]) -> dict[str, Any]:
    from tests import mysql_server

    mysql_server.run_sql(url, f"ANALYZE TABLE {', '.join(tables)}")
    total, rows = 0, {}
    for table in tables:
        ((size,),) = mysql_server.run_sql(
            url,
            "SELECT data_length + index_length FROM information_schema.tables "
            "WHERE table_schema = DATABASE() AND table_name = %s",
            (table,),
        )
        total += int(size)
        rows[table] = mysql_server.run_sql(url, f"SELECT count(*) FROM {table}")[0][0]
    return {"storage_bytes": total, "rows": rows}


@contextlib.asynccontextmanager
async def open_store(name: str) -> AsyncIterator[Store]:
    if name == "floor":
        from langgraph.checkpoint.memory import InMemorySaver

        async def no_stats() -> dict[str, Any]:
            return {"storage_bytes": None, "rows": {}}

        yield Store(InMemorySaver(serde=_KeepObjects()), no_stats)
    elif name.endswith("-postgres"):
        admin_url = pg_admin_url()
        async with fresh_database(admin_url) as url:
            facts = await _pg_facts(url)
            if name == "official-postgres":
                from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

                async with AsyncPostgresSaver.from_conn_string(url) as saver:
                    await saver.setup()
                    tables = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
                    yield Store(saver, lambda: _pg_tables_stats(url, tables), facts)
            else:
                from orecast.checkpoint import open_checkpointer

                async with open_checkpointer(url) as saver:
                    yield Store(saver, saver.bench_stats, facts)
    elif name.endswith("-mysql"):
        async with fresh_mysql_database() as url:
            from tests import mysql_server

            facts = {"mysql": mysql_server.run_sql(url, "SELECT VERSION()")[0][0]}
            if name == "community-mysql":
                from langgraph.checkpoint.mysql.asyncmy import AsyncMySaver

                async with AsyncMySaver.from_conn_string(url) as saver:
                    await saver.setup()
                    tables = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
                    yield Store(saver, lambda: _mysql_tables_stats(url, tables), facts)
            else:
                from orecast.checkpoint import open_checkpointer

                async with open_checkpointer(url) as saver:
                    yield Store(saver, saver.bench_stats, facts)
    elif name.endswith("-sqlite"):
        with tempfile.TemporaryDirectory(prefix="orecast-bench-") as tmp:
            path = os.path.join(tmp, "bench.sqlite")
            facts = {"sqlite": sqlite3.sqlite_version}
            if name == "official-sqlite":
                from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

                async with AsyncSqliteSaver.from_conn_string(path) as saver:
                    await saver.setup()

                    async def stats() -> dict[str, Any]:
                        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
                        try:
                            rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                                    for t in ("checkpoints", "writes")}
                        finally:
                            con.close()
                        return {"storage_bytes": _sqlite_file_bytes(path), "rows": rows}

                    yield Store(saver, stats, facts)
            else:
                from orecast.checkpoint import open_checkpointer

                async with open_checkpointer(f"sqlite:///{path}") as saver:
                    yield Store(saver, saver.bench_stats, facts)
    else:
        raise SystemExit(f"unknown saver {name!r}; choose from {', '.join(SAVERS)}")
