"""Likely contract-roll days of a continuous futures series.

The bundled futures are the exchange's continuous main contract, not roll-adjusted: the day the main
contract changes, the price jumps to the new contract's level (iron ore's later contracts often trade
several % lower), which is no market move. The files do not say which contract a day is, so a roll is
inferred from its marks: the price gaps at the open and either the open interest jumps (it is now
another contract's) or the volume collapses while the day still trades freely (the new contract
trades less than the old one did on its busy last day). A roll with a small calendar spread shows
no gap and is not found; it also moves the price little.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from orecast.market.catalog import get_spec
from orecast.market.errors import MarketError
from orecast.market.loaders import _read_bundled_csv

# Measured on the bundled files: days with both marks fall only in the roll months of the 1/5/9
# (rebar 1/5/10) contracts, about two a year per series, and take the iron ore moves beyond the daily
# limit (-14.9 % on 2017-03-22, -9.2 % on 2015-11-23, at a jump of 0.147). Real gaps keep their open
# interest (2019-02-11, 2020-02-03); at 0.10, iron ore's fall of 2014-03-10 (0.108) and coke's
# 2020-02-03 (0.121), both real, would be taken for rolls.
OPEN_INTEREST_JUMP = 0.14  # |log change| of the open interest from the day before
OPEN_GAP = 0.03  # |open / previous close - 1|
# Rolls whose open interest hardly moves (iron ore 2019-04-04, -7.87 %, a jump of -0.002; 2025-04-02,
# -4.41 %, 0.127): a larger gap and the volume falling to under 60 % of the day before. A day locked
# at its limit trades little too, so a day that closes at its extreme in the gap's direction is a
# real move (iron ore 2019-02-11, 2020-02-03, coking coal 2014-03-10). Measured on the five bundled
# futures this adds, besides those two, rebar and HRC 2018-11-28 (gaps of -9.8 % and -7.0 %, beyond
# SHFE's limit then, both rolling from the January to the May contract) and coking coal 2013-11-07
# (a one-day switch and back) and 2026-08-12 (+12.4 % in its August roll, as its +13.4 % of 2025-07-30).
QUIET_GAP = 0.04
VOLUME_FALL = -0.5  # log change of the volume from the day before
_COLUMNS = ("open_cny_per_t", "high_cny_per_t", "low_cny_per_t", "close_cny_per_t", "volume_lots",
            "open_interest_lots")


def likely_rolls(series_id: str) -> pd.DatetimeIndex:
    """The days `series_id` most likely rolled to another contract (empty for other series)."""
    try:
        spec = get_spec(series_id)
    except MarketError:  # not a bundled series: no contracts to roll
        return pd.DatetimeIndex([])
    frame = _read_bundled_csv(spec.file)
    if not set(_COLUMNS) <= set(frame.columns):
        return pd.DatetimeIndex([])
    interest = frame["open_interest_lots"].astype(float).where(lambda v: v > 0)
    jump = np.log(interest).diff().abs()
    signed = frame["open_cny_per_t"] / frame["close_cny_per_t"].shift(1) - 1
    gap = signed.abs()
    volume = np.log(frame["volume_lots"].astype(float).where(lambda v: v > 0)).diff()
    close = frame["close_cny_per_t"]
    locked = ((signed < 0) & (close <= frame["low_cny_per_t"])) | \
        ((signed > 0) & (close >= frame["high_cny_per_t"]))
    quiet = (gap >= QUIET_GAP) & (volume <= VOLUME_FALL) & ~locked
    return pd.DatetimeIndex(frame.index[((jump >= OPEN_INTEREST_JUMP) & (gap >= OPEN_GAP)) | quiet])
