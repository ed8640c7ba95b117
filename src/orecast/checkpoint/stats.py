"""Usage figures of a store: active threads, turns, tool ranking, size per table (`orecast db stats`).

Plain SQL over the threads table, the checkpoints' metadata and the `tool_call_audit` table (the tool
ranking with p50/p95 durations, and the recent failed calls: see `audit.py`). Statements that need a
dialect's JSON operators are kept per dialect; a dialect without them reports `None` there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from orecast.checkpoint.audit import ToolSummary
from orecast.checkpoint.base import OrecastCheckpointer
from orecast.checkpoint.sweep import sweep_status

# `{p}` is the driver's placeholder.
COUNT_THREADS = "SELECT COUNT(*), COALESCE(SUM(message_count), 0) FROM threads"
COUNT_ACTIVE_THREADS = "SELECT COUNT(*) FROM threads WHERE updated_at >= {p}"
# A turn is a root checkpoint written from the user's input; its `ts` is ISO-8601 in UTC, so it compares
# as text. Scans the checkpoints table: a maintenance query, not one for each request.
COUNT_TURNS_SINCE = {
    "sqlite": """
SELECT COUNT(*) FROM checkpoints
WHERE checkpoint_ns = '' AND json_extract(metadata, '$.source') = 'input'
  AND json_extract(checkpoint, '$.ts') >= ?""",
    "postgresql": """
SELECT COUNT(*) FROM checkpoints
WHERE checkpoint_ns = '' AND metadata->>'source' = 'input' AND checkpoint->>'ts' >= %s""",
    "mysql": """
SELECT COUNT(*) FROM checkpoints
WHERE checkpoint_ns = '' AND JSON_UNQUOTE(JSON_EXTRACT(metadata, '$.source')) = 'input'
  AND JSON_UNQUOTE(JSON_EXTRACT(checkpoint, '$.ts')) >= %s""",
}
WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7)}
RECENT_FAILURES = 20


@dataclass
class StoreStats:
    """What `db stats` shows. Windows are the last 24 hours and the last 7 days before `at`."""

    at: datetime
    dialect: str
    threads: int
    messages: int
    active_threads: dict[str, int]
    turns: dict[str, int | None]
    tools: list[ToolSummary]  # all time, most called first
    tables: dict[str, dict[str, Any]]
    bytes: int | None
    # The newest calls that failed or were cancelled: thread_id, checkpoint_ns, checkpoint_id, run_id,
    # tool, status, error, started_at (ISO-8601).
    recent_failures: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # The last thread sweep (`sweep.sweep_status`); its values are None when none ever ran.
    sweep: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["at"] = self.at.isoformat()
        out["sweep"] = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in self.sweep.items()}
        for tool, row in zip(self.tools, out["tools"], strict=True):
            row["error_rate"] = round(tool.error_rate, 4)
        return out


async def store_stats(saver: OrecastCheckpointer, *, now: datetime, top: int = 10) -> StoreStats:
    """The store's figures as of `now` (an aware datetime; injected so tests control the clock)."""
    p = "?" if saver.dialect == "sqlite" else "%s"
    sizes = await saver.astats()
    turns_sql = COUNT_TURNS_SINCE.get(saver.dialect)
    async with saver._read() as db:
        threads, messages = await db.fetchone(COUNT_THREADS)
        active, turns = {}, {}
        for name, span in {**WINDOWS, "total": None}.items():
            since = now - span if span is not None else None
            if since is not None:
                row = await db.fetchone(COUNT_ACTIVE_THREADS.format(p=p), (saver._ts(since),))
                active[name] = int(row[0])
            if turns_sql is None:
                turns[name] = None
                continue
            cutoff = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00") if since else ""
            turns[name] = int((await db.fetchone(turns_sql, (cutoff,)))[0])
    tools = await saver.aaudit_summary(top=top)
    failures = await saver.arecent_tool_failures(RECENT_FAILURES)
    notes = [] if turns_sql else [f"turns are not counted on {saver.dialect}"]
    return StoreStats(
        at=now,
        dialect=saver.dialect,
        threads=int(threads),
        messages=int(messages),
        active_threads=active,
        turns=turns,
        tools=tools,
        tables=sizes["tables"],
        bytes=sizes.get("bytes"),
        recent_failures=failures,
        notes=notes,
        sweep=await sweep_status(saver),
    )
