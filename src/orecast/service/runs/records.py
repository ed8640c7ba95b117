"""Run rows: what a run is, and the transactions that admit, claim, cancel and finish it."""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypeVar

from orecast.checkpoint import ThreadStatus
from orecast.service.db import Db
from orecast.service.db.connection import PostgresDb, Tx, now_iso, rolled_back_to_retry
from orecast.service.errors import Conflict, NotFound
from orecast.service.runs import queries as q
from orecast.service.runs.driver import drivers_here, this_process

log = logging.getLogger(__name__)
ACTIVE = ("pending", "running")
# How often a transaction the database rolled back as a deadlock's victim (or a serialization failure)
# runs again before its error is its caller's.
ATTEMPTS = 5
T = TypeVar("T")


class ThreadStatusStatement(Protocol):
    def __call__(
        self, thread_id: str, status: ThreadStatus, *, touch: bool = True, when: str | None = None
    ) -> tuple[str, tuple[Any, ...]]: ...


class ThreadLockStatement(Protocol):
    def __call__(self, thread_id: str) -> tuple[str, tuple[Any, ...]]: ...


TERMINAL = ("success", "error", "interrupted", "timeout")


IDS_PER_STATEMENT = 500  # run ids in one `IN (…)`: far below every dialect's limit on parameters


def _parts(run_ids: list[str]) -> list[list[str]]:
    return [run_ids[n:n + IDS_PER_STATEMENT] for n in range(0, len(run_ids), IDS_PER_STATEMENT)]


# The heartbeat of a released run: older than any stale limit.
RELEASED_AT = datetime(1970, 1, 1, tzinfo=UTC).isoformat()


class ThreadGone(NotFound):
    """The run's thread was deleted (a TTL sweep, a delete) before the run was in: nothing was written."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"thread {thread_id} not found")


class Stale(Exception):
    """The assistant or the thread a run was prepared with is no longer as the database has it
    (changed or deleted by another process): prepare the run again from fresh reads."""


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    thread_id: str
    assistant_id: str
    status: str
    metadata: dict[str, Any]
    kwargs: dict[str, Any]
    multitask_strategy: str
    owner: str | None
    cancel_action: str | None
    cancel_reason: str | None
    error: str | None
    created_at: str
    updated_at: str
    shared_stream: bool = False  # a client of another process follows it: its events go to the database

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> RunRecord:
        values = list(row)
        values[4] = json.loads(values[4])
        values[5] = json.loads(values[5])
        values[13] = bool(values[13])
        return cls(*values)

    def public(self) -> dict[str, Any]:
        """The SDK's `Run`."""
        return {
            "run_id": self.run_id,
            "thread_id": self.thread_id,
            "assistant_id": self.assistant_id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "status": self.status,
            "metadata": self.metadata,
            "kwargs": self.kwargs,
            "multitask_strategy": self.multitask_strategy,
            "cancel_reason": self.cancel_reason,
        }


