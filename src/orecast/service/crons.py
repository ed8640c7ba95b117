"""Crons: runs started on a schedule (rows of `service_crons`), their schedules and their SQL.

Dates are stored as UTC ISO text with microseconds (`stored`), so that SQL compares them as text on
every dialect. A firing is claimed with one `UPDATE … WHERE next_run_date = <the date read>`: when
several replicas see the same due cron, only the one whose update changed the row fires it.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from orecast.service.db import Db
from orecast.service.errors import Invalid, NotFound

CRON_COLUMNS = """cron_id, assistant_id, thread_id, owner, auth_user, schedule, timezone, end_time,
    next_run_date, payload, metadata, on_run_completed, enabled, created_at, updated_at"""
INSERT_CRON = f"INSERT INTO service_crons ({CRON_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
SELECT_CRON = f"SELECT {CRON_COLUMNS} FROM service_crons WHERE cron_id = ?"
# `{where}`: the search's equalities; `{order}`: a column of SORT_BY and a direction
SELECT_CRONS = f"SELECT {CRON_COLUMNS} FROM service_crons WHERE {{where}} ORDER BY {{order}}, cron_id {{direction}}"
# Due: enabled, its date come, and that date not past its end. Oldest first, a bounded batch a tick.
SELECT_DUE = f"""SELECT {CRON_COLUMNS} FROM service_crons
WHERE enabled = 1 AND next_run_date IS NOT NULL AND next_run_date <= ?
  AND (end_time IS NULL OR next_run_date <= end_time)
ORDER BY next_run_date, cron_id LIMIT ?"""
# The claim of one firing: only the replica that still sees the date it read changes the row.
CLAIM_FIRING = """UPDATE service_crons SET next_run_date = ?
WHERE cron_id = ? AND next_run_date = ? AND enabled = 1"""
UPDATE_CRON = """UPDATE service_crons SET schedule = ?, timezone = ?, end_time = ?, next_run_date = ?,
    payload = ?, metadata = ?, on_run_completed = ?, enabled = ?, updated_at = ? WHERE cron_id = ?"""
DELETE_CRON = "DELETE FROM service_crons WHERE cron_id = ?"

# `sort_by` of the SDK's `CronSortBy` → its column
SORT_BY = {
    "cron_id": "cron_id", "assistant_id": "assistant_id", "thread_id": "thread_id",
    "created_at": "created_at", "updated_at": "updated_at", "next_run_date": "next_run_date",
    "end_time": "end_time",
}
SCHEDULE_HELP = (
    "use the standard 5-field cron format (minute hour day_of_month month day_of_week), "
    "e.g. '0 8 * * 1-5' for 08:00 on weekdays"
)


def stored(when: datetime) -> str:
    """`when` as the table keeps it: UTC, always with microseconds (text order is time order)."""
    return when.astimezone(UTC).isoformat(timespec="microseconds")


def shown(text: str | None) -> str | None:
    """A stored date as the API shows it (as langgraph-api: no microseconds when there are none)."""
    return None if text is None else datetime.fromisoformat(text).isoformat()


def check_schedule(schedule: str, timezone: str | None) -> None:
    """422 unless `schedule` is a 5-field cron expression and `timezone` an IANA zone."""
    if len(schedule.split()) != 5 or not croniter.is_valid(schedule):
        raise Invalid(f"schedule: invalid cron schedule {schedule!r}; {SCHEDULE_HELP}", [
            {"field": "schedule", "reason": SCHEDULE_HELP}
        ])
    if timezone is not None:
        try:
            ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise Invalid(f"timezone: unknown time zone {timezone!r}", [
                {"field": "timezone", "reason": "an IANA time zone, e.g. 'Asia/Shanghai'"}
            ]) from None


def next_date(schedule: str, timezone: str | None, after: datetime) -> datetime:
    """The schedule's first time after `after`, read in `timezone` (UTC when None), in UTC."""
    zone = ZoneInfo(timezone) if timezone else UTC
    return croniter(schedule, after.astimezone(zone)).get_next(datetime).astimezone(UTC)


def require_cron_id(cron_id: str) -> None:
    try:
        uuid.UUID(cron_id)
    except ValueError:
        raise Invalid("cron_id: must be a UUID") from None


