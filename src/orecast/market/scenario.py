"""Scenarios: how a price has historically moved when a driver moved by a stated amount.

`scenario("pmi", 2)` regresses the target's period-on-period change (log change in % for prices)
on the driver's change over the bundled history (ordinary least squares, contemporaneous), and
scales the slope by the stated shock. A shock can also be given as the driver's level ("if rebar
falls to 3,000 CNY/t"): the shock is then the change from the driver's latest value to that level,
taken as one period's move. It reports the slope with its standard error, the fit (R²),
the sample and 80 %/95 % bands for the effect (slope uncertainty) and for the outcome (slope plus
the scatter of the fit). It is an in-sample co-movement, not a causal model: the wording of every
answer built on it must stay conditional ("historically, when …, the price moved …").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from orecast.market.errors import MarketError
from orecast.market.loaders import DateLike, load_series, meta_of
from orecast.market.util import iso, num


@dataclass(frozen=True, slots=True)
class Driver:
    """A shock orecast can size from its own data."""

    series: str
    name_zh: str
    name_en: str
    shock_unit: str  # "%" (a relative change) or "points" (a diffusion index)
    frequency: str  # "M" or "A": the frequency the regression runs at


DRIVERS: dict[str, Driver] = {
    "steel_output": Driver("crude_steel_china_annual", "中国粗钢产量", "China crude steel output",
                           "%", "A"),
    "pmi": Driver("china_pmi_monthly", "中国制造业PMI", "China manufacturing PMI", "points", "M"),
    "usd_cnh": Driver("usd_cnh_daily", "美元兑人民币汇率", "USD/CNH exchange rate", "%", "M"),
    "coking_coal": Driver("dce_coking_coal_daily", "焦煤期货价格", "coking coal futures price",
                          "%", "M"),
    "coke": Driver("dce_coke_daily", "焦炭期货价格", "coke futures price", "%", "M"),
    "rebar": Driver("shfe_rebar_daily", "螺纹钢期货价格", "rebar futures price", "%", "M"),
    "hrc": Driver("shfe_hrc_daily", "热卷期货价格", "hot-rolled coil futures price", "%", "M"),
    "oil": Driver("brent_wb_monthly", "布伦特原油价格", "Brent crude oil price", "%", "M"),
    "iron_ore": Driver("iron_ore_wb_monthly", "铁矿石价格（世界银行）", "iron ore price (World Bank)",
                       "%", "M"),
    "iron_ore_futures": Driver("dce_iron_ore_daily", "铁矿石期货价格", "iron ore futures price",
                               "%", "M"),
}

# Shocks people ask about that no bundled series measures: named, never approximated.
UNSUPPORTED: dict[str, tuple[str, str]] = {
    "port_inventory": ("港口铁矿石库存", "port iron ore inventories"),
    "shipments": ("澳大利亚/巴西铁矿石发运量", "Australian/Brazilian iron ore shipments"),
    "freight": ("海运运费", "ocean freight rates"),
    "interest_rate": ("利率", "interest rates"),
    "property": ("房地产新开工", "property starts"),
    "policy": ("限产政策", "output-cut policies"),
}


@dataclass(frozen=True)
class Scenario:
    """The historical price response to one stated shock, with its uncertainty."""

    driver: str
    driver_series: str
    shock: float
    shock_unit: str
    target: str
    target_unit: str
    frequency: str
    first_date: pd.Timestamp
    last_date: pd.Timestamp
    n: int
    slope: float  # % change of the target per unit of driver change
    slope_se: float
    r2: float
    effect_pct: float
    effect_band: dict[int, tuple[float, float]]  # slope uncertainty only
    outcome_band: dict[int, tuple[float, float]]  # slope and residual scatter
    base_date: pd.Timestamp
    base_value: float
    sources: tuple[str, str]
    driver_unit: str = ""
    driver_base_date: pd.Timestamp | None = None
    driver_base_value: float | None = None
    level: float | None = None  # the driver level the shock was computed from, if one was given
    driver_range: tuple[float, float] = (float("nan"), float("nan"))  # smallest, largest change

    def to_dict(self) -> dict[str, object]:
        d = DRIVERS[self.driver]

        def level(pct: float) -> float | None:
            return num(self.base_value * (1 + pct / 100))

        return {
            "driver": self.driver,
            "driver_series": self.driver_series,
            "driver_name_zh": d.name_zh,
            "driver_name_en": d.name_en,
            "shock": self.shock,
            "shock_unit": self.shock_unit,
            "target": self.target,
            "unit": self.target_unit,
            "method": "OLS of period changes, contemporaneous, in-sample",
            "frequency": "annual" if self.frequency == "A" else "monthly",
            "sample": {"first": iso(self.first_date), "last": iso(self.last_date), "n": self.n},
            "slope_pct_per_unit": num(self.slope, 4),
            "slope_se": num(self.slope_se, 4),
            "r2": num(self.r2, 3),
            "effect_pct": num(self.effect_pct, 4),
            "effect_band_pct": {str(lv): [num(lo, 4), num(hi, 4)]
                                for lv, (lo, hi) in self.effect_band.items()},
            "outcome_band_pct": {str(lv): [num(lo, 4), num(hi, 4)]
                                 for lv, (lo, hi) in self.outcome_band.items()},
            "base": {"date": iso(self.base_date), "value": num(self.base_value)},
            "implied_level": level(self.effect_pct),
            "implied_band": {str(lv): [level(lo), level(hi)]
                             for lv, (lo, hi) in self.outcome_band.items()},
            "driver_unit": self.driver_unit,
            "driver_base": {"date": iso(self.driver_base_date), "value": num(self.driver_base_value)},
            "level": num(self.level) if self.level is not None else None,
            # The driver's smallest and largest period change in the sample, in shock units: a
            # shock outside it is an extrapolation.
            "driver_change_range": [num(self.driver_range[0], 4), num(self.driver_range[1], 4)],
            "outside_sample": not self.driver_range[0] <= self.shock <= self.driver_range[1],
            "caveat": ("Historical co-movement, not causation: other drivers moved at the same "
                       "time, and the relation may not hold in future."),
            "source": " | ".join(dict.fromkeys(s.removeprefix("Source: ") for s in self.sources)),
        }


def _changes(values: pd.Series, log: bool) -> pd.Series:
    if log:
        return (100 * np.log(values).diff()).dropna()
    return values.diff().dropna()


def scenario(
    driver: str,
    shock: float | None = None,
    target: str = "iron_ore_wb_monthly",
    *,
    level: float | None = None,
    start: DateLike = None,
    end: DateLike = None,
    levels: tuple[int, ...] = (80, 95),
) -> Scenario:
    """Price response of `target` to a `shock` of `driver` (in % or PMI points; see DRIVERS), or
    to the driver reaching `level` (in the driver series' unit) from its latest value.

    Example: `scenario("steel_output", -5).to_dict()["effect_pct"]`,
    `scenario("rebar", level=3000).to_dict()["shock"]`.
    """
    key = driver.strip().lower()
    if key in UNSUPPORTED:
        raise MarketError(
            f"no bundled data measures {UNSUPPORTED[key][1]}; supported drivers: {', '.join(DRIVERS)}",
            "unsupported_driver", driver=key, what_zh=UNSUPPORTED[key][0],
            what_en=UNSUPPORTED[key][1], supported=list(DRIVERS),
        )
    if key not in DRIVERS:
        raise MarketError(f"unknown driver {driver!r}; supported drivers: {', '.join(DRIVERS)}",
                          "unknown_driver", driver=driver, supported=list(DRIVERS))
    if (shock is None) == (level is None) or (level is not None and not (np.isfinite(level) and level > 0)):
        raise MarketError(f"give either a shock or a positive level of the driver; got shock={shock!r}, "
                          f"level={level!r}", "bad_level", value=repr(level if shock is None else shock))
    d = DRIVERS[key]
    x_raw = load_series(d.series, start, end)
    if level is not None:
        last = float(x_raw.iloc[-1])
        shock = 100 * (level / last - 1) if d.shock_unit == "%" else level - last
    assert shock is not None
    if not np.isfinite(shock):
        raise MarketError(f"shock must be a finite number; got {shock!r}", "bad_shock",
                          value=repr(shock))
    if d.shock_unit == "%" and shock <= -100:
        raise MarketError("a relative shock must be above -100 %", "shock_too_low")
    y_raw = load_series(target, start, end)
    mx, my = meta_of(x_raw), meta_of(y_raw)
    if my.id == mx.id:
        raise MarketError("the driver and the target are the same series", "same_series",
                          series=my.id)
    x_lvl = load_series(x_raw, freq=d.frequency)
    y_lvl = load_series(y_raw, freq=d.frequency)
    dx = _changes(x_lvl, d.shock_unit == "%")
    dy = _changes(y_lvl, True)
    joined = pd.concat([dy.rename("y"), dx.rename("x")], axis=1, join="inner").dropna()
    if len(joined) < 8:
        raise MarketError(
            f"{mx.id} and {my.id} overlap on only {len(joined)} periods; a scenario needs 8",
            "too_little_overlap", a=mx.id, b=my.id, count=len(joined), need=8,
        )
    x, y = joined["x"].to_numpy(), joined["y"].to_numpy()
    # A level is reached from the driver's latest value: the target moves from its value then, not
    # from a later one (a fresher target's last value already holds what happened since).
    y_base = y_raw[: x_raw.index[-1]] if level is not None else y_raw
    y_base = y_base if len(y_base) else y_raw
    n = len(x)
    xc = x - x.mean()
    slope = float((xc * (y - y.mean())).sum() / (xc**2).sum())
    intercept = float(y.mean() - slope * x.mean())
    resid = y - intercept - slope * x
    s2 = float((resid**2).sum() / (n - 2))
    se = float(np.sqrt(s2 / (xc**2).sum()))
    r2 = float(1 - (resid**2).sum() / ((y - y.mean()) ** 2).sum())
    # The shock in regression units: a stated % change is a log change of the driver.
    sx = 100 * np.log1p(shock / 100) if d.shock_unit == "%" else float(shock)
    effect_log = slope * sx
    eff_band: dict[int, tuple[float, float]] = {}
    out_band: dict[int, tuple[float, float]] = {}
    # scipy.stats costs about a second to import; only a scenario needs it, not every CLI start.
    from scipy import stats as sps

    for lv in levels:
        t = float(sps.t.ppf(0.5 + lv / 200, n - 2))
        half_e = t * abs(sx) * se
        half_o = t * float(np.sqrt(sx**2 * se**2 + s2))
        eff_band[lv] = (effect_log - half_e, effect_log + half_e)
        out_band[lv] = (effect_log - half_o, effect_log + half_o)

    def pct(v: float) -> float:
        return float(100 * np.expm1(v / 100))

    as_shock = pct if d.shock_unit == "%" else float  # the sample's changes in the shock's units

    return Scenario(
        driver=key, driver_series=mx.id, shock=float(shock), shock_unit=d.shock_unit,
        target=my.id, target_unit=my.unit, frequency=d.frequency,
        first_date=joined.index[0], last_date=joined.index[-1], n=n, slope=slope,
        slope_se=se, r2=r2, effect_pct=pct(effect_log),
        effect_band={lv: (pct(a), pct(b)) for lv, (a, b) in eff_band.items()},
        outcome_band={lv: (pct(a), pct(b)) for lv, (a, b) in out_band.items()},
        base_date=y_base.index[-1], base_value=float(y_base.iloc[-1]),
        sources=(my.source, mx.source), driver_unit=mx.unit,
        driver_base_date=x_raw.index[-1], driver_base_value=float(x_raw.iloc[-1]),
        level=None if level is None else float(level),
        driver_range=(as_shock(float(x.min())), as_shock(float(x.max()))),
    )
