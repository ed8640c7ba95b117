""" "上周螺纹钢涨了还是跌了": did a past period rise or fall, said in one word with its numbers.

It was answered with a forecast of last week (the data ends before it) and no verdict, or, inside the
data, with the period's statistics and no word of the direction. The change is from the last value
before the period to the period's last one, as a period's volatility and largest moves count it.
"""

from __future__ import annotations

import re

import pandas as pd

from orecast import market
from orecast.agent.clock import today
from orecast.agent.offline import catalogue as cat
from orecast.agent.offline import scope
from orecast.agent.offline.compose import UNIT_ZH, level, pct, signed
from orecast.agent.offline.lexicon import DEFAULT_SERIES

_ASKED = re.compile(
    r"涨了还是跌了|跌了还是涨了|涨了吗|跌了吗|涨了没|跌了没|涨没涨|跌没跌|是涨是跌|是涨还是跌|涨还是跌了|"
    r"\bdid (?:[\w-]+ ){1,4}?(?:rise|fall|go up|go down|gain|drop)\b|"
    r"\b(?:was|were) (?:it|prices?|iron ore|rebar|\w+) (?:up|down)\b",
    re.I,
)
# "did it rise last week?": the calendar week before this one, as "上周" is (not the data's last 7 days).
LAST = {(1, "week"): ("week", -1), (1, "month"): ("month", -1), (1, "year"): ("year", -1)}
# "过去一年", "近一年", "over the past year": a look-back from the data's last day, not last calendar year.
LOOKBACK = re.compile(r"过去|近|最近|\bpast\b|\brecent|\bprevious\b", re.I)
_FUTURE = re.compile(r"会涨|会跌|将会|能涨|will\b|going to", re.I)
# "Which month did iron ore rise the most", "谁涨得多": a ranking or a comparison, not one direction.
_RANKING = re.compile(r"\bmost\b|\bmore\b|\bwhich\b|最多|更多|谁|哪个|哪天|哪一|几天|几个月", re.I)


def asked(text: str) -> bool:
    """A question whether a past period rose or fell (not whether one ahead will)."""
    return bool(_ASKED.search(text)) and not _FUTURE.search(text) and not _RANKING.search(text)


def period_of(start: str | None, end: str | None) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """The period's first and last days, None when it starts after today (a forecast's question)."""
    if not start:
        return None
    lo, hi = scope.bound(start), scope.bound(end or start, True)
    now = pd.Timestamp(today())
    return None if lo > now else (lo, min(hi, now))


def _span(lo: pd.Timestamp, hi: pd.Timestamp, zh: bool) -> str:
    if lo == hi:
        return str(lo.date())
    return f"{lo.date()} 至 {hi.date()}" if zh else f"{lo.date()} to {hi.date()}"


def _change(values: pd.Series, lo: pd.Timestamp, hi: pd.Timestamp) -> tuple[pd.Timestamp, float, pd.Timestamp, float] | None:
    before, inside = values[values.index < lo], values[(values.index >= lo) & (values.index <= hi)]
    if before.empty or inside.empty:
        return None
    return before.index[-1], float(before.iloc[-1]), inside.index[-1], float(inside.iloc[-1])


def _line(series: str, move: tuple[pd.Timestamp, float, pd.Timestamp, float], zh: bool) -> str:
    d0, v0, d1, v1 = move
    unit = cat.catalogue()[series].unit
    u = UNIT_ZH.get(unit, unit) if zh else unit
    rate = (v1 / v0 - 1) * 100
    if zh:
        word = "涨了" if v1 > v0 else "跌了" if v1 < v0 else "持平（没涨没跌）"
        return (f"{word}：从 {d0.date()} 的 {level(v0, u)} 到 {d1.date()} 的 {level(v1, u)}，"
                f"{pct(rate)}（{signed(v1 - v0, u)}）")
    word = "it rose" if v1 > v0 else "it fell" if v1 < v0 else "it was flat"
    return f"{word}: from {level(v0, u)} on {d0.date()} to {level(v1, u)} on {d1.date()}, {pct(rate)} ({signed(v1 - v0, u)})"


