""""影响铁矿石价格的因素有哪些", "What drives iron ore prices?": the usual drivers, which of them the
bundled data measures (and to when), and how those moved with iron ore over the last three years.

It was answered with the latest prices alone. The list of drivers is the trade's common knowledge,
said to be that; every date comes from the data files, and a driver without data is said to have none.
"""

from __future__ import annotations

import re

from orecast.agent.offline import catalogue as cat

_ASKED = re.compile(
    r"(?:影响|决定|推动|驱动|左右)[^，。？?]{0,12}(?:因素|原因|变量)|驱动(?:因素|力|逻辑)|(?:因素|变量)有哪些|"
    r"什么(?:因素|原因)(?:在)?(?:影响|决定|推动|驱动)|由什么决定|受什么影响|受哪些因素|"
    r"\bwhat (?:drives|moves|affects|determines|influences|is driving)\b|\bdrivers?\b(?! of the forecast)|"
    r"\bfactors? (?:that )?(?:affect|drive|move|behind|driving|affecting|influenc)", re.I)
_NOT_DRIVERS = re.compile(r"如果|假如|假设|若|\bif\b|suppose|scenario|情景", re.I)
YEARS = 3

# (a, b) pairs the data relates: iron ore with the driver; daily pairs use the DCE futures.
PAIRS = (
    ("dce_iron_ore_daily", "shfe_rebar_daily"),
    ("dce_iron_ore_daily", "dce_coke_daily"),
    ("iron_ore_wb_monthly", "china_pmi_monthly"),
    ("iron_ore_wb_monthly", "usd_cnh_daily"),
)


def asked(text: str) -> bool:
    """A question about what moves the price, not a scenario ("如果…会有什么影响")."""
    return bool(_ASKED.search(text)) and not _NOT_DRIVERS.search(text)


def calls() -> list[tuple[str, dict[str, str]]]:
    """relate_series for each pair over the last `YEARS` years of the shorter series."""
    out = []
    for a, b in PAIRS:
        ends = sorted(str(cat.catalogue()[s].end) for s in (a, b))
        start = cat.lookback_start(a if str(cat.catalogue()[a].end) == ends[0] else b, YEARS, "year")
        out.append(("relate_series", {"a": a, "b": b, "start": start or ends[0]}))
    return out


def _end(series: str) -> str:
    return str(cat.catalogue()[series].end)[:10]


def note(zh: bool) -> str:
    """The drivers, each with what the data has of it."""
    steel = _end("crude_steel_china_annual")[:4]
    if zh:
        return (
            "**铁矿石价格的主要驱动因素**（这是行业的一般认识，不是从数据算出来的），以及我有没有它的数据：\n"
            f"- 需求：中国粗钢产量（中国用掉全球大部分海运铁矿石）——只有世界钢铁协会的年度数据，到 {steel} 年，没有月度产量；"
            f"中国制造业PMI——有，月度，到 {_end('china_pmi_monthly')}\n"
            f"- 钢材价格和钢厂利润：螺纹钢、热卷期货——有，日度，到 {_end('shfe_rebar_daily')}（可问“钢厂利润”）\n"
            f"- 炼钢的其他原料：焦炭、焦煤期货——有，日度，到 {_end('dce_coke_daily')}\n"
            f"- 汇率：美元兑离岸人民币——有，日度，到 {_end('usd_cnh_daily')}\n"
            "- 供给：澳大利亚、巴西的发运，矿山检修和天气——没有数据\n"
            "- 港口库存——没有数据\n"
            "- 政策：限产、房地产、基建——没有数据，统计模型不包含\n"
            f"下面是有数据的几项和铁矿石近 {YEARS} 年的同步程度：收益率的相关只说明一起变动，不证明谁推动谁。")
    return (
        "**What usually drives iron ore prices** (the trade's common view, not computed from the data), and "
        "whether I have data on each:\n"
        f"- Demand: China's crude steel output (China takes most seaborne ore) — only worldsteel's annual figures, to "
        f"{steel}, no monthly output; China's manufacturing PMI — yes, monthly, to {_end('china_pmi_monthly')}\n"
        f"- Steel prices and mill margins: rebar and hot-rolled coil futures — yes, daily, to "
        f"{_end('shfe_rebar_daily')} (ask for the 'steel mill margin')\n"
        f"- The other steelmaking inputs: coke and coking coal futures — yes, daily, to {_end('dce_coke_daily')}\n"
        f"- The exchange rate: USD/CNH — yes, daily, to {_end('usd_cnh_daily')}\n"
        "- Supply: Australian and Brazilian shipments, mine outages, weather — no data\n"
        "- Port inventories — no data\n"
        "- Policy: steel output curbs, property, infrastructure — no data; statistical models leave it out\n"
        f"Below, how the ones with data moved with iron ore over the last {YEARS} years: a correlation of returns "
        "shows moving together, not which drives which.")
