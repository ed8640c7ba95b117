"""Database URLs: parsing, the default, and what open_checkpointer returns for each."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from orecast.checkpoint import (
    PostgresCheckpointer,
    SqliteCheckpointer,
    default_database_url,
    open_checkpointer,
)
from orecast.checkpoint.migrations import latest
from orecast.checkpoint.urls import parse_url
from tests.checkpoint.graphs import human, tool_loop


@pytest.mark.parametrize(
    ("url", "scheme", "target"),
    [
        ("sqlite:///rel.db", "sqlite", "rel.db"),
        ("sqlite:///data/orecast.sqlite3", "sqlite", "data/orecast.sqlite3"),
        ("sqlite:////abs/path.db", "sqlite", "/abs/path.db"),
        ("sqlite:///:memory:", "sqlite", ":memory:"),
        ("postgresql://u:p@h:5432/db", "postgresql", "postgresql://u:p@h:5432/db"),
        ("postgres://u@h/db?sslmode=disable", "postgresql", "postgresql://u@h/db?sslmode=disable"),
        ("mysql://u:p@h:3306/db", "mysql", "mysql://u:p@h:3306/db"),
        ("mariadb://u@h/db?lock_timeout=3", "mysql", "mysql://u@h/db"),
        ("memory://", "memory", ""),
    ],
)
def test_parse_url(url: str, scheme: str, target: str) -> None:
    parsed = parse_url(url)
    assert (parsed.scheme, parsed.target) == (scheme, target)


@pytest.mark.parametrize("url", ["oracle://x/y", "mysql://h:3306", "mysql://h/", "sqlite://", "sqlite://rel.db", "data.db", ""])
def test_bad_urls(url: str) -> None:
    with pytest.raises(ValueError):
        parse_url(url)


def test_redacted_hides_password() -> None:
    assert (
        parse_url("postgresql://me:s3cret@db:5432/x").redacted() == "postgresql://me:***@db:5432/x"
    )
    assert "s3cret" not in parse_url("postgres://me:s3cret@db/x").redacted()
    assert parse_url("postgresql://me@db/x").redacted() == "postgresql://me@db/x"
    assert parse_url("memory://").redacted() == "memory://"
    assert parse_url("mysql://me:s3cret@db:3306/x").redacted() == "mysql://me:***@db:3306/x"
    assert parse_url("mariadb://me:s%40cret@db/x").scrub("denied for s@cret") == "denied for ***"


@pytest.mark.parametrize("url", ["postgresql://", "postgresql:///orecast", "postgresql:///x?password=***"])
def test_a_url_without_a_host_is_shown_as_written(url: str) -> None:
    """The local server's URL (no host: its Unix socket) was shown as "postgresql:" (urlunsplit drops
    an empty host's `//`): "no orecast store at postgresql: yet"."""
    assert parse_url(url).redacted() == url
    assert parse_url(url.replace("***", "s3cret")).redacted() == url


def test_default_url_env_precedence(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("ORECAST_DATABASE_URL", raising=False)
    monkeypatch.delenv("CHECKPOINT_DB", raising=False)
    # The user's data directory, whatever the current directory; nothing is created yet.
    assert default_database_url() == f"sqlite:///{tmp_path}/xdg/orecast/orecast.sqlite3"
    assert list(tmp_path.iterdir()) == []

    monkeypatch.setenv("CHECKPOINT_DB", "chats/c.db")
    assert parse_url(default_database_url()).target == "chats/c.db"
    monkeypatch.setenv("CHECKPOINT_DB", "/var/tmp/abs.db")
    assert parse_url(default_database_url()).target == "/var/tmp/abs.db"

    monkeypatch.setenv("ORECAST_DATABASE_URL", "postgresql://u@h/db")
    assert default_database_url() == "postgresql://u@h/db"


async def test_open_memory() -> None:
    async with open_checkpointer("memory://") as s:
        assert isinstance(s, InMemorySaver)


async def test_open_relative_sqlite_path(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    async with open_checkpointer("sqlite:///sub/dir/rel.db") as s:
        assert isinstance(s, SqliteCheckpointer)
        await tool_loop(s).ainvoke({"messages": [human(1)]}, {"configurable": {"thread_id": "r"}})
    assert (tmp_path / "sub" / "dir" / "rel.db").is_file()


async def test_open_absolute_sqlite_path(tmp_path) -> None:
    path = tmp_path / "abs.db"
    async with open_checkpointer(f"sqlite:///{path}") as s:
        await tool_loop(s).ainvoke({"messages": [human(1)]}, {"configurable": {"thread_id": "a"}})
    assert Path(path).is_file()
    async with open_checkpointer(f"sqlite:///{path}") as s:
        assert (await s.aget_thread("a")).message_count == 4


async def test_open_sqlite_memory_is_private() -> None:
    async with open_checkpointer("sqlite:///:memory:") as s:
        await tool_loop(s).ainvoke({"messages": [human(1)]}, {"configurable": {"thread_id": "m"}})
        assert (await s.aget_thread("m")).message_count == 4
    async with open_checkpointer("sqlite:///:memory:") as s:
        assert await s.aget_thread("m") is None


async def test_open_default_from_env(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("ORECAST_DATABASE_URL", raising=False)
    monkeypatch.setenv("CHECKPOINT_DB", str(tmp_path / "env.db"))
    async with open_checkpointer() as s:
        assert isinstance(s, SqliteCheckpointer)
    assert (tmp_path / "env.db").is_file()


async def test_open_postgres_both_schemes(fresh_postgres_url: str) -> None:
    alt = "postgres://" + fresh_postgres_url.split("://", 1)[1]
    async with open_checkpointer(alt, pool_size=2) as s:
        assert isinstance(s, PostgresCheckpointer)
        await tool_loop(s).ainvoke({"messages": [human(1)]}, {"configurable": {"thread_id": "p"}})
    async with open_checkpointer(fresh_postgres_url) as s:
        assert (await s.aget_thread("p")).message_count == 4
        stats = await s.astats()
        assert stats["dialect"] == "postgresql"
        assert stats["schema_version"] == latest("postgres")
        assert stats["tables"]["threads"]["rows"] == 1
        assert stats["tables"]["items"]["rows"] == 4
        assert stats["bytes"] > 0


async def test_schema_version_recorded_per_checkpoint(store_url: str) -> None:
    from tests.checkpoint.conftest import raw_sql

    async with open_checkpointer(store_url, schema_version=7) as s:
        await tool_loop(s).ainvoke({"messages": [human(1)]}, {"configurable": {"thread_id": "v"}})
        stats = await s.astats()
        assert stats["tables"]["checkpoints"]["rows"] == 5
    assert raw_sql(store_url, "SELECT DISTINCT schema_version FROM checkpoints") == [(7,)]
