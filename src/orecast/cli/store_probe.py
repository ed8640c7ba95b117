"""Whether a store exists and is current, checked without creating or migrating anything.

Read-only commands (`threads list/show/history/tools`, `db status`) look first: opening a store with
`open_checkpointer` creates and migrates it, which a command that only reads must never do.
"""

from __future__ import annotations

import asyncio
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import unquote

import psycopg

from orecast.checkpoint import migrations
from orecast.checkpoint.mysql.saver import stored_schema_version
from orecast.checkpoint.urls import StoreUrl

SQLITE_HAS_MIGRATIONS = (
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'orecast_migrations'"
)
POSTGRES_HAS_MIGRATIONS = "SELECT to_regclass('orecast_migrations') IS NOT NULL"
SCHEMA_VERSION = "SELECT COALESCE(MAX(version), 0) FROM orecast_migrations"
CONNECT_TIMEOUT_SECONDS = 5
DIALECTS = {"sqlite": "sqlite", "postgresql": "postgres", "mysql": "mysql"}  # URL scheme → migrations


def missing_store(parsed: StoreUrl) -> str | None:
    """None when the store exists at the latest schema; else why a read-only command cannot read it.

    Connection errors are left to the caller's usual handling (they raise as when opening)."""
    if parsed.scheme == "sqlite" and in_memory(parsed.target):
        return None  # nothing stored to protect: the command sees a new, empty store
    if parsed.scheme not in DIALECTS:
        return None
    version = schema_version(parsed)
    where = parsed.redacted()
    if version is None:
        return (f"no orecast store at {where} yet (the first `orecast chat` or "
                "`orecast db migrate` creates it)")
    latest = migrations.latest(DIALECTS[parsed.scheme])
    if version < latest:
        return (f"the store at {where} has schema version {version} (latest {latest}); "
                "run `orecast db migrate` first")
    return None


def schema_version(parsed: StoreUrl) -> int | None:
    """The store's schema version; None when there is no orecast store there (nor a SQLite file)."""
    if parsed.scheme == "sqlite":
        return None if in_memory(parsed.target) else _sqlite_version(parsed.target)
    if parsed.scheme == "postgresql":
        return _postgres_version(parsed.target)
    if parsed.scheme == "mysql":
        # The CLI may be inside an event loop: the probe runs on one of its own.
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, stored_schema_version(parsed.target)).result()
    return None


def in_memory(target: str) -> bool:
    """Whether a SQLite target (a path or a `file:` URI) is a database that lives in memory."""
    if target == ":memory:" or target.startswith("file::memory:"):
        return True
    return target.startswith("file:") and "mode=memory" in target.partition("?")[2].split("&")


def _sqlite_version(target: str) -> int | None:
    # A `file:` URI names its file before the query; the query's options do not matter to a probe.
    path = unquote(target[len("file:"):].partition("?")[0]) if target.startswith("file:") else target
    if not Path(path).is_file():
        return None
    uri = Path(path).resolve().as_uri()
    try:
        return _sqlite_schema_version(f"{uri}?mode=ro")
    except sqlite3.OperationalError:
        # A WAL database in a folder this process may not write: without its -shm file SQLite reads
        # it only as immutable (the saver then opens it the same way, read-only).
        return _sqlite_schema_version(f"{uri}?mode=ro&immutable=1")


def _sqlite_schema_version(uri: str) -> int | None:
    # mode=ro: a probe must not create the file, nor a journal next to it.
    conn = sqlite3.connect(uri, uri=True)
    try:
        if conn.execute(SQLITE_HAS_MIGRATIONS).fetchone() is None:
            return None
        return int(conn.execute(SCHEMA_VERSION).fetchone()[0])
    finally:
        conn.close()


def _postgres_version(conninfo: str) -> int | None:
    with psycopg.connect(conninfo, connect_timeout=CONNECT_TIMEOUT_SECONDS) as conn:
        row = conn.execute(POSTGRES_HAS_MIGRATIONS).fetchone()
        if not row or not row[0]:
            return None
        found = conn.execute(SCHEMA_VERSION).fetchone()
        return int(found[0]) if found else 0
