"""Rolling-origin machinery shared by `backtest` and `forecast(method="auto")`.

Each model fit is cached per origin (an `lru_cache` keyed by the read-only values, the method and
the origin), so `auto` inside a backtest, the backtest of each candidate and a later forecast —
for any horizon up to `PATH_STEPS` — reuse the same fits.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from threadpoolctl import ThreadpoolController

from orecast.market import fitcache
from orecast.market.catalog import find_spec
from orecast.market.errors import MarketError
from orecast.market.loaders import SeriesMeta
from orecast.market.methods import (
    ENSEMBLE_MEMBERS,
    METHODS,
    ModelPath,
    combine,
    gaussian,
    load_models,
    predict,
)

# Per-frequency defaults. The fit window keeps daily models on the recent volatility regime
# (about three trading years). Monthly models see up to 25 years: all of the iron ore history
# (from 2006), while series from 1960 fit 3x faster and on a comparable market.
FIT_WINDOW: dict[str, int | None] = {
    "daily": 750, "weekly": 260, "monthly": 300, "quarterly": None, "annual": None,
}
# How many past origins `auto` ranks the candidates on. Monthly: 120, chosen on origins before
# 2015 of other World Bank series (copper, coal, Brent, aluminium: mean MASE 0.986 at h=1 against
# 0.995-1.002 for 24/36/60), never on the iron ore test window. The others were set a priori.
SELECTION_ORIGINS: dict[str, int] = {
    "daily": 60, "weekly": 52, "monthly": 120, "quarterly": 12, "annual": 6,
}
MIN_TRAIN: dict[str, int] = {"daily": 120, "weekly": 52, "monthly": 36, "quarterly": 16, "annual": 10}
SEASON: dict[str, int] = {"daily": 1, "weekly": 1, "monthly": 12, "quarterly": 4, "annual": 1}
AUTO_CANDIDATES: tuple[str, ...] = METHODS  # naive first: ties go to the simplest method
PATH_STEPS = 12  # every cached fit forecasts at least this many steps (see `rolling`)
NOWCAST_MIN_DAYS = 10  # trading days in a month before its month-end level means anything
NOWCAST_MIN_ERRORS = 12  # past nowcast errors needed to size its bands from its own record

Progress = Callable[[int], None]
_progress: ContextVar[Progress | None] = ContextVar("orecast_market_progress", default=None)
_stop: ContextVar[threading.Event | None] = ContextVar("orecast_market_stop", default=None)


class Cancelled(Exception):
    """Raised between model fits once the event given to `stop_on` is set."""


@contextmanager
def stop_on(event: threading.Event) -> Iterator[None]:
    """Within the block (and in threads that copy its context, as tool executors do), model fitting
    stops with `Cancelled` at the next fit once `event` is set: a cancelled chat turn frees its
    worker thread in well under a second instead of finishing a 30-second `auto` selection."""
    token = _stop.set(event)
    try:
        yield
    finally:
        _stop.reset(token)


@contextmanager
def reporting(callback: Progress | None) -> Iterator[None]:
    """Within the block, each model fit at a rolling origin calls `callback(1)`."""
    token = _progress.set(callback)
    try:
        yield
    finally:
        _progress.reset(token)


class Frozen:
    """A read-only float array that can key a cache."""

    __slots__ = ("values", "_hash")

    def __init__(self, values: np.ndarray) -> None:
        array = np.array(values, dtype=float)
        array.setflags(write=False)
        self.values = array
        self._hash = hash(array.tobytes())

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Frozen) and np.array_equal(self.values, other.values)


@dataclass(frozen=True, slots=True)
class Paths:
    """Forecasts from many origins, in model space: arrays of shape (origins, horizon)."""

    origins: tuple[int, ...]
    mean: np.ndarray
    lower: dict[int, np.ndarray]
    upper: dict[int, np.ndarray]
    failed: np.ndarray  # per origin: the model failed and the random walk stood in

    @property
    def fallbacks(self) -> int:
        return int(self.failed.sum())


@dataclass(frozen=True, slots=True)
class Setup:
    """How one series is modelled: values in model space and the frequency defaults."""

    meta: SeriesMeta
    index: pd.DatetimeIndex
    raw: np.ndarray
    model: Frozen
    log: bool
    window: int | None
    season: int
    min_train: int
    # The indicator's log monthly average and log(month-end) − log(month average), per month of
    # `index` and then of the `bridge` months after it (NaN where it traded too few days).
    average: np.ndarray | None = None
    premium: np.ndarray | None = None
    indicator: str | None = None
    # Months of the indicator after the series' last one: `nowcast` uses as many past each origin,
    # so its backtests see the same head start the live forecast has (see `_nowcast`).
    bridge: int = 0
    # (position, actual value, value the fits see) of each one-off shock replaced (catalog `shocks`).
    shocks: tuple[tuple[int, float, float], ...] = ()

    @property
    def candidates(self) -> tuple[str, ...]:
        return AUTO_CANDIDATES + (("nowcast",) if self.premium is not None else ())

    def back(self, values: np.ndarray) -> np.ndarray:
        return np.exp(values) if self.log else values


def setup(series: pd.Series, meta: SeriesMeta, window: int | None = None, *, bridge: bool = False) -> Setup:
    """How `series` is modelled; `bridge`: `nowcast` may use the indicator's months after the
    series' end (only when the series runs to the end of its data: a cut-off origin must not see
    what came after it)."""
    raw = series.to_numpy(dtype=float)
    # Logs turn multiplicative price moves into additive ones and keep bounds positive; they are
    # wrong for a diffusion index like PMI or for anything that can be zero or negative.
    log = meta.log_model and bool((raw > 0).all())
    spec = find_spec(meta.id)
    indicator = spec.indicator if spec is not None and meta.frequency == "monthly" else None
    fitted, shocks = _without_shocks(pd.DatetimeIndex(series.index), raw, spec.shocks if spec else ())
    average = premium = None
    months = 0
    if indicator and log:
        average, premium, months = _indicator_months(indicator, pd.DatetimeIndex(series.index), bridge)
    return Setup(
        meta=meta,
        index=pd.DatetimeIndex(series.index),
        raw=raw,
        model=Frozen(np.log(fitted) if log else fitted),
        log=log,
        window=window if window is not None else FIT_WINDOW.get(meta.frequency),
        season=SEASON.get(meta.frequency, 1),
        min_train=MIN_TRAIN.get(meta.frequency, 24),
        average=average,
        premium=premium,
        indicator=indicator if log else None,
        bridge=months,
        shocks=shocks,
    )


def _without_shocks(index: pd.DatetimeIndex, raw: np.ndarray, dates: tuple[str, ...]
                    ) -> tuple[np.ndarray, tuple[tuple[int, float, float], ...]]:
    """`raw` with each one-off shock replaced by the last value before it (carried over a run of
    shocks), so a model's variance is not set by one event; the replacements, by position."""
    if not dates:
        return raw, ()
    fitted = raw.copy()
    out = []
    for day in sorted(dates):
        pos = int(index.searchsorted(pd.Timestamp(day)))
        if 0 < pos < len(raw) and index[pos] == pd.Timestamp(day):
            fitted[pos] = fitted[pos - 1]
            out.append((pos, float(raw[pos]), float(fitted[pos])))
    return fitted, tuple(out)


