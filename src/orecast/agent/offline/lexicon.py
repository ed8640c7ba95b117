"""Words the offline analyst understands: series names in Chinese and English, methods, units.

Aliases are matched longest first on a lower-cased question, so "焦煤" never matches "焦炭" and
"iron ore futures" beats "iron ore". Plain "iron ore / 铁矿石" means the World Bank US$ benchmark;
"futures / 期货 / 大商所 / DCE / 人民币" switches to the DCE contract.
"""

from __future__ import annotations

import re

# series id -> aliases (lower case). Order inside a list does not matter; length does.
SERIES_ALIASES: dict[str, tuple[str, ...]] = {
    "iron_ore_wb_monthly": (
        "iron ore", "iron-ore", "ironore", "铁矿石", "铁矿", "矿价", "iron ore price", "cfr china",
        "world bank iron ore", "世界银行铁矿石",
    ),
    "iron_ore_62fe_wb_monthly": ("62% fe", "62%fe", "62% iron ore", "62品位", "62%品位", "62%铁矿"),
    "dce_iron_ore_daily": (
        "iron ore futures", "dce iron ore", "iron ore future", "铁矿石期货", "铁矿期货", "大商所铁矿",
        "大商所铁矿石", "dce ore", "铁矿石主力", "铁矿主力", "连铁",
    ),
    "shfe_rebar_daily": ("rebar", "螺纹钢", "螺纹", "shfe rebar", "rebar futures", "螺纹钢期货"),
    "shfe_hrc_daily": (
        "hot-rolled coil", "hot rolled coil", "hrc", "热卷", "热轧卷板", "热轧", "热卷期货",
    ),
    "dce_coke_daily": ("coke", "焦炭", "coke futures", "焦炭期货", "metallurgical coke"),
    "dce_coking_coal_daily": (
        "coking coal", "met coal", "焦煤", "炼焦煤", "焦煤期货", "coking coal futures",
    ),
    "usd_cnh_daily": (
        "usd/cnh", "usdcnh", "usd cnh", "cnh", "yuan", "renminbi", "rmb", "exchange rate",
        "人民币汇率", "汇率", "美元兑人民币", "离岸人民币", "美元人民币",
        # "人民币今年升值了多少": the yuan's value is the USD/CNH rate, not a yuan-priced series.
        "人民币升值", "人民币贬值", "人民币兑美元", "人民币对美元",
        "人民币升了", "人民币贬了", "人民币涨了", "人民币跌了",  # "过去一年人民币升了多少" (was: iron ore futures)
    ),
    "china_pmi_monthly": (
        "pmi", "purchasing managers", "manufacturing pmi", "采购经理指数", "制造业pmi", "采购经理人指数",
    ),
    "coal_australia_wb_monthly": (
        "thermal coal", "newcastle coal", "australian coal", "coal", "动力煤", "煤炭", "纽卡斯尔",
    ),
    "brent_wb_monthly": ("brent", "crude oil", "oil price", "oil", "布伦特", "原油", "油价"),
    "copper_wb_monthly": ("copper", "铜价", "铜"),
    "crude_steel_china_annual": (
        "crude steel", "steel output", "steel production", "粗钢", "粗钢产量", "钢产量", "中国粗钢",
    ),
    "crude_steel_world_annual": (
        "world crude steel", "global steel output", "global crude steel", "全球粗钢", "世界粗钢",
    ),
    "metals_index_wb_monthly": (
        "metals index", "metals and minerals", "metal index", "金属指数", "金属价格指数", "金属与矿产",
    ),
    # The other Pink Sheet series: without a name here a question about them fell back to iron ore.
    "coal_south_africa_wb_monthly": ("south african coal", "south africa coal", "南非煤", "南非动力煤"),
    "wti_wb_monthly": ("wti", "west texas", "wti原油", "美国原油"),
    "crude_oil_avg_wb_monthly": ("average crude oil", "crude oil average", "原油均价", "平均原油"),
    "natural_gas_europe_wb_monthly": (
        "natural gas", "european gas", "europe gas", "ttf", "天然气", "欧洲天然气",
    ),
    "aluminum_wb_monthly": ("aluminum", "aluminium", "铝价", "铝"),
    "nickel_wb_monthly": ("nickel", "镍价", "镍"),
    "zinc_wb_monthly": ("zinc", "锌价", "锌"),
    "base_metals_index_wb_monthly": ("base metals", "base metal", "基本金属", "贱金属"),
    "energy_index_wb_monthly": ("energy index", "energy price index", "能源指数", "能源价格指数"),
    "non_energy_index_wb_monthly": (
        "non-energy", "non energy", "非能源指数", "非能源商品", "非能源价格指数",
    ),
    "commodities_index_wb_monthly": (
        "commodity index", "commodities index", "commodity price index", "大宗商品指数",
        "大宗商品价格指数", "商品指数",
    ),
    "precious_metals_index_wb_monthly": ("precious metals", "precious metal", "贵金属"),
}

