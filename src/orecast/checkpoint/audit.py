"""Tool-call audit: which tools ran, with what arguments, how long, what came back, and who decided.

Two sources, one module:

* the `tool_call_audit` table (migration sqlite/004, postgres/005, mysql/004): one row per *attempt* of a
  tool call, written as the call runs by the agent's tool-call middleware (`orecast.agent.audit`)
  through `abegin_tool_call` / `aend_tool_call` / `arecord_tool_call` — thread, namespace, the
  checkpoint the call ran from, run id, arguments, a size-capped result, status, error, start, end,
  duration and attempt number. Read with `aaudit_tool_calls` and `aaudit_summary`;
* the `tool_calls` view (migration 002): the calls of a thread read back from its stored
  messages (`atool_calls`), for any graph, audited or not — plain SQL over the stored JSON.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from orecast.checkpoint.core import SaverCore, as_datetime, utc_now
from orecast.checkpoint.ids import MAX_KEY_BYTES, check_id

AuditStatus = Literal["running", "ok", "error", "rejected", "edited", "cancelled"]
AUDIT_STATUSES: tuple[str, ...] = ("running", "ok", "error", "rejected", "edited", "cancelled")
# What a row keeps of a result and of an error: the whole value stays in the checkpoint.
RESULT_LIMIT = 2048
ERROR_LIMIT = 2048
# Arguments bigger than this (a file written whole, say) are kept as a preview.
ARGS_LIMIT = 64 * 1024
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call found in the stored messages (`status` "pending" while no result is stored)."""

    item_no: int
    call_id: str | None
    tool: str
    args: dict[str, Any]
    result: Any
    status: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ToolCallAudit:
    """One attempt of a tool call, as the audit table keeps it."""

    audit_id: str
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str | None
    run_id: str | None
    call_id: str
    tool: str
    args: Any
    result: str | None
    status: str
    error: str | None
    started_at: datetime
    ended_at: datetime | None
    duration_ms: float | None
    attempt: int

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["started_at"] = self.started_at.isoformat()
        out["ended_at"] = self.ended_at.isoformat() if self.ended_at else None
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], thread_id: str) -> ToolCallAudit:
        """A row from `to_dict` (an archive's record); ValueError/KeyError/TypeError if malformed."""
        ended = data.get("ended_at")
        duration = data.get("duration_ms")
        return cls(
            audit_id="",
            thread_id=thread_id,
            checkpoint_ns=str(data.get("checkpoint_ns") or ""),
            checkpoint_id=None if data.get("checkpoint_id") is None else str(data["checkpoint_id"]),
            run_id=None if data.get("run_id") is None else str(data["run_id"]),
            call_id=str(data["call_id"]),
            tool=str(data["tool"]),
            args=data.get("args", {}),
            result=None if data.get("result") is None else str(data["result"]),
            status=check_status(str(data["status"])),
            error=None if data.get("error") is None else str(data["error"]),
            started_at=_aware(str(data["started_at"])),
            ended_at=_aware(str(ended)) if ended is not None else None,
            duration_ms=None if duration is None else float(duration),
            attempt=int(data.get("attempt", 1)),
        )


@dataclass(frozen=True)
class ToolSummary:
    """A tool's calls since some time: how many, how many failed, and how long they took."""

    tool: str
    calls: int
    errors: int
    pending: int  # started and not ended (still running, or their process died)
    p50_ms: float | None
    p95_ms: float | None

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "error_rate": round(self.error_rate, 4)}


def capped(text: str | None, limit: int) -> str | None:
    """`text` cut to at most `limit` bytes of UTF-8 (on a character boundary, marked with "…"), NULs
    replaced: what an audit row keeps of a result or an error."""
    if text is None:
        return None
    text = text.replace("\x00", "\ufffd")
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return data.decode("utf-8")
    return data[: limit - 3].decode("utf-8", "ignore") + "…"


def _plain(value: Any) -> Any:
    """`value` as plain JSON without NUL characters (PostgreSQL's JSONB refuses them)."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {str(k).replace("\x00", "\ufffd"): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)


def args_json(args: Any) -> str:
    text = json.dumps(_plain(args), ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8")) > ARGS_LIMIT:
        text = json.dumps({"truncated": capped(text, RESULT_LIMIT)}, ensure_ascii=False)
    return text


def percentile(ordered: Sequence[float], fraction: float) -> float | None:
    """The `fraction` percentile of sorted values, interpolated as PostgreSQL's percentile_cont."""
    if not ordered:
        return None
    position = fraction * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def check_status(status: str) -> str:
    if status not in AUDIT_STATUSES:
        raise ValueError(f"unknown tool-call status {status!r}; expected one of {', '.join(AUDIT_STATUSES)}")
    return status