def _indicator_months(indicator: str, index: pd.DatetimeIndex, bridge: bool
                      ) -> tuple[np.ndarray, np.ndarray, int]:
    """The indicator's log monthly average and how far it ended each month above that average, for
    each month of `index` and, with `bridge`, each month after it that it traded enough days in;
    and how many such months follow.

    A monthly average lags the price: if prices follow a random walk, next month's average is
    centred on this month's *last* price, not on this month's average. The daily futures tell us
    that last price when the monthly figure is published (early the next month), so no future
    value is used. Where the monthly figure lags the futures by more (the bundled World Bank data
    ends months before the futures do), the futures' averages of those months tell how far the
    monthly average has moved since. All is in logs, so the CNY/USD and VAT differences cancel out.
    """
    from orecast.market.loaders import _load_bundled

    daily = np.log(_load_bundled(indicator))
    monthly = daily.resample("MS")
    traded = monthly.count() >= NOWCAST_MIN_DAYS
    average = monthly.mean().where(traded)
    premium = (monthly.last() - monthly.mean()).where(traded)
    after = 0
    if bridge and len(index):
        month = index[-1]
        while True:
            month = month + pd.offsets.MonthBegin(1)
            if not np.isfinite(average.get(month, np.nan)):
                break
            after += 1
    months = index.append(pd.date_range(index[-1], periods=after + 1, freq="MS")[1:]) if after else index
    return (average.reindex(months).to_numpy(dtype=float), premium.reindex(months).to_numpy(dtype=float),
            after)

