"""Thread TTL: which threads have expired, and the sweep that deletes or prunes them.

A thread expires when it has been idle (no checkpoint, no update: its `updated_at`) for its time to
live: its own (`set_thread_ttl`, the Agent Server's `ttl` on thread create and update) or the
settings' default (`TtlPolicy.default`, `ORECAST_THREAD_TTL`; none: threads without their own never
expire). Its strategy, its own or the default, says what the sweep does:

* `delete`: the thread goes, with its checkpoints, writes, values and items;
* `keep_latest`: it is pruned to each namespace's newest checkpoint, keeping whatever a kept checkpoint
  needs to load (`retention.py`). Pruned once per idle spell: it is pruned again only after new activity
  has aged past its TTL.

A thread that is `busy` (a run in progress) is never swept, nor one a run is being admitted to (the
admission holds its row, `thread_lock_statement`; a run that comes while the sweep holds it is refused
once the sweep has deleted the thread). Several sweepers may run at once (replicas
of the service, a cron job): on PostgreSQL and MySQL/MariaDB each batch of expired threads is claimed
with `FOR UPDATE SKIP LOCKED` and processed in the claiming transaction, so no two sweepers process the
same thread; on SQLite the single writer's transaction does the same. Each sweep run is recorded in
`sweep_runs` (`sweep_status` reads the last one).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from orecast.checkpoint.base import OrecastCheckpointer
from orecast.checkpoint.core import as_datetime, utc_now
from orecast.checkpoint.ids import check_id
from orecast.checkpoint.retention import PrunePolicy

STRATEGIES = ("delete", "keep_latest")
BATCH = 20  # threads claimed (and locked) per transaction
KEEP_SWEEP_RUNS = timedelta(days=30)  # sweep records older than this are dropped by the next sweep
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# Per dialect, as `stats.py`. A claim reads the next expired, not busy threads after the cursor
# (updated_at, thread_id); `{lock}` is `FOR UPDATE SKIP LOCKED` where the dialect has it (not on a dry
# run). Threads without their own TTL use the default's cutoff and the `updated_at` index; threads with
# their own use the partial index of those rows. Parameters: default strategy, cutoff or now, cursor
# time, cursor id, limit.
_NOT_BUSY_NOR_SWEPT = "status <> 'busy' AND (swept_updated_at IS NULL OR swept_updated_at < updated_at)"
_ORDER = "ORDER BY updated_at, thread_id LIMIT {p} {{lock}}"
CLAIM_DEFAULT_TTL = {
    "sqlite": f"""SELECT thread_id, updated_at, COALESCE(ttl_strategy, ?) FROM threads
WHERE ttl_seconds IS NULL AND updated_at <= ? AND {_NOT_BUSY_NOR_SWEPT}
  AND (updated_at, thread_id) > (?, ?) {_ORDER.format(p="?")}""",
    "postgresql": f"""SELECT thread_id, updated_at, COALESCE(ttl_strategy, %s) FROM threads
WHERE ttl_seconds IS NULL AND updated_at <= %s AND {_NOT_BUSY_NOR_SWEPT}
  AND (updated_at, thread_id) > (%s, %s) {_ORDER.format(p="%s")}""",
    "mysql": f"""SELECT thread_id, updated_at, COALESCE(ttl_strategy, %s) FROM threads
WHERE ttl_seconds IS NULL AND updated_at <= %s AND {_NOT_BUSY_NOR_SWEPT}
  AND (updated_at, thread_id) > (%s, %s) {_ORDER.format(p="%s")}""",
}
CLAIM_OWN_TTL = {
    # julianday: SQLite's times are ISO-8601 text; a day is 86,400 s (precise to about 50 µs here).
    "sqlite": f"""SELECT thread_id, updated_at, COALESCE(ttl_strategy, ?) FROM threads
WHERE ttl_seconds IS NOT NULL AND julianday(updated_at) + ttl_seconds / 86400.0 <= julianday(?)
  AND {_NOT_BUSY_NOR_SWEPT} AND (updated_at, thread_id) > (?, ?) {_ORDER.format(p="?")}""",
    "postgresql": f"""SELECT thread_id, updated_at, COALESCE(ttl_strategy, %s) FROM threads
