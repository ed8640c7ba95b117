"""The catalogue of bundled series: what each id means, its unit, source and licence.

The specs are static and immutable; ranges are read from the data when `list_series()` is called,
so the catalogue can never disagree with the files it describes.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass
from typing import Literal

from orecast.market.errors import MarketError

Frequency = Literal["daily", "weekly", "monthly", "quarterly", "annual"]
Kind = Literal["price", "index", "fx", "diffusion", "quantity"]

# Pandas offsets used to build future dates and to resample. Daily futures add their exchange's
# holidays (`SeriesSpec.calendar`, `orecast.market.trading_days`).
PANDAS_FREQ: dict[str, str] = {
    "daily": "B",
    "weekly": "W-FRI",
    "monthly": "MS",
    "quarterly": "QS",
    "annual": "YS",
}
PERIODS_PER_YEAR: dict[str, int] = {
    "daily": 252,
    "weekly": 52,
    "monthly": 12,
    "quarterly": 4,
    "annual": 1,
}

WB_SOURCE = (
    "World Bank Commodity Price Data (The Pink Sheet), monthly, edition of 2026-06-02 (data to 2026-05)"
)
WB_LICENCE = "CC BY 4.0"
SINA_SOURCE = (
    "{exchange} daily quotes, continuous (连续) main contract as served by Sina Finance; "
    "collected by github.com/oowuyueco/pub (snapshot 2026-08-22)"
)
SINA_LICENCE = "not stated: third-party market data, check the terms before redistributing"
CNH_SOURCE = "USD/CNH daily from github.com/oowuyueco/pub (中美汇率Day); upstream provider not stated"
PMI_SOURCE = (
    "National Bureau of Statistics of China (NBS) manufacturing PMI, via github.com/oowuyueco/pub"
)
PMI_LICENCE = "official statistics, licence not stated"
STEEL_SOURCE = "Source: World Steel Association (via github.com/RPGroup-PBoC/human_impacts)"
STEEL_LICENCE = "use with attribution: 'Source: World Steel Association'"

_ROLL_NOTE = (
    "Continuous contract, not back-adjusted: rolls to the next main contract show jumps "
    "(12-17% on some iron ore roll days). Settle is used; the close fills the few days without one."
)


@dataclass(frozen=True, slots=True)
class SeriesSpec:
    """Where a bundled series lives and what it means (no data)."""

    id: str
    name_zh: str
    name_en: str
    unit: str
    frequency: Frequency
    kind: Kind
    file: str
    column: str
    source: str
    licence: str
    fallback_column: str | None = None
    first_date: str | None = None  # drop earlier rows (unit or basis changes, see notes)
    notes: str = ""
    # A daily series whose month-end level nowcasts this monthly average (the `nowcast` method).
    indicator: str | None = None
    # Daily series: the days it trades (`trading_days.CN_EXCHANGE` skips China's holidays).
    calendar: str = "weekdays"
    # One-off shocks (first days of the periods) the model fits do not see: each is replaced by
    # the last value before it (no later value is used, so a backtest origin after it sees no
    # future). Backtests still score against the actual values.
    shocks: tuple[str, ...] = ()

    @property
    def log_model(self) -> bool:
        """Prices, rates and indices are modelled in logs; a diffusion index (PMI) is not."""
        return self.kind in ("price", "index", "fx")


@dataclass(frozen=True, slots=True)
class SeriesInfo:
    """A catalogue row: the spec plus the range actually present in the data."""

    id: str
    name_zh: str
    name_en: str
    unit: str
    frequency: str
    kind: str
    start: str
    end: str
    count: int
    source: str
    licence: str
    notes: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _futures(
    id_: str, zh: str, en: str, exchange: str, file: str, lot: str
) -> SeriesSpec:
    return SeriesSpec(
        id=id_,
        name_zh=zh,
        name_en=en,
        unit="CNY/t",
        frequency="daily",
        kind="price",
        file=file,
        column="settle_cny_per_t",
        fallback_column="close_cny_per_t",
        source=SINA_SOURCE.format(exchange=exchange),
        licence=SINA_LICENCE,
        notes=f"{_ROLL_NOTE} One lot is {lot}.",
        calendar="cn_exchange",
    )


def _wb(id_: str, zh: str, en: str, unit: str, column: str, kind: Kind = "price",
        file: str = "worldbank_commodities_monthly.csv", notes: str = "") -> SeriesSpec:
    return SeriesSpec(
        id=id_, name_zh=zh, name_en=en, unit=unit, frequency="monthly", kind=kind, file=file,
        column=column, source=WB_SOURCE, licence=WB_LICENCE,
        notes=notes or "Monthly average, dated the first day of the month.",
    )


_IDX = "worldbank_price_indices_monthly.csv"
_STEEL = "crude_steel_production_annual_worldsteel.csv"

SPECS: tuple[SeriesSpec, ...] = (
    SeriesSpec(
        id="iron_ore_wb_monthly",
        name_zh="铁矿石价格（世界银行，CFR中国）",
        name_en="Iron ore, CFR China (World Bank)",
        unit="US$/dmt",
        frequency="monthly",
        kind="price",
        file="iron_ore_monthly_worldbank.csv",
        column="iron_ore_price",
        first_date="2006-01-01",
        indicator="dce_iron_ore_daily",
        source=WB_SOURCE,
        licence=WB_LICENCE,
        notes=(
            "Spot fines c.f.r. China: 63.5% Fe 2006-01..2008-11, 62% Fe from 2008-12. Earlier rows "
            "are annual contracts in US cents per dmtu and are not used. Monthly average."
        ),
    ),
    SeriesSpec(
        id="iron_ore_62fe_wb_monthly",
        name_zh="铁矿石62%品位（世界银行，CFR中国）",
        name_en="Iron ore 62% Fe fines, CFR China (World Bank)",
        unit="US$/dmt",
        frequency="monthly",
        kind="price",
        file="iron_ore_monthly_worldbank.csv",
        column="iron_ore_price",
        first_date="2008-12-01",
        indicator="dce_iron_ore_daily",
        source=WB_SOURCE,
        licence=WB_LICENCE,
        notes="The pure 62% Fe benchmark, from 2008-12. Monthly average.",
    ),
    _futures("dce_iron_ore_daily", "大商所铁矿石期货（连续，结算价）",
             "DCE iron ore futures, continuous (settle)", "DCE", "dce_iron_ore_futures_daily.csv",
             "100 t"),
    _futures("shfe_rebar_daily", "上期所螺纹钢期货（连续，结算价）",
             "SHFE rebar futures, continuous (settle)", "SHFE", "shfe_rebar_futures_daily.csv",
             "10 t"),
    _futures("shfe_hrc_daily", "上期所热轧卷板期货（连续，结算价）",
             "SHFE hot-rolled coil futures, continuous (settle)", "SHFE",
             "shfe_hot_rolled_coil_futures_daily.csv", "10 t"),
    _futures("dce_coke_daily", "大商所焦炭期货（连续，结算价）",
             "DCE metallurgical coke futures, continuous (settle)", "DCE",
             "dce_coke_futures_daily.csv", "100 t"),
    _futures("dce_coking_coal_daily", "大商所焦煤期货（连续，结算价）",
             "DCE coking coal futures, continuous (settle)", "DCE",
             "dce_coking_coal_futures_daily.csv", "60 t"),
    SeriesSpec(
        id="usd_cnh_daily", name_zh="美元兑离岸人民币", name_en="USD/CNH (offshore yuan)",
        unit="CNH per USD", frequency="daily", kind="fx", file="usd_cnh_daily.csv",
        column="usd_cnh", source=CNH_SOURCE, licence="not stated",
        notes="Some rows are dated on Sundays (provider timestamps); gap 2023-09-28..2023-10-09.",
    ),
    SeriesSpec(
        id="china_pmi_monthly", name_zh="中国官方制造业PMI（国家统计局）",
        name_en="China official manufacturing PMI (NBS)", unit="index (50 = no change)",
        frequency="monthly", kind="diffusion", file="china_nbs_manufacturing_pmi_monthly.csv",
        column="china_nbs_manufacturing_pmi", source=PMI_SOURCE, licence=PMI_LICENCE,
        notes="A diffusion index: above 50 means expansion. Modelled in levels, not logs.",
        # COVID: 35.7 in February 2020 and 52.0 in March, after 50.0 in January. The two changes
        # are 57 % of the sum of squared monthly changes 2008-2026, so fitted with them the 80 %
        # band covered 98 % of the PMI's one-month outcomes from 2021 on (tests/market/test_forecast).
        shocks=("2020-02-01", "2020-03-01"),
    ),
    _wb("coal_australia_wb_monthly", "动力煤（澳大利亚纽卡斯尔）", "Coal, Australia (Newcastle thermal)",
        "US$/t", "coal_australia_usd_per_mt"),
    _wb("coal_south_africa_wb_monthly", "动力煤（南非理查兹湾）", "Coal, South Africa (Richards Bay)",
        "US$/t", "coal_south_africa_usd_per_mt"),
    _wb("brent_wb_monthly", "布伦特原油", "Crude oil, Brent", "US$/bbl", "crude_oil_brent_usd_per_bbl"),
    _wb("wti_wb_monthly", "WTI原油", "Crude oil, WTI", "US$/bbl", "crude_oil_wti_usd_per_bbl"),
    _wb("crude_oil_avg_wb_monthly", "原油均价（布伦特、迪拜、WTI）",
        "Crude oil, average of Brent, Dubai and WTI", "US$/bbl", "crude_oil_avg_usd_per_bbl"),
    _wb("natural_gas_europe_wb_monthly", "欧洲天然气", "Natural gas, Europe", "US$/mmbtu",
        "natural_gas_europe_usd_per_mmbtu"),
    _wb("copper_wb_monthly", "铜", "Copper", "US$/t", "copper_usd_per_mt"),
    _wb("aluminum_wb_monthly", "铝", "Aluminium", "US$/t", "aluminum_usd_per_mt"),
    _wb("nickel_wb_monthly", "镍", "Nickel", "US$/t", "nickel_usd_per_mt"),
    _wb("zinc_wb_monthly", "锌", "Zinc", "US$/t", "zinc_usd_per_mt"),
    _wb("metals_index_wb_monthly", "金属与矿产价格指数（世界银行）",
        "Metals and minerals price index (World Bank, incl. iron ore)", "index, 2010 = 100",
        "metals_minerals_index", kind="index", file=_IDX),
    _wb("base_metals_index_wb_monthly", "基本金属价格指数（不含铁矿石）",
        "Base metals price index, excluding iron ore (World Bank)", "index, 2010 = 100",
        "base_metals_ex_iron_ore_index", kind="index", file=_IDX),
    _wb("energy_index_wb_monthly", "能源价格指数", "Energy price index (World Bank)",
        "index, 2010 = 100", "energy_index", kind="index", file=_IDX),
    _wb("non_energy_index_wb_monthly", "非能源价格指数", "Non-energy price index (World Bank)",
        "index, 2010 = 100", "non_energy_index", kind="index", file=_IDX),
    _wb("commodities_index_wb_monthly", "大宗商品总价格指数", "Total commodity price index (World Bank)",
        "index, 2010 = 100", "total_index", kind="index", file=_IDX),
    _wb("precious_metals_index_wb_monthly", "贵金属价格指数", "Precious metals price index (World Bank)",
        "index, 2010 = 100", "precious_metals_index", kind="index", file=_IDX),
    *(
        SeriesSpec(
            id=f"crude_steel_{key}_annual", name_zh=f"粗钢产量（{zh}）",
            name_en=f"Crude steel production, {en}", unit="Mt", frequency="annual",
            kind="quantity", file=_STEEL, column=f"{key}_crude_steel_mt", source=STEEL_SOURCE,
            licence=STEEL_LICENCE, notes="Annual, 2000-2018 only.",
        )
        for key, zh, en in (
            ("world", "全球", "world"),
            ("china", "中国", "China"),
            ("india", "印度", "India"),
            ("japan", "日本", "Japan"),
            ("united_states", "美国", "United States"),
            ("south_korea", "韩国", "South Korea"),
            ("russia", "俄罗斯", "Russia"),
            ("germany", "德国", "Germany"),
            ("brazil", "巴西", "Brazil"),
        )
    ),
)

_BY_ID: dict[str, SeriesSpec] = {spec.id: spec for spec in SPECS}


def series_ids() -> list[str]:
    """All bundled series ids, in catalogue order."""
    return [spec.id for spec in SPECS]


def find_spec(series_id: str) -> SeriesSpec | None:
    """The spec of a bundled id, or None (for user series)."""
    return _BY_ID.get(series_id)


def get_spec(series_id: str) -> SeriesSpec:
    """The spec of a bundled series; an unknown id names the closest ids in the error."""
    spec = _BY_ID.get(series_id.strip())
    if spec is not None:
        return spec
    close = difflib.get_close_matches(series_id, _BY_ID, n=3, cutoff=0.4)
    # Substring hits catch "iron_ore" or "rebar", which difflib ranks poorly against long ids.
    close += [i for i in _BY_ID if series_id.lower() in i and i not in close][: 3 - len(close)]
    hint = f"; did you mean {', '.join(close)}?" if close else "; run `orecast series list`"
    raise MarketError(f"unknown series id {series_id!r}{hint}", "unknown_series", series=series_id,
                      suggestions=close)
