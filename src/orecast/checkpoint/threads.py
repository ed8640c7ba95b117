"""The threads table: the row the saver returns (`ThreadInfo`), search checks, and the saver's thread methods."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal

from orecast.checkpoint.cache import ThreadItems
from orecast.checkpoint.core import (
    CHECKPOINT_ONLY_METADATA,
    Db,
    SaverCore,
    as_datetime,
    utc_now,
)
from orecast.checkpoint.encoding import json_text
from orecast.checkpoint.filters import check_metadata_filter
from orecast.checkpoint.ids import check_document, check_id

ThreadStatus = Literal["idle", "busy", "interrupted", "error"]
THREAD_STATUSES: tuple[str, ...] = ("idle", "busy", "interrupted", "error")
SortOrder = Literal["asc", "desc"]
SortBy = Literal["updated_at", "created_at", "thread_id", "status", "head_checkpoint_id"]
# What `asearch_threads` orders by, per `sort_by`. Checkpoint ids are time-ordered (LangGraph's UUIDv6),
# so the head's id orders threads by when their state last changed; a thread without a checkpoint
# comes first ('' on every dialect, where NULL would be first in SQLite and MySQL, last in PostgreSQL).
SORT_COLUMNS = {
    "updated_at": "updated_at",
    "created_at": "created_at",
    "thread_id": "thread_id",
    "status": "status",
    "head_checkpoint_id": "COALESCE(head_checkpoint_id, '')",
}
# For `thread_status_statement`: `?` placeholders, whatever the dialect (its caller's convention).
SET_STATUS_AND_TOUCH = "UPDATE threads SET status = ?, updated_at = ? WHERE thread_id = ?"
SET_STATUS = "UPDATE threads SET status = ? WHERE thread_id = ?"
# For `same_thread_condition`: the thread's row exists with metadata equal (as JSON values) to the
# parameter; MySQL and MariaDB differ in how JSON compares, so they have none.
SAME_THREAD = {
    "sqlite": "EXISTS (SELECT 1 FROM threads WHERE thread_id = ? AND json(metadata) = json(?))",
    "postgresql": "EXISTS (SELECT 1 FROM threads WHERE thread_id = ? AND metadata = CAST(? AS jsonb))",
}
# For `thread_lock_statement`. PostgreSQL's KEY SHARE conflicts with the delete and with the TTL sweep's
# claim (FOR UPDATE), not with the updates a checkpoint or a run's end makes to the row: it waits for no
# write of the thread's own. SQLite needs no lock: the caller's write transaction excludes every other.
LOCK_THREAD = {
    "sqlite": "SELECT 1 FROM threads WHERE thread_id = ?",
    "postgresql": "SELECT 1 FROM threads WHERE thread_id = ? FOR KEY SHARE",
    "mysql": "SELECT 1 FROM threads WHERE thread_id = ? FOR UPDATE",
}


_SEED_TYPES = (str, int, float, bool)  # metadata values that describe a thread


@dataclass(frozen=True)
class ThreadInfo:
    """One conversation, as kept in the threads table (maintained in the same transaction as `put`)."""

    thread_id: str
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]
    status: str
    head_checkpoint_id: str | None
    checkpoint_count: int
    message_count: int
    preview: str | None

    @property
    def title(self) -> str | None:
        title = self.metadata.get("title")
        return title if isinstance(title, str) else None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        data["updated_at"] = self.updated_at.isoformat()
        data["title"] = self.title
        return data


def check_search(
    status: str | None,
    sort_by: str,
    sort_order: str,
    limit: int,
    offset: int,
    metadata: Mapping[str, Any] | None = None,
    scope: Mapping[str, Any] | None = None,
) -> None:
    if metadata:
        check_metadata_filter(metadata)
    if scope:  # the caller's own few conditions (an owner): checked, but not counted against the user's cap
        check_metadata_filter(scope, capped=False)
    if status is not None and status not in THREAD_STATUSES:
        raise ValueError(f"unknown thread status {status!r}; expected one of {', '.join(THREAD_STATUSES)}")
    if sort_by not in SORT_COLUMNS:
        raise ValueError(f"cannot sort threads by {sort_by!r}; expected one of {', '.join(SORT_COLUMNS)}")
    if sort_order not in ("asc", "desc"):
        raise ValueError(f"sort order must be 'asc' or 'desc', not {sort_order!r}")
    if limit < 0 or offset < 0:
        raise ValueError("limit and offset must not be negative")


def _scoped(metadata: Mapping[str, Any] | None, scope: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return {**(metadata or {}), **scope} if scope else metadata


class ThreadsMixin(SaverCore):
    """The threads table: created with the first checkpoint, kept in the same transaction as each."""

    # -- threads -----------------------------------------------------------------------------------

    def thread_status_statement(
        self, thread_id: str, status: ThreadStatus, *, touch: bool = True, when: str | None = None
    ) -> tuple[str, tuple[Any, ...]]:
        """(SQL with `?` placeholders, its parameters) setting a thread's status, and with `touch` its
        `updated_at`, for a caller that must change it inside its own transaction on this store's
        database: a run server admits a run and marks its thread busy in one transaction. The table
        and the timestamp's form stay the store's business; the caller only runs the statement.
        `when`: a condition of the caller's (SQL without parameters) the update also needs — e.g. that
        a CTE of the statement this one becomes part of changed a row of its own."""
        if status not in THREAD_STATUSES:
            raise ValueError(f"status must be one of {', '.join(THREAD_STATUSES)}, not {status!r}")
        thread_id = check_id(thread_id, "thread_id")
        sql, params = (
            (SET_STATUS_AND_TOUCH, (status, self._ts(utc_now()), thread_id)) if touch
            else (SET_STATUS, (status, thread_id))
        )
        return (sql if when is None else f"{sql} AND ({when})"), params

    def same_thread_condition(
        self, thread_id: str, metadata: Mapping[str, Any]
    ) -> tuple[str, tuple[Any, ...]] | None:
        """(SQL condition with `?` placeholders, its parameters) that holds while the thread exists with
        this metadata, for a caller acting on a row it read earlier that checks it in a statement of its
        own (a run server admitting a run); None where this dialect offers none."""
        sql = SAME_THREAD.get(self.dialect)
        if sql is None:
            return None
        return sql, (check_id(thread_id, "thread_id"), json.dumps(metadata, ensure_ascii=False))

    def thread_lock_statement(self, thread_id: str) -> tuple[str, tuple[Any, ...]]:
        """(SQL with `?` placeholders, its parameters): a query answering a row while the thread exists,
        which keeps it from being deleted until the caller's transaction ends, for a caller adding to the
        thread in its own transaction on this store's database (a run server admitting a run). A TTL
        sweep skips the thread meanwhile and a delete waits; one that deleted it first makes the query
        answer no row."""
        return LOCK_THREAD[self.dialect], (check_id(thread_id, "thread_id"),)

    async def _touch_thread(self, db: Db, thread_id: str) -> ThreadItems:
        """Create the thread row if needed; return its item cache (keyed by the row's incarnation).

        The insert does nothing when the row exists, so touching a thread writes no new row version.
        """
        cached = self.items.peek(thread_id)
        if cached is not None:
            # Trusted without a statement; the statements that depend on it check it (StaleThreadError).
            return cached
        now = self._ts(utc_now())
        await db.execute(self.q.INSERT_THREAD, (thread_id, random.randbytes(8).hex(), now, now))
        row = await db.fetchone(self.q.SELECT_INCARNATION, (thread_id,))
        assert row is not None
        return self.items.get(thread_id, row[0])

    @staticmethod
    def _metadata_seed(metadata: Mapping[str, Any]) -> str:
        """The part of a checkpoint's metadata that describes the thread (user_id, …), as JSON."""
        seed = {}
        for k, v in metadata.items():  # (a loop: every put builds it, a comprehension costs a frame)
            # A key with a NUL is left out: PostgreSQL's jsonb refused it (the run's put failed there and
            # not on SQLite or MySQL). LangGraph already took the NULs out of the values.
            if k not in CHECKPOINT_ONLY_METADATA and isinstance(v, _SEED_TYPES) and "\x00" not in k:
                seed[k] = v
        return json_text(seed)

    def _thread_from_row(self, row: Sequence[Any]) -> ThreadInfo:
        metadata = row[3]
        if isinstance(metadata, str):
            metadata = json.loads(metadata)
        return ThreadInfo(
            thread_id=row[0],
            created_at=as_datetime(row[1]),
            updated_at=as_datetime(row[2]),
            metadata=metadata,
            status=row[4],
            head_checkpoint_id=row[5],
            checkpoint_count=row[6],
            message_count=row[7],
            preview=row[8],
        )

    async def aget_thread(self, thread_id: str) -> ThreadInfo | None:
        """The thread's row, or None if no checkpoint was ever stored for it."""
        thread_id = check_id(thread_id, "thread_id")
        async with self._read() as db:
            row = await db.fetchone(self.q.SELECT_THREAD, (thread_id,))
        return self._thread_from_row(row) if row else None

    async def asearch_threads(
        self,
        *,
        metadata: Mapping[str, Any] | None = None,
        scope: Mapping[str, Any] | None = None,
        status: str | None = None,
        title: str | None = None,
        sort_by: str = "updated_at",
        sort_order: str = "desc",
        limit: int = 10,
        offset: int = 0,
    ) -> list[ThreadInfo]:
        """Threads whose metadata contains `metadata` and `scope`, with `status`, whose title contains
        `title`, ordered by `sort_by` (a column of `SORT_COLUMNS`), then by thread id in the same order.

        `metadata` is the filter a user asked for, held to MAX_FILTER_CONDITIONS; `scope` is what the
        caller adds to it whatever the user asked (a service's owner condition), not counted in that
        cap: a user's filter of the most conditions allowed stays allowed (`scope` wins a shared key)."""
        check_search(status, sort_by, sort_order, limit, offset, metadata, scope)
        clauses, params = self._thread_search_sql(_scoped(metadata, scope), status, title)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = self.q.SEARCH_THREADS.format(
            where=where, sort_by=SORT_COLUMNS[sort_by], sort_order=sort_order.upper()
        )
        async with self._read() as db:
            rows = await db.fetchall(sql, (*params, limit, offset))
        return [self._thread_from_row(r) for r in rows]

    async def acount_threads(
        self,
        *,
        metadata: Mapping[str, Any] | None = None,
        scope: Mapping[str, Any] | None = None,
        status: str | None = None,
        title: str | None = None,
    ) -> int:
        """How many threads `asearch_threads` finds with these arguments, on every page."""
        check_search(status, "updated_at", "desc", 0, 0, metadata, scope)
        clauses, params = self._thread_search_sql(_scoped(metadata, scope), status, title)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        async with self._read() as db:
            row = await db.fetchone(self.q.COUNT_THREADS.format(where=where), params)
        return int(row[0]) if row else 0

    async def aupdate_thread(
        self,
        thread_id: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        title: str | None = None,
        status: str | None = None,
    ) -> ThreadInfo:
        """Merge `metadata` (and `title`) into the thread's metadata; set its status. Creates the row."""
        check_search(status, "updated_at", "desc", 0, 0)
        thread_id = check_id(thread_id, "thread_id")
        patch = dict(metadata or {})
        if title is not None:
            patch["title"] = title
        check_document(patch, "metadata")  # before the row is touched: refused alike on every dialect
        async with self._write() as db:
            await self._touch_thread(db, thread_id)
            row = await db.fetchone(self.q.SELECT_THREAD_FOR_UPDATE, (thread_id,))
            assert row is not None
            current = self._thread_from_row(row)
            merged = {**current.metadata, **patch}
            await db.execute(
                self.q.UPDATE_THREAD,
                (
                    self._json_param(json.dumps(merged, ensure_ascii=False)),
                    status or None,
                    self._ts(utc_now()),
                    thread_id,
                ),
            )
            row = await db.fetchone(self.q.SELECT_THREAD, (thread_id,))
        assert row is not None
        return self._thread_from_row(row)
