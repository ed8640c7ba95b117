"""Fixtures and helpers for the checkpoint store tests: real savers, raw SQL, small real graphs."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.serde import _msgpack as lg_msgpack

from orecast.checkpoint import (
    MysqlCheckpointer,
    PostgresCheckpointer,
    SqliteCheckpointer,
    open_checkpointer,
)
from orecast.checkpoint.urls import parse_url
from tests import mysql_server


@pytest.fixture
async def saver(store_url: str) -> AsyncIterator[Any]:
    """An open, migrated saver on a clean store (SQLite file or PostgreSQL schema)."""
    async with open_checkpointer(store_url) as s:
        yield s


@pytest.fixture
async def strict_saver(store_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    """`saver` as opened under LANGGRAPH_STRICT_MSGPACK=true (LangGraph reads it once, at import)."""
    monkeypatch.setattr(lg_msgpack, "STRICT_MSGPACK_ENABLED", True)
    async with open_checkpointer(store_url) as s:
        yield s


def dialect_of(url: str) -> str:
    if url.startswith(("mysql", "mariadb")):
        return "mysql"
    return "sqlite" if url.startswith("sqlite") else "postgresql"


def raw_sql(url: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on the store behind `url` with a plain driver connection (no saver code)."""
    parsed = parse_url(url)
    if parsed.scheme == "mysql":
        return mysql_server.run_sql(parsed.target, sql, params)
    if parsed.scheme == "sqlite":
        conn = sqlite3.connect(parsed.target, timeout=30)
        try:
            rows = conn.execute(sql, params).fetchall()
            conn.commit()
            return rows
        finally:
            conn.close()
    with psycopg.connect(parsed.target, autocommit=True) as conn:
        cur = conn.execute(sql, params)
        return cur.fetchall() if cur.description else []


SAVERS = {"sqlite": SqliteCheckpointer, "postgresql": PostgresCheckpointer, "mysql": MysqlCheckpointer}


def stored_time(url: str, when: datetime) -> Any:
    """`when` as the saver for `url` stores a time column: a parameter for `raw_sql`."""
    return SAVERS[dialect_of(url)]._ts(when)


def ph(url: str) -> str:
    """The driver's placeholder for `url`'s dialect."""
    return "?" if dialect_of(url) == "sqlite" else "%s"