# Crude steel of another country: "India's crude steel", "印度粗钢产量" (China is the default).
STEEL_COUNTRIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("china", ("china", "chinese", "中国")),
    ("india", ("india", "indian", "印度")),
    ("japan", ("japan", "japanese", "日本")),
    ("united_states", ("united states", "u.s.", "usa", "america", "美国")),
    ("south_korea", ("south korea", "korea", "韩国")),
    ("russia", ("russia", "russian", "俄罗斯")),
    ("germany", ("germany", "german", "德国")),
    ("brazil", ("brazil", "brazilian", "巴西")),
    ("world", ("world", "global", "全球", "世界")),
)

# Words that move "iron ore" from the World Bank benchmark to the DCE futures contract.
FUTURES_HINTS = ("futures", "future", "期货", "大商所", "dce", "人民币计", "元/吨", "cny", "盘面")

# Words that make a generic "price" question about iron ore when no series is named.
DEFAULT_SERIES = "iron_ore_wb_monthly"

METHOD_ALIASES: dict[str, tuple[str, ...]] = {
    "naive": ("naive", "random walk", "朴素", "随机游走"),
    "drift": ("drift", "漂移"),
    "ets": ("ets", "exponential smoothing", "holt", "指数平滑"),
    "arima": ("arima", "自回归"),
    "theta": ("theta",),
    "ensemble": ("ensemble", "combination", "组合", "集成"),
    "auto": ("auto method", "automatic", "自动选择"),
    "nowcast": ("nowcast", "即时预测"),
}

_CJK = re.compile(r"[\u4e00-\u9fff]")


def is_chinese(text: str) -> bool:
    """Answer in Chinese when the question has any CJK character (the system default)."""
    return bool(_CJK.search(text))


def _boundary_match(text: str, alias: str) -> int:
    """Index of `alias` in `text`, respecting word boundaries for ASCII aliases; -1 if absent."""
    if _CJK.search(alias):
        return text.find(alias)
    m = re.search(rf"(?<![a-z0-9]){re.escape(alias)}(?![a-z0-9])", text)
    return m.start() if m else -1


# "in yuan per tonne", "人民币计价": a unit (the CNY futures), not the USD/CNH exchange rate.
_CNY_UNIT = re.compile(r"(?:yuan|rmb|cny|renminbi)\s*(?:per|/|a)\s*(?:metric\s+)?(?:tonne|ton|t)\b|"
                       r"\bin (?:yuan|rmb|cny|renminbi)\b|(?:以|用)?人民币(?:计价|计算|计)|元每吨|"
                       # "the change in percent and yuan": a unit of the answer, not the exchange rate
                       r"\b(?:percent|%|points?)\s+(?:and|or)\s+(?:in\s+)?(?:yuan|rmb|cny)\b|"
                       # "Is iron ore at 700 yuan?": an amount in yuan is a price in yuan, not USD/CNH
                       r"(?<=\d)\s*(?:yuan|rmb|cny)\b")


# "美元/干吨", "US$/dmt", "dollars per tonne": a price in dollars (the World Bank's), not in yuan.
USD_UNIT = re.compile(r"美元\s*(?:/|每)\s*(?:干)?吨|美金\s*(?:/|每)\s*(?:干)?吨|干吨|\bdmt\b|us\$|"
                      r"\busd\s*(?:/|per)\s*(?:dry\s+)?(?:metric\s+)?(?:tonne|ton|t)\b|"
                      r"dollars?\s+(?:per|a)\s+(?:dry\s+)?(?:metric\s+)?(?:tonne|ton)", re.I)


