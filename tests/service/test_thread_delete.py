"""A deleted thread and what the service keeps of it (its runs, their events, its crons) go in one
transaction, on SQLite, PostgreSQL and MariaDB: `DELETE /threads/{id}` and a temporary thread's end
(`on_completion="delete"`). They went in two, and a crash between them left runs of a thread that was gone.

A trigger that refuses to delete a run stands in for the crash: the run's delete fails after the
thread's, in the same transaction, which must then keep the thread too."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest

from orecast.checkpoint.urls import parse_url
from tests.checkpoint.conftest import raw_sql
from tests.service.conftest import ECHO, Server, say, settings_for

REFUSE = {
    "sqlite": ["CREATE TRIGGER refuse_run_delete BEFORE DELETE ON service_runs "
               "BEGIN SELECT RAISE(ABORT, 'run delete refused'); END"],
    "postgresql": [
        "CREATE FUNCTION refuse_run_delete() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'run delete refused'; END $$",
        "CREATE TRIGGER refuse_run_delete BEFORE DELETE ON service_runs "
        "FOR EACH ROW EXECUTE FUNCTION refuse_run_delete()",
    ],
    "mysql": ["CREATE TRIGGER refuse_run_delete BEFORE DELETE ON service_runs FOR EACH ROW "
              "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'run delete refused'"],
}
ALLOW = {
    "sqlite": ["DROP TRIGGER refuse_run_delete"],
    "postgresql": ["DROP TRIGGER refuse_run_delete ON service_runs", "DROP FUNCTION refuse_run_delete()"],
    "mysql": ["DROP TRIGGER refuse_run_delete"],
}


@pytest.fixture
def server(store_url: str) -> Iterator[Server]:
    running = Server.start(settings_for(store_url))
    yield running
    running.stop()


def _run_all(url: str, statements: list[str]) -> None:
    for sql in statements:
        raw_sql(url, sql)


def _mark(url: str) -> str:
    return "?" if url.startswith("sqlite") else "%s"


def _left(url: str, thread_id: str) -> tuple[int, int]:
    """(the thread's rows in the store's threads table, its runs' rows)."""
    mark = _mark(url)
    threads = raw_sql(url, f"SELECT COUNT(*) FROM threads WHERE thread_id = {mark}", (thread_id,))[0][0]
    runs = raw_sql(url, f"SELECT COUNT(*) FROM service_runs WHERE thread_id = {mark}", (thread_id,))[0][0]
    return int(threads), int(runs)


async def test_a_thread_and_its_runs_are_deleted_together(server: Server, store_url: str) -> None:
    client = server.client()
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, ECHO, input=say("hi"))
    assert _left(store_url, tid) == (1, 1)
    scheme = parse_url(store_url).scheme
    _run_all(store_url, REFUSE[scheme])
    try:
        answer = httpx.delete(f"{server.url}/threads/{tid}", timeout=30)
        assert answer.status_code >= 500
        assert _left(store_url, tid) == (1, 1), "the runs' delete failed: the thread's was undone with it"
    finally:
        _run_all(store_url, ALLOW[scheme])
    assert httpx.delete(f"{server.url}/threads/{tid}", timeout=30).status_code == 204
    assert _left(store_url, tid) == (0, 0)


async def test_a_temporary_thread_and_its_run_are_deleted_together(server: Server, store_url: str) -> None:
    client = server.client()
    scheme = parse_url(store_url).scheme
    _run_all(store_url, REFUSE[scheme])
    try:
        run = await client.runs.create(None, ECHO, input=say("gone after"))
        tid, mark = run["thread_id"], _mark(store_url)
        status = f"SELECT status FROM service_runs WHERE run_id = {mark}"
        deadline = time.monotonic() + 30
        while raw_sql(store_url, status, (run["run_id"],)) != [("success",)]:
            assert time.monotonic() < deadline, "the run did not end"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)  # its end tries the thread's delete (refused: the run's row stays)
        assert _left(store_url, tid) == (1, 1), "no run left behind a thread that is gone"
    finally:
        _run_all(store_url, ALLOW[scheme])
    # and without the trigger a temporary thread goes with its run
    other = await client.runs.create(None, ECHO, input=say("gone"))
    deadline = time.monotonic() + 30
    while _left(store_url, other["thread_id"]) != (0, 0):
        assert time.monotonic() < deadline, "the temporary thread and its run stayed"
        await asyncio.sleep(0.05)
