"""How often a forecast's bands held the outcome in the recent past, at the horizon asked.

The PMI's answer said its bands were "nearly always" right, from one measurement at one month ahead.
At six months and more the 80 % band held every outcome from 2021 on: the PMI swings around 50 and
comes back, while a random walk's band widens with the square root of the horizon, and the fit
window holds 2008-2009's large swings. The answer now gives the measured share at its own horizon.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from orecast import market
from orecast.market.errors import MarketError

SINCE = "2021-01"  # after the COVID months, which the fit leaves out


def measured(series: str, method: str, steps: int) -> dict[str, Any] | None:
    """Origins, and the share of outcomes inside the 80 % / 95 % bands `steps` periods ahead, of
    `method` on `series` from `SINCE` on; None when it cannot be measured."""
    try:
        result = market.backtest(series, steps, method, start=SINCE)
    except MarketError:
        return None
    return {
        "origins": result.n_origins,
        "first": result.first_origin.date().isoformat(),
        "last": result.last_origin.date().isoformat(),
        "steps": steps,
        "80": result.coverage.get(80),
        "95": result.coverage.get(95),
    }


def swings(series: str, used: dict[str, float]) -> tuple[float, float]:
    """The standard deviation of one-period changes over the whole history and since 2015, with
    the shocks the fit leaves out replaced as the fit replaces them (`used`: date → value)."""
    values = market.load_series(series).copy()
    for day, value in used.items():
        values[pd.Timestamp(day)] = value
    changes = values.diff().dropna()
    return float(changes.std(ddof=1)), float(changes["2015":].std(ddof=1))
