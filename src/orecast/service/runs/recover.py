"""Runs whose process died (or released them at its shutdown), taken over by a live one and finished
from their last checkpoint.

Every process looks for them every few seconds (`run_recovery`, on `app.state.recovery`), first at its
start: pending and running runs that nobody asked to cancel whose heartbeat stopped `stale_run_seconds`
ago, or whose driver (runs/driver.py) was a process of this machine and PID namespace that is gone (an
earlier process of this server, killed: its runs go on at once, not after `stale_run_seconds`). The one
whose update changes the run's row first (`RunRepo.take_over`) drives it on; `attempt` counts the
processes that executed it (a queued run taken over, or handed over by a live process, runs/share.py,
has not run: it keeps its attempt; `lease` says which process holds it). Only a process that serves
the run's graph looks at it. A run that wrote a checkpoint goes on from its thread's latest checkpoint
with no input, as LangGraph resumes an interrupted run: the tasks of the step that was cut short whose
writes were stored (a tool call that finished) are not run again, the others are. A run that wrote
nothing starts again from its input. After `MAX_ATTEMPTS` processes died executing it, it fails.
"""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from orecast.service.context import Services
from orecast.service.custom_auth import User
from orecast.service.periodic import Periodic
from orecast.service.runs.driver import gone
from orecast.service.runs.execute import RunInput
from orecast.service.runs.records import RunRecord

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 3


async def recover_dead_runs(svc: Services) -> list[str]:
    """Take over the dead runs found now and start them here; their ids."""
    taken = []
    stale = svc.runs.stale_seconds
    dead_runs: dict[str, str | None] = {run_id: None for run_id in await svc.repo.dead_runs(stale)}
    for run_id, driver in await svc.repo.runs_driven_here():
        if run_id not in dead_runs and gone(driver):  # its process is gone for certain: no need to wait
            dead_runs[run_id] = driver
    for run_id, gone_driver in dead_runs.items():
        if svc.runs.drives(run_id):  # alive here, its beats late (a blocked event loop): not dead
            continue
        dead = await svc.repo.get(run_id)
        if dead is None or svc.graphs.get(graph_of(dead)) is None:
            continue  # left to a process that serves its graph (or to a claim on its thread, which fails it)
        found = await svc.repo.take_over(run_id, stale, gone_driver=gone_driver)
        if found is None:  # another process took it first, or it ended meanwhile
            continue
        run, attempt, lease, last_event = found
        thread = None if run.kwargs.get("temporary") else (run.thread_id, "error")
        if attempt > MAX_ATTEMPTS:
            log.error("run %s failed: the process driving it stopped %d times", run_id, MAX_ATTEMPTS)
            await svc.repo.finish(
                run_id, "error", f"the process driving it stopped {MAX_ATTEMPTS} times", thread=thread
            )
            continue
        try:
            prepared = await resumed_input(svc, run)
        except LookupError as exc:
            await svc.repo.finish(run_id, "error", str(exc), thread=thread)
            continue
        log.warning("run %s: its process stopped; attempt %d goes on from its last checkpoint", run_id, attempt)
        svc.metrics.runs_taken_over.inc()
        svc.runs.start(
            run, prepared, temporary=bool(run.kwargs.get("temporary")),
            resumable=bool(run.kwargs.get("resumable")), attempt=attempt, lease=lease, first_event_id=last_event,
        )
        taken.append(run_id)
    return taken


def graph_of(run: RunRecord) -> str:
    configurable = (run.kwargs.get("config") or {}).get("configurable") or {}
    graph_id = configurable.get("graph_id")
    return graph_id if isinstance(graph_id, str) else ""


async def resumed_input(svc: Services, run: RunRecord) -> RunInput:
    """The run as its request prepared it (`kwargs`, as langgraph-api stores them), resumed from its
    thread's latest checkpoint if it wrote one. LookupError if its graph is no longer served."""
    kwargs: dict[str, Any] = run.kwargs
    config = dict(kwargs.get("config") or {})
    configurable = dict(config.get("configurable") or {})
    graph_id = graph_of(run)
    served = svc.graphs.get(graph_id)
    if served is None:
        raise LookupError(f"graph {graph_id!r} of run {run.run_id} is not served here")
    run_input, command = kwargs.get("input"), kwargs.get("command")
    latest = await svc.saver.aget_tuple({"configurable": {"thread_id": run.thread_id, "checkpoint_ns": ""}})
    if latest is not None and latest.metadata.get("run_id") == run.run_id:
        # It got as far as its latest checkpoint (the thread runs one run at a time): on from there.
        configurable.pop("checkpoint_id", None)
        configurable.pop("checkpoint_ns", None)
        run_input, command = None, None
    config["configurable"] = configurable
    return RunInput(
        graph=served.graph,
        factory=served.factory,
        user=_user_of(configurable),
        config={**config, "run_id": UUID(run.run_id)},
        context=kwargs.get("context"),
        input=run_input,
        command=command,
        stream_modes=list(kwargs.get("stream_mode") or ["values"]),
        subgraphs=bool(kwargs.get("subgraphs")),
        interrupt_before=kwargs.get("interrupt_before"),
        interrupt_after=kwargs.get("interrupt_after"),
        durability=kwargs.get("durability"),
    )


def _user_of(configurable: dict[str, Any]) -> User | None:
    """The user custom auth authenticated for the run, from the `langgraph_auth_user` its config
    carries (as langgraph-api hands it to the graph): a factory's ServerRuntime sees the run's user in
    the process that took it over too. None for a run made without custom auth."""
    fields = configurable.get("langgraph_auth_user")
    if isinstance(fields, dict) and isinstance(fields.get("identity"), str):
        return User(fields)
    return None


def run_recovery(svc: Services, every: float) -> Periodic:
    """`recover_dead_runs` at once (runs a shutdown released wait for no one), then every `every` seconds."""
    return Periodic("orecast-run-recovery", every, lambda: recover_dead_runs(svc))
