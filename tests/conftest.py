"""Shared fixtures: real SQLite files and a real PostgreSQL database created for this test run."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests import mysql_server
from tests.pg_server import ensure as ensure_postgres
from tests.pg_server import with_database, with_search_path
from tests.store_pool import MysqlDatabases, PgSchemas, SqliteTemplate, Stats

# Here, not as a conftest of its folder: the controller of pytest-xdist loads only this conftest, and it
# is the controller that starts LangGraph's suite.
pytest_plugins = ["tests.checkpoint.langgraph_suite.background"]


@pytest.fixture(scope="session", autouse=True)
def _private_user_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point the user's data, cache and config directories (platformdirs, XDG) at a temporary folder,
    for this process and the CLI subprocesses it starts: no test writes into the real home."""
    home = tmp_path_factory.mktemp("xdg")
    names = ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
    saved = {name: os.environ.get(name) for name in names}
    for name in names:
        os.environ[name] = str(home / name.lower())
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL database that exists for this test run only."""
    server_url = os.environ.get("ORECAST_TEST_PG_URL") or ensure_postgres()
    name = f"orecast_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(server_url, name)
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def new_schema_url(postgres_url: str, prefix: str = "t") -> str:
    """`postgres_url` with a new, empty schema as its search_path."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return with_search_path(postgres_url, schema)


@pytest.fixture
def fresh_postgres_url(postgres_url: str) -> str:
    """A URL whose search_path is a new, empty schema: a store never opened, for one test."""
    return new_schema_url(postgres_url)


POOLS: dict[str, Stats] = {}  # the store pools' counts, for `ORECAST_TEST_POOL_STATS=1`


@pytest.fixture(scope="session")
def _pg_schemas() -> Iterator[PgSchemas]:
    """Clean migrated schemas (tests/store_pool.py), in a database of their own: no other connection to
    it outlives a test that behaves."""
    server_url = os.environ.get("ORECAST_TEST_PG_URL") or ensure_postgres()
    name = f"orecast_pool_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    pool = PgSchemas(with_database(server_url, name))
    POOLS["postgres"] = pool.stats
    try:
        yield pool
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def clean_postgres_url(_pg_schemas: PgSchemas) -> Iterator[str]:
    """A migrated PostgreSQL store (a schema) with no rows, as a first open leaves a new one."""
    with _pg_schemas.lend() as url:
        yield url


@pytest.fixture(scope="session")
def mysql_databases() -> Iterator[tuple[str, str]]:
    """(server URL, name prefix) for this run's MySQL databases; all of them are dropped at the end."""
    server_url = mysql_server.ensure()
    if server_url is None:
        pytest.skip(mysql_server.NO_SERVER)
    prefix = f"orecast_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        yield server_url, prefix
    finally:
        # Only this run's databases: the name carries this process's id and a random part.
        rows = mysql_server.run_sql(
            server_url,
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE %s",
            (prefix.replace("_", "\\_") + "%",),
        )
        for (name,) in rows:
            mysql_server.run_sql(server_url, f"DROP DATABASE IF EXISTS `{name}`")


def new_mysql_database(mysql_databases: tuple[str, str]) -> str:
    """The URL of a new, empty MySQL database of this run."""
    server_url, prefix = mysql_databases
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    mysql_server.run_sql(server_url, f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    return mysql_server.with_database(server_url, name)


@pytest.fixture
def fresh_mysql_url(mysql_databases: tuple[str, str]) -> Iterator[str]:
    """A URL of a new, empty MySQL database: a clean store for one test (dropped after it)."""
    url = new_mysql_database(mysql_databases)
    yield url
    mysql_server.run_sql(mysql_databases[0], f"DROP DATABASE IF EXISTS `{url.rsplit('/', 1)[1].split('?')[0]}`")


@pytest.fixture(scope="session")
def _mysql_pool(mysql_databases: tuple[str, str]) -> MysqlDatabases:
    pool = MysqlDatabases(*mysql_databases)  # its databases are dropped with the run's
    POOLS["mysql"] = pool.stats
    return pool


@pytest.fixture
def clean_mysql_url(_mysql_pool: MysqlDatabases) -> Iterator[str]:
    """A migrated MySQL store (a database) with no rows, as a first open leaves a new one."""
    with _mysql_pool.lend() as url:
        yield url


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> SqliteTemplate:
    return SqliteTemplate(tmp_path_factory.mktemp("template"))


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """A SQLite file that does not exist yet."""
    return f"sqlite:///{tmp_path / 'orecast.sqlite3'}"


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def store_url(request, tmp_path) -> str:
    """A clean store on each real backend: migrated, no rows (as a new store is once first opened).
    Tests of migrations, or of a store's first open, take `new_store_url`."""
    if request.param == "sqlite":
        return request.getfixturevalue("_sqlite_template").copy_to(tmp_path / "orecast.sqlite3")
    if request.param == "mysql":
        return request.getfixturevalue("clean_mysql_url")
    return request.getfixturevalue("clean_postgres_url")


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def new_store_url(request, tmp_path) -> str:
    """A store never opened on each real backend: no file, an empty schema, an empty database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'orecast.sqlite3'}"
    if request.param == "mysql":
        return request.getfixturevalue("fresh_mysql_url")
    return request.getfixturevalue("fresh_postgres_url")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if os.environ.get("ORECAST_TEST_POOL_STATS"):
        for backend, stats in POOLS.items():
            terminalreporter.write_line(f"{backend} stores: {stats}")