WHERE ttl_seconds IS NOT NULL AND updated_at + ttl_seconds * interval '1 second' <= %s
  AND {_NOT_BUSY_NOR_SWEPT} AND (updated_at, thread_id) > (%s, %s) {_ORDER.format(p="%s")}""",
    "mysql": f"""SELECT thread_id, updated_at, COALESCE(ttl_strategy, %s) FROM threads
WHERE ttl_seconds IS NOT NULL AND updated_at + INTERVAL ttl_seconds SECOND <= %s
  AND {_NOT_BUSY_NOR_SWEPT} AND (updated_at, thread_id) > (%s, %s) {_ORDER.format(p="%s")}""",
}
SKIP_LOCKED = {"sqlite": "", "postgresql": "FOR UPDATE SKIP LOCKED", "mysql": "FOR UPDATE SKIP LOCKED"}
# After a keep_latest prune: this spell of idleness is done (see the module's docstring).
MARK_SWEPT = "UPDATE threads SET swept_updated_at = updated_at WHERE thread_id = {p}"
SELECT_CHECKPOINT_COUNT = "SELECT checkpoint_count FROM threads WHERE thread_id = {p}"
SET_THREAD_TTL = "UPDATE threads SET ttl_seconds = {p}, ttl_strategy = {p} WHERE thread_id = {p}"
SELECT_THREAD_TTL = "SELECT ttl_seconds, ttl_strategy, updated_at FROM threads WHERE thread_id = {p}"
INSERT_SWEEP_RUN = "INSERT INTO sweep_runs (run_id, started_at, status) VALUES ({p}, {p}, 'running')"
FINISH_SWEEP_RUN = """UPDATE sweep_runs SET finished_at = {p}, status = {p}, threads_deleted = {p},
    threads_pruned = {p}, checkpoints_deleted = {p}, error = {p} WHERE run_id = {p}"""
DELETE_OLD_SWEEP_RUNS = "DELETE FROM sweep_runs WHERE started_at < {p}"
LAST_SWEEP_RUN = """SELECT started_at, finished_at, status, threads_deleted, threads_pruned,
    checkpoints_deleted, error FROM sweep_runs ORDER BY started_at DESC, run_id DESC LIMIT 1"""
LAST_SWEEP_SUCCESS = "SELECT MAX(finished_at) FROM sweep_runs WHERE status = 'ok'"


def _sql(saver: OrecastCheckpointer, statement: str) -> str:
    return statement.format(p="?" if saver.dialect == "sqlite" else "%s")


def check_strategy(strategy: str) -> str:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown TTL strategy {strategy!r}; use 'delete' or 'keep_latest'")
    return strategy


@dataclass(frozen=True)
class TtlPolicy:
    """The default TTL of threads without their own (None: they never expire) and its strategy."""

    default: timedelta | None = None
    strategy: str = "delete"

    def __post_init__(self) -> None:
        check_strategy(self.strategy)
        if self.default is not None and self.default <= timedelta(0):
            raise ValueError("a thread TTL must be positive")


@dataclass
class SweepResult:
    """One sweep: the threads it deleted and pruned (with `dry_run`, would delete and prune)."""

    dry_run: bool
    started_at: datetime
    run_id: str | None = None  # its row in sweep_runs (None for a dry run, which is not recorded)
    deleted: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    checkpoints_deleted: int = 0
    bytes_freed: int = 0

    @property
    def expired(self) -> int:
        return len(self.deleted) + len(self.pruned)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["started_at"] = self.started_at.isoformat()
        data["expired"] = self.expired
        return data


def ttl_seconds(ttl: timedelta) -> int:
    seconds = round(ttl.total_seconds())
    if seconds <= 0:
        raise ValueError("a thread TTL must be at least one second")
    return seconds


async def set_thread_ttl(
    saver: OrecastCheckpointer, thread_id: str, ttl: timedelta | None, strategy: str | None = None
) -> bool:
    """Give the thread its own TTL and strategy (None, None: back to the default). False if no such
    thread. The TTL counts from the thread's last activity, as the default's does."""
    thread_id = check_id(thread_id, "thread_id")
    if strategy is not None:
        check_strategy(strategy)
    seconds = None if ttl is None else ttl_seconds(ttl)
    async with saver._write() as db:
        if await db.fetchone(_sql(saver, SELECT_THREAD_TTL), (thread_id,)) is None:
            return False
        await db.execute(_sql(saver, SET_THREAD_TTL), (seconds, strategy, thread_id))
    return True


async def thread_own_ttl(saver: OrecastCheckpointer, thread_id: str) -> dict[str, Any] | None:
    """`{seconds, strategy}` of the thread's own TTL (what an archive keeps); None if it has none."""
    async with saver._read() as db:
        row = await db.fetchone(_sql(saver, SELECT_THREAD_TTL), (check_id(thread_id, "thread_id"),))
    if row is None or (row[0] is None and row[1] is None):
        return None
    return {"seconds": None if row[0] is None else int(row[0]), "strategy": row[1]}


