"""LangGraph's own `BaseStore` on the database of the checkpoints: the service's `/store` items and
the analyst's `/memories/` files (agent/memories.py). orecast writes no store of its own."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator

from langgraph.store.base import BaseStore

from orecast.checkpoint.urls import parse_url

try:
    import fcntl
except ImportError:  # Windows: no flock
    fcntl = None  # type: ignore[assignment]


@contextlib.asynccontextmanager
async def open_store(url: str) -> AsyncIterator[BaseStore]:
    """The store for `url` (sqlite, postgresql, mysql; `memory://` keeps it in this process), set up."""
    parsed = parse_url(url)
    if parsed.scheme == "memory":
        from langgraph.store.memory import InMemoryStore

        yield InMemoryStore()
    elif parsed.scheme == "sqlite":
        from langgraph.store.sqlite.aio import AsyncSqliteStore

        async with AsyncSqliteStore.from_conn_string(parsed.target) as store:
            async with _one_process_at_a_time(parsed.target):
                await store.setup()
            yield store
    elif parsed.scheme == "mysql":
        # The community package's store (langgraph-checkpoint-mysql): LangGraph has no MySQL store.
        import asyncmy
        from langgraph.store.mysql.asyncmy import AsyncMyStore

        # Its own connection rather than `from_conn_string`'s, for the session setting: no notes (see
        # `mysql.saver.session_settings`).
        options = AsyncMyStore.parse_conn_string(parsed.target)
        async with asyncmy.connect(**options, autocommit=True, init_command="SET SESSION sql_notes = 0") as conn:
            store = AsyncMyStore(conn=conn)
            await store.setup()
            yield store
    else:
        from langgraph.store.postgres.aio import AsyncPostgresStore

        async with AsyncPostgresStore.from_conn_string(parsed.target) as store:
            await store.setup()
            yield store


@contextlib.asynccontextmanager
async def _one_process_at_a_time(path: str) -> AsyncIterator[None]:
    """LangGraph's SQLite setup is not safe in two processes at once: `orecast serve --workers 2` on a
    new file had both add the same column. An flock on the database's folder orders them. Never on the
    database file itself: SQLite's locks are POSIX record locks, which a process loses on every
    descriptor of a file when it closes any one of them; another process could then take the file for
    unused and delete the WAL this one writes to (docs/checkpoint.md, "One SQLite file, many
    processes"). None for a database that is no file."""
    if fcntl is None or not os.path.isfile(path):
        yield
        return
    try:
        folder = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY | os.O_DIRECTORY)
    except OSError:  # a folder this process may not list: setups are not ordered, as on Windows
        yield
        return
    try:
        await asyncio.to_thread(fcntl.flock, folder, fcntl.LOCK_EX)
        yield
    finally:
        os.close(folder)  # releases the flock
