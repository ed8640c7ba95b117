"""Small formatting helpers shared by the result objects' `to_dict()`."""

from __future__ import annotations

import math

import pandas as pd


def num(value: float | int | None, digits: int = 6) -> float | None:
    """A JSON-friendly number: 6 significant digits, NaN and infinities as None."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


def iso(date: pd.Timestamp | None) -> str | None:
    """A date as YYYY-MM-DD (no time: every bundled series is at most daily)."""
    return None if date is None else pd.Timestamp(date).date().isoformat()