def check_horizon(horizon: object, n: int | None = None) -> int:
    if isinstance(horizon, bool) or not isinstance(horizon, int | np.integer):
        raise MarketError(f"horizon must be a whole number of periods; got {horizon!r}",
                          "bad_horizon", value=repr(horizon))
    if horizon <= 0:
        raise MarketError(f"horizon must be at least 1 period; got {horizon}", "bad_horizon",
                          value=repr(horizon))
    if n is not None and horizon > n:
        raise MarketError(f"horizon {horizon} is longer than the series itself ({n} values)",
                          "horizon_too_long", horizon=int(horizon), count=n)
    return int(horizon)


def fit_slice(s: Setup, origin: int) -> np.ndarray:
    start = 0 if s.window is None else max(0, origin + 1 - s.window)
    return s.model.values[start : origin + 1]


@lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    # Scanning the loaded libraries costs milliseconds, so it happens once, after the model code
    # (and with it scipy's own BLAS) has been imported.
    load_models()
    return ThreadpoolController()


@lru_cache(maxsize=50_000)
def _fit_one(
    values: Frozen,
    method: str,
    horizon: int,
    origin: int,
    levels: tuple[int, ...],
    window: int | None,
    season: int,
) -> ModelPath:
    # Cached per origin, so a backtest, `auto`'s selection inside it and a later forecast that
    # touch the same origin fit each model once; and on disk (see `fitcache`) across processes.
    stop = _stop.get()
    if stop is not None and stop.is_set():
        raise Cancelled("cancelled")
    start = 0 if window is None else max(0, origin + 1 - window)
    seen = values.values[start : origin + 1]
    store = fitcache.current() if method in fitcache.STORED_METHODS else None
    key = fitcache.fit_key(seen, method, horizon, levels, season) if store is not None else ""
    path = store.get(key) if store is not None else None
    if path is None:
        # The models are tiny: BLAS threads only add contention (10x slower on a loaded 2-CPU
        # box). Limited here, on a miss, so that a run served from disk never scans the libraries.
        closed_form = method in ("naive", "drift")
        with contextlib.nullcontext() if closed_form else _blas().limit(limits=1, user_api="blas"):
            path = predict(method, seen, horizon, levels, season)
        if store is not None:
            store.put(key, path)
    report = _progress.get()
    if report is not None:
        report(1)
    return path


def _stack(origins: tuple[int, ...], paths: Sequence[ModelPath]) -> Paths:
    levels = paths[0].lower.keys()
    return Paths(
        origins=origins,
        mean=np.vstack([p.mean for p in paths]),
        lower={lv: np.vstack([p.lower[lv] for p in paths]) for lv in levels},
        upper={lv: np.vstack([p.upper[lv] for p in paths]) for lv in levels},
        failed=np.array([p.fallback for p in paths], dtype=bool),
    )


def rolling(
    s: Setup, method: str, horizon: int, origins: Sequence[int], levels: tuple[int, ...]
) -> Paths:
    """Forecasts of `method` from each origin (the position of the last value it may see)."""
    key = tuple(int(o) for o in origins)
    if method == "nowcast":
        return _nowcast(s, horizon, key, levels)
    if method == "ensemble":
        members = [rolling(s, m, horizon, key, levels) for m in ENSEMBLE_MEMBERS]
        parts = [
            combine([ModelPath(p.mean[i], {lv: p.lower[lv][i] for lv in levels},
                               {lv: p.upper[lv][i] for lv in levels}) for p in members])
            for i in range(len(key))
        ]
        stacked = _stack(key, parts)
        failed = np.logical_or.reduce([p.failed for p in members])
        return Paths(key, stacked.mean, stacked.lower, stacked.upper, failed)
    # Fit for at least PATH_STEPS steps and cut: a path's first steps do not depend on how far it
    # goes, so forecasts for h = 1, 3, 6 … from the same origin share one cached fit.
    steps = max(horizon, PATH_STEPS)
    fits = [_fit_one(s.model, method, steps, o, levels, s.window, s.season) for o in key]
    full = _stack(key, fits)
    return Paths(
        key,
        full.mean[:, :horizon],
        {lv: a[:, :horizon] for lv, a in full.lower.items()},
        {lv: a[:, :horizon] for lv, a in full.upper.items()},
        full.failed,
    )


