"""The question's "now": today's date, or `ORECAST_TODAY` (YYYY-MM-DD) to replay a given day.

Relative dates ("last year", "上个月") and the staleness notes compare against this date, so an
evaluation or a test can pin it and get the same answer on any day.
"""

from __future__ import annotations

import os
from datetime import date

from orecast.agent.errors import AgentConfigError


def today() -> date:
    raw = os.environ.get("ORECAST_TODAY", "").strip()
    if not raw:
        return date.today()
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise AgentConfigError(f"ORECAST_TODAY must be a date YYYY-MM-DD; got {raw!r}") from None


# How old the last observation may be before an answer must call the data stale: the usual
# publication lag of each frequency (a monthly average dated the 1st appears about a month later).
STALE_AFTER_DAYS = {"daily": 7, "weekly": 14, "monthly": 62, "quarterly": 150, "annual": 550}


def freshness(last_date: str, frequency: str, now: date | None = None) -> dict[str, object]:
    """`{"last_date", "today", "age_days", "stale"}` for a series that ends on `last_date`."""
    now = now or today()
    age = (now - date.fromisoformat(last_date[:10])).days
    return {"last_date": last_date[:10], "today": now.isoformat(), "age_days": age,
            "stale": age > STALE_AFTER_DAYS.get(frequency, 62)}
