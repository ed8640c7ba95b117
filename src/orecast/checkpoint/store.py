"""LangGraph's own `BaseStore` on the database of the checkpoints: the service's `/store` items and
the analyst's `/memories/` files (agent/memories.py). orecast writes no store of its own."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from langgraph.store.base import BaseStore

from orecast.checkpoint.urls import parse_url


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
            await store.setup()
            yield store
    elif parsed.scheme == "mysql":
        # The community package's store (langgraph-checkpoint-mysql): LangGraph has no MySQL store.
        from langgraph.store.mysql.asyncmy import AsyncMyStore

        async with AsyncMyStore.from_conn_string(parsed.target) as store:
            await store.setup()
            yield store
    else:
        from langgraph.store.postgres.aio import AsyncPostgresStore

        async with AsyncPostgresStore.from_conn_string(parsed.target) as store:
            await store.setup()
            yield store