async def thread_ttl(
    saver: OrecastCheckpointer, thread_id: str, policy: TtlPolicy | None = None
) -> dict[str, Any] | None:
    """The TTL that applies to the thread, as the Agent Server's `?include=ttl` shows it:
    `{strategy, ttl_minutes, expires_at}`; None if none applies (or no such thread)."""
    policy = policy or TtlPolicy()
    async with saver._read() as db:
        row = await db.fetchone(_sql(saver, SELECT_THREAD_TTL), (check_id(thread_id, "thread_id"),))
    if row is None:
        return None
    seconds, strategy, updated_at = row
    ttl = timedelta(seconds=int(seconds)) if seconds is not None else policy.default
    if ttl is None:
        return None
    last_activity = _utc(updated_at)
    assert last_activity is not None
    return {"strategy": strategy or policy.strategy, "ttl_minutes": ttl.total_seconds() / 60, "expires_at": last_activity + ttl}


async def sweep(
    saver: OrecastCheckpointer,
    policy: TtlPolicy,
    *,
    now: datetime | None = None,
    limit: int | None = None,
    dry_run: bool = False,
    also: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> SweepResult:
    """Delete or prune every expired thread (at most `limit`), as of `now` (default: the clock).

    Recorded in `sweep_runs`, unless `dry_run`: then nothing is changed and the result says what
    would be. A failure is recorded (status `error`) and raised; what was done before it stays done.
    `also`: the caller's statements deleting what it keeps of a deleted thread, run in the transaction
    that deletes it (as `adelete_thread`'s). `progress` is told how many threads each batch expired,
    once that batch is committed.
    """
    now = now or utc_now()
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    if limit is not None and limit < 1:
        raise ValueError("limit must be at least 1")
    result = SweepResult(dry_run=dry_run, started_at=now)
    if not dry_run:
        result.run_id = uuid.uuid4().hex
        async with saver._write() as db:
            await db.execute(_sql(saver, INSERT_SWEEP_RUN), (result.run_id, saver._ts(utc_now())))
    try:
        if policy.default is not None:
            await _sweep_phase(saver, CLAIM_DEFAULT_TTL, now - policy.default, policy, result, limit, also, progress)
        await _sweep_phase(saver, CLAIM_OWN_TTL, now, policy, result, limit, also, progress)
    except BaseException as exc:
        if result.run_id is not None:
            why = "interrupted" if isinstance(exc, asyncio.CancelledError) else f"{type(exc).__name__}: {exc}"
            await _finish(saver, result, "error", why[:2000])
        raise
    if result.run_id is not None:
        await _finish(saver, result, "ok", None)
    return result


async def _sweep_phase(
    saver: OrecastCheckpointer,
    claims: dict[str, str],
    bound: datetime,
    policy: TtlPolicy,
    result: SweepResult,
    limit: int | None,
    also: Sequence[str],
    progress: Callable[[int], None] | None,
) -> None:
    lock = "" if result.dry_run else SKIP_LOCKED[saver.dialect]
    deletes = [*saver.q.DELETE_THREAD, *saver._callers_sql(also)]
    claim = claims[saver.dialect].format(lock=lock)
    cursor: tuple[Any, str] = (saver._ts(_EPOCH), "")
    while limit is None or result.expired < limit:
        size = BATCH if limit is None else min(BATCH, limit - result.expired)
        # Claimed and processed in one transaction: the rows stay locked until they are done.
        done: list[tuple[str, str, int, int]] = []
        async with saver._read() if result.dry_run else saver._write() as db:
            rows = await db.fetchall(claim, (policy.strategy, saver._ts(bound), *cursor, size))
            for thread_id, _updated_at, strategy in rows:
                done.append(await _expire(saver, db, thread_id, strategy, result.dry_run, deletes))
        # Counted once committed: a batch that fails is not reported as done.
        for thread_id, how, checkpoints, freed in done:
            (result.pruned if how == "keep_latest" else result.deleted).append(thread_id)
            result.checkpoints_deleted += checkpoints
            result.bytes_freed += freed
            saver.items.drop(thread_id)
        if progress is not None and done:
            progress(len(done))
        if rows:
            cursor = (saver._ts(_utc(rows[-1][1])), rows[-1][0])
        if len(rows) < size:
            return


async def _expire(
    saver: OrecastCheckpointer, db: Any, thread_id: str, strategy: str, dry_run: bool, deletes: Sequence[str]
) -> tuple[str, str, int, int]:
    """Prune or delete one claimed thread: (thread, strategy applied, checkpoints deleted, bytes freed)."""
    if strategy == "keep_latest":
        pruned = await saver._prune_thread(db, thread_id, PrunePolicy(keep_last=1), dry_run=dry_run)
        if not dry_run:
            await db.execute(_sql(saver, MARK_SWEPT), (thread_id,))
        return thread_id, "keep_latest", pruned.checkpoints_deleted, pruned.bytes_freed
    # Any other value (a strategy written by hand) deletes: the thread did ask to expire.
    row = await db.fetchone(_sql(saver, SELECT_CHECKPOINT_COUNT), (thread_id,))
    if not dry_run:
        for statement in deletes:
            await db.execute(statement, (thread_id,))
    return thread_id, "delete", int(row[0]) if row else 0, 0


async def _finish(saver: OrecastCheckpointer, result: SweepResult, status: str, error: str | None) -> None:
    async with saver._write() as db:
        await db.execute(
            _sql(saver, FINISH_SWEEP_RUN),
            (
                saver._ts(utc_now()), status, len(result.deleted), len(result.pruned),
                result.checkpoints_deleted, error, result.run_id,
            ),
        )
        await db.execute(_sql(saver, DELETE_OLD_SWEEP_RUNS), (saver._ts(utc_now() - KEEP_SWEEP_RUNS),))


async def sweep_status(saver: OrecastCheckpointer) -> dict[str, Any]:
    """The last sweep run: `{last_run_at, last_finished_at, last_status, threads_deleted, threads_pruned,
    checkpoints_deleted, last_error, last_success_at}`; every value None when no sweep ever ran.
    `last_status` is `running` while one runs (or if its process died during it)."""
    async with saver._read() as db:
        row = await db.fetchone(LAST_SWEEP_RUN)
        success = await db.fetchone(LAST_SWEEP_SUCCESS)
    if row is None:
        row = (None,) * 7
    started, finished, status, deleted, pruned, checkpoints, error = row
    return {
        "last_run_at": _utc(started),
        "last_finished_at": _utc(finished),
        "last_status": status,
        "threads_deleted": deleted,
        "threads_pruned": pruned,
        "checkpoints_deleted": None if checkpoints is None else int(checkpoints),
        "last_error": error,
        "last_success_at": _utc(success[0] if success else None),
    }


def _utc(value: Any) -> datetime | None:
    """A stored time as an aware UTC datetime (MySQL's DATETIME comes back naive)."""
    if value is None:
        return None
    moment = as_datetime(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
