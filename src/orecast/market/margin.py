"""The futures steel-mill margin (盘面利润): what a mill locks in on the futures board."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from orecast.market.errors import MarketError
from orecast.market.loaders import DateLike, SeriesMeta, _attach, load_series, meta_of
from orecast.market.util import iso, num

# The steel product the margin is of: its series, Chinese and English names.
PRODUCTS = {"rebar": ("螺纹钢", "rebar"), "hrc": ("热卷", "hot-rolled coil")}
_PRODUCT_SERIES = {"rebar": "shfe_rebar_daily", "hrc": "shfe_hrc_daily"}


@dataclass(frozen=True)
class MillMargin:
    """rebar − iron_ore_coef × iron ore − coke_coef × coke − other_costs, in CNY/t of rebar."""

    series: pd.Series
    iron_ore_coef: float
    coke_coef: float
    other_costs: float
    last_date: pd.Timestamp
    last_value: float
    percentile: float
    mean: float
    minimum: float
    maximum: float
    source: str
    product: str = "rebar"

    def to_dict(self) -> dict[str, object]:
        tail = self.series.iloc[-10:]
        zh, en = PRODUCTS[self.product]
        return {
            "series": "mill_margin",
            "product": self.product,
            "name_en": f"Futures steel-mill margin ({en})",
            "name_zh": f"{zh}盘面利润",
            "unit": "CNY/t",
            "formula": (
                f"{en} - {self.iron_ore_coef:g} x iron ore - {self.coke_coef:g} x coke"
                + (f" - {self.other_costs:g}" if self.other_costs else "")
            ),
            "last": {"date": iso(self.last_date), "value": num(self.last_value)},
            "percentile_in_range": num(self.percentile, 4),
            "range": {"first": iso(self.series.index[0]), "last": iso(self.last_date),
                      "count": len(self.series)},
            "mean": num(self.mean), "min": num(self.minimum), "max": num(self.maximum),
            # "利润历史最低是什么时候": the days of the extremes, not only their values.
            "min_date": iso(self.series.idxmin()), "max_date": iso(self.series.idxmax()),
            "recent": [{"date": iso(d), "value": num(v)} for d, v in tail.items()],
            "caveat": f"continuous contracts roll on different dates ({en} 1/5/10, ore 1/5/9)",
            "source": self.source,
        }


def mill_margin(
    start: DateLike = None,
    end: DateLike = None,
    *,
    iron_ore_coef: float = 1.6,
    coke_coef: float = 0.5,
    other_costs: float = 0.0,
    freq: str | None = None,
    product: str = "rebar",
) -> MillMargin:
    """The rebar (or `product="hrc"`: hot-rolled coil) futures margin on DCE/SHFE settle prices, on
    the days all three traded.

    The default coefficients are the market's rule of thumb: 1.6 t of ore and 0.5 t of coke per
    tonne of rebar. Pass `other_costs` (CNY/t) to include conversion costs.
    Example: `mill_margin(start="2020").to_dict()`.
    """
    # NaN passes `< 0` and turned every margin into NaN; infinity into -inf: both refused by name.
    if not all(math.isfinite(x) for x in (iron_ore_coef, coke_coef, other_costs)) or min(iron_ore_coef, coke_coef) < 0:
        raise MarketError(
            f"iron_ore_coef and coke_coef must be finite numbers ≥ 0 and other_costs finite; got "
            f"{iron_ore_coef}, {coke_coef} and {other_costs}",
            "bad_coefficients",
        )
    if product not in PRODUCTS:
        raise MarketError(f"unknown product {product!r}; the margin is of {' or '.join(PRODUCTS)}",
                          "unknown_product", product=product, choices=list(PRODUCTS))
    rebar = load_series(_PRODUCT_SERIES[product])
    ore = load_series("dce_iron_ore_daily")
    coke = load_series("dce_coke_daily")
    frame = pd.concat([rebar, ore, coke], axis=1, join="inner")
    margin = frame.iloc[:, 0] - iron_ore_coef * frame.iloc[:, 1] - coke_coef * frame.iloc[:, 2]
    margin = margin - other_costs
    source = " | ".join(dict.fromkeys(meta_of(s).source for s in (rebar, ore, coke)))
    margin.name = "mill_margin"
    _attach(margin, SeriesMeta(
        id="mill_margin", name_zh=f"{PRODUCTS[product][0]}盘面利润",
        name_en=f"Futures steel-mill margin ({PRODUCTS[product][1]})",
        unit="CNY/t", frequency="daily", kind="diffusion", source=source,
        licence="derived from exchange quotes: not stated",
    ))
    margin = load_series(margin, start, end, freq)
    return MillMargin(
        series=margin, iron_ore_coef=iron_ore_coef, coke_coef=coke_coef, other_costs=other_costs,
        last_date=margin.index[-1], last_value=float(margin.iloc[-1]),
        percentile=float(100 * (margin <= margin.iloc[-1]).mean()), mean=float(margin.mean()),
        minimum=float(margin.min()), maximum=float(margin.max()), source=source, product=product,
    )