def verdict(series: str, lo: pd.Timestamp, hi: pd.Timestamp, zh: bool) -> tuple[str, tuple[str, str]] | None:
    """The sentence that answers "did it rise or fall" over [lo, hi], and the dates of the history to
    show with it: the period's own when the data holds it, else the last week the data holds."""
    values = market.load_series(series)
    name = cat.name(series, zh)
    last = values.index[-1]
    if lo <= last:
        move = _change(values, lo, hi)
        if move is None:
            return None
        cut = "" if hi <= last else (f"（数据只到 {last.date()}，这段时间之后的部分没有数据）" if zh else
                                     f" (the data ends on {last.date()}; the rest of the period has none)")
        head = (f"**结论：{name}在 {_span(lo, hi, zh)}{cut}，{_line(series, move, zh)}**（从这段时间之前最后一个有数据的日子算起）。"
                if zh else
                f"**Answer: over {_span(lo, hi, zh)}{cut}, {cat.name(series, zh)} — {_line(series, move, zh)}** "
                "(from the last value before the period).")
        return head, (lo.date().isoformat(), hi.date().isoformat())
    # After the data's end: no verdict on the period asked, the last week the data holds instead.
    week0 = last - pd.Timedelta(days=last.weekday())
    move = _change(values, week0, last)
    if move is None:
        return None
    if zh:
        head = (f"**你问的 {_span(lo, hi, zh)} 没有实际数据**：我的{name}数据只到 {last.date()}，所以不能说那段时间"
                f"涨了还是跌了（预测只是一个范围，不是涨跌的事实）。**数据里最后一周（{_span(week0, last, zh)}）"
                f"{_line(series, move, zh)}**（较前一周最后一个交易日）。")
    else:
        head = (f"**There is no data for {_span(lo, hi, zh)}**: my {name} data ends on {last.date()}, so I cannot "
                "say whether it rose or fell then (a forecast is a range, not a fact). **In the last week of the "
                f"data ({_span(week0, last, zh)}), {_line(series, move, zh)}** (against the week before's last day).")
    return head, (week0.date().isoformat(), last.date().isoformat())


def futures_note(zh: bool) -> str:
    """Why "iron ore" rose or fell is told by the futures: which iron ore price this is."""
    end = cat.catalogue()[DEFAULT_SERIES].end
    return (f"这里的“铁矿石”用的是大商所铁矿石期货（日度，元/吨）；世界银行铁矿石价格（美元/干吨）是月均价"
            f"（数据到 {end}），说不了一周或几天的涨跌。" if zh else
            "“Iron ore” here is the DCE iron ore futures (daily, CNY/t); the World Bank's iron ore price "
            f"(US$/dmt, data to {end}) is a monthly average and cannot tell a week's or a few days' move.")


# "过去一年铁矿石跌了多少", "how much did iron ore rise": an amount asked of a direction the question
# takes for granted; "涨跌了多少" / "how much did it change" presume none.
_PRESUMED_FALL = re.compile(
    r"(?:跌|下跌|下降|降)了(?:多少(?![天次个])|百分之几|几成|几个点)|跌幅|"
    r"\bhow (?:much|far) (?:did|has|have) (?:[\w-]+ ){1,5}?(?:fall(?:en)?|drop(?:ped)?|decline[d]?|go(?:ne)? down|los[te])\b",
    re.I)
_PRESUMED_RISE = re.compile(
    r"(?:涨|上涨|上升|升)了(?:多少(?![天次个])|百分之几|几成|几个点)|涨幅|"
    r"\bhow (?:much|far) (?:did|has|have) (?:[\w-]+ ){1,5}?(?:rise|risen|gain(?:ed)?|go(?:ne)? up|climb(?:ed)?)\b",
    re.I)


def presumed(text: str) -> str | None:
    """"fall" or "rise" when the question asks how much a past move was and names its direction."""
    if re.search(r"涨跌|跌涨", text) or _FUTURE.search(text) or _RANKING.search(text):
        return None
    fall, rise = _PRESUMED_FALL.search(text), _PRESUMED_RISE.search(text)
    if bool(fall) == bool(rise):
        return None
    return "fall" if fall else "rise"


def _lookback_change(values: pd.Series, start: pd.Timestamp,
                     end: pd.Timestamp) -> tuple[pd.Timestamp, float, pd.Timestamp, float] | None:
    """"过去一年": from the value on the look-back's first day (the last one on or before it, a year
    before the data's last day) to the last one, as the history's change over the window counts it."""
    before, inside = values[values.index <= start], values[values.index <= end]
    if before.empty or inside.empty or before.index[-1] == inside.index[-1]:
        return None
    return before.index[-1], float(before.iloc[-1]), inside.index[-1], float(inside.iloc[-1])


def premise(series: str, start: str, end: str | None, lookback: bool, presumes: str,
            zh: bool) -> tuple[str, str] | None:
    """The verdict on a presumed move of `series` over [start, end] and which way it went ("rise",
    "fall", "flat"): its dates and change, and plainly that the premise is wrong when it is."""
    values = market.load_series(series)
    lo = scope.bound(start)  # "2025" is the year's first day here and its last day as the end
    hi = min(scope.bound(end, True) if end else values.index[-1], values.index[-1])
    move = _lookback_change(values, lo, hi) if lookback else _change(values, lo, hi)
    if move is None:
        return None
    d0, v0, d1, v1 = move
    way = "rise" if v1 > v0 else "fall" if v1 < v0 else "flat"
    name = cat.name(series, zh)
    if zh:
        wrong = {"fall": "你问的是跌了多少，但其实是涨了", "rise": "你问的是涨了多少，但其实是跌了"}[presumes] \
            if way not in (presumes, "flat") else ""
        text = f"**{name}{_line(series, move, zh)}**" + (f"——{wrong}。" if wrong else "。")
    else:
        wrong = {"fall": "you asked how much it fell, but it in fact rose",
                 "rise": "you asked how much it rose, but it in fact fell"}[presumes] \
            if way not in (presumes, "flat") else ""
        text = f"**{name} — {_line(series, move, zh)}**" + (f" — {wrong}." if wrong else ".")
    return text, way
