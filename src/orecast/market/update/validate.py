"""Checks a downloaded table must pass before it replaces a bundled file.

The rules, per file (its series and their frequency and kind come from the catalogue):
- schema: exactly the bundled file's columns, a date in the first one, no duplicate dates;
- coverage: it ends no earlier than the bundled file, and overlaps it enough to compare;
- units: on the overlap, each series agrees with the bundled values (median relative difference at
  most `UNIT_TOLERANCE`): a file in US cents instead of dollars, or a different contract, fails;
- gaps: in the new rows, monthly data has every month and daily data no hole longer than
  `MAX_DAILY_GAP_DAYS` (Spring Festival and National Day closures are ~10 days);
- jumps: in the new rows, no step larger than `MAX_JUMP` for the series' kind.
Only the rows from the download's first date on are taken; older bundled rows are kept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from orecast.market.catalog import SPECS, SeriesSpec
from orecast.market.errors import MarketError

UNIT_TOLERANCE = 0.05
MIN_OVERLAP = {"monthly": 12, "daily": 60}
MAX_DAILY_GAP_DAYS = 21
# Largest accepted step between consecutive new values: log change for prices and rates, points
# for a diffusion index. Daily futures roll jumps reach 17 % (see data/README.md), exchange limit
# moves about 10 %; a monthly average moving 65 % is a unit or parsing error, not a market.
MAX_JUMP = {("monthly", "price"): 0.5, ("monthly", "index"): 0.5, ("daily", "price"): 0.25,
            ("daily", "fx"): 0.05, ("monthly", "diffusion"): 8.0}


class DataError(MarketError):
    """A download failed validation; the data in use is unchanged."""


def specs_of(file: str) -> list[SeriesSpec]:
    return [s for s in SPECS if s.file == file]


def _dates(frame: pd.DataFrame) -> pd.DatetimeIndex:
    first = frame.columns[0]
    fmt = "%Y" if first == "year" else "%Y-%m-%d"
    dates = pd.to_datetime(frame[first].astype(str), format=fmt, errors="coerce")
    if dates.isna().any():
        bad = frame[first][dates.isna()].iloc[0]
        raise DataError(f"unreadable date {bad!r} in column {first!r}")
    return pd.DatetimeIndex(dates)


def merge_and_validate(file: str, bundled: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """The table to install for `file`: bundled rows before the download, then the download.

    Raises `DataError` with one line naming the rule that failed."""
    if list(new.columns) != list(bundled.columns):
        raise DataError(
            f"{file}: columns {list(new.columns)} differ from the expected {list(bundled.columns)}"
        )
    if new.empty:
        raise DataError(f"{file}: the download has no rows")
    new = new.copy()
    new.index = _dates(new)
    if new.index.duplicated().any():
        raise DataError(f"{file}: duplicate date {new.index[new.index.duplicated()][0].date()}")
    new = new.sort_index()
    old = bundled.copy()
    old.index = _dates(old)
    if new.index[-1] < old.index[-1]:
        raise DataError(
            f"{file}: the download ends {new.index[-1].date()}, before the bundled data "
            f"({old.index[-1].date()})"
        )
    specs = specs_of(file)
    for spec in specs:
        _check_units(file, spec, old[spec.column], new[spec.column])
    merged = pd.concat([old[old.index < new.index[0]], new])
    fresh = merged[merged.index >= old.index[-1]]  # the junction plus every new row
    for spec in specs:
        _check_steps(file, spec, fresh[spec.column])
    merged.index = pd.RangeIndex(len(merged))
    return merged


def _numbers(values: pd.Series) -> pd.Series:
    return pd.to_numeric(values, errors="coerce")


def _check_units(file: str, spec: SeriesSpec, old: pd.Series, new: pd.Series) -> None:
    a, b = _numbers(old), _numbers(new)
    both = pd.concat([a, b], axis=1, join="inner").dropna()
    if spec.first_date is not None:
        both = both[both.index >= pd.Timestamp(spec.first_date)]
    need = MIN_OVERLAP.get(spec.frequency, 12)
    if len(both) < need:
        raise DataError(
            f"{file}: {spec.id} overlaps the bundled data on {len(both)} dates; "
            f"{need} are needed to check its units"
        )
    x, y = both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy()
    if spec.kind == "diffusion":
        diff = float(np.median(np.abs(y - x)))
        ok = diff <= 1.0
        what = f"median difference {diff:.2f} points"
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            diff = float(np.median(np.abs(y / x - 1)))
        ok = bool(np.isfinite(diff)) and diff <= UNIT_TOLERANCE
        what = f"median difference {100 * diff:.1f} %"
    if not ok:
        raise DataError(
            f"{file}: {spec.id} disagrees with the bundled values on their {len(both)} common "
            f"dates ({what}): wrong unit or series?"
        )


def _check_steps(file: str, spec: SeriesSpec, values: pd.Series) -> None:
    values = _numbers(values).dropna()
    if len(values) < 2:
        return
    dates = pd.DatetimeIndex(values.index)
    if spec.frequency == "monthly":
        months = dates.year * 12 + dates.month
        holes = np.flatnonzero(np.diff(months) != 1)
        if len(holes):
            i = holes[0]
            raise DataError(f"{file}: {spec.id} has a gap after {dates[i].date()} "
                            f"(next value {dates[i + 1].date()})")
    elif spec.frequency == "daily":
        days = np.diff(dates.values).astype("timedelta64[D]").astype(int)
        holes = np.flatnonzero(days > MAX_DAILY_GAP_DAYS)
        if len(holes):
            i = holes[0]
            raise DataError(f"{file}: {spec.id} has no values from {dates[i].date()} to "
                            f"{dates[i + 1].date()} ({days[i]} days)")
    limit = MAX_JUMP.get((spec.frequency, spec.kind))
    if limit is None:
        return
    v = values.to_numpy(dtype=float)
    if spec.kind == "diffusion":
        steps = np.abs(np.diff(v))
    else:
        if (v <= 0).any():
            raise DataError(f"{file}: {spec.id} has a value ≤ 0 on "
                            f"{dates[int(np.flatnonzero(v <= 0)[0])].date()}")
        steps = np.abs(np.diff(np.log(v)))
    big = np.flatnonzero(steps > limit)
    if len(big):
        i = big[0]
        raise DataError(f"{file}: {spec.id} jumps from {v[i]:g} to {v[i + 1]:g} on "
                        f"{dates[i + 1].date()}, beyond the {limit:g} limit for {spec.kind} data")
