"""A price converted between dollars and yuan: the arithmetic at the latest USD/CNH, and why it is
only a currency conversion ("100美元/吨相当于多少元/吨" was answered with a claim check: "不符")."""

from __future__ import annotations

import re
from typing import Any

from orecast.agent.offline.compose import fmt

# "相当于多少元", "换算成人民币", "折合", "convert 108 USD/dmt to yuan", "in yuan terms".
ASKS = re.compile(r"相当于|换算|折合|折算|合多少|合人民币|等于多少|换成多少|兑换成?多少|\bconvert|\bin (?:yuan|rmb|cny|dollars?|usd)\b|"
                  r"\bto (?:yuan|rmb|cny|dollars?|usd)\b|how much is .+ in\b", re.I)
AMOUNT = re.compile(r"(?<![\d.])(\d[\d,]*(?:\.\d+)?)\s*(美元|美金|usd|us\$|dollars?|\$|元|块|人民币|yuan|cny|rmb)", re.I)


def asked(text: str) -> tuple[float, str] | None:
    """(amount, "USD" | "CNY") of a conversion question, else None."""
    if not ASKS.search(text):
        return None
    m = AMOUNT.search(text)
    if m is None:
        return None
    usd = re.fullmatch(r"美元|美金|usd|us\$|dollars?|\$", m.group(2), re.I) is not None
    return float(m.group(1).replace(",", "")), "USD" if usd else "CNY"


_VERB = re.compile(r"相当于|换算|折合|折算|合多少|合人民币|等于多少|换成|兑换|用(?:美元|美金|人民币)(?:表示|计价|来算|算)|"
                   r"\bconvert|\bexpressed in\b", re.I)
_TO_USD = re.compile(r"(?:成|为|合|折合|换算成?|多少|用)\s*(?:美元|美金)|in (?:us )?dollars|to (?:us )?dollars|\bto usd|in usd", re.I)
_TO_CNY = re.compile(r"(?:成|为|合|折合|换算成?|多少|用)\s*(?:人民币|元)|in (?:yuan|rmb|cny)|to (?:yuan|rmb|cny)", re.I)


def latest_to_convert(text: str, series: list[str]) -> str | None:
    """"铁矿石期货换算成美元是多少", "世界银行铁矿石价格折合人民币多少": a conversion with no figure
    given is of the latest price; the series whose currency is not the one asked for (None if none)."""
    from orecast.agent.offline import catalogue as cat

    # An explicit conversion verb: "iron ore price in yuan" alone asks for the yuan-priced series (DCE
    # futures); rebar has none in dollars, so "rebar in dollars" is a conversion.
    if AMOUNT.search(text):
        return None
    to_usd, to_cny = bool(_TO_USD.search(text)), bool(_TO_CNY.search(text))
    if not _VERB.search(text) and not (to_usd and series and series[0] in cat.catalogue() and
                                       series[0] not in ("iron_ore_wb_monthly", "dce_iron_ore_daily") and
                                       cat.catalogue()[series[0]].unit.startswith("CNY")):
        return None
    if to_usd == to_cny:
        return None
    wanted = "US$" if to_cny else "CNY"  # the unit of the price to convert
    named = [s for s in series if s in cat.catalogue() and s != "usd_cnh_daily"]
    if not named and re.search(r"铁矿|iron ore", text, re.I):
        named = ["dce_iron_ore_daily" if to_usd else "iron_ore_wb_monthly"]
    if named and named[0] in ("iron_ore_wb_monthly", "dce_iron_ore_daily"):
        named = ["dce_iron_ore_daily" if to_usd else "iron_ore_wb_monthly"]
    if not named or not cat.catalogue()[named[0]].unit.startswith(wanted):
        return None
    return named[0]


def latest_answer(p: dict[str, Any], fx: dict[str, Any], text: str, zh: bool) -> str:
    """The latest price of `p` converted at the latest USD/CNH, with both dates (they may differ)."""
    from orecast.agent.offline import catalogue as cat

    latest = p.get("latest") or {}
    value, day = latest.get("value"), latest.get("date")
    if not isinstance(value, int | float):
        return ""
    currency = "USD" if str(p.get("unit", "")).startswith("US$") else "CNY"
    fx_day = (fx.get("latest") or {}).get("date")
    name = cat.name(str(p.get("series")), zh)
    gap = ""
    if fx_day and day and fx_day != day:
        gap = (f"注意：价格是 {day} 的，汇率是 {fx_day} 的（我有的最新汇率），两者不是同一天。" if zh else
               f" Note: the price is of {day} and the rate of {fx_day} (the latest I have), not the same day.")
    head = f"换算的是{name}的最新值（{day}）。" if zh else f"This converts the latest {name} ({day}). "
    ore = p.get("series") in ("iron_ore_wb_monthly", "dce_iron_ore_daily")
    return head + answer((float(value), currency), fx, text, zh, ore_caveat=ore) + gap


