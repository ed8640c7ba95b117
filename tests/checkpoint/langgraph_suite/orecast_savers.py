"""Our savers as LangGraph's `sync_checkpointer` / `async_checkpointer` fixtures.

This file is copied into the `tests/` package of LangGraph's sdist (see `suite.py`) and imported at the
end of its `conftest.py`, so these fixtures replace LangGraph's own there. It runs in that pytest process,
where `tests` is LangGraph's package, so it imports nothing from ours.

ORECAST_SUITE_BACKENDS: comma-separated `sqlite`, `postgres`, `mysql` (default sqlite,postgres).
PostgreSQL needs ORECAST_TEST_PG_URL; each test gets a clean schema (a new one, or one emptied after
another test) in a database made for the session.
MySQL needs ORECAST_TEST_MYSQL_URL (`python -m tests.mysql_server ensure`); each test gets a fresh
database, dropped after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import psycopg
import pytest

from orecast.checkpoint import open_checkpointer, open_checkpointer_sync

BACKENDS = [b for b in os.environ.get("ORECAST_SUITE_BACKENDS", "sqlite,postgres").split(",") if b]
CHECKPOINTER_FIXTURES = {"sync_checkpointer", "async_checkpointer"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run only the tests that take a checkpointer: the rest do not exercise a saver."""
    keep = [i for i in items if CHECKPOINTER_FIXTURES & set(getattr(i, "fixturenames", ()))]
    dropped = [i for i in items if i not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def _with_database(url: str, database: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{database}"))


def _with_search_path(url: str, schema: str) -> str:
    parts = urlsplit(url)
    option = urlencode({"options": f"-c search_path={schema}"}, quote_via=quote)
    return urlunsplit(parts._replace(query="&".join(filter(None, [parts.query, option]))))


@pytest.fixture(scope="session")
def orecast_pg_database() -> Iterator[str]:
    server = os.environ["ORECAST_TEST_PG_URL"]
    name = f"orecast_lgsuite_{os.getpid()}_{secrets.token_hex(4)}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(server, name)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _mysql(url: str, sql: str) -> None:
    """One statement on a plain connection, in a thread of its own (tests may run an event loop)."""
    import asyncmy

    from orecast.checkpoint.mysql.saver import connect_kwargs

    async def run() -> None:
        conn = await asyncmy.connect(**connect_kwargs(url), autocommit=True)
        try:
            async with conn.cursor() as cur:
                await cur.execute(sql)
        finally:
            conn.close()

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run()).result()


@contextlib.contextmanager
def _mysql_store_url() -> Iterator[str]:
    server = os.environ["ORECAST_TEST_MYSQL_URL"]
    name = f"orecast_lgsuite_{os.getpid()}_{secrets.token_hex(6)}"
    _mysql(server, f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    try:
        yield _with_database(server, name)
    finally:
        _mysql(server, f"DROP DATABASE IF EXISTS `{name}`")


class _PgSchemas:
    """Clean PostgreSQL stores, one schema each, used again once a test is done with them (emptied).

    PostgreSQL 15 syncs every index it builds to disk at once; a migrated store has a dozen of them,
    so a new schema per test cost 0.5–1.3 s of waiting on the disk, more than most of LangGraph's
    tests themselves. Emptying a schema's tables (all but `orecast_migrations`; none has a foreign
    key) costs one commit, and leaves a store as a new one is: migrated, no rows. A test that holds two
    stores gets two schemas.
    """

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.free: list[str] = []

    @contextlib.contextmanager
    def clean(self) -> Iterator[str]:
        # Not uuid4: some tests patch it to count the ids LangGraph draws.
        schema = self.free.pop() if self.free else self._new()
        yield _with_search_path(self.database_url, schema)
        with psycopg.connect(self.database_url, autocommit=True) as conn, conn.transaction():
            tables = conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename <> 'orecast_migrations'",
                (schema,),
            ).fetchall()
            for (table,) in tables:
                conn.execute(f'DELETE FROM "{schema}"."{table}"')
        self.free.append(schema)

    def _new(self) -> str:
        schema = f"t_{secrets.token_hex(6)}"
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        return schema


@pytest.fixture(scope="session")
def orecast_pg_schemas(orecast_pg_database: str) -> _PgSchemas:
    return _PgSchemas(orecast_pg_database)  # dropped with the database


@contextlib.contextmanager
def _store_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A clean store: a SQLite file in the test's tmp_path, a clean PostgreSQL schema or a fresh MySQL
    database."""
    if request.param == "orecast_sqlite":
        yield f"sqlite:///{request.getfixturevalue('tmp_path') / 'store.sqlite3'}"
        return
    if request.param == "orecast_mysql":
        with _mysql_store_url() as url:
            yield url
        return
    with request.getfixturevalue("orecast_pg_schemas").clean() as url:
        yield url


@pytest.fixture(params=[f"orecast_{b}" for b in BACKENDS])
def sync_checkpointer(request: pytest.FixtureRequest) -> Iterator[object]:
    with _store_url(request) as url, open_checkpointer_sync(url) as saver:
        yield saver


@pytest.fixture(params=[f"orecast_{b}" for b in BACKENDS])
async def async_checkpointer(request: pytest.FixtureRequest) -> AsyncIterator[object]:
    with _store_url(request) as url:
        async with open_checkpointer(url) as saver:
            yield saver
