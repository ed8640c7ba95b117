"""At most `jobs_per_worker` runs execute at once in a process (LangGraph's N_JOBS_PER_WORKER); the others
stay `pending` and start oldest first as slots free up, on SQLite and PostgreSQL. Before, a batch of
2,000 runs executed 2,000 graphs at once."""

from __future__ import annotations

import asyncio
import re
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from orecast.service.runs.slots import RunSlots
from tests.checkpoint.conftest import ph, raw_sql
from tests.conftest import new_mysql_database
from tests.service import echo_graph
from tests.service.conftest import (
    ECHO,
    ECHO_FILE,
    Server,
    new_pg_schema,
    say,
    settings_for,
    start_serve,
)
from tests.service.test_sweep_admission import opened

COUNTED = "counted"
JOBS = 2


def database(
    db_url: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """An empty database of `db_url`'s kind (tests/service/test_mysql_service.py runs these on MySQL)."""
    if db_url.startswith("sqlite"):
        return f"sqlite:///{tmp_path_factory.mktemp('slots') / 'orecast.sqlite3'}"
    if db_url.startswith("mysql"):
        return new_mysql_database(request.getfixturevalue("mysql_databases"))
    return new_pg_schema(request.getfixturevalue("postgres_url"))


def slotted(url: str, jobs: int = JOBS) -> Server:
    graphs = {ECHO: f"{ECHO_FILE}:graph", COUNTED: "tests.service.echo_graph:counted"}
    return Server.start(settings_for(url, graphs=graphs, analyst=False, jobs_per_worker=jobs))


@pytest.fixture(scope="module")
def slots_url(
    db_url: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> str:
    return database(db_url, request, tmp_path_factory)


@pytest.fixture(scope="module")
def slots_server(slots_url: str) -> Iterator[Server]:
    running = slotted(slots_url)
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _count_afresh() -> None:
    echo_graph.INSIDE.update(now=0, peak=0)


def held_run(http: httpx.Client, hold: Path, text: str = "hi") -> tuple[str, str]:
    """(thread id, run id) of a background run of `counted` on a new thread, kept in its node while
    `hold` exists."""
    hold.touch()
    thread_id = http.post("/threads", json={}).json()["thread_id"]
    run = http.post(
        f"/threads/{thread_id}/runs",
        json={"assistant_id": COUNTED, "input": {**say(text), "hold": str(hold)}},
    )
    assert run.status_code == 200, run.text
    return thread_id, run.json()["run_id"]


def statuses(http: httpx.Client, runs: list[tuple[str, str]]) -> list[str]:
    return [http.get(f"/threads/{t}/runs/{r}").json()["status"] for t, r in runs]


def until(check: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def gauges(http: httpx.Client) -> dict[str, float]:
    text = http.get("/metrics").text
    return {
        m[1]: float(m[2])
        for m in re.finditer(r'^orecast_runs_in_process\{state="(\w+)"\} (\S+)$', text, re.M)
    }


def test_runs_past_the_limit_wait_pending_and_start_oldest_first(
    slots_server: Server, tmp_path: Path
) -> None:
    with httpx.Client(base_url=slots_server.url, timeout=30) as http:
        holds = [tmp_path / f"hold{n}" for n in range(6)]
        runs = [held_run(http, hold, f"q{n}") for n, hold in enumerate(holds)]
        until(lambda: statuses(http, runs) == ["running"] * JOBS + ["pending"] * 4)
        until(lambda: echo_graph.INSIDE["now"] == JOBS)
        assert gauges(http) == {"executing": 2.0, "queued": 4.0}

        # a pending run is cancelled where it waits; its slot's place goes to the next
        thread_id, run_id = runs[5]
        assert http.post(f"/threads/{thread_id}/runs/{run_id}/cancel?wait=1").status_code in (
            200,
            202,
            204,
        )
        until(lambda: statuses(http, runs[5:]) == ["interrupted"])
        until(lambda: gauges(http)["queued"] == 3.0)

        # each slot freed goes to the oldest pending run, whatever finishes first
        holds[1].unlink()
        until(
            lambda: (
                statuses(http, runs)
                == ["running", "success", "running", "pending", "pending", "interrupted"]
            )
        )
        holds[0].unlink()
        until(
            lambda: (
                statuses(http, runs)[:5] == ["success", "success", "running", "running", "pending"]
            )
        )
        for hold in holds:
            hold.unlink(missing_ok=True)
        until(lambda: statuses(http, runs) == ["success"] * 5 + ["interrupted"])
        assert echo_graph.INSIDE["peak"] == JOBS
        assert gauges(http) == {"executing": 0.0, "queued": 0.0}
        never_ran = http.get(f"/threads/{runs[5][0]}/state").json()["values"]
        assert not never_ran.get("messages"), never_ran


async def test_wait_join_and_stream_of_a_run_pending_for_a_slot(
    slots_server: Server, tmp_path: Path
) -> None:
    """/runs/wait, a join and a stream of a run that waits for a slot wait for it, then answer its end."""
    with httpx.Client(base_url=slots_server.url, timeout=30) as http:
        holds = [tmp_path / f"hold{n}" for n in range(JOBS)]
        busy = [held_run(http, hold) for hold in holds]
        until(lambda: statuses(http, busy) == ["running"] * JOBS)
        thread_id = http.post("/threads", json={}).json()["thread_id"]
        queued = http.post(
            f"/threads/{thread_id}/runs", json={"assistant_id": ECHO, "input": say("later")}
        ).json()
        assert queued["status"] == "pending"
    async with httpx.AsyncClient(base_url=slots_server.url, timeout=60) as client:
        waited = asyncio.create_task(
            client.post("/runs/wait", json={"assistant_id": ECHO, "input": say("stateless")})
        )
        joined = asyncio.create_task(
            client.get(f"/threads/{thread_id}/runs/{queued['run_id']}/join")
        )

        async def streamed() -> str:
            async with client.stream(
                "GET", f"/threads/{thread_id}/runs/{queued['run_id']}/stream"
            ) as answer:
                return "".join([chunk async for chunk in answer.aiter_text()])

        stream = asyncio.create_task(streamed())
        await asyncio.sleep(1.0)
        assert not (waited.done() or joined.done() or stream.done()), (
            "they answered before the run ran"
        )
        for hold in holds:
            hold.unlink()
        waited_answer, joined_answer, events = await asyncio.wait_for(
            asyncio.gather(waited, joined, stream), 60
        )
    assert [m["content"] for m in waited_answer.json()["messages"]][-1] == "echo: stateless"
    assert [m["content"] for m in joined_answer.json()["messages"]] == ["later", "echo: later"]
    assert (
        events.startswith("event: metadata")
        and "event: values" in events
        and "echo: later" in events
    )


def test_each_replica_executes_at_most_its_own_limit(
    slots_url: str, slots_server: Server, tmp_path: Path
) -> None:
    """Two processes on one database: each executes at most its own limit's runs, and the rest wait (a
    run one of them queued while the other had a free slot runs in the other: see below)."""
    other = slotted(slots_url)
    try:
        with (
            httpx.Client(base_url=slots_server.url, timeout=30) as first,
            httpx.Client(base_url=other.url, timeout=30) as second,
        ):
            holds = [tmp_path / f"hold{n}" for n in range(6)]
            mine = [held_run(first, hold) for hold in holds[:3]]
            theirs = [held_run(second, hold) for hold in holds[3:]]
            until(lambda: sorted(statuses(first, mine + theirs)) == ["pending"] * 2 + ["running"] * 4)
            until(lambda: echo_graph.INSIDE["now"] == 2 * JOBS)
            time.sleep(0.5)  # several polls of each process: none takes one more
            assert echo_graph.INSIDE["peak"] == 2 * JOBS
            for hold in holds:
                hold.unlink()
            until(lambda: statuses(first, mine + theirs) == ["success"] * 6)
    finally:
        other.stop()


@pytest.mark.slow
def test_a_batch_of_200_runs_executes_10_at_a_time(db_url: str, request, tmp_path_factory) -> None:
    """The measure of docs/service.md: 200 runs in one `POST /runs/batch`, the default limit of 10."""
    running = slotted(database(db_url, request, tmp_path_factory), jobs=10)
    try:
        with httpx.Client(base_url=running.url, timeout=60) as http:
            items = [
                {
                    "assistant_id": COUNTED,
                    # (0.25 s inside left room for a run's own writes on a loaded CI: peak 8 of 10)
                    "input": {**say(f"q{n}"), "delay": 0.6},
                    "on_completion": "keep",
                }
                for n in range(200)
            ]
            started = time.perf_counter()
            runs = http.post("/runs/batch", json=items).json()
            assert len(runs) == 200
            threads = [r["thread_id"] for r in runs]
            until(
                lambda: (
                    echo_graph.INSIDE["now"] == 0
                    and gauges(http)["queued"] == 0
                    and gauges(http)["executing"] == 0
                ),
                120,
            )
            took = time.perf_counter() - started
            ended = statuses(http, [(t, r["run_id"]) for t, r in zip(threads, runs, strict=True)])
        assert ended == ["success"] * 200
        assert echo_graph.INSIDE["peak"] == 10
        print(f"200 runs, 10 slots: peak {echo_graph.INSIDE['peak']} executing, {took:.1f} s")
    finally:
        running.stop()


async def test_slots_go_oldest_first_and_a_run_that_leaves_gives_its_place() -> None:
    seen: list[tuple[int, int]] = []
    slots = RunSlots(1, lambda executing, waiting: seen.append((executing, waiting)))
    assert slots.try_take() and not slots.try_take()
    late, early, middle = slots.wait(("3", "c")), slots.wait(("1", "a")), slots.wait(("2", "b"))
    assert not slots.try_take(), "runs wait for a slot: a new one does not go before them"
    slots.leave(middle)
    slots.give_back()
    assert early.done() and middle.cancelled() and not late.done()
    slots.give_back()
    assert late.done()
    slots.leave(late)  # given a slot, then cancelled before it ran: the slot is free again
    assert (slots.executing, slots.waiting) == (0, 0) and seen[-1] == (0, 0)
    assert slots.try_take()


def test_a_run_started_later_waits_without_its_slot(slots_server: Server) -> None:
    """`after_seconds` runs sleep without a slot: the runs asked for after them execute meanwhile (they
    kept every slot for their delay, and the process executed nothing else)."""
    with httpx.Client(base_url=slots_server.url, timeout=30) as http:
        later = []
        for _ in range(JOBS):
            thread_id = http.post("/threads", json={}).json()["thread_id"]
            body = {"assistant_id": ECHO, "input": say("later"), "after_seconds": 600}
            later.append(
                (thread_id, http.post(f"/threads/{thread_id}/runs", json=body).json()["run_id"])
            )
        # `pending` while they wait, as langgraph-api has them (they said `running`), their threads `busy`
        assert statuses(http, later) == ["pending"] * JOBS
        for thread_id, _ in later:
            assert [r["status"] for r in http.get(f"/threads/{thread_id}/runs").json()] == ["pending"]
            assert http.get(f"/threads/{thread_id}").json()["status"] == "busy"
        until(lambda: gauges(http)["executing"] == 0)
        started = time.monotonic()
        now = http.post("/runs/wait", json={"assistant_id": ECHO, "input": say("now")})
        assert (
            now.json()["messages"][-1]["content"] == "echo: now" and time.monotonic() - started < 20
        )
        for thread_id, run_id in later:
            assert http.post(f"/threads/{thread_id}/runs/{run_id}/cancel?wait=1").status_code == 200
        assert statuses(http, later) == ["interrupted"] * JOBS


def attempts(url: str, run_ids: list[str], column: str = "attempt") -> list[int]:
    """The `attempt` (the processes that executed it) of each run's row, or another `column` of it:
    its `lease` is 2 for a run another process took from its queue (that process holds it now)."""
    mark = ph(url)
    return [raw_sql(url, f"SELECT {column} FROM service_runs WHERE run_id = {mark}", (r,))[0][0] for r in run_ids]


async def test_an_idle_replica_takes_the_runs_another_one_queued(
    slots_url: str, slots_server: Server, tmp_path: Path
) -> None:
    """Two processes on one database: the runs one queues (no free slot) start in the other, idle one,
    oldest first, each executed once; their clients, connected to the first, still get their stream,
    their /runs/wait answer and their join. Before, the idle process executed nothing and they waited."""
    other = slotted(slots_url)
    try:
        async with httpx.AsyncClient(base_url=slots_server.url, timeout=60) as client:
            holds = [tmp_path / f"hold{n}" for n in range(2 * JOBS)]
            with httpx.Client(base_url=slots_server.url, timeout=30) as http:
                mine = [held_run(http, hold) for hold in holds[:JOBS]]
                until(lambda: statuses(http, mine) == ["running"] * JOBS)
                thread_id = http.post("/threads", json={}).json()["thread_id"]
            for hold in holds[JOBS:]:
                hold.touch()

            async def streamed() -> str:
                body = {"assistant_id": COUNTED, "input": {**say("streamed"), "hold": str(holds[JOBS])}}
                async with client.stream("POST", f"/threads/{thread_id}/runs/stream", json=body) as answer:
                    return "".join([chunk async for chunk in answer.aiter_text()])

            stream = asyncio.create_task(streamed())
            await asyncio.sleep(0.2)  # the stream's run is the older one
            waited = asyncio.create_task(client.post("/runs/wait", json={
                "assistant_id": COUNTED, "input": {**say("waited"), "hold": str(holds[JOBS + 1])},
            }))
            # both wait in the first process's queue, and the idle one takes them: 2 × JOBS at once
            await asyncio.to_thread(until, lambda: echo_graph.INSIDE["now"] == 2 * JOBS)
            run_ids = [r["run_id"] for r in (await client.get(f"/threads/{thread_id}/runs")).json()]
            joined = asyncio.create_task(client.get(f"/threads/{thread_id}/runs/{run_ids[0]}/join"))
            await asyncio.sleep(0.5)
            assert not (stream.done() or waited.done() or joined.done())
            for hold in holds:
                hold.unlink()
            events, waited_answer, joined_answer = await asyncio.wait_for(asyncio.gather(stream, waited, joined), 60)
            with httpx.Client(base_url=slots_server.url, timeout=30) as http:
                until(lambda: statuses(http, [*mine, (thread_id, run_ids[0])]) == ["success"] * (JOBS + 1))
        assert attempts(slots_url, [r for _, r in mine]) == [1] * JOBS
        # the hand-over is no attempt: the run ran once (before, its attempt said 2, and a run handed
        # over twice had spent its retries against dead processes, MAX_ATTEMPTS, without running)
        assert attempts(slots_url, run_ids) == [1] and attempts(slots_url, run_ids, "lease") == [2]
        assert events.startswith("event: metadata") and "echo: streamed" in events and "event: error" not in events
        assert waited_answer.json()["messages"][-1]["content"] == "echo: waited"
        assert [m["content"] for m in joined_answer.json()["messages"]] == ["streamed", "echo: streamed"]
    finally:
        other.stop()


def test_a_thread_is_busy_while_its_run_waits_for_a_slot(slots_server: Server, tmp_path: Path) -> None:
    """As langgraph-api: a thread is `busy` from its run's creation, also while the run waits for a slot
    (before: `idle` until the run started, and a TTL sweep could delete it meanwhile); cancelled
    before it started, the run leaves the thread as its state says (`idle`)."""
    with httpx.Client(base_url=slots_server.url, timeout=30) as http:
        holds = [tmp_path / f"hold{n}" for n in range(JOBS)]
        busy = [held_run(http, hold) for hold in holds]
        until(lambda: statuses(http, busy) == ["running"] * JOBS)
        thread_id = http.post("/threads", json={}).json()["thread_id"]
        run = http.post(f"/threads/{thread_id}/runs", json={"assistant_id": ECHO, "input": say("later")}).json()
        assert statuses(http, [(thread_id, run["run_id"])]) == ["pending"]
        assert http.get(f"/threads/{thread_id}").json()["status"] == "busy"
        found = http.post("/threads/search", json={"status": "busy", "limit": 100}).json()
        assert thread_id in [t["thread_id"] for t in found]
        assert http.post(f"/threads/{thread_id}/runs/{run['run_id']}/cancel?wait=1").status_code == 200
        until(lambda: http.get(f"/threads/{thread_id}").json()["status"] == "idle")
        for hold in holds:
            hold.unlink()
        until(lambda: statuses(http, busy) == ["success"] * JOBS)


@contextmanager
def first_full_beside_another(
    slots_url: str, slots_server: Server, tmp_path: Path
) -> Iterator[tuple[httpx.Client, Path]]:
    """A second, idle process on the database of `slots_server`, whose slots held runs all take: (a
    client of the first, a new hold file for the test's run). The held runs end after the test."""
    other = slotted(slots_url)
    try:
        with httpx.Client(base_url=slots_server.url, timeout=30) as http:
            holds = [tmp_path / f"hold{n}" for n in range(JOBS + 1)]
            mine = [held_run(http, hold) for hold in holds[:JOBS]]
            until(lambda: statuses(http, mine) == ["running"] * JOBS)
            holds[JOBS].touch()
            try:
                yield http, holds[JOBS]
            finally:
                for hold in holds:
                    hold.unlink(missing_ok=True)
            until(lambda: statuses(http, mine) == ["success"] * JOBS)
    finally:
        other.stop()


def test_a_run_another_replica_took_is_cancelled_from_the_first(
    slots_url: str, slots_server: Server, tmp_path: Path
) -> None:
    """A run the idle process took from the first one's queue stops when a client of the first cancels
    it (the cancel goes through its row), and ends `interrupted` once, its thread free again."""
    with first_full_beside_another(slots_url, slots_server, tmp_path) as (http, hold):
        thread_id, run_id = held_run(http, hold)
        until(lambda: echo_graph.INSIDE["now"] == JOBS + 1)
        assert attempts(slots_url, [run_id]) == [1] and attempts(slots_url, [run_id], "lease") == [2]
        assert http.post(f"/threads/{thread_id}/runs/{run_id}/cancel?wait=1").status_code == 200
        assert statuses(http, [(thread_id, run_id)]) == ["interrupted"]
        until(lambda: echo_graph.INSIDE["now"] == JOBS)
        until(lambda: http.get(f"/threads/{thread_id}").json()["status"] == "idle")


def test_a_thread_s_runs_taken_by_another_replica_keep_their_order_and_delay(
    slots_url: str, slots_server: Server, tmp_path: Path
) -> None:
    """The idle process takes a queued thread's next run only: the run behind it (`enqueue`) waits
    until it ends; and a run with `after_seconds` only once they are over."""
    with first_full_beside_another(slots_url, slots_server, tmp_path) as (http, hold):
        thread_id, first = held_run(http, hold, "first")
        second = http.post(f"/threads/{thread_id}/runs", json={
            "assistant_id": COUNTED, "input": say("second"), "multitask_strategy": "enqueue",
        }).json()["run_id"]
        until(lambda: echo_graph.INSIDE["now"] == JOBS + 1)
        time.sleep(0.5)  # several polls of the idle process: it has a free slot, but not for `second`
        assert statuses(http, [(thread_id, first), (thread_id, second)]) == ["running", "pending"]
        hold.unlink()
        until(lambda: statuses(http, [(thread_id, first), (thread_id, second)]) == ["success"] * 2)
        values = http.get(f"/threads/{thread_id}/state").json()["values"]
        assert [m["content"] for m in values["messages"]] == ["first", "echo: first", "second", "echo: second"]

        # a run with `after_seconds` is `pending` until then (as langgraph-api; it said `running`), its
        # thread `busy`, and no other process takes it before
        later_thread = http.post("/threads", json={}).json()["thread_id"]
        later_hold = hold.with_name("later")
        later_hold.touch()
        try:
            # (4 s, not 2: on a loaded CI machine the run fell due before the checks below ran)
            later = http.post(f"/threads/{later_thread}/runs", json={
                "assistant_id": COUNTED, "input": {**say("later"), "hold": str(later_hold)}, "after_seconds": 4,
            }).json()
            assert later["status"] == "pending" and later["created_at"] > later["updated_at"]
            time.sleep(1.0)  # many polls of the idle process
            assert http.get(f"/threads/{later_thread}/runs/{later['run_id']}").json()["status"] == "pending"
            assert [r["status"] for r in http.get(f"/threads/{later_thread}/runs").json()] == ["pending"]
            assert http.get(f"/threads/{later_thread}").json()["status"] == "busy"
            assert echo_graph.INSIDE["now"] == JOBS and attempts(slots_url, [later["run_id"]], "lease") == [1]
            # due, it starts in the idle process (the first has no free slot)
            until(lambda: echo_graph.INSIDE["now"] == JOBS + 1)
            assert statuses(http, [(later_thread, later["run_id"])]) == ["running"]
            assert attempts(slots_url, [later["run_id"]], "lease") == [2]
            later_hold.unlink()
            until(lambda: statuses(http, [(later_thread, later["run_id"])]) == ["success"])
        finally:  # a run left held takes a slot of the shared server from the tests after this one
            later_hold.unlink(missing_ok=True)


async def test_a_queued_run_of_a_dead_process_cancelled_frees_its_thread(
    slots_url: str, slots_server: Server, tmp_path: Path
) -> None:
    """A run queued by a process that is gone (admitted here straight into the database) keeps its
    thread `busy`; a cancel through a live process sets the thread by its state again (`idle`), or the
    thread stayed busy, and no TTL sweep ever took it."""
    async with httpx.AsyncClient(base_url=slots_server.url, timeout=30) as client:
        holds = [tmp_path / f"hold{n}" for n in range(JOBS)]
        with httpx.Client(base_url=slots_server.url, timeout=30) as http:
            busy = [held_run(http, hold) for hold in holds]  # no free slot: the server takes no queued run
            until(lambda: statuses(http, busy) == ["running"] * JOBS)
        thread_id = (await client.post("/threads", json={})).json()["thread_id"]
        async with opened(slots_url) as (_, repo):
            run, _ = await repo.admit(
                run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id=COUNTED, metadata={},
                kwargs={"input": say("never"), "config": {"configurable": {"graph_id": COUNTED}}},
                strategy="enqueue", owner=None, claim=False,
            )
        assert (await client.get(f"/threads/{thread_id}")).json()["status"] == "busy"
        assert (await client.post(f"/threads/{thread_id}/runs/{run.run_id}/cancel")).status_code == 202
        assert (await client.get(f"/threads/{thread_id}")).json()["status"] == "idle"
        for hold in holds:
            hold.unlink()
        with httpx.Client(base_url=slots_server.url, timeout=30) as http:
            await asyncio.to_thread(until, lambda: statuses(http, busy) == ["success"] * JOBS)


def test_a_stateless_run_handed_over_leaves_no_rows_when_its_first_process_dies(
    db_url: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """A stateless run (/runs/wait) queued by a process with no free slot and taken by an idle one:
    killed, the first process never reads and deletes the run's row, which the taker kept for it after
    deleting the temporary thread; the taker deletes it `stale_run_seconds` after the run's end (it
    stayed for ever, with its events)."""
    url = database(db_url, request, tmp_path_factory)
    stale = 2.0
    first, first_url = start_serve(
        url, {COUNTED: "tests.service.echo_graph:counted"},
        ORECAST_JOBS_PER_WORKER="1", ORECAST_CANCEL_POLL_SECONDS="0.05",
    )
    taker = None
    try:
        with httpx.Client(base_url=first_url, timeout=30) as http:
            thread_id, busy_run = held_run(http, tmp_path / "busy")
            until(lambda: statuses(http, [(thread_id, busy_run)]) == ["running"])
        taker = Server.start(settings_for(
            url, graphs={COUNTED: "tests.service.echo_graph:counted"}, analyst=False, stale_run_seconds=stale,
        ))
        hold = tmp_path / "stateless"
        hold.touch()

        def wait_there() -> None:
            body = {"assistant_id": COUNTED, "input": {**say("stateless"), "hold": str(hold)}}
            try:
                httpx.post(f"{first_url}/runs/wait", json=body, timeout=60)
            except httpx.TransportError:  # its process is killed under it
                pass

        waiting = threading.Thread(target=wait_there, daemon=True)
        waiting.start()
        mark = ph(url)

        def taken() -> list[tuple[str, str]]:  # running: in the taker (the first has no free slot)
            return raw_sql(url, f"SELECT run_id, thread_id FROM service_runs WHERE run_id <> {mark} "
                                "AND status = 'running'", (busy_run,))

        until(taken)
        [(run_id, temporary_thread)] = taken()
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        waiting.join(30)
        hold.unlink()
        (tmp_path / "busy").unlink()  # the first's own run, taken over by the taker, ends too

        def rows() -> list[int]:
            return [
                raw_sql(url, f"SELECT COUNT(*) FROM service_runs WHERE run_id = {mark}", (run_id,))[0][0],
                raw_sql(url, f"SELECT COUNT(*) FROM service_run_events WHERE run_id = {mark}", (run_id,))[0][0],
                raw_sql(url, f"SELECT COUNT(*) FROM threads WHERE thread_id = {mark}", (temporary_thread,))[0][0],
            ]

        until(lambda: not raw_sql(
            url, f"SELECT 1 FROM service_runs WHERE run_id = {mark} AND status = 'running'", (run_id,)
        ))
        ended = time.monotonic()
        until(lambda: rows() == [0, 0, 0], 5 * stale + 10)
        assert time.monotonic() - ended >= stale / 2, "kept a while for the process that queued it"
        with httpx.Client(base_url=taker.url, timeout=30) as http:
            until(lambda: statuses(http, [(thread_id, busy_run)]) == ["success"])
    finally:
        first.kill()
        first.wait(30)
        for name in ("busy", "stateless"):
            (tmp_path / name).unlink(missing_ok=True)
        if taker is not None:
            taker.stop()


async def test_a_queued_run_taken_over_from_a_dead_process_keeps_its_attempt(
    db_url: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A take-over of a run that was still queued (its process died, or released it at its shutdown)
    is a new lease, not a new attempt: the run has not run (before, it was attempt 2 at its first run,
    and one death of a process that had only queued it counted towards MAX_ATTEMPTS). Once it has
    started, a take-over is its next attempt, as before."""
    async with opened(database(db_url, request, tmp_path_factory)) as (saver, repo):
        thread_id = str(uuid.uuid4())
        await saver.aupdate_thread(thread_id, metadata={}, status="idle")
        run, _ = await repo.admit(
            run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id=COUNTED, metadata={}, kwargs={},
            strategy="enqueue", owner=None, claim=False,
        )
        await asyncio.sleep(0.1)  # its heartbeat, from its admission, is older than the stale limit below
        taken = await repo.take_over(run.run_id, 0.05)
        assert taken is not None and taken[0].status == "pending" and taken[1:3] == (1, 2)
        assert await repo.claim(run, 30) == []
        await asyncio.sleep(0.1)
        again = await repo.take_over(run.run_id, 0.05)
        assert again is not None and again[0].status == "running" and again[1:3] == (2, 3)
