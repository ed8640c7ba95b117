"""A price level the user names against where the price is: "涨到 700" when it is at 707.

Two answers live here. `direction_check`: a level whose verb says one way ("涨到", "rises to") while
the latest value says the other is a fall (or a rise), and the answer says so with the latest
value, its unit and date, before computing the move as it really is. `target_check`: "会涨到800元吗",
"chance it falls below 600 CNY/t in 3 months" set against a forecast — how far the target is from
the latest value, whether the forecast's 80 %/95 % bands reach it, and the probability the bands
imply on the last day asked, with what that probability does not say (a touch before that day,
when it happens, how calibrated the bands were).
"""

from __future__ import annotations

import math
import re
from statistics import NormalDist
from typing import Any

import pandas as pd

from orecast import market
from orecast.agent.offline import catalogue as cat
from orecast.agent.offline.compose import _name, level, localise, pct

Z80 = NormalDist().inv_cdf(0.9)


def direction_check(said: str | None, target: float, base: dict[str, Any], unit: str, name: str,
                    zh: bool, *, scenario: bool) -> str:
    """"Rises to 700" from 707: a note that it is a fall of 0.99 %, and how it is computed."""
    value, day = base.get("value"), base.get("date")
    if said not in ("up", "down") or not isinstance(value, int | float) or value <= 0 or target == value:
        return ""
    up = target > value
    if (said == "up") == up:
        return ""
    move = f"{abs(100 * (target / value - 1)):.2f}%"  # the word says the sign: "下跌 0.99%"
    if zh:
        verb, real = ("涨到", "下跌") if said == "up" else ("跌到", "上涨")
        where = "已经高于" if said == "up" else "低于"
        how = ("下面的情景按这一" + real + "计算" if scenario else "下面的概率按到达这个价位计算")
        return (f"注意：你说“{verb} {level(target, unit)}”，但{name}的最新值是 {level(value, unit)}（{day}），"
                f"{where}这个价位：到 {level(target, unit)} 是{real} {move}，不是{'上涨' if said == 'up' else '下跌'}。"
                f"{how}；如果你指的是{'上涨' if said == 'up' else '下跌'}某个幅度或另一个价位，请告诉我。")
    verb, real = ("rises to", "fall") if said == "up" else ("falls to", "rise")
    where = "already above" if said == "up" else "below"
    how = (f"The scenario below is computed as that {real}" if scenario
           else "The probability below is for reaching that level")
    return (f"Note: you said '{verb} {level(target, unit)}', but the latest {name} is {level(value, unit)} "
            f"({day}), {where} it: getting there is a {real} of {move}, not a "
            f"{'rise' if said == 'up' else 'fall'}. {how}; if you meant a "
            f"{'rise' if said == 'up' else 'fall'} of some size or another level, tell me which.")


def _probability(row: dict[str, Any], target: float, up: bool) -> float | None:
    """P(price ≥ target) (or ≤) on the row's date, from its median and 80 % band: Gaussian in logs
    when the band is symmetric in logs (prices), else in levels (PMI)."""
    mid, lo, hi = row.get("mean"), row.get("lo_80"), row.get("hi_80")
    if not all(isinstance(v, int | float) for v in (mid, lo, hi)) or hi <= lo:
        return None
    if lo > 0 and abs(math.log(hi / mid) - math.log(mid / lo)) < 1e-6 * max(1.0, math.log(hi / lo)):
        if target <= 0:
            return None
        z = (math.log(target) - math.log(mid)) / ((math.log(hi) - math.log(lo)) / (2 * Z80))
    else:
        z = (target - mid) / ((hi - lo) / (2 * Z80))
    below = NormalDist().cdf(z)
    return 1 - below if up else below


def _chance(p: float, zh: bool) -> str:
    if p < 0.01:
        return "不到 1%" if zh else "under 1%"
    if p > 0.99:
        return "超过 99%" if zh else "over 99%"
    return f"约 {100 * p:.0f}%" if zh else f"about {100 * p:.0f}%"


