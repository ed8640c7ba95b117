"""`join_stream` through another `orecast serve` process on the same database: the events of a run driven
elsewhere reach the client, live and replayed after a `Last-Event-ID`; and a cancel through another
`orecast serve` process."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from tests.checkpoint.conftest import raw_sql
from tests.service.conftest import ECHO, Server, held, say, start_serve


@contextmanager
def serve_process(db_url: str) -> Iterator[str]:
    """`orecast serve` of the echo graph, in its own process, on `db_url`: its URL once it answers."""
    proc, url = start_serve(db_url, {ECHO: "tests.service.echo_graph:graph"}, ORECAST_CANCEL_POLL_SECONDS="0.05")
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=30)


@pytest.fixture(scope="module")
def other_process(db_url: str, server: Server) -> Iterator[str]:
    """A second service, in its own process, on the database of `server` (started first: it migrates)."""
    with serve_process(db_url) as url:
        yield url


@pytest.fixture(scope="module")
def third_process(db_url: str, other_process: str) -> Iterator[str]:
    """One more `orecast serve` process on the same database."""
    with serve_process(db_url) as url:
        yield url


def event_rows(db_url: str, run_id: str) -> int:
    mark = "?" if db_url.startswith("sqlite") else "%s"
    return raw_sql(db_url, f"SELECT COUNT(*) FROM service_run_events WHERE run_id = {mark}", (run_id,))[0][0]


async def test_join_stream_reaches_a_run_of_another_process(
    server: Server, other_process: str, db_url: str, tmp_path: Path
) -> None:
    driver, joiner = get_client(url=other_process), server.client()
    tid = (await driver.threads.create())["thread_id"]
    quiet = await driver.runs.wait(tid, ECHO, input=say("nobody follows"))
    assert quiet["messages"][-1]["content"] == "echo: nobody follows"
    # A run that ended before anyone joined it from another process has nothing to replay there
    # (docs/service.md): it runs until the join has asked the driver for its events (a run of a few
    # seconds could end first on a loaded machine).
    hold = held(tmp_path)
    run = await driver.runs.create(tid, ECHO, input=say("far", hold=str(hold)), stream_mode=["values", "custom"])

    async def join() -> list:
        return [p async for p in joiner.runs.join_stream(tid, run["run_id"])]

    joining = asyncio.create_task(join())

    async def followed() -> bool:
        mark = "?" if db_url.startswith("sqlite") else "%s"
        return bool(raw_sql(db_url, f"SELECT shared_stream FROM service_runs WHERE run_id = {mark}", (run["run_id"],))[0][0])

    await until(followed, "the join asked for the run's events")
    hold.unlink()
    parts = await asyncio.wait_for(joining, 60)
    names = [p.event for p in parts]
    assert names[0] == "metadata" and parts[0].data["run_id"] == run["run_id"]
    assert {"values", "custom"} <= set(names)
    assert next(p.data for p in parts if p.event == "custom") == {"echoing": "far"}
    assert [m["content"] for m in [p.data for p in parts if p.event == "values"][-1]["messages"]][-2:] == [
        "far", "echo: far"
    ]
    assert (await joiner.runs.get(tid, run["run_id"]))["status"] == "success"

    again = [p async for p in joiner.runs.join_stream(tid, run["run_id"], last_event_id="1")]
    assert [p.event for p in again] == names[1:], "a reconnect resumes after the id it saw, from the database"
    assert event_rows(db_url, run["run_id"]) == len(names)
    runs = await driver.runs.list(tid)
    unfollowed = next(r for r in runs if r["run_id"] != run["run_id"])
    assert event_rows(db_url, unfollowed["run_id"]) == 0, "events go to the database only when followed elsewhere"


async def test_a_finished_run_of_another_process(server: Server, other_process: str, db_url: str) -> None:
    """As langgraph-api: join answers the final values; join_stream without a Last-Event-ID sends
    nothing, and after one replays the rest of a resumable run's events, which were all kept."""
    driver, joiner = get_client(url=other_process), server.client()
    tid = (await driver.threads.create())["thread_id"]
    run = await driver.runs.create(
        tid, ECHO, input=say("kept"), stream_mode=["values", "custom"], stream_resumable=True
    )
    await driver.runs.join(tid, run["run_id"])
    assert contents_of(await joiner.runs.join(tid, run["run_id"])) == ["kept", "echo: kept"]
    assert [p async for p in joiner.runs.join_stream(tid, run["run_id"])] == []
    rest = [p async for p in joiner.runs.join_stream(tid, run["run_id"], last_event_id="1")]
    assert [p.event for p in rest] == ["values", "custom", "values"]
    assert contents_of(rest[-1].data) == ["kept", "echo: kept"]
    assert event_rows(db_url, run["run_id"]) == 4, "a resumable run keeps all its events"


def contents_of(values: dict) -> list[str]:
    return [m["content"] for m in values["messages"]]


async def until(check: Callable[[], Awaitable[bool]], what: str, seconds: float = 60) -> None:
    """Poll `check` until it is true; fail after `seconds` (generous: CI's machine is loaded)."""
    deadline = time.monotonic() + seconds
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds} s")
        await asyncio.sleep(0.1)


@pytest.mark.slow
async def test_a_cancel_through_another_process_interrupts_the_run(other_process: str, third_process: str) -> None:
    """Two `orecast serve` processes: a run started through A is cancelled through B (the cancel goes
    through the database); both see it `interrupted`, the thread is idle and takes B's next run."""
    a, b = get_client(url=other_process), get_client(url=third_process)
    tid = (await a.threads.create())["thread_id"]
    run_id = (await a.runs.create(tid, ECHO, input=say("cancel me", delay=120)))["run_id"]

    async def running() -> bool:
        return (await b.runs.get(tid, run_id))["status"] == "running"

    async def stored() -> bool:  # the graph is in its node (sleeping), its input checkpointed
        values = (await b.threads.get(tid))["values"]
        return bool(values) and contents_of(values) == ["cancel me"]

    await until(running, "the run started")
    await until(stored, "the run stored its input")
    await asyncio.wait_for(b.runs.cancel(tid, run_id, wait=True), 60)
    for client in (a, b):
        assert (await client.runs.get(tid, run_id))["status"] == "interrupted"
        thread = await client.threads.get(tid)
        assert thread["status"] == "idle"
        assert contents_of(thread["values"]) == ["cancel me"], "an interrupt keeps what the run stored"

    after = await asyncio.wait_for(b.runs.wait(tid, ECHO, input=say("after", delay=0)), 60)
    assert contents_of(after) == ["cancel me", "after", "echo: after"]
    assert [r["status"] for r in await a.runs.list(tid)] == ["success", "interrupted"]
    assert (await a.threads.get(tid))["status"] == "idle"
