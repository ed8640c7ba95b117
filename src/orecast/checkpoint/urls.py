"""Database URLs: which store to open, and the default one."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

DEFAULT_SQLITE_NAME = "orecast.sqlite3"


@dataclass(frozen=True)
class StoreUrl:
    scheme: str  # "sqlite", "postgresql" or "memory"
    target: str  # a file path / ":memory:" for sqlite, the conninfo for postgresql

    def redacted(self) -> str:
        """The URL without its password, for messages and logs."""
        if self.scheme != "postgresql" or "@" not in self.target:
            return self.target if self.scheme != "memory" else "memory://"
        head, _, tail = self.target.partition("://")
        userinfo, _, host = tail.rpartition("@")
        user = userinfo.split(":", 1)[0]
        return f"{head}://{user}:***@{host}" if ":" in userinfo else self.target


def parse_url(url: str) -> StoreUrl:
    """Understand `sqlite:///rel.db`, `sqlite:////abs.db`, `sqlite:///:memory:`, `postgres(ql)://…`, `memory://`."""
    if url.startswith("memory://"):
        return StoreUrl("memory", "")
    if url.startswith("sqlite://"):
        rest = url[len("sqlite://") :]
        if not rest.startswith("/") or rest == "/":
            raise ValueError(f"bad SQLite URL {url!r}: use sqlite:///relative.db or sqlite:////abs.db")
        path = rest[1:]
        return StoreUrl("sqlite", path)
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return StoreUrl("postgresql", "postgresql://" + url.split("://", 1)[1])
    raise ValueError(
        f"unsupported database URL {url.split('://')[0] + '://…' if '://' in url else url!r}: "
        "use sqlite:///path.db, postgresql://… or memory://"
    )


def default_sqlite_path() -> Path:
    """`orecast.sqlite3` in the user's data directory (`$XDG_DATA_HOME/orecast` on Linux)."""
    return platformdirs.user_data_path("orecast", appauthor=False) / DEFAULT_SQLITE_NAME


def default_database_url() -> str:
    """`ORECAST_DATABASE_URL`, else `CHECKPOINT_DB` (a SQLite file path), else the SQLite file
    `default_sqlite_path()`: the same store whatever the current directory.

    Nothing is created here: opening the store (`open_checkpointer`) creates the file and its folder.
    """
    if url := os.environ.get("ORECAST_DATABASE_URL"):
        return url
    if path := os.environ.get("CHECKPOINT_DB"):
        return f"sqlite:///{path}"  # an absolute path gives the four slashes of sqlite:////abs.db
    return f"sqlite:///{default_sqlite_path()}"
