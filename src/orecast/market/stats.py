"""Descriptive statistics: `describe` one series, `relate` two."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from orecast.market.catalog import PERIODS_PER_YEAR
from orecast.market.errors import MarketError
from orecast.market.loaders import DateLike, SeriesLike, SeriesMeta, load_series, meta_of
from orecast.market.rolls import likely_rolls
from orecast.market.util import iso, num

CHANGE_WINDOWS: dict[str, pd.DateOffset] = {
    "1w": pd.DateOffset(weeks=1),
    "1m": pd.DateOffset(months=1),
    "3m": pd.DateOffset(months=3),
    "12m": pd.DateOffset(months=12),
}


def returns(values: pd.Series, meta: SeriesMeta) -> pd.Series:
    """Log returns for prices, plain differences for a diffusion index or signed series."""
    if meta.log_model and bool((values > 0).all()):
        return np.log(values).diff().dropna()
    return values.diff().dropna()


@dataclass(frozen=True)
class Description:
    """Where a series stands: level, recent changes, risk and seasonality."""

    series_id: str
    name_en: str
    name_zh: str
    unit: str
    frequency: str
    source: str
    first_date: pd.Timestamp
    last_date: pd.Timestamp
    last_value: float
    count: int
    changes: dict[str, float | None]
    change_unit: str  # "%" for prices and indices, "points" for a diffusion index such as PMI
    volatility_pct: float | None  # annualised, from the last 12 months of returns
    max_drawdown_pct: float
    drawdown_peak: pd.Timestamp
    drawdown_trough: pd.Timestamp
    percentile: float  # share of values in the range at or below the last one, in %
    minimum: float
    maximum: float
    mean: float
    seasonal_pct: dict[int, float] = field(default_factory=dict)  # mean change by calendar month
    min_date: pd.Timestamp | None = None  # first date of the minimum ("when was the low?")
    max_date: pd.Timestamp | None = None
    seasonal_count: dict[int, int] = field(default_factory=dict)  # changes behind each month's mean
    seasonal_up_pct: dict[int, float] = field(default_factory=dict)  # share of those that were rises
    # Annualised volatility of each whole calendar year in the range: is the last year's high or low?
    yearly_volatility_pct: dict[int, float] = field(default_factory=dict)
    # The largest one-period rises and falls in the range, each from the observation before it
    # (which may precede the range: 2025's first trading day is measured from 2024's last).
    largest_moves: dict[str, list[dict[str, object]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "series": self.series_id,
            "name_en": self.name_en,
            "name_zh": self.name_zh,
            "unit": self.unit,
            "frequency": self.frequency,
            "range": {"first": iso(self.first_date), "last": iso(self.last_date),
                      "count": self.count},
            "last": {"date": iso(self.last_date), "value": num(self.last_value)},
            "change": {k: num(v, 4) for k, v in self.changes.items()},
            "change_unit": self.change_unit,
            "volatility_annualised_pct": num(self.volatility_pct, 4),
            "max_drawdown": {"pct": num(self.max_drawdown_pct, 4), "peak": iso(self.drawdown_peak),
                             "trough": iso(self.drawdown_trough)},
            "percentile_in_range": num(self.percentile, 4),
            "min": num(self.minimum), "max": num(self.maximum), "mean": num(self.mean),
            "min_date": iso(self.min_date) if self.min_date is not None else None,
            "max_date": iso(self.max_date) if self.max_date is not None else None,
            "seasonal_mean_change_pct": {str(m): num(v, 4) for m, v in self.seasonal_pct.items()},
            "seasonal_count": {str(m): n for m, n in self.seasonal_count.items()},
            "seasonal_up_pct": {str(m): num(v, 4) for m, v in self.seasonal_up_pct.items()},
            "yearly_volatility": _yearly(self.yearly_volatility_pct),
            "largest_moves": self.largest_moves,
            "source": self.source,
        }


MOVES_SHOWN = 3


def _largest_moves(full: pd.Series, first: pd.Timestamp, relative: bool,
                   rolls: pd.DatetimeIndex) -> dict[str, list[dict[str, object]]]:
    """The `MOVES_SHOWN` largest rises and falls from one observation to the next, for the
    periods from `first` on (in % for prices, in points for a diffusion index). Likely roll days
    of a continuous futures contract are no market move: they are left out and listed apart."""
    prev = full.shift(1)
    change = (full / prev - 1) * 100 if relative else full - prev
    change = change[change.index >= first].dropna()
    rolled = change[change.index.isin(rolls)]
    change = change[~change.index.isin(rolls)]

    def rows(picked: pd.Series) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for day, value in picked.items():
            before = full.index[full.index.get_loc(day) - 1]
            out.append({"date": iso(day), "previous_date": iso(before), "previous": num(full[before]),
                        "value": num(full[day]), "change": num(float(full[day] - full[before])),
                        "change_pct": num(float(value), 4) if relative else None})
        return out

    rises, falls = change[change > 0].nlargest(MOVES_SHOWN), change[change < 0].nsmallest(MOVES_SHOWN)
    out = {"rises": rows(rises), "falls": rows(falls)}
    if len(rolled):
        # The rolls that would have ranked among the moves shown (each way), largest first.
        floor_up = float(rises.iloc[-1]) if len(rises) == MOVES_SHOWN else 0.0
        floor_down = float(falls.iloc[-1]) if len(falls) == MOVES_SHOWN else 0.0
        beaten = rolled[(rolled > floor_up) | (rolled < floor_down)]
        out["rolls_left_out"] = rows(beaten.loc[beaten.abs().sort_values(ascending=False).index])
    return out


def _yearly(vols: dict[int, float]) -> dict[str, object] | None:
    """The calendar years' volatilities summed up: median, range, how many years."""
    if len(vols) < 3:
        return None
    values = pd.Series(vols)
    return {"years": len(vols), "first": int(values.index.min()), "last": int(values.index.max()),
            "median_pct": num(float(values.median()), 4), "min_pct": num(float(values.min()), 4),
            "max_pct": num(float(values.max()), 4), "min_year": int(values.idxmin()),
            "max_year": int(values.idxmax())}


