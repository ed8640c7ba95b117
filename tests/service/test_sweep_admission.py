"""A run's admission against the TTL sweep deleting its thread, on SQLite, PostgreSQL and MySQL.

Either the run is in first (its thread is then `busy`, and the sweep leaves it alone) or the sweep is
(the run is then refused with a 404, and nothing of it is written). The run's admission used to insert
it on a thread swept since it was read: it ran, its first checkpoint made the thread again with only
its own state, and the sweeper then deleted its row under it."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint import sweep as sweep_module
from orecast.checkpoint.core import utc_now
from orecast.checkpoint.sweep import TtlPolicy, set_thread_ttl, sweep
from orecast.service.db import open_db
from orecast.service.db.connection import now_iso
from orecast.service.runs.manager import RunManager, _Local
from orecast.service.runs.records import RunRecord, RunRepo, ThreadGone
from tests.checkpoint.conftest import ph, raw_sql
from tests.conftest import new_mysql_database
from tests.service.conftest import new_pg_schema

LATER = timedelta(hours=1)  # a sweep as of then finds the tests' threads (TTL 1 s) expired


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite3'}"
    if request.param == "postgres":
        return new_pg_schema(request.getfixturevalue("postgres_url"))
    return new_mysql_database(request.getfixturevalue("mysql_databases"))


@contextlib.asynccontextmanager
async def opened(url: str) -> AsyncIterator[tuple[Any, RunRepo]]:
    async with open_checkpointer(url) as saver, open_db(url) as db:
        yield saver, RunRepo(db, saver.thread_status_statement, saver.thread_lock_statement)  # type: ignore[attr-defined]


async def expiring_thread(saver: Any) -> str:
    """A new idle thread whose own TTL (1 s) has run out for a sweep as of `LATER`."""
    thread_id = str(uuid.uuid4())
    await saver.aupdate_thread(thread_id, metadata={"topic": "iron ore"}, status="idle")
    assert await set_thread_ttl(saver, thread_id, timedelta(seconds=1), "delete")
    return thread_id


async def admit(repo: RunRepo, thread_id: str, strategy: str = "enqueue", **checks: Any) -> RunRecord:
    run, _ = await repo.admit(
        run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id="a", metadata={}, kwargs={},
        strategy=strategy, owner=None, **checks,
    )
    return run


def runs_of(url: str, thread_id: str) -> int:
    return raw_sql(url, f"SELECT COUNT(*) FROM service_runs WHERE thread_id = {ph(url)}", (thread_id,))[0][0]


async def test_a_run_on_a_thread_swept_since_it_was_read_is_refused(db_url: str) -> None:
    """The service reads the thread, then admits the run: a sweep may delete the thread in between."""
    async with opened(db_url) as (saver, repo):
        thread_id = await expiring_thread(saver)
        assert await saver.aget_thread(thread_id) is not None  # what the run was prepared with
        assert (await sweep(saver, TtlPolicy(), now=utc_now() + LATER)).deleted == [thread_id]
        with pytest.raises(ThreadGone, match=f"thread {thread_id} not found"):
            await admit(repo, thread_id)
        assert runs_of(db_url, thread_id) == 0, "nothing of the refused run was written"
        assert await saver.aget_thread(thread_id) is None


SESSIONS = {
    "mysql": "SELECT id, command, state, info FROM information_schema.processlist",
    "postg": "SELECT pid, state, wait_event_type, wait_event, query FROM pg_stat_activity",
}


async def until_waiting(url: str, task: asyncio.Task[Any]) -> None:
    """Until `task`'s transaction waits for a row lock on the database (the sweep's)."""
    if url.startswith("mysql"):
        # MariaDB's list of lock waits (innodb_trx) did not show this one; the statement on the thread's
        # row, running in a session of its own, is what waits (the sweep's session is idle in its
        # transaction).
        sql = (
            "SELECT COUNT(*) FROM information_schema.processlist WHERE id <> CONNECTION_ID() "
            "AND db = DATABASE() AND command = 'Query' AND info LIKE '%threads%'"
        )
    else:
        sql = "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%%service_runs%%'"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert not task.done(), f"it waited for nothing: {task}"
        if raw_sql(url, sql)[0][0]:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the admission never waited for the sweep: {raw_sql(url, SESSIONS[url[:5]])}")


# Not on SQLite, whose writers take turns: its admission comes before or after the sweep, as above. The
# one-statement admission is PostgreSQL's.
@pytest.mark.parametrize(
    ("db_url", "path"),
    [("postgres", "transaction"), ("postgres", "one statement"), ("mysql", "transaction")],
    indirect=["db_url"],
)
async def test_a_run_admitted_while_a_sweep_deletes_its_thread_is_refused(
    db_url: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep has claimed and deleted the thread, not yet committed; the run's admission comes then.
    It waits for the sweep and is refused, on either path of PostgreSQL's admission: the transaction, and
    the one statement of a run prepared from remembered rows (`same_thread` sees the thread there: the
    statement's snapshot predates the sweep's commit)."""
    swept, go = asyncio.Event(), asyncio.Event()
    expire = sweep_module._expire

    async def held(*args: Any) -> Any:  # the sweep's transaction stays open once its thread is deleted
        done = await expire(*args)
        swept.set()
        await go.wait()
        return done

    monkeypatch.setattr(sweep_module, "_expire", held)
    async with opened(db_url) as (saver, repo):
        thread_id = await expiring_thread(saver)
        checks: dict[str, Any] = {}
        if path == "one statement":
            now = now_iso()
            raw_sql(
                db_url,
                "INSERT INTO service_assistants (assistant_id, graph_id, name, version, created_at, updated_at) "
                "VALUES ('a', 'g', 'a', 1, %s, %s)",
                (now, now),
            )
            info = await saver.aget_thread(thread_id)
            checks = {
                "assistant_version": (1, now),
                "same_thread": saver.same_thread_condition(thread_id, info.metadata),
            }
        sweeping = asyncio.create_task(sweep(saver, TtlPolicy(), now=utc_now() + LATER))
        await asyncio.wait_for(swept.wait(), 20)
        admitting = asyncio.create_task(admit(repo, thread_id, **checks))
        try:
            await until_waiting(db_url, admitting)
        finally:
            go.set()
        assert (await asyncio.wait_for(sweeping, 20)).deleted == [thread_id]
        with pytest.raises(ThreadGone):
            await asyncio.wait_for(admitting, 20)
        assert runs_of(db_url, thread_id) == 0
        assert await saver.aget_thread(thread_id) is None


