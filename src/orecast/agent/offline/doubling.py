""" "铁矿石价格翻倍需要多久": what the history shows, since no model can say when a price doubles.

It was answered with the latest prices. A statistical forecast gives a median and bands, not the
date a level is reached, so the answer is the history: the level a doubling means against the
highest price ever, and, from the days (months) the price stood near today's level, how often and
how fast it went on to double (or halve).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from orecast import market
from orecast.agent.offline import catalogue as cat
from orecast.agent.offline import scope
from orecast.market.rolls import likely_rolls

_ASKED = re.compile(r"翻倍|翻一番|涨一倍|double|腰斩|跌一半|跌去一半|减半|halve", re.I)
_WHEN = re.compile(
    r"多久|多长时间|几年|几个月|什么时候|何时|要多少时间|how long|when|how many (?:years|months)",
    re.I,
)
NEAR = 0.10  # a start "near today's level": within 10 % of it


def asked(text: str) -> float | None:
    """2.0 for "翻倍需要多久", 0.5 for "腰斩要多久"; None for other questions."""
    m = _ASKED.search(text)
    if m is None or not _WHEN.search(text):
        return None
    return 0.5 if re.search(r"腰斩|一半|减半|halve", m.group(0), re.I) else 2.0


def _durations(values: pd.Series, factor: float) -> pd.Series:
    """For each observation, the days until the price first reached `factor` times it (NaN: never)."""
    v = values.to_numpy()
    days = values.index.to_numpy()
    out = np.full(len(v), np.nan)
    for i in range(len(v) - 1):
        later = v[i + 1 :]
        hit = later >= factor * v[i] if factor > 1 else later <= factor * v[i]
        if hit.any():
            out[i] = (days[i + 1 + int(hit.argmax())] - days[i]) / np.timedelta64(1, "D")
    return pd.Series(out, index=values.index)


def _span(days: float, zh: bool) -> str:
    months = days / 30.44
    if months >= 24:
        return f"约 {months / 12:.1f} 年" if zh else f"about {months / 12:.1f} years"
    return f"约 {months:.1f} 个月" if zh else f"about {months:.1f} months"


def answer(series: str, factor: float, zh: bool) -> str:
    values = market.load_series(series)
    last, last_day = float(values.iloc[-1]), values.index[-1].date()
    target = last * factor
    unit = cat.catalogue()[series].unit
    u = scope.UNIT_ZH_SHORT.get(unit, unit) if zh else unit
    up = factor > 1
    word_zh, word_en = ("翻倍", "double") if up else ("腰斩（跌一半）", "halve")
    extreme, extreme_day = (
        (values.max(), values.idxmax()) if up else (values.min(), values.idxmin())
    )
    ever = extreme >= target if up else extreme <= target
    took = _durations(values, factor)
    near = took[(values - last).abs() <= NEAR * last]
    done = near.dropna()
    fastest = took.dropna()
    rolled = len(likely_rolls(series)) > 0
    lines = []
    if zh:
        lines.append(
            f"**{cat.name(series, True)}{word_zh}要多久：模型给不出时间，下面是历史。** 最新值 {last:,.2f} {u}"
            f"（{last_day}），{word_zh}是 {target:,.2f} {u}；历史{'最高' if up else '最低'} {extreme:,.2f} {u}"
            f"（{extreme_day.date()}），{'曾经' if ever else '从未'}到过这个水平。"
        )
        if len(near):
            tail = (
                f"，用时最短 {_span(done.min(), zh)}，中位数 {_span(done.median(), zh)}"
                if len(done)
                else ""
            )
            lines.append(
                f"- 价格在现在水平 ±{NEAR:.0%} 以内的 {len(near)} 个{'交易日' if cat.frequency(series) == 'daily' else '月'}"
                f"（{near.index[0].date()} 至 {near.index[-1].date()}）中，之后在数据结束前{word_zh}的有 {len(done)} 个"
                f"（{len(done) / len(near) * 100:.2f}%）{tail}。"
            )
        if len(fastest):
            start = fastest.idxmin()
            lines.append(
                f"- 整段历史中最快的一次{word_zh}：从 {start.date()} 的 {values[start]:,.2f} 起，用时 {_span(fastest.min(), zh)}。"
            )
        if rolled:
            lines.append(
                "- 这是连续主力合约，没有做换月调整，价格里含换月时的跳动，这些用时只是近似。"
            )
        lines.append(
            "- 统计预测模型只给中位数和区间，不预测价格哪天到达某个水平；历史上的用时也只是历史，不代表下一次。"
        )
        return "\n".join(lines)
    lines.append(
        f"**How long until the {cat.name(series, False)} would {word_en}: no model can give a date; here is the "
        f"history.** Latest {last:,.2f} {u} ({last_day}); to {word_en} means {target:,.2f} {u}; the "
        f"{'highest' if up else 'lowest'} ever was {extreme:,.2f} {u} ({extreme_day.date()}), so it has "
        f"{'been' if ever else 'never been'} there."
    )
    if len(near):
        per = "trading days" if cat.frequency(series) == "daily" else "months"
        tail = (
            f", the fastest in {_span(done.min(), zh)}, the median {_span(done.median(), zh)}"
            if len(done)
            else ""
        )
        lines.append(
            f"- Of the {len(near)} {per} the price stood within ±{NEAR:.0%} of today's level ({near.index[0].date()} "
            f"to {near.index[-1].date()}), it went on to {word_en} before the data ends from {len(done)} "
            f"({len(done) / len(near) * 100:.2f}%){tail}."
        )
    if len(fastest):
        start = fastest.idxmin()
        lines.append(
            f"- The fastest time to {word_en} in the whole history: from {values[start]:,.2f} on {start.date()}, "
            f"{_span(fastest.min(), zh)}."
        )
    if rolled:
        lines.append(
            "- This is the continuous main contract, not roll-adjusted: its prices include the jumps at "
            "contract rolls, so these times are approximate."
        )
    lines.append(
        "- A statistical forecast gives a median and ranges, not the day a level is reached; past times are "
        "history, not the next time."
    )
    return "\n".join(lines)