class RunRepo:
    """The runs table; every decision about who runs when is one transaction here."""

    def __init__(self, db: Db, thread_status: ThreadStatusStatement, thread_lock: ThreadLockStatement) -> None:
        self.db = db
        # the checkpoint store's statement for its threads' status (its table, its timestamps)
        self.thread_status = thread_status
        # and its query keeping a thread from being deleted (swept) while a run is added to it
        self.thread_lock = thread_lock

    async def admit(
        self,
        *,
        run_id: str,
        thread_id: str,
        assistant_id: str,
        metadata: dict[str, Any],
        kwargs: dict[str, Any],
        strategy: str,
        owner: str | None,
        assistant_version: tuple[Any, Any] | None = None,
        same_thread: tuple[str, tuple[Any, ...]] | None = None,
        claim: bool = True,
        delay_seconds: float = 0.0,
    ) -> tuple[RunRecord, list[str]]:
        """Insert a run under `strategy`; return it and the runs it asks to cancel.

        With `assistant_version` (the assistant's `version_of` the run was prepared with) or
        `same_thread` (the store's `same_thread_condition` for the thread's row it was prepared with),
        nothing is written and Stale is raised if the assistant's row or the thread's is no longer so.

        `reject` raises Conflict while the thread has a pending or running run; `interrupt` and
        `rollback` mark those runs for cancellation (their executors see it); `enqueue` just queues.
        On a thread with no pending or running run the run is inserted already claimed (`running`, its
        thread `busy`): the claim costs no transaction of its own. Otherwise, or without `claim` (its
        process has no free slot to execute it now: runs/slots.py), it is `pending`.

        ThreadGone (a 404) if the thread's row is gone by the time the run would be in (a TTL sweep or
        a delete committed since the thread was read): nothing is written then. Either the run is in
        first, and a sweep leaves its thread alone, or the sweep is, and the run is refused.

        The thread is `busy` from the run's admission, pending or running (as langgraph-api shows it): a
        TTL sweep leaves it alone while the run waits. A run with `delay_seconds` (`after_seconds`) is
        `pending` until then, and its `created_at` is then, as langgraph-api has them: the queue (a
        claim, another process's take: runs/share.py) goes by `created_at`, and takes it no earlier.
        """
        moment = datetime.now(UTC)
        now = moment.isoformat()
        created = (moment + timedelta(seconds=delay_seconds)).isoformat() if delay_seconds > 0 else now
        claim = claim and created == now
        kwargs_json = json.dumps(kwargs, ensure_ascii=False, default=str)
        inserted = (
            run_id, thread_id, assistant_id, json.dumps(metadata, ensure_ascii=False), kwargs_json, strategy,
            owner, created, now, now, this_process(), delay_seconds or None,
        )
        cancelled: list[str] = []

        async def admission() -> tuple[str | None, list[tuple[str, str]]]:
            cancelled.clear()
            if isinstance(self.db, PostgresDb) and assistant_version is not None and strategy in ("enqueue", "reject"):
                status, active_ids = await self._admit_at_once(inserted, assistant_version, same_thread, claim)
                return status, [(other, "") for other in active_ids]
            return await self._admit(inserted, assistant_version, same_thread, cancelled, claim)

        status, active = await self._retrying(admission)
        if status is None:
            raise Conflict(
                f"thread {thread_id} is busy with run {active[0][0]}; "
                "retry later or pass multitask_strategy=enqueue|interrupt|rollback",
                {"thread_id": thread_id, "active_runs": [r[0] for r in active]},
            )
        run = RunRecord(
            run_id, thread_id, assistant_id, status, metadata, json.loads(kwargs_json), strategy, owner,
            None, None, None, created, now,
        )
        return run, cancelled

    async def _admit(
        self, inserted: tuple[Any, ...], assistant_version: tuple[Any, Any] | None,
        same_thread: tuple[str, tuple[Any, ...]] | None, cancelled: list[str], claim: bool,
    ) -> tuple[str | None, list[tuple[str, str]]]:
        """`admit` in a transaction: (the run's status, None if refused; the active runs (id, status)),
        and the runs it cancels added to `cancelled`."""
        run_id, thread_id, assistant_id, _, _, strategy, _, _, now, _, _, _ = inserted
        async with self.db.transaction(thread_id) as tx:
            condition, condition_params = same_thread or ("1 = 1", ())
            rows = await tx.fetchall(
                q.SELECT_ACTIVE_RUNS.format(same_thread=condition), (*condition_params, assistant_id, thread_id)
            )
            if (assistant_version is not None and tuple(rows[0][:2]) != assistant_version) or not rows[0][2]:
                raise Stale(assistant_id)
            active = [(r[3], r[4]) for r in rows if r[3] is not None]
            if active and strategy == "reject":
                return None, active
            if strategy in ("interrupt", "rollback"):
                for other_id, status in active:
                    reason = f"{strategy} by run {run_id}"
                    if status == "pending":
                        await tx.send(q.CANCEL_PENDING, (strategy, reason, now, other_id))
                    else:
                        await tx.send(q.REQUEST_CANCEL, (strategy, reason, now, other_id))
                    cancelled.append(other_id)
            status = "pending" if active or not claim else "running"
            await tx.send(q.INSERT_RUN, (*inserted[:3], status, *inserted[3:]))
            # Last, as a run's end takes its row and then its thread's: no deadlock with one.
            await self._hold_thread(tx, thread_id)
            await tx.send(*self.thread_status(thread_id, "busy", touch=False))
        return status, active

    async def _admit_at_once(
        self, inserted: tuple[Any, ...], assistant_version: tuple[Any, Any],
        same_thread: tuple[str, tuple[Any, ...]] | None, claim: bool,
    ) -> tuple[str | None, list[str]]:
        """PostgreSQL, `enqueue` or `reject`: `admit` in one statement after the thread's lock, one
        message (`ADMIT_RUN_AT_ONCE`): (the run's status, None if refused; the active runs' ids)."""
        thread_id, assistant_id, strategy = inserted[1], inserted[2], inserted[5]
        busy, busy_params = self.thread_status(
            thread_id, "busy", touch=False, when="EXISTS (SELECT 1 FROM inserted)"
        )
        condition, condition_params = same_thread or ("1 = 1", ())
        lock, lock_params = self.thread_lock(thread_id)
        assert isinstance(self.db, PostgresDb)
        row = await self.db.fetchone_locked(
            thread_id,
            q.ADMIT_RUN_AT_ONCE.format(lock=lock, same_thread=condition, thread=busy),
            (*lock_params, thread_id, assistant_id, *assistant_version, *condition_params, *inserted[:3],
             not claim, *inserted[3:], strategy == "reject", *busy_params),
        )
        assert row is not None
        status, unchanged, active_ids, exists = row
        if not exists:
            raise ThreadGone(thread_id)
        if not unchanged:
            raise Stale(assistant_id)
        return status, list(active_ids)

    async def claim(self, run: RunRecord, stale_after: float) -> list[str] | None:
        """Make `run` the thread's running run if it is next in line and the thread is free; the
        thread's status becomes `busy` in the same transaction (status only: `updated_at` follows the
        state, which the run's checkpoints and its end move).

        None if refused; else the runs of the thread whose rollback is left to finish (`rollbacks_left`),
        which the caller erases before its run starts. ThreadGone if the thread was deleted (a TTL sweep
        in the moment it was idle, between its previous run and this one): the run must not start, or it
        would write into a thread that is gone."""
        return await self._retrying(lambda: self._claim_once(run, stale_after))

    async def _claim_once(
        self, run: RunRecord, stale_after: float, handed_over_from: int | None = None
    ) -> list[str] | None:
        moment = datetime.now(UTC)
        now, stale = moment.isoformat(), (moment - timedelta(seconds=stale_after)).isoformat()
        async with self.db.transaction(run.thread_id) as tx:
            try:
                changed = await self._claim(tx, run, now, handed_over_from)
                # only a refused claim can be a dead process's fault: expire its runs, try once more
                # (a process taking another's run leaves dead ones to that run's own claims)
                if changed == 0 and handed_over_from is None and await self._expire_dead(tx, run, now, stale):
                    changed = await self._claim(tx, run, now)
            except Exception as exc:  # the unique index: another process claimed the thread first
                if "unique" in str(exc).lower():
                    return None
                raise
            if changed != 1:
                return None
            await self._hold_thread(tx, run.thread_id)
            await tx.send(*self.thread_status(run.thread_id, "busy", touch=False))
            return [r[0] for r in await tx.fetchall(q.SELECT_ROLLBACKS_LEFT, (run.thread_id,))]

    async def claimable(self, limit: int) -> list[tuple[RunRecord, int, int]]:
        """(run, attempt, lease) of the oldest runs that could start now (each its thread's next, on a
        free thread, its `after_seconds` over), oldest first across the database."""
        async with self.db.read() as tx:
            rows = await tx.fetchall(q.SELECT_CLAIMABLE, (now_iso(), limit))
        return [(RunRecord.from_row(r[:14]), int(r[14]), int(r[15])) for r in rows]

    async def hand_over(self, run: RunRecord, lease: int) -> list[str] | None:
        """Claim a run another process queued, as `claim` does, and make it this process's (`driver`,
        `lease` + 1; its `attempt` stays, as it has not run) if it still is at `lease`: None if refused
        (claimed, cancelled or taken meanwhile), else the rollbacks left on its thread for the caller
        to erase."""
        return await self._retrying(lambda: self._claim_once(run, 0.0, handed_over_from=lease))

    async def _claim(self, tx: Tx, run: RunRecord, now: str, handed_over_from: int | None = None) -> int:
        """The claim's statement(s): 1 if `run` is now the thread's running run (`handed_over_from`: a
        lease of another process's, and the run becomes this process's)."""
        mine = handed_over_from is None
        own = (now, now, run.run_id) if mine else (now, now, this_process(), run.run_id, handed_over_from)
        if self.db.dialect != "mysql":
            return await tx.execute(q.CLAIM_RUN if mine else q.HAND_OVER_RUN, (
                *own, run.thread_id, run.thread_id, run.created_at, run.created_at, run.run_id,
            ))
        if await tx.fetchone(q.CLAIM_BLOCKED_MYSQL, (run.thread_id, run.created_at, run.created_at, run.run_id)):
            return 0
        return await tx.execute(q.CLAIM_OWN_ROW_MYSQL if mine else q.HAND_OVER_OWN_ROW_MYSQL, own)

    async def _expire_dead(self, tx: Tx, run: RunRecord, now: str, stale: str) -> int:
        """Mark the thread's runs whose process stopped beating as failed; how many there were."""
        if self.db.dialect != "mysql":
            return await tx.execute(q.EXPIRE_DEAD_RUNS, (now, run.thread_id, stale, run.run_id))
        expired = 0
        for (dead,) in await tx.fetchall(q.SELECT_DEAD_RUNS_MYSQL, (run.thread_id, stale, run.run_id)):
            expired += await tx.execute(q.EXPIRE_DEAD_RUN_MYSQL, (now, dead, stale))
        return expired

    async def rollbacks_left(self) -> list[tuple[str, str]]:
        """(run id, thread id) of every run whose rollback was asked for and is over but not erased."""
        async with self.db.read() as tx:
            rows = await tx.fetchall(q.SELECT_ALL_ROLLBACKS_LEFT, ())
        return [(r[0], r[1]) for r in rows]

    async def get(self, run_id: str) -> RunRecord | None:
        async with self.db.read() as tx:
            row = await tx.fetchone(q.SELECT_RUN, (run_id,))
        return RunRecord.from_row(row) if row else None

    async def require(self, run_id: str, thread_id: str | None = None) -> RunRecord:
        run = await self.get(run_id)
        if run is None or (thread_id is not None and run.thread_id != thread_id):
            raise NotFound(f"run {run_id} not found")
        return run

    async def list(self, thread_id: str, status: str | None, limit: int, offset: int) -> list[RunRecord]:
        clause, params = ("AND status = ?", [status]) if status else ("", [])
        async with self.db.read() as tx:
            rows = await tx.fetchall(
                q.LIST_RUNS.format(status=clause), (thread_id, *params, limit, offset)
            )
        return [RunRecord.from_row(r) for r in rows]

    async def cancel_state(self, run_id: str) -> tuple[str | None, str | None, bool]:
        """(cancel action, status, whether a client of another process follows its stream)."""
        async with self.db.read() as tx:
            row = await tx.fetchone(q.SELECT_CANCEL, (run_id,))
        return (row[0], row[1], bool(row[2])) if row else (None, None, False)

    async def queued_states(self, run_ids: list[str]) -> dict[str, tuple[str | None, str, int]]:
        """run id → (cancel action, status, lease) of these runs (one gone is left out), a few
        statements in all."""
        found: dict[str, tuple[str | None, str, int]] = {}
        async with self.db.read() as tx:
            for part in _parts(run_ids):
                sql = q.SELECT_QUEUED.format(ids=", ".join("?" for _ in part))
                for run_id, action, status, lease in await tx.fetchall(sql, part):
                    found[run_id] = (action, status, int(lease))
        return found

    async def heartbeat_queued(self, run_ids: list[str], lease: int) -> None:
        """`heartbeat` of many runs of one lease at once (a run taken over meanwhile is left alone)."""
        async def beat() -> None:
            now = now_iso()
            async with self.db.transaction() as tx:
                for part in _parts(run_ids):
                    await tx.send(q.HEARTBEAT_QUEUED.format(ids=", ".join("?" for _ in part)), (now, lease, *part))

        await self._retrying(beat)

    async def share_stream(self, run_id: str) -> None:
        """Ask the process driving the run to write its events here (it notices at its next poll)."""
        await self._retrying(lambda: self._send(q.SHARE_STREAM, (run_id,)))

    async def add_events(self, run_id: str, first_seq: int, events: list[tuple[str, bytes]]) -> None:
        """Write events (name, JSON of its data) numbered from `first_seq`."""

        async def write() -> None:
            async with self.db.transaction() as tx:
                await self._add_events(tx, run_id, first_seq, events)

        await self._retrying(write)

    async def _add_events(self, tx: Tx, run_id: str, first_seq: int, events: list[tuple[str, bytes]]) -> None:
        for n, (event, data) in enumerate(events):
            await tx.send(
                q.INSERT_EVENT_MYSQL if self.db.dialect == "mysql" else q.INSERT_EVENT,
                (run_id, first_seq + n, event, data.decode()),
            )

    async def events_after(self, run_id: str, seq: int) -> list[tuple[int, str, bytes]]:
        """(sequence number, event, JSON of its data) after `seq`."""
        async with self.db.read() as tx:
            rows = await tx.fetchall(q.SELECT_EVENTS, (run_id, seq))
        return [(int(r[0]), r[1], r[2].encode() if isinstance(r[2], str) else bytes(r[2])) for r in rows]

    async def request_cancel(self, run: RunRecord, action: str, reason: str) -> None:
        async def request() -> None:
            now = now_iso()
            async with self.db.transaction(run.thread_id) as tx:
                if await tx.execute(q.CANCEL_PENDING, (action, reason, now, run.run_id)) == 0:
                    await tx.execute(q.REQUEST_CANCEL, (action, reason, now, run.run_id))

        await self._retrying(request)

    async def heartbeat(self, run_id: str, lease: int) -> bool:
        """Keep the run's lease alive; False once another process took the run over (or it is over)."""
        async def beat() -> bool:
            async with self.db.transaction() as tx:
                return await tx.execute(q.HEARTBEAT, (now_iso(), run_id, lease)) == 1

        return await self._retrying(beat)

    async def release(self, run_id: str, lease: int) -> None:
        """Leave a run this process stops (its shutdown) to the next process that looks for dead runs."""
        await self._retrying(lambda: self._send(q.RELEASE_RUN, (RELEASED_AT, run_id, lease)))

    async def dead_runs(self, stale_after: float) -> list[str]:
        """Pending and running runs whose process stopped beating `stale_after` seconds ago, and that
        nobody asked to cancel; oldest first, a few at a time."""
        stale = (datetime.now(UTC) - timedelta(seconds=stale_after)).isoformat()
        async with self.db.read() as tx:
            return [r[0] for r in await tx.fetchall(q.SELECT_DEAD_RUNS, (stale,))]

    async def runs_driven_here(self) -> list[tuple[str, str]]:
        """(run id, driver) of the pending and running runs that processes of this one's space drive
        (runs/driver.py), whatever their heartbeat, and that nobody asked to cancel; a few at a time."""
        pattern = drivers_here()
        if pattern is None:
            return []
        async with self.db.read() as tx:
            return [(r[0], r[1]) for r in await tx.fetchall(q.SELECT_RUNS_DRIVEN_HERE, (pattern,))]

    async def take_over(
        self, run_id: str, stale_after: float, *, gone_driver: str | None = None
    ) -> tuple[RunRecord, int, int, int] | None:
        """Make this process the driver of a dead run: (the run, its attempt, its lease, the last event
        its earlier attempts wrote to the database). None if another process took it first, or it ended.
        Dead: its heartbeat is `stale_after` seconds old, or (`gone_driver`) the process that drives it
        is that one, which is gone."""
        async def take() -> tuple[RunRecord, int, int, int] | None:
            moment = datetime.now(UTC)
            now, stale = moment.isoformat(), (moment - timedelta(seconds=stale_after)).isoformat()
            async with self.db.transaction() as tx:
                taken = await (
                    tx.execute(q.TAKE_OVER_RUN, (now, this_process(), run_id, stale)) if gone_driver is None
                    else tx.execute(q.TAKE_OVER_ORPHAN, (now, this_process(), run_id, gone_driver))
                )
                if taken != 1:
                    return None
                row = await tx.fetchone(q.SELECT_RUN, (run_id,))
                attempt = await tx.fetchone(q.SELECT_ATTEMPT, (run_id,))
                last = await tx.fetchone(q.SELECT_LAST_EVENT, (run_id,))
            assert row is not None and attempt is not None and last is not None
            return RunRecord.from_row(row), int(attempt[0]), int(attempt[1]), int(last[0])

        return await self._retrying(take)

    async def finish(
        self,
        run_id: str,
        status: str,
        error: str | None = None,
        *,
        thread: tuple[str, str] | None = None,
        unshared: Callable[[], tuple[int, list[tuple[str, bytes]]]] = lambda: (1, []),
        share: bool = False,
    ) -> bool:
        """Record the end of a run not already over (False if it was, or is gone). In the same
        transaction: with `thread` = (thread id, status) set that thread's status, and if a client of
        another process follows the run (or `share`: its events are kept), write its `unshared` events
        (first sequence number, events; asked for only then), so they are all there when the row says
        the run is over."""
        return await self._retrying(lambda: self._finish_once(run_id, status, error, thread, unshared, share))

    async def _finish_once(
        self, run_id: str, status: str, error: str | None, thread: tuple[str, str] | None,
        unshared: Callable[[], tuple[int, list[tuple[str, bytes]]]], share: bool,
    ) -> bool:
        if self.db.dialect == "postgres" and not share and await self._finish_at_once(run_id, status, error, thread):
            return True
        async with self.db.transaction() as tx:
            if self.db.dialect == "mysql":
                rows = await tx.fetchall(q.LOCK_UNFINISHED_RUN, (run_id,))
                if rows:
                    await tx.send(q.FINISH_RUN_MYSQL, (status, error, now_iso(), run_id))
            else:
                rows = await tx.fetchall(q.FINISH_RUN, (status, error, now_iso(), run_id))
            if not rows:
                return False
            if rows[0][0] or share:
                await self._add_events(tx, run_id, *unshared())
            if thread is not None:
                await self._thread_status(tx, *thread, ended=run_id)
        return True

    async def _finish_at_once(
        self, run_id: str, status: str, error: str | None, thread: tuple[str, str] | None
    ) -> bool:
        """PostgreSQL: `finish` in one statement (`FINISH_RUN_AT_ONCE`), without BEGIN and COMMIT of
        its own (one round trip, was two); False if that changed nothing (the run is over, or a client of
        another process follows it: `finish`'s transaction tells which)."""
        params: tuple[Any, ...] = (status, error, now_iso(), run_id)
        extra = ""
        if thread is not None:
            (sql, more), (busy, busy_params) = self._end_statuses(*thread, run_id, when="EXISTS (SELECT 1 FROM finished)")
            extra, params = f", thread AS ({sql}), still_busy AS ({busy})", (*params, *more, *busy_params)
        async with self.db.read() as tx:
            row = await tx.fetchone(q.FINISH_RUN_AT_ONCE.format(thread=extra), params)
        return bool(row and row[0])

    async def set_thread_status(self, thread_id: str, status: ThreadStatus, *, ended: str) -> None:
        """The status a run's end (`ended`) leaves its thread in (`busy` while another run is pending or
        running on it)."""
        async def write() -> None:
            async with self.db.transaction() as tx:
                await self._thread_status(tx, thread_id, status, ended=ended)

        await self._retrying(write)

    async def _hold_thread(self, tx: Tx, thread_id: str) -> None:
        """Keep the thread from a sweep or a delete until `tx` ends; ThreadGone if one deleted it first."""
        if await tx.fetchone(*self.thread_lock(thread_id)) is None:
            raise ThreadGone(thread_id)

    async def _thread_status(self, tx: Tx, thread_id: str, status: ThreadStatus, *, ended: str) -> None:
        for statement in self._end_statuses(thread_id, status, ended):
            await tx.send(*statement)

    def _end_statuses(
        self, thread_id: str, status: ThreadStatus, ended: str, when: str | None = None
    ) -> tuple[tuple[str, tuple[Any, ...]], tuple[str, tuple[Any, ...]]]:
        """The two exclusive statements of a run's end on its thread: `status` if no other run of the
        thread is pending or running, else `busy` (its thread was busy from that run's admission and
        stays so: a TTL sweep never takes it meanwhile). `when`: a condition both also need."""
        others = (
            "EXISTS (SELECT 1 FROM service_runs WHERE thread_id = ? AND status IN ('pending', 'running')"
            " AND run_id <> ?)"
        )
        extra = "" if when is None else f"({when}) AND "
        sql, params = self.thread_status(thread_id, status, when=f"{extra}NOT {others}")
        busy, busy_params = self.thread_status(thread_id, "busy", touch=False, when=f"{extra}{others}")
        return (sql, (*params, thread_id, ended)), (busy, (*busy_params, thread_id, ended))

    async def delete(self, run_id: str) -> None:
        async def erase() -> None:
            async with self.db.transaction() as tx:
                await tx.send(q.DELETE_RUN_EVENTS, (run_id,))
                await tx.send(q.DELETE_RUN, (run_id,))

        await self._retrying(erase)

    async def _send(self, sql: str, params: tuple[Any, ...]) -> None:
        """One statement in a transaction of its own."""
        async with self.db.transaction() as tx:
            await tx.send(sql, params)

    async def _retrying(self, work: Callable[[], Awaitable[T]]) -> T:
        """`work` (whole transactions), run again when the database rolled it back to settle a
        conflict with another transaction (a deadlock's victim): a run's admission, claim or end
        must not fail for that, nor be left half-way (a run still `running` and its thread `busy`
        when its process has ended it, until the run looks dead)."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return await work()
            except Exception as exc:
                if attempt == ATTEMPTS or not rolled_back_to_retry(exc):
                    raise
                log.info("a transaction the database rolled back runs again: %s", exc)
                await asyncio.sleep(random.uniform(0, 0.01 * attempt))  # the other one goes first
        raise AssertionError("unreachable")

    async def stream_runs(self, thread_id: str, since: str) -> list[tuple[str, str]]:
        """(run id, status) of the thread's active runs and of every run created since `since`, oldest
        first: a thread stream's runs, including those that ended between two of its looks."""
        async with self.db.read() as tx:
            rows = await tx.fetchall(q.SELECT_STREAM_RUNS, (thread_id, since))
        return [(r[0], r[1]) for r in rows]

    async def select_ids(
        self, *, thread_id: str | None, run_ids: list[str] | None, statuses: tuple[str, ...]
    ) -> list[tuple[str, str]]:
        clauses, params = [f"status IN ({', '.join('?' for _ in statuses)})"], list(statuses)
        if thread_id:
            clauses.append("thread_id = ?")
            params.append(thread_id)
        if run_ids:
            clauses.append(f"run_id IN ({', '.join('?' for _ in run_ids)})")
            params.extend(run_ids)
        async with self.db.read() as tx:
            rows = await tx.fetchall(q.SELECT_RUN_IDS.format(where=" AND ".join(clauses)), params)
        return [(r[0], r[1]) for r in rows]
