"""Shared fixtures: real SQLite files and a real PostgreSQL database created for this test run."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.pg_server import ensure as ensure_postgres
from tests.pg_server import with_database, with_search_path


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
    """A URL whose search_path is a new, empty schema: a clean store for one test."""
    return new_schema_url(postgres_url)


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'orecast.sqlite3'}"


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path) -> str:
    """A clean store on each real backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'orecast.sqlite3'}"
    return request.getfixturevalue("fresh_postgres_url")
