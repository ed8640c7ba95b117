"""What every command shares: the `--database-url` option and opening the store with clear errors."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Annotated, NoReturn

import psycopg
import typer

from orecast.checkpoint import (
    CorruptRowError,
    OrecastCheckpointer,
    StoreError,
    default_database_url,
    open_checkpointer,
)
from orecast.checkpoint.postgres.timeouts import resolve_timeouts
from orecast.checkpoint.urls import DEFAULT_SQLITE_NAME, StoreUrl, parse_url
from orecast.cli.store_probe import missing_store

DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="sqlite:///path.db, postgresql://… or mysql://… (default: $ORECAST_DATABASE_URL, "
        "$CHECKPOINT_DB, else orecast.sqlite3 in the user's data directory)",
        show_default=False,
    ),
]

# The largest count (a --limit, --offset, --top) a command takes: each database takes it in its SQL, where
# 10**20 was a traceback (SQLite, MySQL) or "cannot connect … bigint out of range" (PostgreSQL).
MAX_COUNT = 2**31 - 1


def fail(message: str, code: int = 1) -> NoReturn:
    """One clear line on stderr and an exit code, never a traceback."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def folder_as_store(parsed: StoreUrl) -> str | None:
    """Why a SQLite URL naming a folder is no store, or None. (It was "no orecast store at DIR yet
    (`orecast db migrate` creates it)", which then failed; `chat` gave SQLite's "unable to open".)"""
    try:
        if parsed.scheme != "sqlite" or not Path(parsed.target).is_dir():
            return None
    except OSError:  # a name too long: opening the store says so, in one line
        return None
    return (f"{parsed.target} is a folder, not a SQLite file: name a file in it, e.g. "
            f"sqlite:///{Path(parsed.target) / DEFAULT_SQLITE_NAME}")


@contextlib.asynccontextmanager
async def open_store(url: str | None, *, read_only: bool = False) -> AsyncIterator[OrecastCheckpointer]:
    """The same factory the service uses, with errors turned into one line for the terminal.

    `read_only`: fail with one line, creating and migrating nothing, when the store does not exist
    or is not at the latest schema."""
    url = url or default_database_url()
    try:
        parsed = parse_url(url)
    except ValueError as exc:
        fail(str(exc), 2)
    if parsed.scheme == "memory":
        fail("memory:// keeps nothing between commands; use a sqlite://, postgresql:// or mysql:// URL", 2)
    if (why := folder_as_store(parsed)) is not None:
        fail(why, 2)
    try:
        if parsed.scheme in ("postgresql", "mysql"):
            resolve_timeouts(parsed.options)  # a bad setting is a usage error, found before connecting
        if read_only and (why := missing_store(parsed)) is not None:
            fail(why)
        async with open_checkpointer(url) as saver:
            assert isinstance(saver, OrecastCheckpointer)
            if reason := getattr(saver, "read_only", None):
                typer.echo(f"warning: {parsed.redacted()} is open read-only ({reason})", err=True)
            yield saver
    except StoreError as exc:
        fail(parsed.scrub(str(exc)))
    except CorruptRowError as exc:
        fail(str(exc))
    except ValueError as exc:  # input the store refuses (an id it cannot keep, a bad timeout setting)
        fail(parsed.scrub(str(exc)), 2)
    except psycopg.Error as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        fail(f"cannot connect to {parsed.redacted()}: {parsed.scrub(first_line)}")
    except (OSError, sqlite3.DatabaseError) as exc:
        fail(f"cannot open {parsed.redacted()}: {exc}")


async def service_rows_of_thread(url: str | None, saver: OrecastCheckpointer) -> Sequence[str]:
    """The statements that delete what the service keeps of a thread (its runs, their events, its
    crons), for the transaction that deletes the thread (`adelete_thread(also=…)`, `sweep(also=…)`), as
    `DELETE /threads/{id}` takes them along: a cron left behind fired every time on a thread that was
    gone, and a Ctrl-C between two transactions left them. Makes the service's tables where the service
    never ran, so that the statements have them; none for a store `saver` opened read-only, which
    refuses the delete itself (with its own message, not SQLite's about making those tables)."""
    from orecast.service.db import open_db  # the service's modules only for commands that delete
    from orecast.service.runs.queries import DELETE_THREAD_SERVICE_ROWS

    if getattr(saver, "read_only", None) is not None:
        return ()
    async with open_db(url or default_database_url()):
        return DELETE_THREAD_SERVICE_ROWS
