"""`RunManager`: admits runs through the database, drives them here, and cancels them anywhere.

A run is driven by the process that created it (unless another live process with a free slot takes
it while it waits: runs/share.py; this one then follows it there): it waits for one of the process's
slots (at most `jobs_per_worker` runs execute at once: runs/slots.py) and until the database admits it (its thread's
oldest pending run, no running run on the thread), then streams the graph into its event log while a
watcher polls the database for a cancel from any process and keeps its heartbeat. Runs waiting for a
slot, or for their `after_seconds` to end, are `pending`; one task polls the database for all of them
(a cancel, a take-over) and keeps their heartbeats.
Its events stay in this process's memory unless a client of another process asks to follow the run
(`shared_stream` on its row): from the watcher's next poll on, the log is copied to the database,
where that process reads it (`follow_remote`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import orjson

from orecast.checkpoint import OrecastCheckpointer
from orecast.service.db.connection import now_iso
from orecast.service.encode import dumps, interrupts_of, jsonable
from orecast.service.metrics import ServiceMetrics
from orecast.service.runs.broker import Broker, RunEvents
from orecast.service.runs.execute import INTERRUPT, RunInput, RunOutcome, execute_run
from orecast.service.runs.queries import DELETE_THREAD_CRONS, DELETE_THREAD_SERVICE_ROWS
from orecast.service.runs.records import ACTIVE, TERMINAL, RunRecord, RunRepo, ThreadGone
from orecast.service.runs.slots import DEFAULT_JOBS_PER_WORKER, RunSlots
from orecast.service.tracing import RUN_ATTRIBUTES as RUN_IDS
from orecast.service.tracing import Tracing
from orecast.service.webhooks import Webhooks

log = logging.getLogger("orecast.service.runs")
HEARTBEAT_SECONDS = 5.0  # at most: a third of `stale_seconds` when that is shorter
LOST = "lost"  # the cancel action of a run another process took over (its beats came too late)
RELEASED = "released"  # the cancel action of a run stopped by this process's shutdown, left to the next


@dataclass
class _Local:
    task: asyncio.Task[None]
    events: RunEvents
    cancel_action: str | None = None
    output: Any = None
    paused: bool = False  # the run ended waiting for a human (interrupt or breakpoint)
    shared: int | None = None  # events copied to the database so far; None: nobody elsewhere follows
    claimed: bool = False  # the database admitted it: it ran (or runs) here
    attempt: int = 1  # the processes that executed it so far, this one included (see runs/recover.py)
    lease: int = 1  # this process's hold on its row: another process's hand-over or take-over raises it
    work: asyncio.Task[Any] | None = None  # the graph's run, once admitted
    started: float | None = None  # perf_counter at admission
    started_at: str | None = None  # and the time then, for a webhook
    outcome: RunOutcome = field(default_factory=RunOutcome)  # what the graph streamed so far
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    driving: bool = False  # its task has begun (`_drive`): a cancel before would skip all of it
    slot: bool = False  # it holds one of the process's slots (runs/slots.py), given back at its end
    handed_over: bool = False  # taken from another live process's queue (runs/share.py)

    def cancel(self, action: str) -> None:
        """Cancel the run once, whoever asks first (this process or, through the watcher, another).

        A second cancel would interrupt the graph while it waits for its background checkpoint writes
        (durability "async"): they would land after the run ended, and a rollback's delete before them.
        A task not yet begun is not cancelled, only told: cancelled then, its coroutine would never run,
        nor its end (`join` waited for ever, the row stayed unended); it ends at its first step.
        """
        if self.cancel_action == LOST:  # another process drives it: the database's flag reaches it there
            return
        target = self.work if self.work is not None else self.task
        if self.cancel_action != "rollback":  # an erase asked for is not undone by a later interrupt
            self.cancel_action = action
        if target is self.task and not self.driving:
            return
        if not target.done() and not target.cancelling():
            target.cancel()


@dataclass
class _Queued:
    """A run waiting, `pending`, for its `after_seconds` to end or for a slot (`RunManager._wait_queued`)."""

    lease: int
    future: asyncio.Future[None]  # done when it may go on
    leave: Callable[[asyncio.Future[None]], Any]  # ends the wait (the slot's queue has its own way)
    lost: bool = False  # another process took it over


def traced_config(config: dict[str, Any], callbacks: list[Any]) -> dict[str, Any]:
    """The config a run's graph gets: the callbacks, and what a tracer (LangSmith, when its variables
    are set) files the run under — its ids as metadata, the assistant's graph as the trace's name."""
    configurable = config.get("configurable") or {}
    ids = {key: configurable[key] for key in RUN_IDS if configurable.get(key) is not None}
    return {
        **config,
        "callbacks": callbacks,
        "metadata": {**(config.get("metadata") or {}), **ids},
        "run_name": config.get("run_name") or str(configurable.get("graph_id") or "run"),
    }


async def _run_graph(run: RunInput, events: RunEvents, outcome: RunOutcome) -> Any:
    """`execute_run`, on a graph of the run's own when it is served by a factory (which may fail as the
    run would: its error is the run's); what the factory's context opened closes with the run."""
    async with contextlib.AsyncExitStack() as resources:
        if run.factory is not None:
            graph = await run.factory.build(run.config, resources, user=run.user, context=run.context, executing=True)
            run = replace(run, graph=graph)
        return await execute_run(run, events.put, outcome)


def _webhook_payload(run: RunRecord, status: str, local: _Local) -> dict[str, Any]:
    """What langgraph-api POSTs to a run's webhook: the run, how it ended, and the thread's values then
    (none after a rollback: they were erased)."""
    ended = now_iso()
    action = local.cancel_action
    if status == "success" and isinstance(local.output, dict):
        values = local.output
    else:  # failed or cancelled: the values as the graph last streamed them
        values = local.outcome.values
    values = jsonable(values)
    if isinstance(values, dict):
        values = {k: v for k, v in values.items() if k != INTERRUPT}
    payload = {
        **run.public(), "status": "rollback" if action == "rollback" else status, "updated_at": ended,
        "run_started_at": local.started_at, "run_ended_at": ended, "webhook_sent_at": ended,
        "values": None if action == "rollback" else values,
    }
    if action is not None:
        kind = "UserRollback" if action == "rollback" else "UserInterrupt"
        payload["error"] = {"error": kind, "message": f"the run was cancelled ({action})"}
    elif isinstance(local.output, dict) and "__error__" in local.output:
        payload["error"] = local.output["__error__"]
    return payload


class RunManager:
    def __init__(
        self,
        repo: RunRepo,
        saver: OrecastCheckpointer,
        metrics: ServiceMetrics,
        *,
        poll_seconds: float,
        stale_seconds: float,
        tracing: Tracing | None = None,
        webhooks: Webhooks | None = None,
        jobs: int = DEFAULT_JOBS_PER_WORKER,
    ) -> None:
        self.repo = repo
        self.webhooks = webhooks
        self.saver = saver
        self.metrics = metrics
        self.tracing = tracing
        self.poll_seconds = poll_seconds
        self.stale_seconds = stale_seconds
        # several beats within `stale_seconds`, so that a late one never makes a live run look dead
        self.heartbeat_seconds = min(HEARTBEAT_SECONDS, stale_seconds / 3)
        self.broker = Broker()
        self._local: dict[str, _Local] = {}
        self._freed = asyncio.Condition()
        self._background: set[asyncio.Task[None]] = set()
        # temporary runs ended here whose rows are kept for the process they were handed over from:
        # run id → the task that deletes them (`_drop_left_row`)
        self._left_rows: dict[str, asyncio.Task[None]] = {}
        self.slots = RunSlots(jobs, None if metrics is None else metrics.run_slots_changed)
        # the runs waiting here for a slot or their `after_seconds`: run id → (its lease, the future it
        # waits for, whether the database says it must stop waiting); `_keep_queued` polls and beats
        # for them all
        self._queued: dict[str, _Queued] = {}
        self._keeper: asyncio.Task[None] | None = None

    # -- starting -----------------------------------------------------------------------------------

    def start(
        self, run: RunRecord, prepared: RunInput, *, temporary: bool = False, resumable: bool = False,
        attempt: int = 1, lease: int = 1, first_event_id: int = 0, slot: bool = False, handed_over: bool = False,
    ) -> RunEvents:
        """Drive `run` in the background; `temporary` threads (stateless runs) are deleted after. The
        events of a `resumable` run are all written to the database, so that any process can replay
        them after a `Last-Event-ID` once the run is over. A run taken over from a dead process
        (`attempt` > 1) numbers its events after the `first_event_id` its earlier attempts wrote. With
        `slot` the run was admitted `running` with a slot taken for it (`slots.try_take`); else it
        waits for one. A run `handed_over` from another live process's queue (runs/share.py) is
        `resumable`, and, temporary, keeps its row after its thread for that process to read it."""
        for gone in self.broker.forget_old():  # bounded memory: a run's state goes with its event log
            self._local.pop(gone, None)
        events = self.broker.open(run.run_id, first_event_id)
        task = asyncio.create_task(self._drive(run, prepared, events, temporary))
        self._local[run.run_id] = _Local(
            task, events, shared=0 if resumable else None, attempt=attempt, lease=lease, slot=slot,
            handed_over=handed_over,
        )
        return events

    def knows(self, run_id: str) -> bool:
        """Whether this process admitted or took the run and has not forgotten it."""
        return run_id in self._local

    def drives(self, run_id: str) -> bool:
        """Whether this process drives the run now (however late its heartbeats; not one another
        process took from here)."""
        local = self._local.get(run_id)
        return local is not None and not local.task.done() and local.cancel_action != LOST

    async def cancel_local(self, run_id: str, action: str) -> None:
        local = self._local.get(run_id)
        if local is not None and not local.task.done():
            local.cancel(action)

    def abandon(self, run_id: str, reason: str) -> None:
        """Cancel a run its only listener left (a disconnect); callable from a cancelled scope."""
        task = asyncio.get_running_loop().create_task(self._abandon(run_id, reason))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _abandon(self, run_id: str, reason: str) -> None:
        run = await self.repo.get(run_id)
        if run is not None and run.status in ("pending", "running"):
            await self.repo.request_cancel(run, "interrupt", reason)
            await self.cancel_local(run_id, "interrupt")

    async def _admitted(self, run: RunRecord, local: _Local) -> bool:
        """Wait for a slot and until the database admits `run`; False if it was cancelled while pending,
        or its thread was deleted meanwhile (its runs go with it), or another process took it over."""
        try:
            return await self._claimed(run, local)
        except ThreadGone:
            log.info("run %s does not start: its thread %s was deleted while it waited", run.run_id, run.thread_id)
            return False

    async def _claimed(self, run: RunRecord, local: _Local) -> bool:
        if run.status != "running" and not await self._until_due(run, local):
            return False
        last_beat = time.monotonic()
        while True:
            if not local.slot:
                if not await self._slot_for(run, local):
                    return False
                local.slot = True
            if run.status == "running":  # taken over from a dead process: claimed by it
                return True
            rollbacks_left = await self.repo.claim(run, self.stale_seconds)
            if rollbacks_left is not None:
                break
            # its thread is busy: its slot goes to the next run meanwhile, and it queues again after
            self._give_back(local)
            action, status, lease = (await self.repo.queued_states([run.run_id])).get(
                run.run_id, (None, "", local.lease)
            )
            if lease != local.lease:
                local.cancel_action = LOST  # another process took it (runs/share.py): it ends there
                return False
            if status != "pending" or action is not None:
                return False
            if time.monotonic() - last_beat >= self.heartbeat_seconds:
                last_beat = time.monotonic()
                if not await self.repo.heartbeat(run.run_id, local.lease):
                    continue  # taken or ended meanwhile: the next look says which
            async with self._freed:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._freed.wait(), self.poll_seconds)
        await self.erase(rollbacks_left)  # before this run builds on the thread's state
        return True

    async def _slot_for(self, run: RunRecord, local: _Local) -> bool:
        """Wait, oldest run first, for a slot; False if the database says the run is no longer to wait
        (cancelled, its thread deleted, or taken over by another process: then `LOST`)."""
        future = self.slots.wait((run.created_at, run.run_id))
        if future.done():
            return True
        return await self._wait_queued(run, local, future, self.slots.leave)

    async def _until_due(self, run: RunRecord, local: _Local) -> bool:
        """`after_seconds`: wait, `pending` and without a slot (ten runs asked for in an hour kept every
        other run of the process waiting that hour), until the run's `created_at` (which `admit` set to
        the end of its delay); False as `_slot_for`. Its thread is `busy` meanwhile, and its next run
        waits behind it unless it was queued before it ends (as in langgraph-api's queue)."""
        seconds = (datetime.fromisoformat(run.created_at) - datetime.now(UTC)).total_seconds()
        if seconds <= 0:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        timer = asyncio.get_running_loop().call_later(
            seconds, lambda: future.done() or future.set_result(None)
        )
        try:
            return await self._wait_queued(run, local, future, asyncio.Future.cancel)
        finally:
            timer.cancel()

    async def _wait_queued(
        self, run: RunRecord, local: _Local, future: asyncio.Future[None],
        leave: Callable[[asyncio.Future[None]], Any],
    ) -> bool:
        """Until `future` is done, with the other queued runs' polls and heartbeats (`_keep_queued`);
        False if the database says the run is no longer to wait (cancelled, its thread deleted, or taken
        over by another process: then `LOST`)."""
        queued = self._queued[run.run_id] = _Queued(local.lease, future, leave)
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep_queued())
        try:
            await future
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():  # this run's task is cancelled
                leave(future)
                raise
            if queued.lost:
                local.cancel_action = LOST
            return False  # `_keep_queued` ended its wait
        finally:
            self._queued.pop(run.run_id, None)
        return True

    async def _keep_queued(self) -> None:
        """While runs wait here for a slot: every poll, read them all at once and end the wait of those
        cancelled, deleted or taken over elsewhere; every heartbeat, beat them all at once."""
        last_beat = time.monotonic()
        while self._queued:
            await asyncio.sleep(self.poll_seconds)
            try:
                asked = list(self._queued)  # runs queued while the query runs are looked at next time
                states = await self.repo.queued_states(asked)
                for run_id in asked:
                    queued, state = self._queued.get(run_id), states.get(run_id)
                    if queued is None or queued.future.done():
                        continue
                    if state is not None:  # else deleted
                        action, status, lease = state
                        if action is None and status in ACTIVE and lease == queued.lease:
                            continue
                        # another process drives it now (or drove it): whatever asked since, its row is
                        # that process's to end
                        queued.lost = lease != queued.lease
                    queued.leave(queued.future)
                if time.monotonic() - last_beat >= self.heartbeat_seconds:
                    last_beat = time.monotonic()
                    for lease in {queued.lease for queued in self._queued.values()}:
                        ids = [run_id for run_id, queued in self._queued.items() if queued.lease == lease]
                        await self.repo.heartbeat_queued(ids, lease)
            except Exception as exc:  # a database outage: the runs wait on, and it looks again
                log.warning("the runs waiting for a slot could not be checked: %s", exc)

    def _give_back(self, local: _Local) -> None:
        if local.slot:
            local.slot = False
            self.slots.give_back()

    async def erase(self, run_ids: list[str]) -> None:
        """Finish the rollback of runs whose process died before erasing them: their checkpoints
        first, then their rows, so that a death in between leaves the row to say it is not done."""
        if run_ids:
            log.warning("erasing runs %s: their rollback was left unfinished", ", ".join(run_ids))
            await self.saver.adelete_for_runs(run_ids)
            for run_id in run_ids:
                await self.repo.delete(run_id)

    async def erase_rollbacks_left(self) -> None:
        """At startup: finish every rollback a dead process left unfinished after its run was expired."""
        await self.erase([run_id for run_id, _ in await self.repo.rollbacks_left()])

    async def _watch(self, run_id: str, target: asyncio.Task[Any]) -> None:
        """Cancel `target` when another process asks (cancel flag); keep the run's heartbeat.

        The beat goes by the clock, not by the polls counted: a poll takes its sleep plus its query
        and the loop's delays, and on a loaded machine counted sleeps made the beats come several
        times later than `heartbeat_seconds`, past `stale_seconds`: a claim on the thread then took
        the live run for a dead one and failed it."""
        last_beat = time.monotonic()
        while not target.done():
            await asyncio.sleep(self.poll_seconds)
            action, _, shared = await self.repo.cancel_state(run_id)
            local = self._local.get(run_id)
            if action is not None:
                if local is not None:
                    local.cancel(action)
                elif not target.cancelling():
                    target.cancel()
                return
            if local is not None and (shared or local.shared is not None):
                await self._share(run_id, local)
            if time.monotonic() - last_beat >= self.heartbeat_seconds:
                last_beat = time.monotonic()
                lease = local.lease if local is not None else 1
                if not await self.repo.heartbeat(run_id, lease) and local is not None:
                    # Its beats came so late that another process took the run for dead and took it
                    # over: that one drives it now. Stop here, and leave its row to that process.
                    log.warning("run %s was taken over by another process; stopping it here", run_id)
                    local.cancel(LOST)
                    return

    async def _share(self, run_id: str, local: _Local) -> None:
        """Copy the events not yet in the database there."""
        done = local.shared or 0
        fresh = local.events.encoded(done)
        if fresh:
            await self.repo.add_events(run_id, local.events.first_id + done + 1, fresh)
        local.shared = done + len(fresh)

    async def _drive(
        self, run: RunRecord, prepared: RunInput, events: RunEvents, temporary: bool
    ) -> None:
        local = self._local[run.run_id]
        local.driving = True
        status, error = "interrupted", None
        span = None
        shutdown = False
        try:
            if local.cancel_action is not None:  # cancelled before this first step: it ends here, as asked
                local.claimed = run.status == "running"  # at its admission: its end frees the thread
                return
            await events.put("metadata", {"run_id": run.run_id, "attempt": local.attempt})
            # running with a slot: claimed at admission; running without: taken over from a dead process
            if not (run.status == "running" and local.slot) and not await self._admitted(run, local):
                return
            local.claimed = True
            local.started = time.perf_counter()
            local.started_at = now_iso()
            if self.tracing is None:
                status, error = await self._execute(run, prepared, events, local)
            else:
                span = self.tracing.start_run(prepared.config["configurable"])
                with self.tracing.current(span):
                    status, error = await self._execute(run, prepared, events, local, span)
        except asyncio.CancelledError:
            status = "interrupted"
            if local.cancel_action is None:  # shutdown, not a user's cancel
                shutdown = True
                raise
        finally:
            ran = None if local.started is None else time.perf_counter() - local.started
            goes_on = local.cancel_action in (LOST, RELEASED)  # in another process: it has not ended
            if not goes_on:
                self.metrics.run_ended(status, ran)
            if span is not None:
                self.tracing.end_run(span, status, error)
            try:
                await self._finish(run, status, error, local, temporary, prepared)
            finally:
                self._give_back(local)
            # as langgraph-api: a run that ran calls its webhook however it ended, but not when the
            # server stops under it (another process goes on with it, and calls it at the end)
            webhook = run.kwargs.get("webhook")
            if webhook and local.claimed and not (shutdown or goes_on) and self.webhooks is not None:
                self.webhooks.send(webhook, _webhook_payload(run, status, local), run.run_id)

    async def _execute(
        self, run: RunRecord, prepared: RunInput, events: RunEvents, local: _Local, span: Any = None
    ) -> tuple[str, str | None]:
        callbacks: list[Any] = [self.metrics.observer(local.started or time.perf_counter())]
        if span is not None and self.tracing is not None:
            callbacks.append(self.tracing.callbacks(span))
        # a request's config is JSON, so it holds no callbacks of its own to keep
        observed = replace(prepared, config=traced_config(prepared.config, callbacks))
        work = local.work = asyncio.create_task(_run_graph(observed, events, local.outcome))
        watcher = asyncio.create_task(self._watch(run.run_id, work))
        try:
            outcome = await work
        except asyncio.CancelledError:
            if local.cancel_action is None:
                work.cancel()
                raise
            return "interrupted", None
        except Exception as exc:
            log.warning("run %s failed: %s", run.run_id, exc, exc_info=exc)
            # as langgraph-api: the type and the message apart (the SDKs print "{error}: {message}")
            failure = {"error": type(exc).__name__, "message": str(exc)}
            await events.put("error", failure)
            local.output = {"__error__": failure}
            return "error", f"{type(exc).__name__}: {exc}"
        finally:
            watcher.cancel()
        values = outcome.values
        local.output = values  # encoded when answered: `runs.wait` encodes it once, to its response
        # The stream tells when the run stopped for a human (an interrupt); a stop at an
        # interrupt_before/after breakpoint does not, so only then the state is read.
        local.paused = outcome.interrupted
        graph = prepared.graph
        breakpoints = (
            prepared.interrupt_before or prepared.interrupt_after
            or graph.interrupt_before_nodes or graph.interrupt_after_nodes
        )
        if values is None or local.paused or breakpoints:
            snapshot = await graph.aget_state({"configurable": {"thread_id": run.thread_id}})
            local.paused = bool(snapshot.next or snapshot.interrupts)
            local.output = jsonable(values if values is not None else snapshot.values)
            if snapshot.interrupts and isinstance(local.output, dict):
                local.output["__interrupt__"] = interrupts_of(snapshot)
        return "success", None

    async def _finish(
        self, run: RunRecord, status: str, error: str | None, local: _Local, temporary: bool, prepared: RunInput
    ) -> None:
        try:
            if not local.claimed and local.cancel_action not in (LOST, RELEASED):
                # stopped here before it started (a cancel): unless another process took it first, and
                # its row, its end and its thread's status are that process's
                state = (await self.repo.queued_states([run.run_id])).get(run.run_id)
                if state is not None and state[2] != local.lease:
                    local.cancel_action = LOST
            if local.cancel_action == LOST:
                try:
                    await self._mirror(run, local, temporary)
                except Exception as exc:  # a database outage: its clients here see the run end early
                    log.warning("run %s, driven by another process, could not be followed: %s", run.run_id, exc)
            await asyncio.shield(self._record_end(run, status, error, local, temporary, prepared))
        finally:
            await local.events.close()
            local.finished.set()
            async with self._freed:
                self._freed.notify_all()

    async def _mirror(self, run: RunRecord, local: _Local, temporary: bool) -> None:
        """A run another process took from here goes on there: until it ends, its events (which that
        process writes to the database: runs/share.py) go on in this process's log, after those it has,
        and its output is its last `values` (or its `error`), so that the clients of this process —
        its stream, /runs/wait, a join — see it as if it ran here. The row of a temporary run, which
        that process keeps after deleting the thread for this one to read, goes last."""
        after = local.events.first_id + len(local.events.events)
        async for event_id, event, data in self.follow_remote(run.run_id, 0):
            value = orjson.loads(data)
            if event == "values":
                local.output = value
            elif event == "error":
                local.output = {"__error__": value}
            if event_id > after:  # not its metadata again, nor what this process streamed itself
                await local.events.put(event, value)
        if temporary:
            await self.repo.delete(run.run_id)

    async def _record_end(
        self, run: RunRecord, status: str, error: str | None, local: _Local, temporary: bool, prepared: RunInput
    ) -> None:
        thread_status = "error" if status == "error" else "interrupted" if local.paused else "idle"
        # a temporary thread is deleted below; a run that never ran sets its thread's status by its
        # state (`settle`)
        thread = (run.thread_id, thread_status) if local.claimed and not temporary else None
        if local.cancel_action == LOST:
            return  # the run's row, its thread and its checkpoints are the other process's now
        if local.cancel_action == RELEASED:
            await self.repo.release(run.run_id, local.lease)
            return
        if local.cancel_action == "rollback":
            await self.saver.adelete_for_runs([run.run_id])
            await self.repo.delete(run.run_id)
            if thread is not None:
                await self.repo.set_thread_status(*thread, ended=run.run_id)
        else:
            done = local.shared or 0
            await self.repo.finish(
                run.run_id, status, error, thread=thread,
                unshared=lambda: (local.events.first_id + done + 1, local.events.encoded(done)),
                share=local.shared is not None,
            )
        if temporary:
            # the run's row goes in the thread's delete transaction: a crash between two left it (but
            # for the process it was taken from, which reads it, then deletes it: `_mirror`)
            also = (DELETE_THREAD_CRONS,) if local.handed_over else DELETE_THREAD_SERVICE_ROWS
            await self.saver.adelete_thread(run.thread_id, also=also)
            if local.handed_over:
                task = asyncio.create_task(self._drop_left_row(run.run_id))
                self._left_rows[run.run_id] = task
                task.add_done_callback(lambda _: self._left_rows.pop(run.run_id, None))
        elif not local.claimed:
            await self.settle(run, prepared.graph)

    async def _drop_left_row(self, run_id: str) -> None:
        """The row (and events) of a temporary run ended here that was handed over from another process:
        kept `stale_seconds` for that process, which follows it and deletes it once read (`_mirror`:
        within a poll while it lives), then deleted here in any case. That process may have died
        meanwhile (the client's request with it): the row stayed for ever."""
        await asyncio.sleep(self.stale_seconds)
        try:
            await self.repo.delete(run_id)
        except Exception as exc:  # a database outage: the row stays, as before
            log.warning("the row of temporary run %s could not be deleted: %s", run_id, exc)

    async def settle(self, run: RunRecord, graph: Any) -> None:
        """A run that ended before it started (cancelled, or deleted, while it waited) leaves its thread
        `busy` from its admission: the thread's status is then again what its state (read with `graph`)
        says — `error` (a task failed), `interrupted` (it waits for a human) or `idle` — unless another
        run is pending or running on it."""
        try:
            snapshot = await graph.aget_state({"configurable": {"thread_id": run.thread_id}})
        except Exception as exc:  # a state its graph can no longer read: the thread is no longer busy
            log.warning("thread %s: its state could not be read for its status: %s", run.thread_id, exc)
            status = "idle"
        else:
            status = (
                "error" if any(task.error for task in snapshot.tasks)
                else "interrupted" if snapshot.next or snapshot.interrupts else "idle"
            )
        await self.repo.set_thread_status(run.thread_id, status, ended=run.run_id)

    # -- waiting and reading ---------------------------------------------------------------------------

    def events(self, run_id: str) -> RunEvents | None:
        return self.broker.get(run_id)

    def output(self, run_id: str) -> Any:
        """What the run returned here, as plain JSON values (None: not run here, or forgotten)."""
        local = self._local.get(run_id)
        return None if local is None or local.output is None else jsonable(local.output)

    def output_json(self, run_id: str) -> bytes | None:
        """`output` encoded as JSON (None: not run here, or forgotten)."""
        local = self._local.get(run_id)
        return None if local is None or local.output is None else dumps(local.output)

    async def follow_remote(self, run_id: str, after: int) -> AsyncIterator[tuple[int, str, bytes]]:
        """(id, event, JSON of its data) after `after` of a run driven by another process, read from the database
        once that process copies them there; until the run is over."""
        await self.repo.share_stream(run_id)
        seen = after
        while True:
            batch = await self.repo.events_after(run_id, seen)
            for event_id, event, data in batch:
                seen = event_id
                yield event_id, event, data
            if batch:
                continue
            run = await self.repo.get(run_id)
            if run is None or run.status in TERMINAL:  # its last events were written before its end
                for event_id, event, data in await self.repo.events_after(run_id, seen):
                    yield event_id, event, data
                return
            await asyncio.sleep(self.poll_seconds)

    async def finished(self, run_id: str) -> None:
        """Until the run is over (here or in another process)."""
        local = self._local.get(run_id)
        if local is not None:
            await local.finished.wait()
        else:
            await self.wait(run_id)

    async def wait(self, run_id: str) -> RunRecord | None:
        """Until the run is over (here or in another process); its final row (None once deleted)."""
        local = self._local.get(run_id)
        if local is not None:
            await local.finished.wait()
            return await self.repo.get(run_id)
        while True:
            run = await self.repo.get(run_id)
            if run is None or run.status in TERMINAL:
                return run
            await asyncio.sleep(self.poll_seconds)

    async def close(self) -> None:
        """Stop every run driven or waiting here, and release it: its row says so (an old heartbeat),
        so the next process to look (another replica, or this one restarted) takes it over at once
        and goes on from its last checkpoint (runs/recover.py). The rows kept for another process
        (`_drop_left_row`) are deleted."""
        for local in self._local.values():
            if local.task.done():
                continue
            if local.cancel_action is None:
                local.cancel(RELEASED)
            else:  # a cancel already asked for ends it here, as asked
                local.task.cancel()
        for local in self._local.values():
            with contextlib.suppress(BaseException):
                await local.task
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(BaseException):
                await self._keeper
        # the rows kept for another process go now: no process would delete them later (that one has
        # read them within a poll of the run's end, unless it is gone too)
        for run_id, task in list(self._left_rows.items()):
            task.cancel()
            with contextlib.suppress(Exception):
                await self.repo.delete(run_id)