def reference_point(values: pd.Series, offset: pd.DateOffset) -> tuple[pd.Timestamp, float] | None:
    """The observation a change "over `offset`" starts from: the last one on or before the last
    date minus `offset` (calendar time, so holidays never stretch "1 year" to 13 months).

    None when the nearest earlier observation is too far back (weekly change on monthly data):
    one definition for `describe`, `orecast series show` and the agent's `latest_price`.
    """
    last_date = values.index[-1]
    before = values.loc[: last_date - offset]
    if before.empty or (last_date - before.index[-1]) > (last_date - (last_date - offset)) * 1.6:
        return None
    return before.index[-1], float(before.iloc[-1])


def _change(values: pd.Series, offset: pd.DateOffset, meta: SeriesMeta) -> float | None:
    ref = reference_point(values, offset)
    if ref is None:
        return None
    if meta.log_model:
        return float(100 * (values.iloc[-1] / ref[1] - 1))
    return float(values.iloc[-1] - ref[1])


def describe(
    series: SeriesLike, start: DateLike = None, end: DateLike = None, freq: str | None = None
) -> Description:
    """Last value, changes over 1w/1m/3m/12m, volatility, drawdown, percentile and seasonality.

    Changes are in % for prices and in points for a diffusion index (PMI).
    Example: `describe("dce_iron_ore_daily", start="2020").to_dict()`.
    """
    values = load_series(series, start, end, freq)
    meta = meta_of(values)
    # A period's first change is from the observation before it ("2025's volatility" counts the move
    # from 2024's last trading day to 2025's first, as the largest moves do).
    history = load_series(series, None, end, freq)
    rets = returns(history, meta)
    rets = rets[rets.index >= values.index[0]]
    year = rets[rets.index > values.index[-1] - pd.DateOffset(years=1)]
    ppy = PERIODS_PER_YEAR.get(meta.frequency, 12)
    # A diffusion index (PMI) moves in points: its volatility and drawdown are points too (a % of
    # points printed the PMI's volatility as 250 %).
    scale = 100 if meta.log_model else 1
    vol = float(year.std(ddof=1) * np.sqrt(ppy) * scale) if len(year) >= 3 else None
    # Whole calendar years only (at least 90 % of a year's periods): a stub year is no sample.
    by_year = rets.groupby(rets.index.year)
    yearly = {int(y): float(r.std(ddof=1) * np.sqrt(ppy) * scale) for y, r in by_year
              if len(r) >= 0.9 * ppy and len(r) >= 3}
    running_max = values.cummax()
    relative = meta.log_model and bool((values > 0).all())
    drawdown = values / running_max - 1 if relative else values - running_max
    trough = drawdown.idxmin()
    peak = values.loc[:trough].idxmax()
    seasonal: dict[int, float] = {}
    seasonal_count: dict[int, int] = {}
    seasonal_up: dict[int, float] = {}
    if meta.frequency in ("daily", "weekly", "monthly"):
        monthly = values.resample("MS").mean()
        mret = returns(monthly, meta)
        if len(mret) >= 24:
            # Prices: the mean of the months' % changes (what "January rose 5% on average" means),
            # not of log changes, which understate rises (+5.06 log-% is a +5.19 % change).
            change = 100 * np.expm1(mret) if meta.log_model and bool((monthly > 0).all()) else mret
            by_month = change.groupby(change.index.month)
            seasonal = {int(m): float(v) for m, v in by_month.mean().items()}
            seasonal_count = {int(m): int(n) for m, n in by_month.size().items()}
            seasonal_up = {int(m): float(100 * (v > 0).mean()) for m, v in by_month}
    return Description(
        series_id=meta.id, name_en=meta.name_en, name_zh=meta.name_zh, unit=meta.unit,
        frequency=meta.frequency, source=meta.source, first_date=values.index[0],
        last_date=values.index[-1], last_value=float(values.iloc[-1]), count=len(values),
        changes={k: _change(values, off, meta) for k, off in CHANGE_WINDOWS.items()},
        change_unit="%" if meta.log_model else "points",
        volatility_pct=vol,
        max_drawdown_pct=float(drawdown.min() * (100 if relative else 1)),
        drawdown_peak=peak, drawdown_trough=trough,
        percentile=float(100 * (values <= values.iloc[-1]).mean()),
        minimum=float(values.min()), maximum=float(values.max()), mean=float(values.mean()),
        seasonal_pct=seasonal, min_date=values.idxmin(), max_date=values.idxmax(),
        seasonal_count=seasonal_count, seasonal_up_pct=seasonal_up, yearly_volatility_pct=yearly,
        largest_moves=_largest_moves(history, values.index[0], relative,
                                    likely_rolls(series) if isinstance(series, str) else pd.DatetimeIndex([])),
    )


