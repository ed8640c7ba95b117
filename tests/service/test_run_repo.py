"""`RunRepo`'s transactions against another session's locks, on PostgreSQL and MySQL: the database
rolling one of them back (a deadlock's victim) must not leave a run half-way."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncmy
import asyncmy.errors
import psycopg
import psycopg.errors
import pytest

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.mysql.saver import connect_kwargs
from orecast.checkpoint.urls import parse_url
from orecast.service.db import open_db
from orecast.service.runs.records import RunRepo
from tests.checkpoint.conftest import raw_sql
from tests.conftest import new_mysql_database
from tests.service.conftest import new_pg_schema


@pytest.fixture(scope="module", params=["postgres", "mysql"])
def db_url(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        return new_pg_schema(request.getfixturevalue("postgres_url"))
    return new_mysql_database(request.getfixturevalue("mysql_databases"))


class Session:
    """Another session's transaction on the same database (a plain driver connection)."""

    def __init__(self, url: str, conn: Any) -> None:
        self.mysql = url.startswith("mysql")
        self.conn = conn

    async def run(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        await self.one(sql, params)

    async def one(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        """The statement's first row, if any."""
        if self.mysql:
            async with self.conn.cursor() as cur:
                await cur.execute(sql, params or None)
                rows = await cur.fetchall()
        else:
            cur = await self.conn.execute(sql, params or None)
            rows = await cur.fetchall() if cur.description else []
        return tuple(rows[0]) if rows else None


@contextlib.asynccontextmanager
async def session(url: str) -> AsyncIterator[Session]:
    """A transaction of its own, committed at the end. It weighs more than any of the service's (it
    wrote many rows), so that InnoDB picks the service's transaction as a deadlock's victim; on
    PostgreSQL, whose victim is the session whose `deadlock_timeout` runs out first, it waits longer."""
    target = parse_url(url).target
    if url.startswith("mysql"):
        raw_sql(url, "CREATE TABLE IF NOT EXISTS ballast (n INT NOT NULL) ENGINE = InnoDB")
        conn = await asyncmy.connect(**connect_kwargs(target), autocommit=False)
        try:
            other = Session(url, conn)
            await conn.begin()
            await other.run("INSERT INTO ballast (n) VALUES " + ", ".join(f"({n})" for n in range(500)))
            yield other
            await conn.commit()
        finally:
            conn.close()
    else:
        async with await psycopg.AsyncConnection.connect(target) as conn:  # commits at the end
            other = Session(url, conn)
            await other.run("SET deadlock_timeout = '60s'")
            yield other


@contextlib.asynccontextmanager
async def probe(url: str) -> AsyncIterator[Session]:
    """A session in autocommit mode (each read sees the server as it is now)."""
    target = parse_url(url).target
    if url.startswith("mysql"):
        conn = await asyncmy.connect(**connect_kwargs(target), autocommit=True)
        try:
            yield Session(url, conn)
        finally:
            conn.close()
    else:
        async with await psycopg.AsyncConnection.connect(target, autocommit=True) as conn:
            yield Session(url, conn)


async def until_locked(url: str, run_id: str, task: asyncio.Task[Any]) -> None:
    """Until the run's row is locked (by `task`, which then goes on to wait for the thread's row): a
    `FOR UPDATE NOWAIT` on it, from a connection of its own, fails. (Polling the servers' lists of
    lock waits missed a wait of 10 s on a loaded MariaDB.)"""
    sql = "SELECT 1 FROM service_runs WHERE run_id = %s FOR UPDATE NOWAIT"
    async with probe(url) as watcher:
        for _ in range(3000):
            assert not task.done(), f"it waited for nothing: {task}"
            try:
                await watcher.one(sql, (run_id,))
            except (asyncmy.errors.OperationalError, psycopg.errors.LockNotAvailable):
                return
            await asyncio.sleep(0.02)
    raise AssertionError("the run's row was never locked")


async def test_a_run_whose_end_is_a_deadlocks_victim_ends_all_the_same(db_url: str) -> None:
    """A run's end locks its row, then its thread's. Should a transaction elsewhere hold the thread's
    row and then ask for the run's, the database rolls the end back as the deadlock's victim: the run
    stayed `running` and its thread `busy` until the run looked dead (30 s later). The end is now
    run again."""
    mark = "%s"
    async with open_checkpointer(db_url) as saver, open_db(db_url) as db:
        repo = RunRepo(db, saver.thread_status_statement, saver.thread_lock_statement)  # type: ignore[attr-defined]  # our saver
        thread_id = str(uuid.uuid4())
        await saver.aupdate_thread(thread_id, metadata={}, status="idle")
        run, _ = await repo.admit(
            run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id="a", metadata={}, kwargs={},
            strategy="enqueue", owner=None,
        )
        assert run.status == "running"
        async with session(db_url) as other:
            await other.run(f"SELECT 1 FROM threads WHERE thread_id = {mark} FOR UPDATE", (thread_id,))
            ending = asyncio.create_task(repo.finish(run.run_id, "success", thread=(thread_id, "idle")))
            await until_locked(db_url, run.run_id, ending)  # the end holds the run's row, waits for the thread's
            await other.run(f"SELECT 1 FROM service_runs WHERE run_id = {mark} FOR UPDATE", (run.run_id,))
        assert await asyncio.wait_for(ending, 30), "the run's end was recorded"
        assert (await repo.get(run.run_id)).status == "success"  # type: ignore[union-attr]
        thread = await saver.aget_thread(thread_id)
        assert thread is not None and thread.status == "idle"