def year_direction(p: dict[str, Any], zh: bool) -> str:
    """"今年全年会涨还是跌": the year's last forecast period against the level the year started from
    (the last actual value before 1 January), not against the latest value; with what the data
    already holds of the year and the model's probability that the year ends higher."""
    rows = p.get("forecast") or []
    series = str(p.get("series"))
    if not rows or series not in cat.catalogue():
        return ""
    end_row = rows[-1]
    year = str(end_row["date"])[:4]
    values = market.load_series(series)
    before = values[values.index < pd.Timestamp(f"{year}-01-01")]
    held = values[values.index.year == int(year)]
    if before.empty or not isinstance(end_row.get("mean"), int | float):
        return ""
    base_day, base = before.index[-1].date().isoformat(), float(before.iloc[-1])
    chance = _probability(end_row, base, True)
    unit = localise(p, zh).get("unit", "")
    move = (end_row["mean"] / base - 1) * 100
    so_far = (float(held.iloc[-1]) / base - 1) * 100 if len(held) else None
    lo, hi = end_row.get("lo_80"), end_row.get("hi_80")
    if zh:
        known = (f"今年已有的实际数据到 {held.index[-1].date()}：{level(float(held.iloc[-1]), unit)}，较年初 {pct(so_far)}。"
                 if so_far is not None else "")
        return (f"**{year} 年全年涨跌（以年初为基准，不是以最新价为基准）**：年初水平是上年最后一个实际值 "
                f"{level(base, unit)}（{base_day}）。{known}年末 {end_row['date']} 的预测中位数 "
                f"{level(end_row['mean'], unit)}（80% 区间 {level(lo, unit)} – {level(hi, unit)}），较年初 {pct(move)}"
                + (f"；按模型，年末高于年初的概率{_chance(chance, zh)}" if chance is not None else "")
                + "。这是统计模型的估计，不是判断。")
    known = (f"The data holds the year to {held.index[-1].date()}: {level(float(held.iloc[-1]), unit)}, "
             f"{pct(so_far)} on the start of the year. " if so_far is not None else "")
    return (f"**{year} as a whole (measured from the start of the year, not from the latest price)**: the year "
            f"started from the last actual value before it, {level(base, unit)} ({base_day}). {known}The forecast "
            f"median for the year's end, {end_row['date']}, is {level(end_row['mean'], unit)} (80% range "
            f"{level(lo, unit)} – {level(hi, unit)}), {pct(move)} on the start of the year"
            + (f"; by the model, the chance the year ends higher is {_chance(chance, zh)}" if chance is not None else "")
            + ". It is a statistical model's estimate, not a judgement.")