@dataclass(frozen=True)
class Relation:
    """How two series move together, on returns at a common frequency."""

    a: str
    b: str
    frequency: str
    first_date: pd.Timestamp
    last_date: pd.Timestamp
    n: int
    correlation: float
    beta: float  # return of a per unit return of b
    best_lag: int  # > 0: b leads a by this many periods
    best_lag_correlation: float
    lag_correlations: dict[int, float]
    sources: tuple[str, str]
    # Likely roll days whose returns were not counted; None when roll days were not looked for.
    rolls_left_out: tuple[pd.Timestamp, ...] | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            **({"roll_days_left_out": {"count": len(self.rolls_left_out),
                                       "dates": [iso(d) for d in self.rolls_left_out]}}
               if self.rolls_left_out is not None else {}),
            "a": self.a, "b": self.b, "frequency": self.frequency,
            "range": {"first": iso(self.first_date), "last": iso(self.last_date), "n": self.n},
            "correlation": num(self.correlation, 4),
            "beta_a_on_b": num(self.beta, 4),
            "best_lag": self.best_lag,
            "best_lag_correlation": num(self.best_lag_correlation, 4),
            "lag_note": "lag > 0 means b's returns lead a's by that many periods",
            "lag_correlations": {str(k): num(v, 4) for k, v in self.lag_correlations.items()},
            "source": " | ".join(dict.fromkeys(self.sources)),
        }


MIN_OVERLAP = 10  # returns two series must share for `relate`
LAG_PAIRS = 3  # returns each lag `relate` tries must leave overlapping: the fewest a correlation needs
_ORDER = ["daily", "weekly", "monthly", "quarterly", "annual"]
_CODE = {"daily": None, "weekly": "W", "monthly": "M", "quarterly": "Q", "annual": "A"}


def common_frequency(a: str, b: str) -> str | None:
    """The resampling code ("W", "M", …; None for daily) at which series of frequencies `a` and `b`
    can be compared: the coarser of the two."""
    return _CODE[max(a, b, key=_ORDER.index)]