def answer(amount: tuple[float, str], fx: dict[str, Any], text: str, zh: bool, *,
           ore_caveat: bool | None = None) -> str:
    """The amount at the latest USD/CNH, with the rate's date and, for an iron ore price per tonne,
    why the converted number is not the other market's price (`ore_caveat`; None: read the text)."""
    value, currency = amount
    rate, day = (fx.get("latest") or {}).get("value"), (fx.get("latest") or {}).get("date")
    if not isinstance(rate, int | float) or rate <= 0:
        return ""
    out = value * rate if currency == "USD" else value / rate
    per_tonne = re.search(r"铁矿|iron ore|吨|\btons?\b|\btonnes?\b|/t\b|dmt", text, re.I) if ore_caveat is None \
        else ore_caveat
    if zh:
        src, dst = ("美元", "元") if currency == "USD" else ("元", "美元")
        head = f"按美元兑离岸人民币 {rate:.4f}（{day}，我有的最新汇率）换算：{fmt(value)} {src} = {fmt(out)} {dst}。"
        return head if not per_tonne else head + (
                "这只是货币换算：世界银行铁矿石价格是美元/干吨、到中国港口（CFR，不含税），大商所期货是元/吨（湿吨、含 13% "
                "增值税和港杂费、交割品位和合约也不同），所以换算出的数字不是另一种价格的可比值，不能直接画等号。")
    src, dst = ("US$", "yuan") if currency == "USD" else ("yuan", "US$")
    head = f"At USD/CNH {rate:.4f} ({day}, the latest rate I have): {fmt(value)} {src} = {fmt(out)} {dst}."
    return head if not per_tonne else head + (
            " This is a currency conversion only: the World Bank iron ore price is US$ per dry tonne delivered to "
            "China (CFR, before tax), the DCE futures are yuan per wet tonne with 13% VAT and port costs, on a "
            "different grade and contract, so the converted number is not a comparable price of the other.")


def period_mean(series: str, start: str | None, end: str | None, zh: bool) -> str | None:
    """A period's mean price in the other currency: the mean of each day's price at that day's
    USD/CNH (days both have), beside the mean price at the period's mean rate. None when the
    period has no day with both."""
    import pandas as pd

    from orecast import market
    from orecast.agent.offline import catalogue as cat
    from orecast.agent.offline.scope import bound

    prices, fx = market.load_series(series), market.load_series("usd_cnh_daily")
    lo = bound(start) if start else prices.index[0]
    hi = bound(end, True) if end else prices.index[-1]
    prices = prices[(prices.index >= lo) & (prices.index <= hi)]
    rates = fx[(fx.index >= lo) & (fx.index <= hi)]
    both = pd.concat([prices.rename("p"), fx.rename("fx")], axis=1, join="inner").dropna()
    if prices.empty or both.empty:
        return None
    to_usd = cat.catalogue()[series].unit.startswith("CNY")
    daily = (both["p"] / both["fx"] if to_usd else both["p"] * both["fx"]).mean()
    at_mean = prices.mean() / rates.mean() if to_usd else prices.mean() * rates.mean()
    span = f"{prices.index[0].date()} – {prices.index[-1].date()}"
    src, dst = ("元/吨", "美元/吨") if to_usd else ("美元/吨", "元/吨")
    src_en, dst_en = ("CNY/t", "US$/t") if to_usd else ("US$/t", "CNY/t")
    if zh:
        return (f"**{cat.name(series, True)} {span} 的均价换算**：均价 {fmt(prices.mean())} {src}，同期美元兑离岸人民币均值 "
                f"{rates.mean():.4f}（{len(rates)} 个观测），约合 {fmt(at_mean)} {dst}；逐日按当天汇率换算再平均"
                f"（{len(both)} 个两者都有数据的日子）是 {fmt(daily)} {dst}。这只是货币换算，不是另一个市场的价格。")
    return (f"**{cat.name(series, False)}, {span}, mean converted**: mean {fmt(prices.mean())} {src_en}; at the "
            f"period's mean USD/CNH {rates.mean():.4f} ({len(rates)} observations) about {fmt(at_mean)} {dst_en}; each "
            f"day at its own rate, then averaged ({len(both)} days with both), {fmt(daily)} {dst_en}. A currency "
            "conversion only, not another market's price.")
