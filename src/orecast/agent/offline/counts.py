""" "铁矿石期货今年有几天上涨": how many days (months) of a period rose, fell or stayed flat.

It was answered with the period's first and last price. Each change is from the observation before
(the period's first day from the last one before it), as the largest moves and the volatility count.
"""

from __future__ import annotations

import re

from orecast import market
from orecast.agent.offline import catalogue as cat
from orecast.agent.offline import scope

_ASKED = re.compile(
    r"(?:几|多少)(?:个)?(?:交易日|天|日|月|周)(?:是|在)?(?:上涨|下跌|涨|跌)|"
    r"(?:上涨|下跌|涨|跌)(?:了|的)?(?:有)?(?:几|多少)(?:个)?(?:交易日|天|日|月)|"
    r"how many (?:trading )?(?:days|months|weeks)\b.{0,30}\b(?:rise|rose|up|gain|fall|fell|down|decline)",
    re.I,
)


def asked(text: str) -> bool:
    return bool(_ASKED.search(text))


def up_and_down(series: str, start: str | None, end: str | None, zh: bool) -> str:
    values = market.load_series(series)
    lo = scope.bound(start) if start else values.index[0]
    hi = scope.bound(end, True) if end else values.index[-1]
    change = values.diff()
    change = change[(change.index >= lo) & (change.index <= hi)].dropna()
    if change.empty:
        return ""
    up, down = int((change > 0).sum()), int((change < 0).sum())
    flat = len(change) - up - down
    daily = cat.frequency(series) == "daily"
    per_zh, per_en = ("个交易日", "trading days") if daily else ("期", "periods")
    span = (
        f"{change.index[0].date()} 至 {change.index[-1].date()}"
        if zh
        else f"{change.index[0].date()} to {change.index[-1].date()}"
    )
    if zh:
        return (
            f"**{cat.name(series, True)}在 {span} 的 {len(change)} {per_zh}中**：上涨 {up} 个（{up / len(change) * 100:.2f}%），"
            f"下跌 {down} 个（{down / len(change) * 100:.2f}%），持平 {flat} 个。每个交易日都和前一个有数据的交易日相比"
            "（第一个也和它之前的一天比）。"
        )
    return (
        f"**Of the {len(change)} {per_en} of the {cat.name(series, False)} from {span}**: {up} rose "
        f"({up / len(change) * 100:.2f}%), {down} fell ({down / len(change) * 100:.2f}%), {flat} were flat. "
        "Each is against the observation before it (the first too, against the one before the period)."
    )
