"""`join_stream` through another `orecast serve` process on the same database: the events of a run driven
elsewhere reach the client, live and replayed after a `Last-Event-ID`."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from langgraph_sdk import get_client

from tests.checkpoint.conftest import raw_sql
from tests.service.conftest import ECHO, Server, free_port, say, wait_for_serve


@pytest.fixture(scope="module")
def other_process(db_url: str, server: Server) -> Iterator[str]:
    """A second service, in its own process, on the database of `server` (started first: it migrates)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "ORECAST_CANCEL_POLL_SECONDS": "0.05"}
    env.pop("ORECAST_API_KEYS", None)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "orecast.cli.main", "serve", "--port", str(port), "--database-url", db_url,
         "--no-analyst", "--graph", f"{ECHO}=tests.service.echo_graph:graph"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_serve(proc, url, 90)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def event_rows(db_url: str, run_id: str) -> int:
    mark = "?" if db_url.startswith("sqlite") else "%s"
    return raw_sql(db_url, f"SELECT COUNT(*) FROM service_run_events WHERE run_id = {mark}", (run_id,))[0][0]


async def test_join_stream_reaches_a_run_of_another_process(server: Server, other_process: str, db_url: str) -> None:
    driver, joiner = get_client(url=other_process), server.client()
    tid = (await driver.threads.create())["thread_id"]
    quiet = await driver.runs.wait(tid, ECHO, input=say("nobody follows"))
    assert quiet["messages"][-1]["content"] == "echo: nobody follows"
    # A run that ended before anyone joined it from another process has nothing to replay there
    # (docs/service.md): it runs long enough for the join to arrive on a loaded machine too.
    run = await driver.runs.create(tid, ECHO, input=say("far", delay=4), stream_mode=["values", "custom"])
    parts = [p async for p in joiner.runs.join_stream(tid, run["run_id"])]
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