def _nowcast(s: Setup, horizon: int, origins: tuple[int, ...], levels: tuple[int, ...]) -> Paths:
    """The monthly average at each origin, moved as the indicator's monthly average moved over the
    `s.bridge` months it is known past the origin, then a random walk from the indicator's last
    level (its last month's end over that month's average). Bands from the same forecast's own
    past errors, from origins whose outcome was known at `o`."""
    if s.premium is None or s.average is None:
        raise MarketError(
            f"method 'nowcast' needs a daily indicator; {s.meta.id} has none "
            "(only the World Bank monthly iron ore series has one)",
            "no_indicator", series=s.meta.id,
        )
    y = s.model.values
    paths = []
    for o in origins:
        mean = np.array([_nowcast_from(s, np.array([o]), k)[0] for k in range(1, horizon + 1)])
        if not np.isfinite(mean).all():
            naive = predict("naive", fit_slice(s, o), horizon, levels)
            paths.append(ModelPath(naive.mean, naive.lower, naive.upper, fallback=True))
            continue
        lo = 0 if s.window is None else max(0, o + 1 - s.window)
        sd = np.empty(horizon)
        for k in range(1, horizon + 1):
            past = np.arange(lo, o - k + 1)
            err = y[past + k] - _nowcast_from(s, past, k)
            err = err[np.isfinite(err)]
            if len(err) >= NOWCAST_MIN_ERRORS:
                sd[k - 1] = float(np.sqrt(np.mean(err**2)))
            else:
                diffs = np.diff(y[lo : o + 1])
                sd[k - 1] = float(np.sqrt(np.mean(diffs**2) * k))
        paths.append(gaussian(mean, sd, levels))
    return _stack(origins, paths)


def _nowcast_from(s: Setup, origins: np.ndarray, k: int) -> np.ndarray:
    """The nowcast of step `k` from each origin, in model space (NaN where the indicator is missing)."""
    assert s.average is not None and s.premium is not None
    known = origins + s.bridge  # the indicator's last month known at each origin
    moved = s.average[origins + min(k, s.bridge)] - s.average[origins]
    beyond = s.premium[known] if k > s.bridge else 0.0
    return s.model.values[origins] + moved + beyond


def fits_needed(method: str, n_origins: int) -> int:
    """Model fits a rolling run will perform, for progress bars (cached fits finish instantly)."""
    if method == "auto":
        return (len(AUTO_CANDIDATES) - 1) * n_origins  # the ensemble reuses its members' fits
    if method == "ensemble":
        return len(ENSEMBLE_MEMBERS) * n_origins
    return n_origins


def candidate_errors(
    s: Setup, horizon: int, grid: Sequence[int], levels: tuple[int, ...]
) -> dict[str, np.ndarray]:
    """Absolute error at step `horizon` of every `auto` candidate from every origin in `grid`."""
    actual = s.raw[np.asarray(grid, dtype=int) + horizon]
    return {
        m: np.abs(s.back(rolling(s, m, horizon, grid, levels).mean[:, -1]) - actual)
        for m in s.candidates
    }


def choose(errors: dict[str, np.ndarray], rows: np.ndarray) -> tuple[str, dict[str, float]]:
    """The candidate with the lowest MAE over `rows`; ties go to the simpler (earlier) method."""
    if len(rows) == 0:
        return "naive", {}
    mae = {m: float(np.mean(e[rows])) for m, e in errors.items()}
    order = list(mae)
    best = min(mae, key=lambda m: (mae[m], order.index(m)))
    return best, mae


def selection_grid(s: Setup, horizon: int, origin: int, step: int = 1) -> list[int]:
    """The last `SELECTION_ORIGINS` origins whose `horizon`-step outcome is known at `origin`."""
    k = SELECTION_ORIGINS.get(s.meta.frequency, 36)
    last = origin - horizon
    return [o for o in range(last, last - k * step, -step) if o >= s.min_train - 1][::-1]