async def test_a_queued_run_whose_thread_is_swept_does_not_start(db_url: str) -> None:
    """Between a run's end and the claim of the run queued behind it its thread stays `busy` (as
    langgraph-api's: a run waits for it), so a sweep leaves it alone (before, it was `idle` then and
    the sweep deleted it). A delete still may: the queued run must not start then (it wrote into the
    deleted thread, making it again)."""
    async with opened(db_url) as (saver, repo):
        thread_id = await expiring_thread(saver)
        first = await admit(repo, thread_id)
        queued = await admit(repo, thread_id)
        assert (first.status, queued.status) == ("running", "pending")
        assert await repo.finish(first.run_id, "success", thread=(thread_id, "idle"))
        assert (await sweep(saver, TtlPolicy(), now=utc_now() + LATER)).deleted == []
        assert (await saver.aget_thread(thread_id)).status == "busy"  # type: ignore[union-attr]
        await saver.adelete_thread(thread_id)
        with pytest.raises(ThreadGone):
            await repo.claim(queued, 30)
        assert (await repo.get(queued.run_id)).status == "pending"  # type: ignore[union-attr]  # the claim wrote nothing
        manager = RunManager(repo, saver, metrics=None, poll_seconds=0.05, stale_seconds=30)  # type: ignore[arg-type]
        local = _Local(asyncio.current_task(), manager.broker.open(queued.run_id))  # type: ignore[arg-type]  # its driving task
        assert not await asyncio.wait_for(manager._admitted(queued, local), 10), "the run does not start"
        assert await saver.aget_thread(thread_id) is None
