"""multitask_strategy, decided in the database: also with two servers on one database."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import ConflictError, NotFoundError

from tests.checkpoint.conftest import raw_sql
from tests.service.conftest import ECHO, Server, held, say, settings_for, start_serve


def contents(values: dict) -> list[str]:
    return [m["content"] for m in values["messages"]]


async def wait_running(client, tid: str, run_id: str) -> None:
    for _ in range(200):
        if (await client.runs.get(tid, run_id))["status"] == "running":
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the run never started")


async def wait_stored(client, tid: str, text: str) -> None:
    """Until the thread's state holds `text`: a run is `running` from its admission, before its
    graph has stored its input (a background checkpoint write)."""
    for _ in range(200):
        values = (await client.threads.get(tid))["values"]
        if values and text in contents(values):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{text!r} was never stored")


async def test_reject_answers_409_and_changes_nothing(client, tmp_path: Path) -> None:
    tid = (await client.threads.create())["thread_id"]
    hold = held(tmp_path)
    first = await client.runs.create(tid, ECHO, input=say("busy", hold=str(hold)))
    await wait_running(client, tid, first["run_id"])
    assert (await client.threads.get(tid))["status"] == "busy"
    with pytest.raises(ConflictError) as busy:
        await client.runs.create(tid, ECHO, input=say("rejected"), multitask_strategy="reject")
    assert "busy" in busy.value.message and first["run_id"] in busy.value.message
    assert len(await client.runs.list(tid)) == 1, "a rejected run is not stored"
    hold.unlink()
    await client.runs.join(tid, first["run_id"])
    assert contents((await client.threads.get(tid))["values"]) == ["busy", "echo: busy"]
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_enqueue_runs_in_order(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    runs = [
        await client.runs.create(tid, ECHO, input=say(f"m{i}", delay=0.1), multitask_strategy="enqueue")
        for i in range(4)
    ]
    for run in runs:
        await client.runs.join(tid, run["run_id"])
    values = (await client.threads.get(tid))["values"]
    assert contents(values) == [x for i in range(4) for x in (f"m{i}", f"echo: m{i}")]
    assert {(await client.runs.get(tid, r["run_id"]))["status"] for r in runs} == {"success"}


async def test_interrupt_strategy_stops_the_current_run(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    first = await client.runs.create(tid, ECHO, input=say("old", delay=30))
    await wait_running(client, tid, first["run_id"])
    await wait_stored(client, tid, "old")
    second = await client.runs.wait(tid, ECHO, input=say("new", delay=0), multitask_strategy="interrupt")
    assert contents(second)[-1] == "echo: new" and "echo: old" not in contents(second)
    assert "old" in contents(second), "interrupt keeps what the first run stored"
    assert (await client.runs.get(tid, first["run_id"]))["status"] == "interrupted"


async def test_rollback_strategy_erases_the_current_run(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, ECHO, input=say("kept"))
    first = await client.runs.create(tid, ECHO, input=say("erased", delay=30))
    await wait_running(client, tid, first["run_id"])
    await wait_stored(client, tid, "erased")  # or the rollback would have nothing to erase
    second = await client.runs.wait(tid, ECHO, input=say("after", delay=0), multitask_strategy="rollback")
    assert contents(second) == ["kept", "echo: kept", "after", "echo: after"]
    with pytest.raises(NotFoundError):
        await client.runs.get(tid, first["run_id"])


async def test_two_servers_on_one_database_never_overlap_and_cancel_reaches_across(
    server, db_url, tmp_path: Path
) -> None:
    other = Server.start(settings_for(db_url))
    try:
        a, b = server.client(), other.client()
        tid = (await a.threads.create())["thread_id"]
        hold = held(tmp_path)
        first = await a.runs.create(tid, ECHO, input=say("from a", hold=str(hold)))
        await wait_running(a, tid, first["run_id"])
        with pytest.raises(ConflictError):
            await b.runs.create(tid, ECHO, input=say("from b"), multitask_strategy="reject")
        queued = await b.runs.create(tid, ECHO, input=say("b queued", delay=0), multitask_strategy="enqueue")
        assert (await b.runs.get(tid, queued["run_id"]))["status"] == "pending", "a's run holds the thread"
        hold.unlink()
        await b.runs.join(tid, queued["run_id"])
        assert contents((await b.threads.get(tid))["values"]) == [
            "from a", "echo: from a", "b queued", "echo: b queued"
        ], "b's run waited for a's, whichever process ran it"

        slow = await a.runs.create(tid, ECHO, input=say("cancel me", delay=30))
        await wait_running(a, tid, slow["run_id"])
        await b.runs.cancel(tid, slow["run_id"], wait=True)  # b does not run it: the cancel goes through the DB
        assert (await a.runs.get(tid, slow["run_id"]))["status"] == "interrupted"
        assert (await b.threads.get(tid))["status"] == "idle"

        kept = contents((await a.threads.get(tid))["values"])
        erased = await a.runs.create(tid, ECHO, input=say("erase me", delay=30))
        await wait_running(a, tid, erased["run_id"])
        after = await b.runs.wait(tid, ECHO, input=say("b after", delay=0), multitask_strategy="rollback")
        assert contents(after) == [*kept, "b after", "echo: b after"], "a erased its run before b's ran"
        with pytest.raises(NotFoundError):
            await a.runs.get(tid, erased["run_id"])
    finally:
        other.stop()


async def test_a_run_left_by_a_dead_process_does_not_block_the_thread(client, db_url) -> None:
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, ECHO, input=say("first"))
    mark = "?" if db_url.startswith("sqlite") else "%s"
    raw_sql(
        db_url,
        "INSERT INTO service_runs (run_id, thread_id, assistant_id, status, multitask_strategy,"
        f" heartbeat_at, created_at, updated_at) VALUES ({', '.join([mark] * 8)})",
        ("dead-run", tid, ECHO, "running", "enqueue", "2000-01-01T00:00:00+00:00",
         "2000-01-01T00:00:00+00:00", "2000-01-01T00:00:00+00:00"),
    )
    out = await client.runs.wait(tid, ECHO, input=say("after the crash"))
    assert [m["content"] for m in out["messages"]][-1] == "echo: after the crash"
    assert (await client.runs.get(tid, "dead-run"))["status"] == "error"


async def test_live_runs_are_never_taken_for_dead_ones(db_url) -> None:
    """With runs older than `stale_run_seconds`, neither a running run nor the run queued behind it is
    expired while their process lives: its heartbeat comes more often than that, and a run asking to be
    claimed is alive by asking."""
    quick = Server.start(settings_for(db_url, stale_run_seconds=1))
    try:
        client = quick.client()
        tid = (await client.threads.create())["thread_id"]
        first = await client.runs.create(tid, ECHO, input=say("long", delay=3))
        await wait_running(client, tid, first["run_id"])
        queued = await client.runs.create(tid, ECHO, input=say("queued", delay=0), multitask_strategy="enqueue")
        await client.runs.join(tid, queued["run_id"])
        assert contents((await client.threads.get(tid))["values"]) == ["long", "echo: long", "queued", "echo: queued"]
        statuses = [(await client.runs.get(tid, r["run_id"]))["status"] for r in (first, queued)]
        assert statuses == ["success", "success"]
    finally:
        quick.stop()


def checkpoints_of(db_url: str, run_id: str) -> int:
    mark = "?" if db_url.startswith("sqlite") else "%s"
    return raw_sql(db_url, f"SELECT COUNT(*) FROM checkpoints WHERE run_id = {mark}", (run_id,))[0][0]


async def test_a_rollback_whose_process_died_is_finished_by_the_next_run(server, db_url) -> None:
    """The process driving a run dies, another process's admission asks for the run's rollback, and
    nobody is left to erase the run: the process that runs next erases it (its checkpoints and its row)
    first."""
    # it would notice a cancel only after a minute: it is killed before it can erase its run
    # (every process on one database takes a run for dead after the same time: the heir's 1 s)
    doomed, url = start_serve(
        db_url, {ECHO: "tests.service.echo_graph:graph"}, ORECAST_CANCEL_POLL_SECONDS="60",
        ORECAST_STALE_RUN_SECONDS="1",
    )
    heir = Server.start(settings_for(db_url, stale_run_seconds=1))
    try:
        a, b = get_client(url=url), heir.client()
        tid = (await a.threads.create())["thread_id"]
        await a.runs.wait(tid, ECHO, input=say("kept"))
        erased = await a.runs.create(tid, ECHO, input=say("erased", delay=60))
        for _ in range(500):
            if checkpoints_of(db_url, erased["run_id"]):
                break
            await asyncio.sleep(0.02)
        assert checkpoints_of(db_url, erased["run_id"]), "the run to erase stored its input"

        # Killed first: asked first, the heir could expire and erase the run (its heartbeat 1 s old on a
        # loaded machine) while that process still wrote the run's last checkpoint (then the head).
        # In the database it is the same: a running run, its rollback asked for, nobody to erase it.
        doomed.kill()
        doomed.wait(30)
        after = await b.runs.create(tid, ECHO, input=say("after", delay=0), multitask_strategy="rollback")
        values = await b.runs.join(tid, after["run_id"])
        assert contents(values) == ["kept", "echo: kept", "after", "echo: after"]
        assert checkpoints_of(db_url, erased["run_id"]) == 0
        with pytest.raises(NotFoundError):
            await b.runs.get(tid, erased["run_id"])
        assert (await b.threads.get(tid))["status"] == "idle"
    finally:
        doomed.kill()
        doomed.wait(30)
        heir.stop()


async def test_a_rollback_left_unfinished_is_finished_at_startup(client, db_url) -> None:
    """A process expired a dead run whose rollback was asked for, then died itself before erasing it:
    the next process to start erases it."""
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, ECHO, input=say("kept"))
    left = await client.runs.create(tid, ECHO, input=say("erase me"))
    await client.runs.join(tid, left["run_id"])
    mark = "?" if db_url.startswith("sqlite") else "%s"
    raw_sql(
        db_url,
        f"UPDATE service_runs SET status = 'error', cancel_action = 'rollback' WHERE run_id = {mark}",
        (left["run_id"],),
    )
    assert checkpoints_of(db_url, left["run_id"])
    restarted = Server.start(settings_for(db_url))
    try:
        again = restarted.client()
        assert checkpoints_of(db_url, left["run_id"]) == 0
        assert contents((await again.threads.get_state(tid))["values"]) == ["kept", "echo: kept"]
        with pytest.raises(NotFoundError):
            await again.runs.get(tid, left["run_id"])
    finally:
        restarted.stop()