def _period_returns(series: SeriesLike, cut: pd.Series, end: DateLike,
                    freq: str | None) -> tuple[pd.Series, SeriesMeta]:
    """Returns of `series` for the periods of `cut` (its values in range), the first one from the
    observation (period, when resampled to `freq`) just before the range."""
    history = load_series(series, None, end)
    if freq is not None:
        history, cut = load_series(history, freq=freq), load_series(cut, freq=freq)
    meta = meta_of(history)
    rets = returns(history, meta)
    return rets[rets.index >= cut.index[0]], meta


def relate(
    a: SeriesLike, b: SeriesLike, *, start: DateLike = None, end: DateLike = None,
    freq: str | None = None, max_lag: int = 6, leave_out_rolls: bool = False,
) -> Relation:
    """Correlation of returns, beta of a on b and the lead/lag with the strongest correlation.

    Series of different frequencies are compared at the coarser one (period averages).
    `leave_out_rolls`: daily returns on either futures series' likely contract-roll days (a jump to
    another contract's level, no market move) are not counted; `rolls_left_out` lists them.
    Example: `relate("dce_iron_ore_daily", "shfe_rebar_daily", freq="W")`.
    """
    if max_lag < 0:
        raise MarketError(f"max_lag must be ≥ 0; got {max_lag}", "bad_max_lag", value=max_lag)
    sa, sb = load_series(a, start, end), load_series(b, start, end)
    ma, mb = meta_of(sa), meta_of(sb)
    if freq is None:
        freq = common_frequency(ma.frequency, mb.frequency)
    # A period's first return is from the observation before it, as in `describe`: "2025's
    # correlation" counts the move from 2024's last day to 2025's first.
    ra, ma = _period_returns(a, sa, end, freq)
    rb, mb = _period_returns(b, sb, end, freq)
    joined = pd.concat([ra.rename("a"), rb.rename("b")], axis=1, join="inner").dropna()
    left_out: tuple[pd.Timestamp, ...] | None = None
    if leave_out_rolls and freq is None:
        rolls = pd.DatetimeIndex([])
        for one in (a, b):
            rolls = rolls.union(likely_rolls(one)) if isinstance(one, str) else rolls
        dropped = joined.index.isin(rolls)
        left_out = tuple(joined.index[dropped])
        # Kept in place as gaps, so a lag still pairs returns a set number of days apart.
        joined.loc[dropped] = np.nan
    kept = joined.dropna()
    if len(kept) < MIN_OVERLAP:
        raise MarketError(
            f"{ma.id} and {mb.id} share only {len(kept)} dates in range; need at least {MIN_OVERLAP}",
            "too_little_overlap", a=ma.id, b=mb.id, count=len(kept), need=MIN_OVERLAP,
        )
    # A lag must leave a few overlapping returns to correlate; a longer one correlates nothing and only
    # costs time (a max_lag of 10**8 ran for minutes).
    longest = len(joined) - LAG_PAIRS
    if max_lag > longest:
        raise MarketError(
            f"max_lag {max_lag} is too long: {ma.id} and {mb.id} share {len(joined)} returns in range "
            f"and each lag must leave {LAG_PAIRS} of them; use at most {longest}",
            "max_lag_too_long", value=max_lag, limit=longest, count=len(joined), a=ma.id, b=mb.id,
        )
    corr = float(kept["a"].corr(kept["b"]))
    beta = float(np.cov(kept["a"], kept["b"], ddof=1)[0, 1] / kept["b"].var(ddof=1))
    lags = {
        lag: float(joined["a"].corr(joined["b"].shift(lag)))
        for lag in range(-max_lag, max_lag + 1)
    }
    lags = {k: v for k, v in lags.items() if np.isfinite(v)}
    best = max(lags, key=lambda k: (abs(lags[k]), -abs(k)))
    return Relation(
        a=ma.id, b=mb.id, frequency=ma.frequency, first_date=joined.index[0],
        last_date=joined.index[-1], n=len(kept), correlation=corr, beta=beta, best_lag=best,
        best_lag_correlation=lags[best], lag_correlations=lags, sources=(ma.source, mb.source),
        rolls_left_out=left_out,
    )