# "钢材价格", "steel prices": the steel futures (rebar and hot-rolled coil), not the ore.
_STEEL_PRICES = re.compile(r"钢材|钢价|成材|\bsteel (?:prices?|futures)\b|\bprice of steel\b")


def find_series(text: str, known: set[str] | None = None) -> list[str]:
    """Series ids named in `text`, in the order they appear, most specific alias winning."""
    low = _CNY_UNIT.sub(" 元/吨 ", text.lower())
    hits: list[tuple[int, int, str]] = []  # (position, -alias length, id)
    for sid, aliases in SERIES_ALIASES.items():
        if known is not None and sid not in known:
            continue
        for alias in aliases:
            pos = _boundary_match(low, alias)
            if pos >= 0:
                hits.append((pos, -len(alias), sid))
    # Raw ids typed by the user ("shfe_rebar_daily") are matched too.
    for sid in known or SERIES_ALIASES:
        pos = low.find(sid)
        if pos >= 0:
            hits.append((pos, -len(sid), sid))
    hits.sort()
    chosen: list[str] = []
    taken: list[tuple[int, int]] = []
    for pos, neg_len, sid in sorted(hits, key=lambda h: (h[1], h[0])):  # longest aliases first
        span = (pos, pos - neg_len)
        if any(not (span[1] <= a or span[0] >= b) for a, b in taken):
            continue  # inside a longer alias already matched ("焦煤期货" vs "焦煤")
        taken.append(span)
        chosen.append(sid)
    order = {sid: min(p for p, _, s in hits if s == sid) for sid in chosen}
    ids = sorted(dict.fromkeys(chosen), key=lambda s: order[s])
    if "iron_ore_62fe_wb_monthly" in ids and "iron_ore_wb_monthly" in ids:
        # "62% Fe CFR China" names one series twice (the benchmark is 62% Fe since 2008-12).
        ids.remove("iron_ore_wb_monthly")
    ids = _steel_countries(low, ids, known)
    if _STEEL_PRICES.search(low) and not {"shfe_rebar_daily", "shfe_hrc_daily"} & set(ids):
        ids += [s for s in ("shfe_rebar_daily", "shfe_hrc_daily") if known is None or s in known]
    hinted = USD_UNIT.sub(" ", low)  # "美元/吨" holds "元/吨" but is the dollar price, not the futures
    if "iron_ore_wb_monthly" in ids and any(_boundary_match(hinted, h) >= 0 for h in FUTURES_HINTS):
        ids = [("dce_iron_ore_daily" if s == "iron_ore_wb_monthly" else s) for s in ids]
        ids = list(dict.fromkeys(ids))
    return ids


def _steel_countries(low: str, ids: list[str], known: set[str] | None) -> list[str]:
    """Crude steel of the countries named: "India's crude steel" is not China's."""
    steel = [i for i, s in enumerate(ids) if s.startswith("crude_steel_")]
    if not steel:
        return ids
    low = re.sub(r"world bank|世界银行", " ", low)  # the data's publisher, not a country
    named = sorted((pos, key) for key, words in STEEL_COUNTRIES
                   if (pos := min((p for w in words if (p := _boundary_match(low, w)) >= 0),
                                  default=-1)) >= 0)
    chosen = [f"crude_steel_{key}_annual" for _, key in named]
    chosen = [c for c in chosen if known is None or c in known]
    if not chosen:
        return ids
    first = steel[0]
    rest = [s for s in ids if not s.startswith("crude_steel_")]
    return list(dict.fromkeys(rest[:first] + chosen + rest[first:]))


def find_method(text: str) -> str | None:
    low = text.lower()
    best: tuple[int, str] | None = None
    for method, aliases in METHOD_ALIASES.items():
        for alias in aliases:
            if _boundary_match(low, alias) >= 0 and (best is None or len(alias) > best[0]):
                best = (len(alias), method)
    return best[1] if best else None
