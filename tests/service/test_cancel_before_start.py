"""A run cancelled in the instant between its admission and its task's first step (another run's
`interrupt` admission, a delete, a shutdown): its task was cancelled before its coroutine ran, so none of
its end ran — `join` waited for ever, its row was never ended, and a shutdown never released it. Here on
a real store and the real run manager, with the echo graph; and through the API, the storm that found it."""

from __future__ import annotations

import asyncio
import uuid

from prometheus_client import CollectorRegistry

from orecast.checkpoint import open_checkpointer
from orecast.service.db import open_db
from orecast.service.metrics import ServiceMetrics
from orecast.service.runs.execute import RunInput
from orecast.service.runs.manager import RunManager
from orecast.service.runs.records import RunRepo
from tests.service.conftest import ECHO, say
from tests.service.echo_graph import graph


async def test_a_run_cancelled_before_its_task_ran_still_ends(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'cancel.sqlite3'}"
    async with open_checkpointer(url) as saver, open_db(url) as db:
        repo = RunRepo(db, saver.thread_status_statement, saver.thread_lock_statement)
        runs = RunManager(repo, saver, ServiceMetrics(CollectorRegistry(), saver), poll_seconds=0.05,
                          stale_seconds=30)
        for action in ("interrupt", "rollback"):
            thread_id = str(uuid.uuid4())
            await saver.aupdate_thread(thread_id, metadata={}, status="idle")
            run, _ = await repo.admit(run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id=ECHO,
                                      metadata={}, kwargs={}, strategy="reject", owner=None)
            assert run.status == "running"
            prepared = RunInput(graph=graph, config={"configurable": {"thread_id": thread_id}}, context=None,
                                input=say("never"), command=None, stream_modes=["values"], subgraphs=False,
                                interrupt_before=None, interrupt_after=None, durability=None)
            runs.start(run, prepared)
            await repo.request_cancel(run, action, "by a test")
            # no await between: the run's task has not run a step yet when it is cancelled
            runs._local[run.run_id].cancel(action)
            ended = await asyncio.wait_for(runs.wait(run.run_id), 10)
            if action == "interrupt":
                assert ended is not None and ended.status == "interrupted"
                assert (await saver.aget_thread(thread_id)).status == "idle"
            else:
                assert ended is None, "a rollback erases the run"
        await runs.close()


async def test_a_storm_of_interrupting_runs_on_one_thread_all_end(client) -> None:
    """Six `interrupt` runs at once on one thread, five times: each is over, and `join` answers for each
    (one in three storms had a run whose join never answered)."""
    for _ in range(5):
        tid = (await client.threads.create())["thread_id"]
        created = await asyncio.gather(*(
            client.runs.create(tid, ECHO, input=say(f"m{i}", delay=0.3), multitask_strategy="interrupt")
            for i in range(6)
        ))
        for run in created:
            await asyncio.wait_for(client.runs.join(tid, run["run_id"]), 20)
        statuses = sorted(r["status"] for r in await client.runs.list(tid, limit=10))
        assert statuses == ["interrupted"] * 5 + ["success"], statuses
        assert (await client.threads.get(tid))["status"] == "idle"
