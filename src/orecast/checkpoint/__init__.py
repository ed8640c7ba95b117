"""Durable LangGraph checkpoint storage for orecast: SQLite (embedded), PostgreSQL or MySQL/MariaDB.

    async with open_checkpointer("sqlite:///data/orecast.sqlite3") as saver:
        graph = builder.compile(checkpointer=saver)

Compared with the official savers: list channels (messages) are stored once per item instead of once
per step, values are queryable JSON, there is a threads table kept in the same transaction as `put`,
and nothing is ever pickled.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Iterator

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from orecast.checkpoint.audit import AUDIT_STATUSES, ToolCallAudit, ToolCallRecord, ToolSummary
from orecast.checkpoint.base import OrecastCheckpointer
from orecast.checkpoint.core import SCHEMA_VERSION_DEFAULT
from orecast.checkpoint.encoding import CorruptRowError
from orecast.checkpoint.errors import ReadOnlyStoreError, StoreError, StoreTimeout, StoreUnavailable
from orecast.checkpoint.migrate_state import StateMigration
from orecast.checkpoint.mysql import MysqlCheckpointer
from orecast.checkpoint.postgres import PostgresCheckpointer
from orecast.checkpoint.postgres.timeouts import resolve_timeouts
from orecast.checkpoint.sqlite import SqliteCheckpointer
from orecast.checkpoint.threads import ThreadInfo, ThreadStatus
from orecast.checkpoint.upcast import StateSchema, StateVersionError, Upcaster
from orecast.checkpoint.urls import default_database_url, parse_url

__all__ = [
    "AUDIT_STATUSES",
    "CorruptRowError",
    "open_checkpointer_sync",
    "MysqlCheckpointer",
    "OrecastCheckpointer",
    "PostgresCheckpointer",
    "ReadOnlyStoreError",
    "SqliteCheckpointer",
    "StateMigration",
    "StateSchema",
    "StateVersionError",
    "StoreError",
    "StoreTimeout",
    "StoreUnavailable",
    "ThreadInfo",
    "ThreadStatus",
    "ToolCallAudit",
    "ToolCallRecord",
    "ToolSummary",
    "Upcaster",
    "default_database_url",
    "open_checkpointer",
]


@contextlib.asynccontextmanager
async def open_checkpointer(
    url: str | None = None,
    *,
    schema_version: int = SCHEMA_VERSION_DEFAULT,
    pool_size: int = 10,
    statement_timeout: float | None = None,
    lock_timeout: float | None = None,
) -> AsyncIterator[BaseCheckpointSaver]:
    """Open the store at `url` (default: `default_database_url()`), migrated and ready; close it on exit.

    `schema_version` is recorded with every checkpoint this saver writes. A graph whose state changes
    shape compiles with `saver.with_state_schema(StateSchema(version, upcasters))` instead: older
    threads are then upcast on every read (docs/checkpoint.md, "State upcasting").
    `pool_size` is the most connections a PostgreSQL or MySQL store opens. `statement_timeout` and `lock_timeout`
    (seconds, 0 = none; default from the URL query, `$ORECAST_PG_STATEMENT_TIMEOUT` /
    `$ORECAST_PG_LOCK_TIMEOUT`, else 30 and 10) bound each PostgreSQL statement and lock wait: past
    them a call raises `StoreTimeout`. A call while the server is down raises `StoreUnavailable`.
    """
    parsed = parse_url(url or default_database_url())
    if parsed.scheme == "memory":
        yield InMemorySaver()
    elif parsed.scheme == "sqlite":
        async with SqliteCheckpointer.from_path(parsed.target, schema_version=schema_version) as saver:
            yield saver
    elif parsed.scheme == "mysql":
        timeouts = resolve_timeouts(parsed.options, statement_timeout, lock_timeout)
        async with MysqlCheckpointer.from_url(
            parsed.target, pool_size=int(pool_size), timeouts=timeouts, schema_version=int(schema_version)
        ) as saver:
            yield saver
    else:
        timeouts = resolve_timeouts(parsed.options, statement_timeout, lock_timeout)
        async with PostgresCheckpointer.from_url(
            parsed.target, pool_size=int(pool_size), timeouts=timeouts, schema_version=int(schema_version)
        ) as saver:
            yield saver


@contextlib.contextmanager
def open_checkpointer_sync(
    url: str | None = None,
    *,
    schema_version: int = SCHEMA_VERSION_DEFAULT,
    pool_size: int = 10,
    statement_timeout: float | None = None,
    lock_timeout: float | None = None,
) -> Iterator[BaseCheckpointSaver]:
    """`open_checkpointer` for sync programs (`graph.invoke`, `graph.get_state`).

    The store lives on an event loop in a thread of its own; the saver's sync methods hand their
    work to it, so the calling thread needs no event loop.
    """
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, name="orecast-checkpointer", daemon=True)
    runner.start()
    opened = open_checkpointer(
        url,
        schema_version=schema_version,
        pool_size=pool_size,
        statement_timeout=statement_timeout,
        lock_timeout=lock_timeout,
    )
    try:
        saver = asyncio.run_coroutine_threadsafe(opened.__aenter__(), loop).result()
        try:
            yield saver
        except BaseException:
            exc = sys.exc_info()
            if not asyncio.run_coroutine_threadsafe(opened.__aexit__(*exc), loop).result():
                raise
        else:
            asyncio.run_coroutine_threadsafe(opened.__aexit__(None, None, None), loop).result()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join()
        loop.close()
