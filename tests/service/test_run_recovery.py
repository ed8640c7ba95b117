"""A run whose server process dies half-way is taken over by another process and finished from its
last checkpoint, without running again what had finished (runs/recover.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import httpx
from langgraph_sdk import get_client

from tests.checkpoint.conftest import raw_sql
from tests.service.conftest import Server, settings_for, start_serve
from tests.service.test_custom_auth import AUTH_FILE, as_user
from tests.service.test_webhooks import Receiver

CRASH = "crash"
CRASH_GRAPH = "tests.service.crash_graph:graph"
USER_GRAPH = "tests.service.crash_graph:for_user"  # the same graph, its `after` naming the run's user
AUTH = f"{AUTH_FILE}:auth"
STALE = 2.0  # seconds without a heartbeat after which a run's process is taken for dead


def attempt_of(db_url: str, run_id: str) -> int:
    mark = "?" if db_url.startswith("sqlite") else "%s"
    return raw_sql(db_url, f"SELECT attempt FROM service_runs WHERE run_id = {mark}", (run_id,))[0][0]


async def until(check, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        await asyncio.sleep(0.05)


async def crash_run_half_way(url: str, log: Path, hold: Path) -> tuple[str, dict]:
    """(thread id, run) of a crash-graph run on the server at `url`, once `fast` has finished and `slow`
    holds until `hold` is deleted."""
    client = get_client(url=url)
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(
        tid, CRASH, input={"messages": [{"role": "user", "content": "go"}], "log": str(log), "hold": str(hold)},
    )
    await until(lambda: sorted(log.read_text().split()) == ["fast", "slow"], "fast finished, slow started")
    return tid, run


async def test_a_run_whose_server_died_is_finished_by_another(db_url: str, tmp_path: Path) -> None:
    """The process that takes the run over runs it as the user custom auth authenticated for it: a
    graph factory's ServerRuntime sees the same user there."""
    log, hold = tmp_path / "ran.log", tmp_path / "hold"
    log.touch()
    hold.touch()
    doomed, url = start_serve(db_url, {CRASH: USER_GRAPH}, ORECAST_STALE_RUN_SECONDS=str(STALE), ORECAST_AUTH_PATH=AUTH)
    heir = None
    try:
        client = get_client(url=url, headers={"Authorization": "Bearer tok-alice"})
        tid = (await client.threads.create())["thread_id"]
        run = await client.runs.create(
            tid, CRASH, input={"messages": [{"role": "user", "content": "go"}], "log": str(log), "hold": str(hold)},
        )
        await until(lambda: sorted(log.read_text().split()) == ["fast", "slow"], "fast finished, slow started")
        await asyncio.sleep(0.3)  # fast's write reaches the store (durability "async")
        mark = "?" if db_url.startswith("sqlite") else "%s"
        [(stored,)] = raw_sql(db_url, f"SELECT kwargs FROM service_runs WHERE run_id = {mark}", (run["run_id"],))
        assert "alice" in stored and "alice-upstream-secret" not in stored, "its user's identity, no secret"
        doomed.kill()
        doomed.wait(30)
        hold.unlink()

        # a process that does not serve the run's graph leaves it alone (the echo graphs only)
        bystander = Server.start(settings_for(db_url, stale_run_seconds=STALE))
        await asyncio.sleep(STALE * 2)
        bystander.stop()
        assert attempt_of(db_url, run["run_id"]) == 1
        heir = Server.start(settings_for(db_url, graphs={CRASH: USER_GRAPH}, stale_run_seconds=STALE, auth_path=AUTH))
        other = as_user(heir, "tok-alice")
        await until(lambda: attempt_of(db_url, run["run_id"]) == 2, "another process took the run over")
        finished = await asyncio.wait_for(other.runs.join(tid, run["run_id"]), 60)
        assert [m["content"] for m in finished["messages"]] == [
            "go", "fast done", "slow done", "after done for alice ['write']"]
        assert (await other.runs.get(tid, run["run_id"]))["status"] == "success"
        assert (await other.threads.get(tid))["status"] == "idle"
        metrics = httpx.get(f"{heir.url}/metrics", headers={"Authorization": "Bearer tok-alice"}).text
        assert "orecast_runs_taken_over_total 1.0" in metrics
        # `fast` had finished and its write was stored: it ran once; `slow` was cut short: it ran again
        ran = log.read_text().split()
        assert sorted(ran[:2]) == ["fast", "slow"] and ran[2:] == ["slow", "after"], ran
    finally:
        doomed.kill()
        doomed.wait(30)
        if heir is not None:
            heir.stop()


