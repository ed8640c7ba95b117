"""`forecast`: a point path with honest bands, the method used and why.

Prices are modelled in logs, so the point path is the median forecast (exp of the mean log) and
the bands are asymmetric in price: a fall of 20 % and a rise of 25 % are equally likely.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from orecast.market import trading_days
from orecast.market.catalog import PANDAS_FREQ, find_spec
from orecast.market.engine import (
    Setup,
    candidate_errors,
    check_horizon,
    choose,
    fits_needed,
    reporting,
    rolling,
    selection_grid,
    setup,
)
from orecast.market.errors import MarketError
from orecast.market.fitcache import stored_fits
from orecast.market.loaders import DateLike, SeriesLike, load_series, meta_of
from orecast.market.methods import METHOD_HELP, check_levels, check_method
from orecast.market.util import iso, num


@dataclass(frozen=True)
class Forecast:
    """A forecast of one series: `mean` (median path) and `lower`/`upper` bounds per level."""

    series_id: str
    name_en: str
    name_zh: str
    unit: str
    frequency: str
    source: str
    licence: str
    method: str
    requested_method: str
    reason: str
    horizon: int
    levels: tuple[int, ...]
    last_date: pd.Timestamp
    last_value: float
    mean: pd.Series
    lower: dict[int, pd.Series]
    upper: dict[int, pd.Series]
    log_scale: bool
    scores: dict[str, float] = field(default_factory=dict)  # auto: MASE of each candidate
    history: pd.Series = field(default_factory=pd.Series, repr=False, compare=False)
    calendar: str = trading_days.WEEKDAYS  # daily series: the days the dates skip
    # One-off shocks the fit did not see (catalog `shocks`): date, actual value, value used, and
    # their share of the sum of squared period changes in the fit window (what they would have
    # added to the bands).
    adjusted: tuple[dict[str, object], ...] = ()
    # `nowcast` past the series' end: the daily indicator and the last day it has, and the forecast
    # periods whose value its monthly averages carried over (the months it traded in).
    indicator: str | None = None
    indicator_end: pd.Timestamp | None = None
    bridged: tuple[pd.Timestamp, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """The long shape shared with the backtest table: ds, mean, lo-80, hi-80, …"""
        frame = pd.DataFrame({"ds": self.mean.index, "mean": self.mean.to_numpy()})
        for lv in self.levels:
            frame[f"lo-{lv}"] = self.lower[lv].to_numpy()
            frame[f"hi-{lv}"] = self.upper[lv].to_numpy()
        return frame

    def to_dict(self) -> dict[str, object]:
        points = []
        for i, date in enumerate(self.mean.index):
            point: dict[str, object] = {"date": iso(date), "mean": num(self.mean.iloc[i])}
            for lv in self.levels:
                point[f"lo_{lv}"] = num(self.lower[lv].iloc[i])
                point[f"hi_{lv}"] = num(self.upper[lv].iloc[i])
            points.append(point)
        out: dict[str, object] = {
            "series": self.series_id,
            "name_en": self.name_en,
            "name_zh": self.name_zh,
            "unit": self.unit,
            "frequency": self.frequency,
            "last": {"date": iso(self.last_date), "value": num(self.last_value)},
            "method": self.method,
            "requested_method": self.requested_method,
            "reason": self.reason,
            "horizon": self.horizon,
            "levels": list(self.levels),
            "point": "median" if self.log_scale else "mean",
            "forecast": points,
            "source": self.source,
            "licence": self.licence,
        }
        if self.adjusted:
            out["adjusted"] = list(self.adjusted)
        if self.bridged and self.indicator_end is not None:
            out["bridged"] = {"indicator": self.indicator, "indicator_last_date": iso(self.indicator_end),
                              "periods": [iso(d) for d in self.bridged]}
        if self.scores:
            out["backtest_mase"] = {m: num(v, 3) for m, v in self.scores.items()}
        if self.frequency == "daily":
            out["calendar"] = self.calendar
            if self.calendar == trading_days.CN_EXCHANGE and len(self.mean):
                # The holidays the dates skip, so an answer can name them (and say which are projected).
                out["closed"] = [c.to_dict() for c in trading_days.closures_between(
                    self.last_date + pd.Timedelta(days=1), self.mean.index[-1])]
        return out


def future_dates(last: pd.Timestamp, frequency: str, horizon: int,
                 calendar: str = trading_days.WEEKDAYS) -> pd.DatetimeIndex:
    """The next `horizon` period dates; daily data: the trading days of `calendar`."""
    if frequency == "daily":
        return trading_days.next_trading_days(last, horizon, calendar)
    offset = to_offset(PANDAS_FREQ.get(frequency, "B"))
    return pd.DatetimeIndex([last + k * offset for k in range(1, horizon + 1)], name="date")


def _auto_choice(s: Setup, horizon: int, levels: tuple[int, ...]) -> tuple[str, str, dict]:
    origin = len(s.raw) - 1
    grid = selection_grid(s, horizon, origin)
    if len(grid) < 3:
        return "naive", "too little history to backtest; the random walk is the safe default", {}
    errors = candidate_errors(s, horizon, grid, levels)
    best, mae = choose(errors, np.arange(len(grid)))
    scale = mae["naive"] or 1.0
    scores = {m: v / scale for m, v in mae.items()}
    ranked = sorted(scores, key=scores.__getitem__)
    runner = next((m for m in ranked if m != best), best)
    how = METHOD_HELP[best]
    reason = (
        f"lowest MAE at {horizon} step(s) ahead over the {len(grid)} rolling origins "
        f"{iso(s.index[grid[0]])}..{iso(s.index[grid[-1]])}: {best} MASE {scores[best]:.3f} "
        f"(next {runner} {scores[runner]:.3f}; random walk = 1). {how[:1].upper()}{how[1:]}."
    )
    return best, reason, scores


def forecast(
    series: SeriesLike,
    horizon: int,
    method: str = "auto",
    levels: Sequence[float] = (80, 95),
    *,
    start: DateLike = None,
    end: DateLike = None,
    window: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Forecast:
    """Forecast `horizon` periods after the last value (in [start, end]) of `series`.

    `method` is one of naive, drift, ets, arima, theta, ensemble, nowcast (World Bank iron ore
    only) or auto, which backtests every candidate on the recent past and keeps the best. Model
    fits are kept on disk (`orecast.market.fitcache`), so a repeated `auto` on the same data is
    quick. `progress(done, total)` is called as model fits complete (for progress bars).
    Example: `forecast("iron_ore_wb_monthly", 3).to_dict()`.
    """
    requested = check_method(method)
    levels_t = check_levels(levels)
    horizon = check_horizon(horizon)
    values = load_series(series, start, end)
    meta = meta_of(values)
    s = setup(values, meta, window, bridge=end is None or values.index[-1] == load_series(series).index[-1])
    check_horizon(horizon, len(values))
    if len(values) < s.min_train:
        raise MarketError(
            f"{meta.id} has {len(values)} values in range; forecasting needs at least {s.min_train}",
            "too_short", series=meta.id, count=len(values), need=s.min_train,
        )
    scores: dict[str, float] = {}
    origin = len(values) - 1
    total = 1 + (fits_needed("auto", len(selection_grid(s, horizon, origin)))
                 if requested == "auto" else 0)
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done = min(done + n, total)
        if progress is not None:
            progress(done, total)

    with stored_fits(meta.id), reporting(tick):
        if requested == "auto":
            chosen, reason, scores = _auto_choice(s, horizon, levels_t)
        else:
            chosen, reason = requested, METHOD_HELP[requested]
        path = rolling(s, chosen, horizon, (origin,), levels_t)
    bridged = s.bridge if chosen == "nowcast" and not path.failed[0] else 0
    if progress is not None:
        progress(total, total)
    spec = find_spec(meta.id)
    calendar = spec.calendar if spec is not None else trading_days.WEEKDAYS
    dates = future_dates(values.index[-1], meta.frequency, horizon, calendar)

    def series_of(row: np.ndarray) -> pd.Series:
        return pd.Series(s.back(row), index=dates, name=meta.id)

    first = 0 if s.window is None else max(0, origin + 1 - s.window)
    adjusted = ()
    if shocks := [x for x in s.shocks if x[0] > first]:
        changes = np.diff(s.raw)  # changes[i]: from position i to i + 1
        touched = sorted({i for p, _, _ in shocks for i in (p - 1, p) if i < len(changes)})
        window = changes[first:]
        share = float(changes[touched] @ changes[touched]) / float(window @ window)
        adjusted = tuple({"date": iso(s.index[p]), "actual": num(a), "used": num(u),
                          "share_of_squared_changes": num(share)} for p, a, u in shocks)
    indicator_end = None
    if bridged:
        indicator_end = load_series(s.indicator).index[-1]
        reason += f" Here {bridged} month(s) past the last value: {s.indicator} has data to {iso(indicator_end)}."
    return Forecast(
        series_id=meta.id, name_en=meta.name_en, name_zh=meta.name_zh, unit=meta.unit,
        frequency=meta.frequency, source=meta.source, licence=meta.licence, method=chosen,
        requested_method=requested, reason=reason, horizon=horizon, levels=levels_t,
        last_date=values.index[-1], last_value=float(values.iloc[-1]),
        mean=series_of(path.mean[0]),
        lower={lv: series_of(path.lower[lv][0]) for lv in levels_t},
        upper={lv: series_of(path.upper[lv][0]) for lv in levels_t},
        log_scale=s.log, scores=scores, history=values, calendar=calendar, adjusted=adjusted,
        indicator=s.indicator if bridged else None, indicator_end=indicator_end,
        bridged=tuple(dates[: min(bridged, horizon)]),
    )