def _aware(value: Any) -> datetime:
    moment = as_datetime(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class AuditMixin(SaverCore):
    """The saver's tool-call audit: written by `orecast.agent.audit`, read by `orecast audit` and `db stats`."""

    # -- the calls in the stored messages ----------------------------------------------------------

    async def atool_calls(self, thread_id: str) -> list[ToolCallRecord]:
        """Every tool call in the thread's messages (all namespaces, subagents included), in order."""
        thread_id = check_id(thread_id, "thread_id")
        async with self._read() as db:
            rows = await db.fetchall(self.q.SELECT_TOOL_CALLS, (thread_id,))
        return [
            ToolCallRecord(
                item_no=item_no,
                call_id=call_id,
                tool=tool,
                args=self.codec.loads(args) if args is not None else {},
                result=self.codec.loads(result) if result is not None else None,
                status=status,
            )
            for item_no, call_id, tool, args, result, status in rows
        ]

    # -- writing the audit -------------------------------------------------------------------------

    async def abegin_tool_call(
        self,
        *,
        thread_id: str,
        call_id: str,
        tool: str,
        args: Any,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
        run_id: str | None = None,
        started_at: datetime | None = None,
    ) -> str:
        """Record that a tool call starts (status `running`); returns the row's id for `aend_tool_call`.

        Its attempt is one more than the rows of the same call id in the thread: a call run again after
        a crash (or a cancellation) is attempt 2.
        """
        return await self._insert_tool_call(
            thread_id=thread_id, call_id=call_id, tool=tool, args=args, checkpoint_ns=checkpoint_ns,
            checkpoint_id=checkpoint_id, run_id=run_id, status="running", started_at=started_at or utc_now(),
        )

    async def aend_tool_call(
        self,
        audit_id: str,
        *,
        status: str,
        result: str | None = None,
        error: str | None = None,
        duration_ms: float | None = None,
        ended_at: datetime | None = None,
        args: Any = None,
    ) -> None:
        """Record how a started call ended. `args`, when given, replace the recorded arguments (the ones a
        human's edit made the call run with)."""
        check_status(status)
        async with self._write() as db:
            await db.execute(
                self.q.END_TOOL_CALL,
                (
                    status,
                    capped(result, RESULT_LIMIT),
                    capped(error, ERROR_LIMIT),
                    self._ts(ended_at or utc_now()),
                    duration_ms,
                    self._json_param(args_json(args)) if args is not None else None,
                    audit_id,
                ),
            )

    async def adiscard_tool_call(self, audit_id: str) -> None:
        """Forget a started call that did not run: it stopped for a human's answer and will start again."""
        async with self._write() as db:
            await db.execute(self.q.DELETE_TOOL_CALL, (audit_id,))

    async def arecord_tool_call(
        self,
        *,
        thread_id: str,
        call_id: str,
        tool: str,
        args: Any,
        status: str,
        result: str | None = None,
        error: str | None = None,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
        run_id: str | None = None,
        started_at: datetime | None = None,
        duration_ms: float | None = 0.0,
        once: bool = False,
    ) -> str | None:
        """Record a call that never ran as such (a human rejected it) in one row.

        `once`: do nothing (None) when the thread already has a row of this call id with this status — a
        decision seen again after a restart is not a second decision.
        """
        return await self._insert_tool_call(
            thread_id=thread_id, call_id=call_id, tool=tool, args=args, checkpoint_ns=checkpoint_ns,
            checkpoint_id=checkpoint_id, run_id=run_id, status=status, started_at=started_at or utc_now(),
            result=result, error=error, duration_ms=duration_ms, ended=True, once=once,
        )

    async def _insert_tool_call(
        self,
        *,
        thread_id: str,
        call_id: str,
        tool: str,
        args: Any,
        checkpoint_ns: str,
        checkpoint_id: str | None,
        run_id: str | None,
        status: str,
        started_at: datetime,
        result: str | None = None,
        error: str | None = None,
        duration_ms: float | None = None,
        ended: bool = False,
        once: bool = False,
    ) -> str | None:
        thread_id = check_id(thread_id, "thread_id")
        call_id = check_id(call_id, "tool call id")
        tool = check_id(tool, "tool name")
        checkpoint_ns = check_id(checkpoint_ns, "checkpoint_ns")
        if checkpoint_id is not None:
            checkpoint_id = check_id(checkpoint_id, "checkpoint_id", MAX_KEY_BYTES)
        if run_id is not None:
            run_id = check_id(run_id, "run_id", MAX_KEY_BYTES)
        check_status(status)
        audit_id = secrets.token_hex(16)
        ended_at = None
        if ended:
            ended_at = self._ts(started_at + timedelta(milliseconds=duration_ms or 0))
        async with self._write() as db:
            if once and await db.fetchone(self.q.TOOL_CALL_HAS_STATUS, (thread_id, call_id, status)):
                return None
            await db.execute(
                self.q.INSERT_TOOL_CALL,
                (
                    audit_id, thread_id, checkpoint_ns, checkpoint_id, run_id, call_id, tool,
                    self._json_param(args_json(args)), capped(result, RESULT_LIMIT), status,
                    capped(error, ERROR_LIMIT), self._ts(started_at), ended_at, duration_ms,
                    thread_id, call_id,
                ),
            )
        return audit_id

    async def aimport_tool_calls(self, thread_id: str, rows: Sequence[ToolCallAudit]) -> int:
        """Store audit rows as they are (an archive's, `threads import`) under `thread_id`, new row ids."""
        thread_id = check_id(thread_id, "thread_id")
        params = []
        for row in rows:
            params.append(
                (
                    secrets.token_hex(16), thread_id, check_id(row.checkpoint_ns, "checkpoint_ns"),
                    None if row.checkpoint_id is None else check_id(row.checkpoint_id, "checkpoint_id", MAX_KEY_BYTES),
                    None if row.run_id is None else check_id(row.run_id, "run_id", MAX_KEY_BYTES),
                    check_id(row.call_id, "tool call id"), check_id(row.tool, "tool name"),
                    self._json_param(args_json(row.args)), capped(row.result, RESULT_LIMIT),
                    check_status(row.status), capped(row.error, ERROR_LIMIT), self._ts(row.started_at),
                    self._ts(row.ended_at) if row.ended_at else None, row.duration_ms, int(row.attempt),
                )
            )
        if params:
            async with self._write() as db:
                await db.executemany(self.q.INSERT_TOOL_CALL_AS_IS, params)
        return len(params)

    # -- reading the audit -------------------------------------------------------------------------

    async def aaudit_tool_calls(
        self,
        *,
        thread_id: str | None = None,
        tool: str | None = None,
        status: str | None = None,
        since: datetime | None = None,
        limit: int | None = 50,
    ) -> list[ToolCallAudit]:
        """Audited tool calls, newest first, filtered by thread, tool, status and start time (None: all)."""
        if limit is None:
            limit = 2**62
        if limit < 0:
            raise ValueError("limit must not be negative")
        wanted: dict[str, Any] = {}
        if thread_id is not None:
            wanted["thread_id"] = check_id(thread_id, "thread_id")
        if tool is not None:
            wanted["tool"] = check_id(tool, "tool name")
        if status is not None:
            wanted["status"] = check_status(status)
        if since is not None:
            wanted["since"] = self._ts(since)
        clauses = [self.q.AUDIT_WHERE[key] for key in wanted]
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        async with self._read() as db:
            rows = await db.fetchall(self.q.SELECT_AUDIT.format(where=where), (*wanted.values(), limit))
        return [self._audit_from_row(row) for row in rows]

    def _audit_from_row(self, row: Sequence[Any]) -> ToolCallAudit:
        (audit_id, thread_id, ns, cid, run_id, call_id, tool, args, result, status, error,
         started_at, ended_at, duration_ms, attempt) = row
        return ToolCallAudit(
            audit_id=audit_id,
            thread_id=thread_id,
            checkpoint_ns=ns,
            checkpoint_id=cid,
            run_id=run_id,
            call_id=call_id,
            tool=tool,
            args=json.loads(args) if isinstance(args, str | bytes) else args,
            result=result,
            status=status,
            error=error,
            started_at=_aware(started_at),
            ended_at=_aware(ended_at) if ended_at is not None else None,
            duration_ms=float(duration_ms) if duration_ms is not None else None,
            attempt=int(attempt),
        )

    async def aaudit_summary(self, *, since: datetime | None = None, top: int = 50) -> list[ToolSummary]:
        """Per tool (most called first, at most `top`): calls, errors, pending, p50/p95 of `duration_ms`.

        Percentiles are of the calls that ended (rejected calls, which never ran, left out).
        """
        cutoff = self._ts(since or EPOCH)
        async with self._read() as db:
            counts = await db.fetchall(self.q.AUDIT_TOOL_COUNTS, (cutoff, top))
            names = [str(row[0]) for row in counts]
            durations: dict[str, list[float]] = {}
            if names:
                for tool, duration in await db.fetchall(
                    self.q.AUDIT_TOOL_DURATIONS, (cutoff, self._json_param(json.dumps(names)))
                ):
                    durations.setdefault(str(tool), []).append(float(duration))
        out = []
        for tool, calls, errors, pending in counts:
            ordered = sorted(durations.get(str(tool), []))
            out.append(
                ToolSummary(
                    str(tool), int(calls), int(errors or 0), int(pending or 0),
                    _rounded(percentile(ordered, 0.5)), _rounded(percentile(ordered, 0.95)),
                )
            )
        return out

    async def arecent_tool_failures(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest calls that ended in an error or were cancelled."""
        async with self._read() as db:
            rows = await db.fetchall(self.q.SELECT_RECENT_FAILURES, (limit,))
        return [
            {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": cid,
                "run_id": run_id,
                "tool": tool,
                "status": status,
                "error": error,
                "started_at": _aware(started_at).isoformat(),
            }
            for thread_id, ns, cid, run_id, tool, status, error, started_at in rows
        ]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