async def test_a_run_stopped_by_a_shutdown_goes_on_at_the_next_start(db_url: str, tmp_path: Path) -> None:
    """A graceful stop releases its runs: the next process to start (or another replica) takes them over
    at once, not after `stale_run_seconds`, and finishes them without running again what had finished."""
    log, hold = tmp_path / "ran.log", tmp_path / "hold"
    log.touch()
    hold.touch()
    settings = settings_for(
        db_url, graphs={CRASH: CRASH_GRAPH}, stale_run_seconds=600, webhook_allow_private=True
    )
    receiver = Receiver()
    first = Server.start(settings)
    try:
        client = first.client()
        tid = (await client.threads.create())["thread_id"]
        run = await client.runs.create(
            tid, CRASH, input={"messages": [{"role": "user", "content": "go"}], "log": str(log), "hold": str(hold)},
            webhook=f"{receiver.url}/ended",
        )
        await until(lambda: sorted(log.read_text().split()) == ["fast", "slow"], "fast finished, slow started")
        await asyncio.sleep(0.3)  # fast's write reaches the store (durability "async")
    finally:
        first.stop()
    hold.unlink()
    assert receiver.posts == [], "a run stopped by a shutdown has not ended: no webhook"
    mark = "?" if db_url.startswith("sqlite") else "%s"
    status = raw_sql(db_url, f"SELECT status FROM service_runs WHERE run_id = {mark}", (run["run_id"],))
    assert status == [("running",)], "released, not ended"

    second = Server.start(settings)
    try:
        again = second.client()
        finished = await asyncio.wait_for(again.runs.join(tid, run["run_id"]), 60)
        assert [m["content"] for m in finished["messages"]] == ["go", "fast done", "slow done", "after done"]
        assert attempt_of(db_url, run["run_id"]) == 2
        assert (await again.runs.get(tid, run["run_id"]))["status"] == "success"
        ran = log.read_text().split()
        assert sorted(ran[:2]) == ["fast", "slow"] and ran[2:] == ["slow", "after"], ran
        [post] = await receiver.wait_for("/ended")
        assert post["body"]["status"] == "success" and post["body"]["run_id"] == run["run_id"]
    finally:
        second.stop()
        receiver.server.shutdown()


async def test_a_run_taken_over_too_often_fails_and_its_old_driver_stops(db_url: str, tmp_path: Path) -> None:
    """A run whose drivers died three times fails instead of being taken over again; and the process
    still driving it (alive, but its row says another attempt drives it) learns at its next beat that
    it lost the run, and stops it without writing its end."""
    log, hold = tmp_path / "ran.log", tmp_path / "hold"
    log.touch()
    hold.touch()
    driver, url = start_serve(db_url, {CRASH: CRASH_GRAPH}, ORECAST_STALE_RUN_SECONDS=str(STALE))
    heir = Server.start(settings_for(db_url, graphs={CRASH: CRASH_GRAPH}, stale_run_seconds=STALE))
    try:
        tid, run = await crash_run_half_way(url, log, hold)
        mark = "?" if db_url.startswith("sqlite") else "%s"
        raw_sql(db_url, f"UPDATE service_runs SET attempt = 3, heartbeat_at = '2000-01-01T00:00:00+00:00' "
                        f"WHERE run_id = {mark}", (run["run_id"],))
        row = f"SELECT status, error, attempt FROM service_runs WHERE run_id = {mark}"
        await until(lambda: raw_sql(db_url, row, (run["run_id"],))[0][0] == "error", "the run failed")
        assert raw_sql(db_url, row, (run["run_id"],)) == [("error", "the process driving it stopped 3 times", 4)]
        assert (await heir.client().threads.get(tid))["status"] == "error"
        await asyncio.sleep(STALE)  # the driver's next beat finds another attempt on the row: it stops
        hold.unlink()
        await asyncio.sleep(1)
        assert "after" not in log.read_text().split(), "the run the driver lost did not go on"
        assert raw_sql(db_url, row, (run["run_id"],))[0][0] == "error", "nor did it write its end"
    finally:
        driver.kill()
        driver.wait(30)
        heir.stop()


