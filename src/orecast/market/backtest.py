"""Rolling-origin evaluation: how a method would have done, forecasting only from the past.

Every origin fits on data up to and including the origin and forecasts `horizon` steps. The
headline metrics are at the last step (the value `horizon` periods ahead); `by_step` has all steps.
MASE here is the MAE divided by the random walk's MAE over the same origins and step, so the
random walk scores exactly 1 and below 1 means better than "no change".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from orecast.market.engine import (
    SELECTION_ORIGINS,
    Setup,
    candidate_errors,
    check_horizon,
    choose,
    fits_needed,
    reporting,
    rolling,
    setup,
)
from orecast.market.errors import MarketError
from orecast.market.fitcache import stored_fits
from orecast.market.loaders import DateLike, SeriesLike, load_series, meta_of, parse_date
from orecast.market.methods import check_levels, check_method
from orecast.market.util import iso, num

DEFAULT_ORIGINS: dict[str, int] = {
    "daily": 250, "weekly": 104, "monthly": 60, "quarterly": 20, "annual": 5,
}


@dataclass(frozen=True)
class BacktestResult:
    """Accuracy of one method on one series; `table` has every origin × step (long format)."""

    series_id: str
    name_en: str
    name_zh: str
    unit: str
    source: str
    method: str
    horizon: int
    step: int
    levels: tuple[int, ...]
    first_origin: pd.Timestamp
    last_origin: pd.Timestamp
    n_origins: int
    mae: float
    mape: float
    mase: float
    rmse: float
    naive_mae: float
    coverage: dict[int, float]
    by_step: list[dict[str, float]]
    chosen: dict[str, int] = field(default_factory=dict)
    fallbacks: int = 0
    table: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "series": self.series_id,
            "name_en": self.name_en,
            "name_zh": self.name_zh,
            "unit": self.unit,
            "method": self.method,
            "horizon": self.horizon,
            "step": self.step,
            "origins": {"first": iso(self.first_origin), "last": iso(self.last_origin),
                        "count": self.n_origins},
            "mae": num(self.mae),
            "mape_pct": num(self.mape),
            "mase": num(self.mase),
            # RMSE weighs the large misses an analyst cares about (a roll-day jump) more than MAE.
            "rmse": num(self.rmse),
            "naive_mae": num(self.naive_mae),
            "coverage_pct": {str(lv): num(100 * c) for lv, c in self.coverage.items()},
            "by_step": [{k: num(v) for k, v in row.items()} for row in self.by_step],
            "metric_note": "errors at the last step; MASE = MAE / random-walk MAE, same origins",
            "source": self.source,
        }
        if self.chosen:
            out["chosen"] = dict(self.chosen)
        if self.fallbacks:
            out["fallbacks"] = self.fallbacks
        return out


def _origins(s: Setup, horizon: int, start: DateLike, end: DateLike, step: int) -> list[int]:
    n = len(s.raw)
    last = n - 1 - horizon
    # A date that does not parse is the caller's mistake (MarketError), not a pandas traceback.
    last_origin, first_origin = parse_date(end, "end"), parse_date(start, "start")
    if last_origin is not None:
        last = min(last, int(s.index.searchsorted(last_origin, side="right")) - 1)
    if first_origin is None:
        first = max(s.min_train - 1, last - DEFAULT_ORIGINS.get(s.meta.frequency, 60) + 1)
    else:
        first = int(s.index.searchsorted(first_origin, side="left"))
    if first < s.min_train - 1:
        earliest = s.index[min(s.min_train - 1, n - 1)].date()
        raise MarketError(
            f"start {start} leaves fewer than {s.min_train} values to fit on; "
            f"the earliest origin for {s.meta.id} is {earliest}",
            "start_too_early", start=str(start), need=s.min_train, series=s.meta.id,
            earliest=str(earliest),
        )
    if first > last:
        raise MarketError(
            f"no forecast origin between {start or 'the default start'} and the last date whose "
            f"{horizon}-step outcome is known ({s.index[max(last, 0)].date()})",
            "no_origin", start=None if start is None else str(start), horizon=horizon,
            last=str(s.index[max(last, 0)].date()),
        )
    return list(range(first, last + 1, step))


def backtest(
    series: SeriesLike,
    horizon: int,
    method: str = "auto",
    start: DateLike = None,
    step: int = 1,
    *,
    end: DateLike = None,
    levels: Sequence[float] = (80, 95),
    window: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> BacktestResult:
    """Rolling-origin backtest of `method` on `series` from origin `start` (inclusive) to `end`.

    `progress(done, total)` is called as model fits complete (for progress bars).
    Example: `backtest("iron_ore_wb_monthly", 1, start="2015-01")`.
    """
    method = check_method(method)
    levels_t = check_levels(levels)
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise MarketError(f"step must be a whole number ≥ 1; got {step!r}", "bad_step", value=repr(step))
    values = load_series(series)
    meta = meta_of(values)
    horizon = check_horizon(horizon, len(values))
    s = setup(values, meta, window)
    origins = _origins(s, horizon, start, end, step)
    ticker = _Ticker(progress, fits_needed(method, len(origins)))
    with stored_fits(meta.id), reporting(ticker):
        if method == "auto":
            mean, lower, upper, chosen, fallbacks = _auto(s, horizon, origins, levels_t, step)
        else:
            paths = rolling(s, method, horizon, origins, levels_t)
            mean, lower, upper = paths.mean, paths.lower, paths.upper
            chosen, fallbacks = {}, paths.fallbacks
    ticker.finish()
    return _score(s, method, horizon, step, levels_t, origins, mean, lower, upper, chosen,
                  fallbacks)


class _Ticker:
    def __init__(self, callback: Callable[[int, int], None] | None, total: int) -> None:
        self.callback, self.total, self.done = callback, max(total, 1), 0

    def __call__(self, n: int) -> None:
        self.done = min(self.done + n, self.total)
        if self.callback is not None:
            self.callback(self.done, self.total)

    def finish(self) -> None:
        if self.callback is not None:
            self.callback(self.total, self.total)


def _auto(
    s: Setup, horizon: int, origins: list[int], levels: tuple[int, ...], step: int
) -> tuple[np.ndarray, dict[int, np.ndarray], dict[int, np.ndarray], dict[str, int], int]:
    """At each origin, use the candidate whose errors on earlier, already-resolved origins are
    lowest: the same rule `forecast(method="auto")` applies at the end of the data."""
    k = SELECTION_ORIGINS.get(s.meta.frequency, 36)
    warm = k + -(-horizon // step)
    grid = [o for o in range(origins[0] - warm * step, origins[0], step) if o >= s.min_train - 1]
    grid += origins
    errors = candidate_errors(s, horizon, grid, levels)
    paths = {m: rolling(s, m, horizon, grid, levels) for m in s.candidates}
    positions = np.asarray(grid)
    offset = len(grid) - len(origins)
    rows_mean, rows_lo, rows_hi = [], {lv: [] for lv in levels}, {lv: [] for lv in levels}
    chosen: dict[str, int] = {}
    fallbacks = 0
    for i, origin in enumerate(origins):
        resolved = np.flatnonzero(positions + horizon <= origin)[-k:]
        best, _ = choose(errors, resolved)
        chosen[best] = chosen.get(best, 0) + 1
        row = offset + i
        fallbacks += int(paths[best].failed[row])
        rows_mean.append(paths[best].mean[row])
        for lv in levels:
            rows_lo[lv].append(paths[best].lower[lv][row])
            rows_hi[lv].append(paths[best].upper[lv][row])
    return (
        np.vstack(rows_mean),
        {lv: np.vstack(v) for lv, v in rows_lo.items()},
        {lv: np.vstack(v) for lv, v in rows_hi.items()},
        dict(sorted(chosen.items(), key=lambda kv: -kv[1])),
        fallbacks,
    )


def _score(
    s: Setup, method: str, horizon: int, step: int, levels: tuple[int, ...], origins: list[int],
    mean: np.ndarray, lower: dict[int, np.ndarray], upper: dict[int, np.ndarray],
    chosen: dict[str, int], fallbacks: int,
) -> BacktestResult:
    pos = np.asarray(origins)[:, None] + np.arange(1, horizon + 1)[None, :]
    actual = s.raw[pos]
    naive = np.repeat(s.raw[np.asarray(origins)][:, None], horizon, axis=1)
    yhat = s.back(mean)
    lo = {lv: s.back(a) for lv, a in lower.items()}
    hi = {lv: s.back(a) for lv, a in upper.items()}
    err = np.abs(yhat - actual)
    naive_err = np.abs(naive - actual)
    with np.errstate(divide="ignore", invalid="ignore"):
        ape = np.where(actual != 0, err / np.abs(actual), np.nan)
    by_step = []
    for j in range(horizon):
        nmae = float(naive_err[:, j].mean())
        row = {
            "step": j + 1,
            "mae": float(err[:, j].mean()),
            "rmse": float(np.sqrt(np.mean(err[:, j] ** 2))),
            "mape": float(100 * np.nanmean(ape[:, j])),
            "mase": float(err[:, j].mean() / nmae) if nmae > 0 else float("nan"),
        }
        for lv in levels:
            inside = (actual[:, j] >= lo[lv][:, j]) & (actual[:, j] <= hi[lv][:, j])
            row[f"coverage_{lv}"] = float(inside.mean())
        by_step.append(row)
    last = by_step[-1]
    table = _table(s, origins, pos, actual, yhat, naive, lo, hi)
    return BacktestResult(
        series_id=s.meta.id, name_en=s.meta.name_en, name_zh=s.meta.name_zh, unit=s.meta.unit,
        source=s.meta.source, method=method, horizon=horizon, step=step, levels=levels,
        first_origin=s.index[origins[0]], last_origin=s.index[origins[-1]],
        n_origins=len(origins), mae=last["mae"], mape=last["mape"], mase=last["mase"], rmse=last["rmse"],
        naive_mae=float(naive_err[:, -1].mean()),
        coverage={lv: last[f"coverage_{lv}"] for lv in levels}, by_step=by_step,
        chosen=chosen, fallbacks=fallbacks, table=table,
    )


def _table(
    s: Setup, origins: list[int], pos: np.ndarray, actual: np.ndarray, yhat: np.ndarray,
    naive: np.ndarray, lo: dict[int, np.ndarray], hi: dict[int, np.ndarray],
) -> pd.DataFrame:
    n, h = actual.shape
    columns: dict[str, object] = {
        "cutoff": np.repeat(s.index[np.asarray(origins)], h),
        "ds": s.index[pos.ravel()],
        "step": np.tile(np.arange(1, h + 1), n),
        "y": actual.ravel(),
        "yhat": yhat.ravel(),
        "naive": naive.ravel(),
    }
    for lv in lo:
        columns[f"lo-{lv}"] = lo[lv].ravel()
        columns[f"hi-{lv}"] = hi[lv].ravel()
    return pd.DataFrame(columns)