@dataclass(frozen=True)
class CronRecord:
    cron_id: str
    assistant_id: str
    thread_id: str | None
    owner: str | None  # the API-key user who created it
    auth_user: dict[str, Any] | None  # custom auth: `{user, permissions}` of its creator, who its runs run as
    schedule: str
    timezone: str | None
    end_time: str | None
    next_run_date: str | None
    payload: dict[str, Any]
    metadata: dict[str, Any]
    on_run_completed: str | None
    enabled: bool
    created_at: str
    updated_at: str

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> CronRecord:
        values = list(row)
        values[4] = json.loads(values[4]) if values[4] else None
        values[9], values[10] = json.loads(values[9]), json.loads(values[10])
        values[12] = bool(values[12])
        return cls(*values)

    def row(self) -> tuple[Any, ...]:
        return (
            self.cron_id, self.assistant_id, self.thread_id, self.owner,
            None if self.auth_user is None else json.dumps(self.auth_user, ensure_ascii=False, default=str),
            self.schedule, self.timezone, self.end_time, self.next_run_date,
            json.dumps(self.payload, ensure_ascii=False), json.dumps(self.metadata, ensure_ascii=False),
            self.on_run_completed, int(self.enabled), self.created_at, self.updated_at,
        )

    def public(self) -> dict[str, Any]:
        """The SDK's `Cron`."""
        identity = (self.auth_user or {}).get("user", {}).get("identity")
        return {
            "cron_id": self.cron_id,
            "assistant_id": self.assistant_id,
            "thread_id": self.thread_id,
            "user_id": self.owner or identity or "",
            "end_time": shown(self.end_time),
            "schedule": self.schedule,
            "timezone": self.timezone,
            "payload": self.payload,
            "next_run_date": shown(self.next_run_date),
            "metadata": self.metadata,
            "on_run_completed": self.on_run_completed,
            "enabled": self.enabled,
            "created_at": shown(self.created_at),
            "updated_at": shown(self.updated_at),
        }


class CronRepo:
    """The crons table."""

    def __init__(self, db: Db) -> None:
        self.db = db

    async def insert(self, cron: CronRecord) -> None:
        async with self.db.transaction() as tx:
            await tx.send(INSERT_CRON, cron.row())

    async def get(self, cron_id: str) -> CronRecord | None:
        async with self.db.read() as tx:
            row = await tx.fetchone(SELECT_CRON, (cron_id,))
        return CronRecord.from_row(row) if row else None

    async def require(self, cron_id: str) -> CronRecord:
        cron = await self.get(cron_id)
        if cron is None:
            raise NotFound(f"cron {cron_id} not found")
        return cron

    async def update(self, cron: CronRecord) -> None:
        async with self.db.transaction() as tx:
            await tx.send(UPDATE_CRON, (*cron.row()[5:13], cron.updated_at, cron.cron_id))

    async def delete(self, cron_id: str) -> None:
        async with self.db.transaction() as tx:
            await tx.send(DELETE_CRON, (cron_id,))

    async def select(
        self, equal: dict[str, Any], sort_by: str = "created_at", sort_order: str = "desc"
    ) -> list[CronRecord]:
        """Every cron whose columns have the values of `equal` (its keys are column names), sorted."""
        where = " AND ".join(f"{column} = ?" for column in equal) or "1 = 1"
        direction = "ASC" if sort_order == "asc" else "DESC"
        sql = SELECT_CRONS.format(where=where, order=f"{SORT_BY[sort_by]} {direction}", direction=direction)
        async with self.db.read() as tx:
            rows = await tx.fetchall(sql, tuple(equal.values()))
        return [CronRecord.from_row(r) for r in rows]

    async def due(self, now: datetime, limit: int) -> list[CronRecord]:
        async with self.db.read() as tx:
            rows = await tx.fetchall(SELECT_DUE, (stored(now), limit))
        return [CronRecord.from_row(r) for r in rows]

    async def claim(self, cron: CronRecord, next_run_date: str | None) -> bool:
        """Move `cron` from the date it was read with to `next_run_date`; True only for the one
        caller (of any process) whose update found that date still there."""
        async with self.db.transaction() as tx:
            return await tx.execute(CLAIM_FIRING, (next_run_date, cron.cron_id, cron.next_run_date)) == 1
