"""Small formatting helpers shared by the result objects' `to_dict()`."""

from __future__ import annotations

import math

import pandas as pd


def num(value: float | int | None, digits: int = 6) -> float | None:
    """A JSON-friendly number: `digits` significant digits but never fewer than 6 decimals, NaN and
    infinities as None. Significant digits alone turned the nickel high of 52,179.05 into 52179.1,
    and a change of -22.505023 % kept to 4 digits (-22.505, below the float) printed as -22.50."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    if value == 0:
        return 0.0
    return round(value, max(6, digits - 1 - math.floor(math.log10(abs(value)))))


def iso(date: pd.Timestamp | None) -> str | None:
    """A date as YYYY-MM-DD (no time: every bundled series is at most daily)."""
    return None if date is None else pd.Timestamp(date).date().isoformat()
