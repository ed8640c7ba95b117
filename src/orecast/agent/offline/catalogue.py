"""What the offline analyst knows about the series: names, unit, frequency and last date.

Read once per process from `orecast.market.list_series()` (static bundled data, so the cache can
never go stale); the analyst needs it to turn "past 3 years" or "6 months ahead" into dates and
periods of the right frequency. Knowing names and ranges is not inventing numbers: every value
in an answer still comes from a tool result.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import pandas as pd


@dataclass(frozen=True, slots=True)
class SeriesFacts:
    id: str
    name_zh: str
    name_en: str
    unit: str
    frequency: str
    start: str
    end: str


@lru_cache(maxsize=1)
def catalogue() -> dict[str, SeriesFacts]:
    from orecast import market

    out: dict[str, SeriesFacts] = {}
    for info in market.list_series():
        d = info.to_dict()
        out[str(d["id"])] = SeriesFacts(
            id=str(d["id"]),
            name_zh=str(d.get("name_zh", d["id"])),
            name_en=str(d.get("name_en", d["id"])),
            unit=str(d.get("unit", "")),
            frequency=str(d.get("frequency", "monthly")),
            start=str(d.get("start", "")),
            end=str(d.get("end", "")),
        )
    return out


def periods(series: str, n: int, unit: str) -> int:
    """`n` months/weeks/days/years as a number of periods of `series`' frequency (at least 1)."""
    freq = catalogue().get(series)
    frequency = freq.frequency if freq else "monthly"
    per = {
        "daily": {"day": 1, "week": 5, "month": 21, "year": 252},
        "weekly": {"day": 1 / 5, "week": 1, "month": 4.33, "year": 52},
        "monthly": {"day": 1 / 21, "week": 1 / 4.33, "month": 1, "year": 12},
        "quarterly": {"day": 1 / 63, "week": 1 / 13, "month": 1 / 3, "year": 4},
        "annual": {"day": 1 / 252, "week": 1 / 52, "month": 1 / 12, "year": 1},
    }[frequency]
    return max(1, round(n * per[unit]))


def frequency(series: str) -> str:
    facts = catalogue().get(series)
    return facts.frequency if facts else "monthly"


def default_horizon(series: str) -> int:
    freq = catalogue().get(series)
    return {"daily": 20, "weekly": 8, "monthly": 6, "quarterly": 4, "annual": 3}.get(
        freq.frequency if freq else "monthly", 6
    )


def lookback_start(series: str, n: int, unit: str) -> str | None:
    """Start date of 'the past n units' counted back from the series' last date."""
    facts = catalogue().get(series)
    if not facts or not facts.end:
        return None
    end = pd.Timestamp(facts.end)
    offset = {
        "day": pd.DateOffset(days=n),
        "week": pd.DateOffset(weeks=n),
        "month": pd.DateOffset(months=n),
        "year": pd.DateOffset(years=n),
    }[unit]
    return (end - offset).date().isoformat()


def name(series: str, zh: bool) -> str:
    facts = catalogue().get(series)
    if not facts:
        return series
    return facts.name_zh if zh else facts.name_en


def latest_value(series: str) -> float:
    """The last value of a bundled series: to read which unit a bare number is in, not to quote."""
    from orecast import market

    return float(market.load_series(series).iloc[-1])