def target_check(target: tuple[float, str | None], said: str | None, p: dict[str, Any], asked: str,
                 zh: bool, state: str | None = None) -> str:
    """"会涨到800元吗": the target against the latest value and the forecast's last row."""
    rows = p.get("forecast") or []
    last = p.get("last") or {}
    value = target[0]
    if not rows or not isinstance(last.get("value"), int | float) or last["value"] <= 0:
        return ""
    p = localise(p, zh)
    unit, name = p.get("unit", ""), _name(p, zh)
    # The probability of getting there the way it really is ("涨到 700" from 707 is a fall; the
    # note from `direction_check` says so before this line).
    # "above 100" asks for the side of 100 the price ends on, whichever side it is on now.
    up = state == "above" if state else value > last["value"]
    row = rows[-1]
    chance = _probability(row, value, up)
    inside80 = row["lo_80"] <= value <= row["hi_80"]
    inside95 = row["lo_95"] <= value <= row["hi_95"]
    diffusion = "50" in str(unit)  # PMI: 49.2 → 50 is +0.80 points, not +1.63 %
    move = (f"{abs(value - last['value']):.2f} {'个点' if zh else 'points'}" if diffusion
            else pct(100 * (value / last["value"] - 1)).lstrip("+-"))
    when = re.search(r"什么时候|何时|多久|哪天|\bwhen\b|how long|how soon", asked, re.I)
    if zh:
        side = "以上" if up else "以下"
        text = (f"目标 {level(value, unit)} 较最新值 {level(last['value'], unit)}（{last.get('date')}）"
                f"{'高' if value > last['value'] else '低'} {move}。按 {p.get('method')} 预测，"
                f"{row['date']} 的中位数是 {level(row['mean'], unit)}；{level(value, unit)} 在 80% 区间"
                f"（{level(row['lo_80'], unit)} – {level(row['hi_80'], unit)}）{'之内' if inside80 else '之外'}，"
                f"在 95% 区间（{level(row['lo_95'], unit)} – {level(row['hi_95'], unit)}）{'之内' if inside95 else '之外'}。")
        if chance is not None:
            text += (f"由这些区间推算，{row['date']} 那天{'指数' if diffusion else '价格'}在 {level(value, unit)} {side}的概率{_chance(chance, zh)}。"
                     "这是统计模型的概率，不是判断：它假设价格按历史波动随机变化（回测里这类区间有时偏宽、有时偏窄），"
                     "也不包括政策与突发事件；在那之前某一天曾经触及这个价位的可能性比这个数高。")
        if when:
            text += "至于“什么时候”能到，数据给不出一个日期：预测只能说某一天价格落在什么范围。"
        return text
    side = "at or above" if up else "at or below"
    text = (f"The target {level(value, unit)} is {move} {'above' if value > last['value'] else 'below'} "
            f"the latest {name}, {level(last['value'], unit)} ({last.get('date')}). On the {p.get('method')} "
            f"forecast, the median for {row['date']} is {level(row['mean'], unit)}; {level(value, unit)} is "
            f"{'inside' if inside80 else 'outside'} the 80% range ({level(row['lo_80'], unit)} – "
            f"{level(row['hi_80'], unit)}) and {'inside' if inside95 else 'outside'} the 95% range "
            f"({level(row['lo_95'], unit)} – {level(row['hi_95'], unit)}).")
    if chance is not None:
        text += (f" From those ranges, the chance the {'index' if diffusion else 'price'} is {side} {level(value, unit)} on {row['date']} is "
                 f"{_chance(chance, zh)}. That is a statistical model's probability, not a judgement: it assumes "
                 "prices move randomly with their past volatility (in backtests such bands were sometimes too "
                 "wide, sometimes too narrow) and leaves out policy and shocks; the chance of touching that "
                 "level on some day before is higher than this number.")
    if when:
        text += " As for when it gets there, the data cannot give a date: a forecast only gives a range for each day."
    return text


def direction_chance(way: str, p: dict[str, Any], zh: bool) -> str:
    """"下个月一定会涨吧", "你有多大把握会跌": no certainty — the model's probability that the last
    forecast period ends above (below) the latest actual value, from its median and bands."""
    rows = p.get("forecast") or []
    last = p.get("last") or {}
    if not rows or not isinstance(last.get("value"), int | float):
        return ""
    row = rows[-1]
    up = way == "up"
    chance = _probability(row, float(last["value"]), up)
    if chance is None:
        return ""
    lp = localise(p, zh)
    unit = lp.get("unit", "")
    coin = 0.4 <= chance <= 0.6  # a median near the latest value: said to be close to a coin toss
    if zh:
        return (f"**不能确定。** 按这个模型（{p.get('method')}），{row['date']} 的值{'高于' if up else '低于'}最新实际值 "
                f"{level(last['value'], unit)}（{last.get('date')}）的概率{_chance(chance, zh)}，"
                f"{'低于' if up else '高于'}它的概率{_chance(1 - chance, zh)}（中位数 {level(row['mean'], unit)}）"
                + ("，接近掷硬币" if coin else "") + "。这是统计模型的概率，不是判断，也没有考虑政策和突发事件。")
    return (f"**It is not certain.** By this model ({p.get('method')}), the chance that {row['date']} ends "
            f"{'above' if up else 'below'} the latest actual {level(last['value'], unit)} ({last.get('date')}) is "
            f"{_chance(chance, zh)}, and {'below' if up else 'above'} it {_chance(1 - chance, zh)} (median "
            f"{level(row['mean'], unit)})" + (", close to a coin toss" if coin else "") +
            ". It is a statistical model's probability, not a judgement, and leaves out policy and shocks.")
