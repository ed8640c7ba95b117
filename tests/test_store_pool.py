"""The stores tests share (tests/store_pool.py): one emptied for the next test is as a new one would be,
and one that a test changed, or left a connection on, is never handed out again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from orecast.checkpoint import open_checkpointer
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import human, tool_loop
from tests.store_pool import MysqlDatabases, PgSchemas, Pool, SqliteTemplate

PG_CHANGES = [
    "CREATE TABLE service_runs (run_id TEXT PRIMARY KEY)",
    "DROP INDEX threads_updated_at",
    "ALTER TABLE threads SET (fillfactor = 100)",
    "ALTER TABLE item_tail RESET (vacuum_truncate)",
    "ALTER TABLE threads ALTER COLUMN status SET DEFAULT 'busy'",
    "ALTER TABLE threads ADD COLUMN extra INT",
    "ALTER TABLE threads DROP COLUMN preview",
    "CREATE OR REPLACE VIEW items AS SELECT thread_id, item_no, hash, value FROM item_tail",
    "GRANT SELECT ON threads TO PUBLIC",
    "DELETE FROM orecast_migrations WHERE version = (SELECT max(version) FROM orecast_migrations)",
    "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
]
MYSQL_CHANGES = [
    "CREATE TABLE service_runs (run_id VARCHAR(64) PRIMARY KEY)",
    "DROP INDEX threads_updated_at ON threads",
    "ALTER TABLE threads ROW_FORMAT = DYNAMIC",
    "ALTER TABLE threads ALTER COLUMN status SET DEFAULT 'busy'",
    "ALTER TABLE threads ADD COLUMN extra INT",
    "DELETE FROM orecast_migrations ORDER BY version DESC LIMIT 1",
]


async def write_a_thread(url: str) -> None:
    async with open_checkpointer(url) as saver:
        await tool_loop(saver).ainvoke({"messages": [human(1)]}, {"configurable": {"thread_id": "t"}})


def counts(url: str, tables: list[str]) -> dict[str, int]:
    return {table: raw_sql(url, f"SELECT COUNT(*) FROM {table}")[0][0] for table in tables}


# Every table (or view) a conversation writes to, per dialect.
STORED = {
    "postgres": ["threads", "checkpoints", "channel_values", "item_tail", "item_pages", "task_writes"],
    "mysql": ["threads", "checkpoints", "channel_values", "items", "writes"],
}
POOLS = {"postgres": "_pg_schemas", "mysql": "_mysql_pool"}


@pytest.fixture(params=list(POOLS))
def pool(request: pytest.FixtureRequest) -> Pool:
    request.node.backend = request.param
    return request.getfixturevalue(POOLS[request.param])


def handed_out_again(pool: Pool, url: str) -> bool:
    """`url` is among the next stores `pool` hands out (given back at once)."""
    taken = [pool.take() for _ in range(len(pool.free) + 1)]  # type: ignore[attr-defined]  # both have it
    for other in taken:
        pool.give_back(other)
    return url in taken


async def test_a_store_comes_back_empty_and_as_migrated(pool: Pool, request: pytest.FixtureRequest) -> None:
    stored = STORED[request.node.backend]
    url = pool.take()
    await write_a_thread(url)
    assert counts(url, stored)["checkpoints"] > 0
    migrations = raw_sql(url, "SELECT version, applied_at FROM orecast_migrations")
    pool.give_back(url)
    again = pool.take()
    try:
        assert again == url
        assert set(counts(url, stored).values()) == {0}
        assert raw_sql(url, "SELECT version, applied_at FROM orecast_migrations") == migrations
        await write_a_thread(url)  # a thread of the same id starts anew
        assert counts(url, ["threads"]) == {"threads": 1}
    finally:
        pool.give_back(again)


def test_every_store_made_is_handed_out_again(pool: Pool) -> None:
    """Not only the first: each new store is as the first was (its name aside)."""
    first, second = pool.take(), pool.take()
    pool.give_back(first)
    pool.give_back(second)
    assert handed_out_again(pool, first) and handed_out_again(pool, second)


@pytest.mark.parametrize("change", PG_CHANGES)
def test_a_changed_postgres_schema_is_not_handed_out_again(_pg_schemas: PgSchemas, change: str) -> None:
    with _pg_schemas.lend() as url:
        raw_sql(url, change)
    assert not handed_out_again(_pg_schemas, url)


@pytest.mark.parametrize("change", MYSQL_CHANGES)
def test_a_changed_mysql_database_is_not_handed_out_again(_mysql_pool: MysqlDatabases, change: str) -> None:
    with _mysql_pool.lend() as url:
        raw_sql(url, change)
    assert not handed_out_again(_mysql_pool, url)


async def test_a_store_with_a_connection_left_on_it_is_not_handed_out_again(pool: Pool) -> None:
    url = pool.take()
    saver = open_checkpointer(url)
    await saver.__aenter__()  # a saver (its pool) left open by a test
    try:
        pool.give_back(url)
    finally:
        await saver.__aexit__(None, None, None)
    assert not handed_out_again(pool, url)


def _sqlite_schema(path: Path) -> list[tuple[str, ...]]:
    with sqlite3.connect(path) as conn:
        return sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall())


async def test_a_sqlite_copy_is_the_file_a_first_open_makes(_sqlite_template: SqliteTemplate, tmp_path: Path) -> None:
    copied = _sqlite_template.copy_to(tmp_path / "copy.sqlite3")
    await write_a_thread(f"sqlite:///{tmp_path / 'new.sqlite3'}")
    assert _sqlite_schema(tmp_path / "copy.sqlite3") == _sqlite_schema(tmp_path / "new.sqlite3")
    assert raw_sql(copied, "PRAGMA journal_mode") == raw_sql(f"sqlite:///{tmp_path / 'new.sqlite3'}", "PRAGMA journal_mode")
    assert set(counts(copied, ["threads", "checkpoints", "channel_values"]).values()) == {0}
    await write_a_thread(copied)
    assert counts(copied, ["threads"]) == {"threads": 1}
