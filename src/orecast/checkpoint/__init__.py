"""Durable LangGraph checkpoint storage for orecast: SQLite (embedded) and PostgreSQL (production).

    async with open_checkpointer("sqlite:///data/orecast.sqlite3") as saver:
        graph = builder.compile(checkpointer=saver)

Compared with the official savers: list channels (messages) are stored once per item instead of once
per step, values are queryable JSON, there is a threads table kept in the same transaction as `put`,
and nothing is ever pickled.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from orecast.checkpoint.audit import ToolCallRecord
from orecast.checkpoint.base import OrecastCheckpointer
from orecast.checkpoint.core import SCHEMA_VERSION_DEFAULT
from orecast.checkpoint.postgres import PostgresCheckpointer
from orecast.checkpoint.sqlite import SqliteCheckpointer
from orecast.checkpoint.threads import ThreadInfo
from orecast.checkpoint.urls import default_database_url, parse_url

__all__ = [
    "OrecastCheckpointer",
    "PostgresCheckpointer",
    "SqliteCheckpointer",
    "ThreadInfo",
    "ToolCallRecord",
    "default_database_url",
    "open_checkpointer",
]


@contextlib.asynccontextmanager
async def open_checkpointer(
    url: str | None = None, *, schema_version: int = SCHEMA_VERSION_DEFAULT, pool_size: int = 10
) -> AsyncIterator[BaseCheckpointSaver]:
    """Open the store at `url` (default: `default_database_url()`), migrated and ready; close it on exit.

    `schema_version` is recorded with every checkpoint: bump it when the graph's state shape changes.
    `pool_size` is the most connections a PostgreSQL store opens.
    """
    parsed = parse_url(url or default_database_url())
    if parsed.scheme == "memory":
        yield InMemorySaver()
    elif parsed.scheme == "sqlite":
        async with SqliteCheckpointer.from_path(parsed.target, schema_version=schema_version) as saver:
            yield saver
    else:
        async with PostgresCheckpointer.from_url(
            parsed.target, pool_size=int(pool_size), schema_version=int(schema_version)
        ) as saver:
            yield saver
