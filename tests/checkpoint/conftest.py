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


# PostgreSQL, MySQL and SQLite keep a checkpoint's small channel values in its own document (`vals`,
# postgres/007, mysql/008, SQLite's `inline_values`), larger ones in `channel_values`. These read and
# tamper with both alike.

# MySQL: the path of a channel's entry in a document's "vals" (the channel quoted, as the saver's SQL does).
_MYSQL_VAL = "CONCAT('$.vals.', JSON_QUOTE(%s))"
# SQLite: the same (test channels need no escaping inside the quotes).
_SQLITE_VAL = "('$.vals.\"' || ? || '\"')"


def stored_values(url: str, channel: str) -> list[tuple[str, str, Any]]:
    """(version, kind, JSON value) of every stored value of `channel`, wherever the dialect keeps it."""
    p = ph(url)
    rows = raw_sql(url, f"SELECT version, kind, value FROM channel_values WHERE channel = {p}", (channel,))
    if dialect_of(url) == "sqlite":
        rows += raw_sql(
            url,
            # (as text: a version an earlier orecast wrote is a JSON number)
            f"SELECT DISTINCT CAST(json_extract(checkpoint, '$.channel_versions.\"' || ? || '\"') AS TEXT),"
            f" json_extract(checkpoint, {_SQLITE_VAL} || '[0]'), json_extract(checkpoint, {_SQLITE_VAL} || '[1]')"
            f" FROM checkpoints WHERE json_type(checkpoint, {_SQLITE_VAL}) = 'array'",
            (channel, channel, channel, channel),
        )
    elif dialect_of(url) == "postgresql":
        rows += raw_sql(
            url,
            "SELECT DISTINCT checkpoint->'channel_versions'->>%s, checkpoint->'vals'->%s->>0,"
            " checkpoint->'vals'->%s->>1 FROM checkpoints WHERE json_typeof(checkpoint->'vals'->%s) = 'array'",
            (channel, channel, channel, channel),
        )
    elif dialect_of(url) == "mysql":
        rows += raw_sql(
            url,
            "SELECT DISTINCT JSON_UNQUOTE(JSON_EXTRACT(checkpoint, CONCAT('$.channel_versions.', JSON_QUOTE(%s)))),"
            f" JSON_UNQUOTE(JSON_EXTRACT(checkpoint, CONCAT({_MYSQL_VAL}, '[0]'))),"
            f" JSON_UNQUOTE(JSON_EXTRACT(checkpoint, CONCAT({_MYSQL_VAL}, '[1]'))) FROM checkpoints"
            f" WHERE JSON_TYPE(JSON_EXTRACT(checkpoint, {_MYSQL_VAL})) = 'ARRAY'",
            (channel, channel, channel, channel),
        )
    return rows


