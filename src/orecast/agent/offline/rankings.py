"""Which month (quarter) of a period rose most, fell most, or had the highest (lowest) average.

"2025年铁矿石期货哪个月涨得最多" was answered with the year's statistics and no month; "哪个季度均价最高"
with the whole history's. A month's change is from the last value of the month before to the month's
last value (daily prices: month-end settles; a monthly series: one value to the next), so the
period's first month is measured from the month before it. Months with a likely contract roll in
them are marked: part of their change is the roll, not the market.
"""

from __future__ import annotations

import re

import pandas as pd

from orecast import market
from orecast.agent.offline import catalogue as cat
from orecast.agent.offline import scope
from orecast.market.rolls import likely_rolls

_UNIT = re.compile(
    r"哪个月|哪一个月|哪月|哪个月份|which month|哪个季度|哪一季度|哪一个季度|哪季度|which quarter",
    re.I,
)
_SEASONAL = re.compile(r"最容易|通常|一般|往往|历年|usually|typically|tend", re.I)
_MEASURES = (
    (
        "rise",
        re.compile(
            r"涨得?最多|涨幅最大|最大涨幅|涨最多|涨得最好|rose (?:the )?most|rise (?:the )?most|"
            r"biggest (?:rise|gain)|largest (?:rise|gain)|best",
            re.I,
        ),
    ),
    (
        "fall",
        re.compile(
            r"跌得?最多|跌幅最大|最大跌幅|跌最多|跌得最惨|fell (?:the )?most|fall (?:the )?most|"
            r"biggest (?:fall|drop)|largest (?:fall|drop)|worst",
            re.I,
        ),
    ),
    (
        "high",
        re.compile(
            r"均价最高|平均价格?最高|平均最高|价格最高|最贵|highest (?:average|mean|price)|most expensive",
            re.I,
        ),
    ),
    (
        "low",
        re.compile(
            r"均价最低|平均价格?最低|平均最低|价格最低|最便宜|lowest (?:average|mean|price)|cheapest",
            re.I,
        ),
    ),
)
SHOWN = 3


def asked(text: str) -> tuple[str, str] | None:
    """("month" | "quarter", "rise" | "fall" | "high" | "low") of "哪个月涨得最多", "which quarter had
    the highest average"; None for other questions and for the usual month ("几月份最容易涨")."""
    unit = _UNIT.search(text)
    if unit is None or _SEASONAL.search(text):
        return None
    measure = next((m for m, rx in _MEASURES if rx.search(text)), None)
    if measure is None:
        return None
    return ("quarter" if re.search(r"季|quarter", unit.group(0), re.I) else "month"), measure


def _label(period: pd.Period, zh: bool) -> str:
    if period.freqstr.startswith("Q"):
        return (
            f"{period.year} 年第 {period.quarter} 季度"
            if zh
            else f"Q{period.quarter} {period.year}"
        )
    return f"{period.year}-{period.month:02d}"


def ranking(
    series: str, unit: str, measure: str, start: str | None, end: str | None, zh: bool
) -> str:
    """The months (quarters) of [start, end] of `series` ranked by the measure asked, the top
    `SHOWN`, with how each was computed."""
    values = market.load_series(series)
    code = "Q" if unit == "quarter" else "M"
    lo = scope.bound(start) if start else values.index[0]
    hi = scope.bound(end, True) if end else values.index[-1]
    periods = values.index.to_period(code)
    inside = (values.index >= lo) & (values.index <= hi)
    name, u = cat.name(series, zh), cat.catalogue()[series].unit
    u_zh = scope.UNIT_ZH_SHORT.get(u, u)
    if not inside.any():
        return ""
    held = values[inside]
    span = (
        f"{held.index[0].date()} 至 {held.index[-1].date()}"
        if zh
        else f"{held.index[0].date()} to {held.index[-1].date()}"
    )
    last_period = periods[inside][-1]
    partial = values.index[-1] < last_period.end_time.normalize() and values.index[-1] <= hi
    if measure in ("high", "low"):
        means = held.groupby(held.index.to_period(code)).mean()
        picked = means.sort_values(ascending=measure == "low").head(SHOWN)
        rows = [f"{_label(p, zh)} {v:,.2f}" for p, v in picked.items()]
        word = (
            ("均价最高" if measure == "high" else "均价最低")
            if zh
            else ("had the highest average" if measure == "high" else "had the lowest average")
        )
        how = "各期所有观测的平均" if zh else "the mean of each period's observations"
    else:
        closes = values.groupby(periods).last()  # each period's last value
        change = (closes / closes.shift(1) - 1) * 100
        change = change[
            (change.index >= lo.to_period(code)) & (change.index <= last_period)
        ].dropna()
        picked = change.sort_values(ascending=measure == "fall").head(SHOWN)
        rolls = likely_rolls(series)
        rows = []
        for p, v in picked.items():
            before = closes[p - 1]
            row = (
                f"{_label(p, zh)} {v:+.2f}%（{before:,.2f} → {closes[p]:,.2f}）"
                if zh
                else f"{_label(p, zh)} {v:+.2f}% ({before:,.2f} → {closes[p]:,.2f})"
            )
            rolled = [d for d in rolls if d.to_period(code) == p]
            if rolled:
                row += (
                    f"，含疑似换月日 {'、'.join(str(d.date()) for d in rolled)}"
                    if zh
                    else f", with a likely contract roll on {', '.join(str(d.date()) for d in rolled)}"
                )
            rows.append(row)
        word = (
            ("涨得最多" if measure == "rise" else "跌得最多")
            if zh
            else ("rose most" if measure == "rise" else "fell most")
        )
        if cat.frequency(series) == "daily":
            how = (
                "每期最后一个交易日的结算价对上一期最后一个交易日（第一期也从它前一期的期末算起）"
                if zh
                else "each period's last settle against the last settle of the period before (the first period too)"
            )
        else:
            how = (
                "每期的值对上一期的值（第一期也从它前一期算起）"
                if zh
                else "each period's value against the one before (the first period too)"
            )
    what = ("月份" if unit == "month" else "季度") if zh else unit + "s"
    cut = (
        (
            f"最后一期 {_label(last_period, zh)} 数据只到 {values.index[-1].date()}，不完整。"
            if zh
            else f" The last one, {_label(last_period, zh)}, has data to {values.index[-1].date()} only."
        )
        if partial
        else ""
    )
    if not (start or end) and measure in ("rise", "fall") and unit == "month":
        cut += (
            "这是历史上单个月份的排名；要看哪个日历月份通常涨得多（各年同月的平均），可以问“几月份最容易涨”。"
            if zh
            else " This ranks single months in history; for the calendar month that usually rises most (the "
            "average of each month over the years), ask 'which month usually rises'."
        )
    if zh:
        return f"**{name}在 {span} 中{word}的{what}**：{'；'.join(rows)}（单位 {u_zh}；计算方法：{how}）。{cut}"
    return f"**The {what} of the {name} that {word} ({span})**: {'; '.join(rows)} (unit {u}; computed as {how}).{cut}"