async def test_a_process_never_takes_over_a_run_it_drives(db_url: str, tmp_path: Path) -> None:
    """A process whose own run's heartbeats look late (its event loop was blocked) is alive: it goes on
    with the run, and its recovery leaves it alone."""
    log, hold = tmp_path / "ran.log", tmp_path / "hold"
    log.touch()
    hold.touch()
    server = Server.start(settings_for(db_url, graphs={CRASH: CRASH_GRAPH}, stale_run_seconds=STALE))
    try:
        client = server.client()
        tid = (await client.threads.create())["thread_id"]
        run = await client.runs.create(
            tid, CRASH, input={"messages": [{"role": "user", "content": "go"}], "log": str(log), "hold": str(hold)},
        )
        await until(lambda: sorted(log.read_text().split()) == ["fast", "slow"], "fast finished, slow started")
        mark = "?" if db_url.startswith("sqlite") else "%s"
        raw_sql(db_url, f"UPDATE service_runs SET heartbeat_at = '2000-01-01T00:00:00+00:00' WHERE run_id = {mark}",
                (run["run_id"],))
        await asyncio.sleep(STALE)  # several looks of its recovery
        hold.unlink()
        finished = await asyncio.wait_for(client.runs.join(tid, run["run_id"]), 60)
        assert [m["content"] for m in finished["messages"]] == ["go", "fast done", "slow done", "after done"]
        assert attempt_of(db_url, run["run_id"]) == 1
        assert sorted(log.read_text().split()) == ["after", "fast", "slow"]
    finally:
        server.stop()


async def test_a_run_whose_server_was_killed_goes_on_at_the_next_start_at_once(db_url: str, tmp_path: Path) -> None:
    """A server killed (`kill -9`) mid-run, started again on the same machine: the run goes on at once,
    not after `stale_run_seconds` (10 minutes here), for its row names its driver and that process is
    gone (runs/driver.py). A server started while the driver is alive leaves the run alone."""
    log, hold = tmp_path / "ran.log", tmp_path / "hold"
    log.touch()
    hold.touch()
    doomed, url = start_serve(db_url, {CRASH: CRASH_GRAPH}, ORECAST_STALE_RUN_SECONDS="600")
    settings = settings_for(db_url, graphs={CRASH: CRASH_GRAPH}, stale_run_seconds=600)
    try:
        tid, run = await crash_run_half_way(url, log, hold)
        await asyncio.sleep(0.3)  # fast's write reaches the store (durability "async")
        beside = Server.start(settings)  # its recovery looks at its start: the driver is alive
        await asyncio.sleep(1)
        beside.stop()
        assert attempt_of(db_url, run["run_id"]) == 1, "a run whose driver is alive is left to it"
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait(30)
    finally:
        doomed.kill()
        doomed.wait(30)
    hold.unlink()
    started = time.monotonic()
    heir = Server.start(settings)
    try:
        again = heir.client()
        finished = await asyncio.wait_for(again.runs.join(tid, run["run_id"]), 60)
        assert time.monotonic() - started < 60, "well before the lease of 600 s ran out"
        assert [m["content"] for m in finished["messages"]] == ["go", "fast done", "slow done", "after done"]
        assert attempt_of(db_url, run["run_id"]) == 2
        assert (await again.runs.get(tid, run["run_id"]))["status"] == "success"
        ran = log.read_text().split()
        assert sorted(ran[:2]) == ["fast", "slow"] and ran[2:] == ["slow", "after"], ran
    finally:
        heir.stop()