def tamper_value(
    url: str, channel: str, value: Any, *, kind: str | None = None, blob: bytes | None = None,
    thread_id: str | None = None,
) -> None:
    """Overwrite the stored value of `channel` (every version) as someone with database access could."""
    p = ph(url)
    where = f" AND thread_id = {p}" if thread_id is not None else ""
    extra = (thread_id,) if thread_id is not None else ()
    if dialect_of(url) == "sqlite":
        if blob is None:
            raw_sql(
                url,
                f"UPDATE checkpoints SET checkpoint = json_set(checkpoint, {_SQLITE_VAL}, json_array("
                f"COALESCE(?, json_extract(checkpoint, {_SQLITE_VAL} || '[0]')), ?))"
                f" WHERE json_type(checkpoint, {_SQLITE_VAL}) = 'array'{where}",
                (channel, kind, channel, value, channel, *extra),
            )
        else:  # a blob has no place in the document: the value moves to a row of its own
            raw_sql(
                url,
                "INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value)"
                " SELECT DISTINCT thread_id, checkpoint_ns, ?,"
                " json_extract(checkpoint, '$.channel_versions.\"' || ? || '\"'),"
                f" json_extract(checkpoint, {_SQLITE_VAL} || '[0]'), json_extract(checkpoint, {_SQLITE_VAL} || '[1]')"
                f" FROM checkpoints WHERE json_type(checkpoint, {_SQLITE_VAL}) = 'array'{where} ON CONFLICT DO NOTHING",
                (channel, channel, channel, channel, channel, *extra),
            )
            raw_sql(
                url,
                f"UPDATE checkpoints SET checkpoint = json_set(checkpoint, {_SQLITE_VAL}, json('null'))"
                f" WHERE json_type(checkpoint, {_SQLITE_VAL}) = 'array'{where}",
                (channel, channel, *extra),
            )
    elif dialect_of(url) == "postgresql":
        if blob is None:
            raw_sql(
                url,
                "UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint::jsonb, ARRAY['vals', %s],"
                " jsonb_build_array(COALESCE(%s, checkpoint->'vals'->%s->>0), %s::text))::json"
                f" WHERE json_typeof(checkpoint->'vals'->%s) = 'array'{where}",
                (channel, kind, channel, value, channel, *extra),
            )
        else:  # a blob has no place in the document: the value moves to a row of its own
            raw_sql(
                url,
                "INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value)"
                " SELECT DISTINCT thread_id, checkpoint_ns, %s, checkpoint->'channel_versions'->>%s,"
                " checkpoint->'vals'->%s->>0, (checkpoint->'vals'->%s->>1)::jsonb FROM checkpoints"
                f" WHERE json_typeof(checkpoint->'vals'->%s) = 'array'{where} ON CONFLICT DO NOTHING",
                (channel, channel, channel, channel, channel, *extra),
            )
            raw_sql(
                url,
                "UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint::jsonb, ARRAY['vals', %s], 'null')::json"
                f" WHERE json_typeof(checkpoint->'vals'->%s) = 'array'{where}",
                (channel, channel, *extra),
            )
    elif dialect_of(url) == "mysql":
        if blob is None:
            raw_sql(
                url,
                f"UPDATE checkpoints SET checkpoint = JSON_SET(checkpoint, {_MYSQL_VAL}, JSON_ARRAY("
                f"COALESCE(%s, JSON_UNQUOTE(JSON_EXTRACT(checkpoint, CONCAT({_MYSQL_VAL}, '[0]')))), %s))"
                f" WHERE JSON_TYPE(JSON_EXTRACT(checkpoint, {_MYSQL_VAL})) = 'ARRAY'{where}",
                (channel, kind, channel, value, channel, *extra),
            )
        else:  # a blob has no place in the document: the value moves to a row of its own
            raw_sql(
                url,
                "INSERT IGNORE INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value)"
                " SELECT DISTINCT thread_id, checkpoint_ns, %s,"
                " JSON_UNQUOTE(JSON_EXTRACT(checkpoint, CONCAT('$.channel_versions.', JSON_QUOTE(%s)))),"
                f" JSON_UNQUOTE(JSON_EXTRACT(checkpoint, CONCAT({_MYSQL_VAL}, '[0]'))),"
                f" JSON_UNQUOTE(JSON_EXTRACT(checkpoint, CONCAT({_MYSQL_VAL}, '[1]'))) FROM checkpoints"
                f" WHERE JSON_TYPE(JSON_EXTRACT(checkpoint, {_MYSQL_VAL})) = 'ARRAY'{where}",
                (channel, channel, channel, channel, channel, *extra),
            )
            raw_sql(
                url,
                f"UPDATE checkpoints SET checkpoint = JSON_SET(checkpoint, {_MYSQL_VAL}, NULL)"
                f" WHERE JSON_TYPE(JSON_EXTRACT(checkpoint, {_MYSQL_VAL})) = 'ARRAY'{where}",
                (channel, channel, *extra),
            )
    sets, params = [f"value = {p}"], [value]
    if kind is not None:
        sets.append(f"kind = {p}")
        params.append(kind)
    if blob is not None:
        sets.append(("`blob`" if dialect_of(url) == "mysql" else "blob") + f" = {p}")
        params.append(blob)
    raw_sql(url, f"UPDATE channel_values SET {', '.join(sets)} WHERE channel = {p}{where}", (*params, channel, *extra))
