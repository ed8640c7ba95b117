"""How fast the store grows: per UTC day, the checkpoints written, the turns taken and the bytes they
stored (`orecast db stats`, the web page's operations view).

Dated by each checkpoint's own `ts` (ISO-8601 in UTC, so its first ten characters are the day). The
bytes are the payload of that day's checkpoint documents and metadata plus the pending writes stored
against them (a node's output, new messages included, is written there first). Channel values and
message items carry no date, so they are not counted: the figure is what a day's work wrote, not
the change of the tables' size on disk (`astats` gives that size now).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from orecast.checkpoint.base import OrecastCheckpointer

DAYS = 14

# One row per day since the cutoff: day, checkpoints, turns (root checkpoints written from the
# user's input), bytes. The parameter is the cutoff as `YYYY-MM-DD`. A scan of the checkpoints
# table: a maintenance query, not one for each request.
GROWTH_BY_DAY = {
    "sqlite": """
SELECT substr(json_extract(c.checkpoint, '$.ts'), 1, 10) AS day, COUNT(*),
       SUM(CASE WHEN c.checkpoint_ns = '' AND json_extract(c.metadata, '$.source') = 'input' THEN 1 ELSE 0 END),
       SUM(length(CAST(c.checkpoint AS BLOB)) + length(CAST(c.metadata AS BLOB))
           + COALESCE((SELECT SUM(COALESCE(length(CAST(w.value AS BLOB)), 0) + COALESCE(length(w.blob), 0))
                       FROM writes AS w
                       WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
                         AND w.checkpoint_id = c.checkpoint_id), 0))
FROM checkpoints AS c
WHERE json_extract(c.checkpoint, '$.ts') >= ?
GROUP BY day ORDER BY day""",
    "postgresql": """
SELECT left(c.checkpoint->>'ts', 10) AS day, COUNT(*),
       SUM(CASE WHEN c.checkpoint_ns = '' AND c.metadata->>'source' = 'input' THEN 1 ELSE 0 END),
       SUM(octet_length(c.checkpoint::text) + octet_length(c.metadata::text)
           + COALESCE((SELECT SUM(COALESCE(octet_length(w.value::text), 0) + COALESCE(octet_length(w.blob), 0))
                       FROM writes AS w
                       WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
                         AND w.checkpoint_id = c.checkpoint_id), 0))
FROM checkpoints AS c
WHERE c.checkpoint->>'ts' >= %s
GROUP BY day ORDER BY day""",
    "mysql": """
SELECT LEFT(JSON_UNQUOTE(JSON_EXTRACT(c.checkpoint, '$.ts')), 10) AS day, COUNT(*),
       SUM(CASE WHEN c.checkpoint_ns = '' AND JSON_UNQUOTE(JSON_EXTRACT(c.metadata, '$.source')) = 'input'
           THEN 1 ELSE 0 END),
       SUM(LENGTH(c.checkpoint) + LENGTH(c.metadata)
           + COALESCE((SELECT SUM(COALESCE(LENGTH(w.value), 0) + COALESCE(LENGTH(w.`blob`), 0))
                       FROM writes AS w
                       WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
                         AND w.checkpoint_id = c.checkpoint_id), 0))
FROM checkpoints AS c
WHERE JSON_UNQUOTE(JSON_EXTRACT(c.checkpoint, '$.ts')) >= %s
GROUP BY day ORDER BY day""",
}


@dataclass(frozen=True)
class DayGrowth:
    day: date
    checkpoints: int
    turns: int
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "day": self.day.isoformat()}


async def store_growth(saver: OrecastCheckpointer, *, now: datetime, days: int = DAYS) -> list[DayGrowth]:
    """The last `days` UTC days up to `now`'s, oldest first; a day with nothing written is all zeros."""
    if days < 1:
        raise ValueError("days must be at least 1")
    today = now.astimezone(UTC).date()
    first = today - timedelta(days=days - 1)
    async with saver._read() as db:
        rows = await db.fetchall(GROWTH_BY_DAY[saver.dialect], (first.isoformat(),))
    found = {str(day): (int(n), int(turns or 0), int(size or 0)) for day, n, turns, size in rows}
    out = []
    for offset in range(days):
        day = first + timedelta(days=offset)
        n, turns, size = found.get(day.isoformat(), (0, 0, 0))
        out.append(DayGrowth(day, n, turns, size))
    return out
