"""Writing the answer from tool results: numbers, ranges, dates, units and sources — nothing else.

Every number printed here is read from a tool's JSON; the only text that is not from a tool is
qualitative (the risks an analyst always names next to a forecast). Numbers are formatted by
`fmt` so tests can find them again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pandas as pd

from orecast import market
from orecast.agent.offline import catalogue as cat
from orecast.agent.offline import coverage
from orecast.agent.offline.scope import HOLIDAY_ZH
from orecast.agent.tools import payload_of
from orecast.market.source_names import source_zh

# One number format for every answer, in both languages: thousands separated, 2 decimals (4 for
# exchange rates, whose moves are in the third and fourth), the unit after every level, changes of
# prices in % and of the PMI in points. The decimals follow the series' unit, not the value, so a
# price that crosses 10 (European gas) keeps its format.
FX_UNITS = ("CNH per USD", "离岸人民币/美元")


def fmt(value: Any, digits: int = 2) -> str:
    """A plain number: `digits` decimals, thousands separated, '—' when missing."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    return f"{value:,.{digits}f}"


def digits_of(unit: Any) -> int:
    return 4 if unit in FX_UNITS else 2


def level(value: Any, unit: Any) -> str:
    """A price or index level with its unit: '3,038.00 元/吨', '7.1234 CNH per USD'."""
    text = fmt(value, digits_of(unit))
    return f"{text} {unit}" if unit and text != "—" else text


def signed(value: Any, unit: Any) -> str:
    """A change of a level, with its unit: '+13.00 CNY/t'."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    text = f"{value:+,.{digits_of(unit)}f}"
    return f"{text} {unit}" if unit else text


def pct(value: Any) -> str:
    """A change in per cent, signed: '+2.44%'."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    return f"{value:+,.2f}%"


def share(value: Any) -> str:
    """A per cent that is not a change (volatility, MAPE, coverage, percentile): '14.31%'."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    return f"{value:,.2f}%"


def points(value: Any, zh: bool) -> str:
    """A change of a diffusion index (PMI) in points: '+0.30 个点' / '+0.30 points'."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    return f"{value:+.2f} 个点" if zh else f"{value:+.2f} points"


def _name(p: dict[str, Any], zh: bool) -> str:
    sid = str(p.get("series") or p.get("series_id") or p.get("id") or "")
    key = "name_zh" if zh else "name_en"
    return str(p.get(key) or cat.name(sid, zh) or sid)


def _source(p: dict[str, Any], zh: bool) -> str:
    src = re.sub(r"^\s*Source:\s*", "", str(p.get("source") or ""))  # worldsteel's says "Source: …"
    text = ""
    if src:
        text = f"\n来源：{source_zh(src)}" if zh else f"\nSource: {src}"
    return freshness_note(p, zh) + text


UNIT_ZH = {"index (50 = no change)": "指数（50 为荣枯线）", "index, 2010 = 100": "指数（2010 = 100）",
           "CNH per USD": "离岸人民币/美元", "Mt": "百万吨", "US$/dmt": "美元/干吨", "CNY/t": "元/吨",
           "US$/t": "美元/吨", "US$/bbl": "美元/桶"}
FREQ_ZH = {"daily": "日度", "weekly": "周度", "monthly": "月度", "quarterly": "季度", "annual": "年度"}


def localise(p: dict[str, Any], zh: bool) -> dict[str, Any]:
    """Units and frequencies in the user's language (the payload keeps the English originals)."""
    if not zh:
        return p
    out = dict(p)
    for key, table in (("unit", UNIT_ZH), ("frequency", FREQ_ZH)):
        if isinstance(out.get(key), str):
            out[key] = table.get(out[key], out[key])
    return out


def freshness_note(p: dict[str, Any], zh: bool) -> str:
    """Every answer that uses a series says its last date, and plainly when it is older than today."""
    f = p.get("freshness")
    if not isinstance(f, dict):
        return ""
    if f.get("stale"):
        if zh:
            return (f"\n注意：这个序列的最新数据是 {f.get('last_date')}，比今天（{f.get('today')}）早 "
                    f"{f.get('age_days')} 天，没有更新的数据；“最新”指的是 {f.get('last_date')}，不是今天。")
        return (f"\nNote: this series ends on {f.get('last_date')}, {f.get('age_days')} days before today "
                f"({f.get('today')}); there is no newer data, so 'latest' means {f.get('last_date')}, not today.")
    return (f"\n数据截至 {f.get('last_date')}。" if zh else f"\nData up to {f.get('last_date')}.")


# ---- one renderer per tool ---------------------------------------------------------------


def latest(p: dict[str, Any], zh: bool) -> str:
    unit = p.get("unit", "")
    last = p.get("latest", {})
    ch = p.get("changes", {})
    lines = [
        (f"**{_name(p, zh)}** 最新值：{level(last.get('value'), unit)}（{last.get('date')}）。" if zh
         else f"**{_name(p, zh)}** latest: {level(last.get('value'), unit)} ({last.get('date')}).")
    ]
    # Calendar windows, the same as describe_series and `orecast series show` (see latest_price).
    labels = {"previous": ("较上一期", "vs previous"), "1m": ("较一个月前", "vs 1 month earlier"),
              "1y": ("较一年前", "vs 1 year earlier")}
    diffusion = "50" in str(p.get("unit", ""))  # PMI: a change in points, a % of it means nothing
    digits = digits_of(unit)
    seen: set[str] = set()
    for key, (lz, le) in labels.items():
        c = ch.get(key)
        if c and c.get("from", {}).get("date") not in seen:
            seen.add(c.get("from", {}).get("date"))
            frm = c.get("from", {})
            rel = "" if diffusion else (f"，{pct(c.get('change_pct'))}" if zh else f", {pct(c.get('change_pct'))}")
            change = points(c.get("change"), zh) if diffusion else signed(c.get("change"), unit)
            lines.append(f"- {lz if zh else le}（{frm.get('date')}，{fmt(frm.get('value'), digits)}）：{change}{rel}"
                         if zh else
                         f"- {le} ({frm.get('date')}, {fmt(frm.get('value'), digits)}): {change}{rel}")
    return "\n".join(lines) + _source(p, zh)


def history(p: dict[str, Any], zh: bool) -> str:
    unit = p.get("unit", "")
    f, last, lo, hi = p.get("first", {}), p.get("last", {}), p.get("min", {}), p.get("max", {})
    if p.get("count") == 1:  # one year of an annual series: a value, not a path
        return ((f"**{_name(p, zh)}** {last.get('date')}：{level(last.get('value'), unit)}" if zh
                 else f"**{_name(p, zh)}** {last.get('date')}: {level(last.get('value'), unit)}") + _source(p, zh))
    diffusion = "50" in str(unit)  # PMI: a change in points (49.1 → 50.1 is +1 point, not +2.04 %)
    both = all(isinstance(x.get("value"), int | float) for x in (f, last))
    change = (points(last["value"] - f["value"], zh) if diffusion and both
              # "涨了百分之几，涨了多少美元": the change in % and in the unit
              else f"{pct(p.get('change_pct'))}（{signed(last['value'] - f['value'], unit)}）" if both and zh
              else f"{pct(p.get('change_pct'))} ({signed(last['value'] - f['value'], unit)})" if both
              else pct(p.get("change_pct")))
    if zh:
        text = (f"**{_name(p, zh)}** {p.get('start')} 至 {p.get('end')}（{p.get('count')} 个观测）：\n"
                f"- 起点 {level(f.get('value'), unit)}，终点 {level(last.get('value'), unit)}，区间涨跌 {change}\n"
                f"- 最高 {level(hi.get('value'), unit)}（{hi.get('date')}），最低 {level(lo.get('value'), unit)}（{lo.get('date')}），"
                f"均值 {level(p.get('mean'), unit)}")
    else:
        text = (f"**{_name(p, zh)}** from {p.get('start')} to {p.get('end')} ({p.get('count')} observations):\n"
                f"- from {level(f.get('value'), unit)} to {level(last.get('value'), unit)}, change {change}\n"
                f"- high {level(hi.get('value'), unit)} ({hi.get('date')}), low {level(lo.get('value'), unit)} ({lo.get('date')}), "
                f"mean {level(p.get('mean'), unit)}")
    if diffusion:
        text += _above_50(p, zh)
    elif both and (p.get("count") or 0) >= 5:
        text += _from_before(p, zh)
    if p.get("series") == "usd_cnh_daily" and all(isinstance(x.get("value"), int | float) for x in (f, last)):
        # USD/CNH falling is the yuan rising: said both ways ("人民币今年升值了多少").
        yuan = (f["value"] / last["value"] - 1) * 100
        verb = ("升值" if yuan > 0 else "贬值") if zh else ("rose" if yuan > 0 else "fell")
        text += (f"\n- 美元兑人民币 {pct(p.get('change_pct'))}，也就是人民币对美元{verb} {abs(yuan):.2f}%"
                 f"（{f['value']:.4f} ÷ {last['value']:.4f} − 1）" if zh else
                 f"\n- USD/CNH {pct(p.get('change_pct'))}: the yuan {verb} {abs(yuan):.2f}% against the dollar "
                 f"({f['value']:.4f} / {last['value']:.4f} − 1)")
    return text + _source(p, zh)


def _from_before(p: dict[str, Any], zh: bool) -> str:
    """"2025年螺纹钢涨了多少": the change from the last value before the period too (2024's last
    settle), as a year's change is usually counted; the line above starts at the period's first value."""
    series, first, last = str(p.get("series")), p.get("first") or {}, p.get("last") or {}
    if series not in cat.catalogue() or not first.get("date"):
        return ""
    values = market.load_series(series)
    before = values[values.index < pd.Timestamp(first["date"])]
    if before.empty:
        return ""
    day, base, unit = before.index[-1].date(), float(before.iloc[-1]), p.get("unit", "")
    move = f"{pct((last['value'] / base - 1) * 100)}（{signed(last['value'] - base, unit)}）" if zh else \
        f"{pct((last['value'] / base - 1) * 100)} ({signed(last['value'] - base, unit)})"
    return (f"\n- 从区间前最后一个值（{day}，{level(base, unit)}）算起：{move}；上面的区间涨跌从区间内第一个值算起" if zh else
            f"\n- from the last value before the period ({level(base, unit)} on {day}): {move}; the change above "
            "starts at the period's first value")


def _above_50(p: dict[str, Any], zh: bool) -> str:
    """"PMI在2025年有几个月高于50": counted from every month of the period (when all are listed)."""
    values = [pt.get("value") for pt in p.get("points") or []]
    if p.get("points_step") != 1 or len(values) != p.get("count") or not values:
        return ""
    up, down = sum(v > 50 for v in values), sum(v < 50 for v in values)
    flat = len(values) - up - down
    # "PMI连续几个月低于50": the run the period ends with, from its first month.
    side = (lambda v: v < 50) if values[-1] < 50 else (lambda v: v > 50) if values[-1] > 50 else None
    run = next((i for i, v in enumerate(reversed(values)) if side is None or not side(v)), len(values)) if side else 0
    dates = [pt.get("date") for pt in p.get("points") or []]
    streak_zh = streak_en = ""
    if run:
        word_zh, word_en = ("低于", "below") if values[-1] < 50 else ("高于", "above")
        whole = run == len(values)
        streak_zh = (f"；到 {dates[-1]} 为止已{'至少' if whole else ''}连续 {run} 个月{word_zh} 50（从 {dates[-run]} 起"
                     f"{'，这段时间的第一个月就是，更早的不在这里' if whole else ''}）")
        streak_en = (f"; up to {dates[-1]} it has been {word_en} 50 for {'at least ' if whole else ''}{run} months in a "
                     f"row (since {dates[-run]}{', the first month shown; earlier ones are not' if whole else ''})")
    if zh:
        return (f"\n- {len(values)} 个月中 {up} 个月高于 50（扩张），{down} 个月低于 50（收缩）"
                + (f"，{flat} 个月正好是 50" if flat else "") + streak_zh + "。")
    return (f"\n- of {len(values)} months, {up} above 50 (expansion), {down} below 50 (contraction)"
            + (f", {flat} at exactly 50" if flat else "") + streak_en + ".")


def catalogue(p: dict[str, Any], zh: bool) -> str:
    rows = p.get("series", [])
    head = f"共有 {len(rows)} 个序列：" if zh else f"{len(rows)} series are available:"
    lines = [head]
    for r in rows:
        nm = r.get("name_zh") if zh else r.get("name_en")
        lines.append(f"- `{r.get('id')}` {nm}（{UNIT_ZH.get(r.get('unit'), r.get('unit'))}，"
                     f"{FREQ_ZH.get(r.get('frequency'), r.get('frequency'))}，{r.get('start')} – {r.get('end')}）"
                     if zh else
                     f"- `{r.get('id')}` {nm} ({r.get('unit')}, {r.get('frequency')}, {r.get('start')} – {r.get('end')})")
    return "\n".join(lines)


def _scalars(p: dict[str, Any], skip: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in p.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and k not in skip]


CHANGE_LABELS = {"1w": ("1周", "1 week"), "1m": ("1个月", "1 month"), "3m": ("3个月", "3 months"),
                 "6m": ("6个月", "6 months"), "12m": ("12个月", "12 months"), "1y": ("1年", "1 year")}


def _when(date: Any, zh: bool) -> str:
    if not date:
        return ""
    return f"（{date}）" if zh else f" ({date})"


def describe(p: dict[str, Any], zh: bool, *, seasonal: bool = False, moves: str | None = None,
             high_low: bool = False) -> str:
    unit = p.get("unit", "")
    rng, last, dd = p.get("range", {}), p.get("last", {}), p.get("max_drawdown", {})
    changes = {k: v for k, v in (p.get("change") or {}).items() if v is not None}
    diffusion = "50" in str(unit)  # PMI: changes are points, not %
    # A past period ("2024", "last year") ends before the data does: its last value is not "latest".
    fresh = p.get("freshness") if isinstance(p.get("freshness"), dict) else {}
    period_end = bool(fresh.get("last_date")) and fresh.get("last_date") != rng.get("last")
    lo, hi = _when(p.get("min_date"), zh), _when(p.get("max_date"), zh)
    def ch(v: Any) -> str:
        return points(v, zh) if diffusion else pct(v)
    def size(v: Any) -> str:  # volatility and drawdown: points for the PMI, % for prices
        return points(v, zh).lstrip("+") if diffusion else share(v)
    if zh:
        lines = [f"**{_name(p, zh)}** 统计（{rng.get('first')} 至 {rng.get('last')}，{rng.get('count')} 个观测，单位 {unit}）：",
                 f"- {'期末值' if period_end else '最新'} {level(last.get('value'), unit)}（{last.get('date')}），处于区间第 {fmt(p.get('percentile_in_range'))} 百分位",
                 f"- 均值 {level(p.get('mean'), unit)}，最低 {level(p.get('min'), unit)}{lo}，最高 {level(p.get('max'), unit)}{hi}"]
        if p.get("volatility_annualised_pct") is not None:
            lines.append(f"- {'区间内（最多取最后一年）' if period_end else '近一年'}年化波动率 {size(p.get('volatility_annualised_pct'))}{_yearly(p, zh, size)}")
        if dd.get("pct") is not None:
            lines.append(f"- 最大回撤 {size(dd.get('pct'))}（{dd.get('peak')} 至 {dd.get('trough')}）")
        if changes:
            lines.append("- 涨跌：" + "，".join(f"{CHANGE_LABELS.get(k, (k, k))[0]} {ch(v)}" for k, v in changes.items()))
    else:
        lines = [f"**{_name(p, zh)}** statistics ({rng.get('first')} to {rng.get('last')}, {rng.get('count')} observations, unit {unit}):",
                 f"- {'value at the end of the period' if period_end else 'latest'} {level(last.get('value'), unit)} ({last.get('date')}), percentile {fmt(p.get('percentile_in_range'))} of the range",
                 f"- mean {level(p.get('mean'), unit)}, min {level(p.get('min'), unit)}{lo}, max {level(p.get('max'), unit)}{hi}"]
        if p.get("volatility_annualised_pct") is not None:
            lines.append(f"- annualised volatility ({'over the period, its last 12 months at most' if period_end else 'last year'}) {size(p.get('volatility_annualised_pct'))}{_yearly(p, zh, size)}")
        if dd.get("pct") is not None:
            lines.append(f"- max drawdown {size(dd.get('pct'))} ({dd.get('peak')} to {dd.get('trough')})")
        if changes:
            lines.append("- changes: " + ", ".join(f"{CHANGE_LABELS.get(k, (k, k))[1]} {ch(v)}" for k, v in changes.items()))
    if seasonal:
        lines.append(seasonality(p, zh))
    if moves and isinstance(p.get("largest_moves"), dict):
        lines[1:1] = _moves_lines(p, moves, zh)
    lo_v, hi_v = p.get("min"), p.get("max")
    if high_low and isinstance(lo_v, int | float) and isinstance(hi_v, int | float) and lo_v:
        # "最高点和最低点差了多少": the difference, in the unit (points for the PMI) and against the low.
        gap = points(hi_v - lo_v, zh).lstrip("+") if diffusion else \
            f"{signed(hi_v - lo_v, unit).lstrip('+')}（最高比最低高 {(hi_v / lo_v - 1) * 100:.2f}%）" if zh else \
            f"{signed(hi_v - lo_v, unit).lstrip('+')} (the high is {(hi_v / lo_v - 1) * 100:.2f}% above the low)"
        lines.insert(1, f"- **最高与最低相差** {gap}：最高 {level(hi_v, unit)}{hi}，最低 {level(lo_v, unit)}{lo}" if zh
                     else f"- **High minus low**: {gap}; high {level(hi_v, unit)}{hi}, low {level(lo_v, unit)}{lo}")
    return "\n".join(lines) + _source(p, zh)


_PERIOD_WORD = {"daily": ("单日", "one-day"), "weekly": ("单周", "one-week"), "monthly": ("单月", "one-month"),
                "quarterly": ("单季", "one-quarter"), "annual": ("单年", "one-year")}


def _moves_lines(p: dict[str, Any], moves: str, zh: bool) -> list[str]:
    """"2025年最大的单日涨幅": the largest rise (fall) from one observation to the next, dated, with
    its size in % and in the unit (points for the PMI), and the runners-up."""
    unit = p.get("unit", "")
    series = str(p.get("series"))
    word = _PERIOD_WORD.get(cat.frequency(series) if series in cat.catalogue() else "", ("单期", "one-period"))

    def one(m: dict[str, Any]) -> str:
        if m.get("change_pct") is None:  # a diffusion index (PMI): points, not a level in its unit
            by = points(m.get("change"), zh)
            return (f"{m.get('date')} {by}（从 {m.get('previous_date')} 的 {fmt(m.get('previous'))} 到 "
                    f"{fmt(m.get('value'))}）" if zh else
                    f"{m.get('date')} {by} (from {fmt(m.get('previous'))} on {m.get('previous_date')} to "
                    f"{fmt(m.get('value'))})")
        size = pct(m.get("change_pct")) + "，" if m.get("change_pct") is not None and zh else \
            pct(m.get("change_pct")) + ", " if m.get("change_pct") is not None else ""
        if zh:
            return (f"{m.get('date')} {size}{signed(m.get('change'), unit)}（从 {m.get('previous_date')} 的 "
                    f"{level(m.get('previous'), unit)} 到 {level(m.get('value'), unit)}）")
        return (f"{m.get('date')} {size}{signed(m.get('change'), unit)} (from {level(m.get('previous'), unit)} on "
                f"{m.get('previous_date')} to {level(m.get('value'), unit)})")

    out: list[str] = []
    for key, zh_word, en_word in (("rises", "涨幅", "rise"), ("falls", "跌幅", "fall")):
        if moves not in ("both", key):
            continue
        found = p["largest_moves"].get(key) or []
        if not found:
            out.append(f"- 这段时间没有一次{word[0]}上涨。" if zh and key == "rises" else
                       f"- 这段时间没有一次{word[0]}下跌。" if zh else f"- No {word[1]} {en_word} in this period.")
            continue

        head, rest = found[0], found[1:]
        if zh:
            out.append(f"- **最大{word[0]}{zh_word}**：{one(head)}" +
                       (f"；其次：{'；'.join(one(m) for m in rest)}" if rest else ""))
        else:
            out.append(f"- **Largest {word[1]} {en_word}**: {one(head)}" +
                       (f"; next: {'; '.join(one(m) for m in rest)}" if rest else ""))
    rolls = [m for m in p["largest_moves"].get("rolls_left_out") or []
             if moves == "both" or (moves == "rises") == ((m.get("change") or 0) > 0)]
    if rolls:
        listed = "；".join(one(m) for m in rolls) if zh else "; ".join(one(m) for m in rolls)
        out.append(f"- 已排除 {len(rolls)} 个疑似换月日（开盘跳空 3% 以上且持仓量一天跳变约 15% 以上，或跳空 4% 以上而成交量"
                   f"比前一天少四成以上、又不是封在涨跌停：主力合约换成了另一个合约，价格跳到新合约的水平，不是市场真实涨跌）：{listed}"
                   if zh else
                   f"- Left out: {len(rolls)} likely contract-roll day(s) (the price gapped over 3% at the open with the open "
                   "interest jumping by about 15% or more, or over 4% with the volume down by 40% or more on a day not "
                   "locked at its limit: the main contract changed, and the price jumped to the new contract's level, "
                   f"which is no market move): {listed}")
    if p.get("series") in _CONTINUOUS:
        out.append("- 注意：这是连续主力合约，没有做换月调整；换月日是按开盘跳空、持仓量和成交量推断的，价差小的换月可能没有识别出，"
                   "用这些日期前请核对是否是换月日。" if zh else
                   "- Note: this is the continuous main contract, not roll-adjusted; roll days are inferred from the opening "
                   "gap, the open interest and the volume, and a roll with a small spread may not be found: check whether a date "
                   "is a roll before using it.")
    return out


_CONTINUOUS = frozenset(("dce_iron_ore_daily", "shfe_rebar_daily", "shfe_hrc_daily", "dce_coke_daily",
                         "dce_coking_coal_daily"))


def _yearly(p: dict[str, Any], zh: bool, size: Callable[[Any], str]) -> str:
    """"Is volatility high now?": the last year's next to the calendar years' median and range."""
    y = p.get("yearly_volatility")
    if not isinstance(y, dict):
        return ""
    vol, median = p.get("volatility_annualised_pct"), y.get("median_pct")
    if not isinstance(vol, int | float) or not isinstance(median, int | float):
        return ""
    if zh:
        side = "高于" if vol > median else "低于" if vol < median else "等于"
        return (f"，{side} {y.get('first')}–{y.get('last')} 年各自然年的中位数 {size(median)}"
                f"（{y.get('years')} 年，最低 {size(y.get('min_pct'))}{_year_of(y.get('min_year'), zh)}，"
                f"最高 {size(y.get('max_pct'))}{_year_of(y.get('max_year'), zh)}）")
    side = "above" if vol > median else "below" if vol < median else "equal to"
    return (f", {side} the median of the calendar years {y.get('first')}–{y.get('last')}, {size(median)} "
            f"({y.get('years')} years, lowest {size(y.get('min_pct'))}{_year_of(y.get('min_year'), zh)}, "
            f"highest {size(y.get('max_pct'))}{_year_of(y.get('max_year'), zh)})")


def _year_of(year: Any, zh: bool) -> str:
    """"（2015 年）" after a calendar year's volatility: which year it was ("波动最大的是哪一年")."""
    if not isinstance(year, int):
        return ""
    return f"（{year} 年）" if zh else f" in {year}"


def claim_check(claim: tuple[float, str], p: dict[str, Any], zh: bool) -> str:
    """A price the user puts forward ("是不是10000元？") against the latest value in its currency."""
    value, currency = claim
    if ("CNY" in str(p.get("unit"))) != (currency == "CNY") or not isinstance(p.get("latest", {}).get("value"), int | float):
        return ""  # 10000元 is checked against the yuan price, 1000 dollars against the dollar one
    p = localise(p, zh)
    unit, last = p.get("unit", ""), p.get("latest", {})
    close = abs(value / last["value"] - 1) < 0.01 if last["value"] else False
    if zh:
        return (f"你说的 {fmt(value)} {'元' if currency == 'CNY' else '美元'}与{_name(p, zh)}的最新值 {level(last['value'], unit)}（{last.get('date')}）"
                + ("相符。" if close else "不符，数据里没有这个价格。"))
    return (f"The {fmt(value)} {'yuan' if currency == 'CNY' else 'dollars'} you mention " + ("matches" if close else "does not match")
            + f" the latest {_name(p, zh)}, {level(last['value'], unit)} ({last.get('date')})"
            + ("." if close else "; the data holds no such price."))


def volatility_ranking(payloads: list[dict[str, Any]], zh: bool) -> str:
    """"Which is more volatile?": the annualised volatilities side by side, highest first."""
    # One series over two periods ("2024年和2025年哪年波动更大"): each named by its period.
    same = len({p.get("series") for p in payloads}) == 1

    def label(p: dict[str, Any]) -> str:
        rng = p.get("range") or {}
        return f"{rng.get('first')} 至 {rng.get('last')}" if same and zh else \
            f"{rng.get('first')} to {rng.get('last')}" if same else _name(p, zh)

    ranked = sorted(((p["volatility_annualised_pct"], label(p)) for p in payloads
                     if isinstance(p.get("volatility_annualised_pct"), int | float)), reverse=True)
    if len(ranked) < 2:
        return ""
    listing = " > ".join(f"{name} {share(v)}" for v, name in ranked)
    if zh:
        return (f"年化波动率（各自统计区间的最后 12 个月，对数收益率）：{listing}。{ranked[0][1]}的波动最大；"
                "波动率说的是涨跌的幅度，不是方向。")
    return (f"Annualised volatility (the last 12 months of each period, log returns): {listing}. "
            f"{ranked[0][1]} is the most volatile; volatility measures the size of moves, not their direction.")


# Which way the question asks: "哪个跌得多" wants the larger fall, "which rose more" the larger rise.
_ASKS_FALL = re.compile(r"跌得?(?:更|最)?多|跌幅(?:更|最)?大|跌得(?:更|最)?(?:狠|厉害)|(?:下跌|下降|回落)(?:得)?(?:更|最)多|"
                        r"\b(?:fell|dropped|declined|lost|slid|fallen)\s+(?:the\s+)?(?:more|most|further)|"
                        r"(?:bigger|larger|steeper|worse)\s+(?:fall|drop|decline|loss)", re.I)
_ASKS_RISE = re.compile(r"涨得?(?:更|最)?多|涨幅(?:更|最)?大|(?:上涨|上升)(?:得)?(?:更|最)多|"
                        r"\b(?:rose|gained|climbed|risen|increased)\s+(?:the\s+)?(?:more|most|further)|"
                        r"(?:bigger|larger)\s+(?:rise|gain|increase)", re.I)


def change_ranking(payloads: list[dict[str, Any]], zh: bool, asked: str = "") -> str:
    """"Which rose more in 2024?", "哪个跌得多": the changes over the period side by side, largest
    first, and a verdict that answers the direction asked — "both rose" when a fall was asked about
    and none fell (before: "X rose most", as if one of them had fallen)."""
    ranked = sorted(((p["change_pct"], _name(p, zh), p.get("start"), p.get("end")) for p in payloads
                     if isinstance(p.get("change_pct"), int | float)), reverse=True)
    if len(ranked) < 2:
        return ""
    listing = " > ".join(f"{name} {pct(v)}（{a} 至 {b}）" if zh else f"{name} {pct(v)} ({a} to {b})"
                         for v, name, a, b in ranked)
    top, bottom = ranked[0], ranked[-1]
    rose = [r for r in ranked if r[0] > 0]
    fell = [r for r in ranked if r[0] < 0]
    two = len(ranked) == 2
    both, none_en, all_en = ("两者", "neither", "both") if two else ("全部", "none of them", "all")
    names = lambda rows: ("、" if zh else " and ").join(  # noqa: E731
        f"{r[1]}（{pct(r[0])}）" if zh else f"{r[1]} ({pct(r[0])})" for r in rows)
    if _ASKS_FALL.search(asked):
        if not fell:
            verdict = (f"{both}都上涨了，没有一个下跌；{bottom[1]}涨得最少（{pct(bottom[0])}）" if zh else
                       f"{none_en} fell: {all_en} rose; {bottom[1]} rose least ({pct(bottom[0])})")
        elif not rose and len(fell) == len(ranked):
            verdict = (f"{both}都下跌了，{bottom[1]}跌得最多（{pct(bottom[0])}）" if zh else
                       f"{all_en} fell; {bottom[1]} fell most ({pct(bottom[0])})")
        elif len(fell) == 1:
            verdict = (f"只有{names(fell)}下跌；{names(rose)}上涨" if zh else
                       f"only {names(fell)} fell; {names(rose)} rose")
        else:
            verdict = (f"{bottom[1]}跌得最多（{pct(bottom[0])}）；{names(rose)}上涨" if zh else
                       f"{bottom[1]} fell most ({pct(bottom[0])}); {names(rose)} rose")
    elif not rose:
        verdict = (f"{both}都下跌了，没有一个上涨；{top[1]}跌得最少（{pct(top[0])}）" if zh else
                   f"{none_en} rose: {all_en} fell; {top[1]} fell least ({pct(top[0])})")
    elif len(rose) == 1 and fell:
        verdict = (f"只有{names(rose)}上涨；{names(fell)}下跌" if zh else
                   f"only {names(rose)} rose; {names(fell)} fell")
    elif fell:
        verdict = (f"{top[1]}涨得最多（{pct(top[0])}）；{names(fell)}下跌" if zh else
                   f"{top[1]} rose most ({pct(top[0])}); {names(fell)} fell")
    else:
        verdict = (f"{both}都上涨了，{top[1]}涨得最多（{pct(top[0])}）" if zh else
                   f"{all_en} rose; {top[1]} rose most ({pct(top[0])})")
    periods = {(a, b) for _, _, a, b in ranked}
    note = ""
    if len(periods) > 1:  # a monthly average against daily settles: first and last days differ
        lo, hi = max(str(a) for a, _ in periods), min(str(b) for _, b in periods)
        shared = (f"它们只在 {lo} 至 {hi} 重叠，" if zh else f" They overlap only from {lo} to {hi},") if lo < hi \
            else ("它们的日期没有重叠，" if zh else " Their dates do not overlap,")
        note = (f"注意：各序列的起止日期不同（月度均价按月、期货按交易日），{shared}对比只是近似。" if zh else
                " Note: the series start and end on different dates (monthly averages against daily "
                f"settles).{shared} so the comparison is approximate.")
    if zh:
        return f"区间涨跌对比（各自区间的起点到终点）：{listing}。{verdict}。{note}"
    return f"Change over the period (first to last value of each): {listing}. {verdict[0].upper()}{verdict[1:]}.{note}"


def yearly_ranking(payloads: list[dict[str, Any]], zh: bool, asked: str) -> str:
    """"哪个跌得多" with no period: the latest prices' one-year changes ranked, the period said
    (before: two latest prices and no answer)."""
    rows = [{**p, "change_pct": c.get("change_pct"), "start": c.get("from", {}).get("date"),
             "end": (p.get("latest") or {}).get("date")}
            for p in payloads if isinstance(c := (p.get("changes") or {}).get("1y"), dict)]
    ranked = change_ranking(rows, zh, asked)
    if not ranked:
        return ""
    return (("你没有说时期，下面按各自最新值较一年前的变化比较。" if zh else
             "You did not name a period, so this compares each one's change over the year to its latest value. ")
            + ranked)


def blended_average(known: dict[str, Any], fc: dict[str, Any], end: str, zh: bool) -> str:
    """The average of a period partly in the data: the actual values' sum plus the forecast medians of
    the remaining periods up to `end`, over all of them; the band moves only with the forecast part."""
    rng = known.get("range") or {}
    mean, count = known.get("mean"), rng.get("count")
    last = str(rng.get("last") or "")
    rows = [r for r in _forecast_rows(fc) if last < str(r.get("date")) <= period_end(end)]
    if not isinstance(mean, int | float) or not isinstance(count, int) or not rows:
        return ""
    n = count + len(rows)

    def blend(values: list[float]) -> float:
        return (mean * count + sum(values)) / n

    avg = blend([float(_mean(r)) for r in rows])
    lo80, hi80 = (blend([float(_band(r, 80)[i]) for r in rows]) for i in (0, 1))
    p = localise(fc, zh)
    unit, digits = p.get("unit", ""), digits_of(p.get("unit", ""))
    first = rng.get("first")
    if zh:
        return (f"**整个时期的平均价格（{first} 至 {rows[-1].get('date')}）**：{count} 期实际数据（均值 {level(mean, unit)}，"
                f"到 {last}）加上 {len(rows)} 期预测中位数，合计 {n} 期的平均约 {level(avg, unit)}，80% 区间约 "
                f"{fmt(lo80, digits)} – {fmt(hi80, digits)}（只有预测部分有不确定性；区间取各期区间的平均，偏宽）。"
                "这是实际值和预测的混合，不是实际的全年均价。")
    return (f"**Average over the whole period ({first} to {rows[-1].get('date')})**: {count} actual periods (mean "
            f"{level(mean, unit)}, to {last}) and {len(rows)} forecast medians, {n} periods in all: about "
            f"{level(avg, unit)}, 80% range about {fmt(lo80, digits)} – {fmt(hi80, digits)} (only the forecast part is "
            "uncertain; its periods' ranges averaged, which errs wide). It mixes data and forecast; it is not the "
            "actual average.")


def period_end(end: str) -> str:
    """'2026' → '2026-12-31', '2026-03' → '2026-03-31', a day as it is (ISO text, compared as text)."""
    if len(end) == 4:
        return f"{end}-12-31"
    if len(end) == 7:
        return (pd.Timestamp(f"{end}-01") + pd.offsets.MonthEnd(0)).date().isoformat()
    return end


def period_means(payloads: list[dict[str, Any]], zh: bool) -> str:
    """One series' mean over two periods, and the change from the first to the second."""
    if len(payloads) != 2 or payloads[0].get("series") != payloads[1].get("series"):
        return ""
    a, b = (localise(p, zh) for p in payloads)
    ra, rb = a.get("range") or {}, b.get("range") or {}
    ma, mb = a.get("mean"), b.get("mean")
    if not all(isinstance(x, int | float) for x in (ma, mb)) or ra == rb:
        return ""
    unit = a.get("unit", "")
    diffusion = "50" in str(unit)
    by = points(mb - ma, zh) if diffusion else f"{pct((mb / ma - 1) * 100)}（{signed(mb - ma, unit)}）" if zh \
        else f"{pct((mb / ma - 1) * 100)} ({signed(mb - ma, unit)})"
    if zh:
        return (f"**均值对比**（{_name(a, zh)}）：{ra.get('first')} 至 {ra.get('last')} {level(ma, unit)}（{ra.get('count')} 个观测），"
                f"{rb.get('first')} 至 {rb.get('last')} {level(mb, unit)}（{rb.get('count')} 个观测）；后者比前者 {by}。")
    return (f"**Means compared** ({_name(a, zh)}): {ra.get('first')} to {ra.get('last')} {level(ma, unit)} "
            f"({ra.get('count')} observations), {rb.get('first')} to {rb.get('last')} {level(mb, unit)} "
            f"({rb.get('count')} observations); the second is {by} against the first.")


def spread(a: dict[str, Any], b: dict[str, Any], zh: bool) -> str:
    """"热卷和螺纹钢的价差": the difference of two latest prices in one unit, on the dates they have."""
    a, b = localise(a, zh), localise(b, zh)  # the analyst hands these over unrendered
    unit, va, vb = a.get("unit"), a.get("latest", {}), b.get("latest", {})
    if not all(isinstance(x.get("value"), int | float) for x in (va, vb)):
        return ""
    na, nb = _name(a, zh), _name(b, zh)
    if unit != b.get("unit"):
        # "铁矿石期货和世界银行价格差多少": yuan per wet tonne with VAT against US$ per dry tonne CFR.
        return (f"{na}（{unit}）和{nb}（{b.get('unit')}）单位不同，直接相减没有意义，我不计算价差。"
                "即使按汇率换算，两者的吨（湿吨/干吨）、税费、交货地点和合约也不同，换算后的差也不是可交易的价差。" if zh else
                f"The {na} ({unit}) and the {nb} ({b.get('unit')}) are in different units, so subtracting them means "
                "nothing and I give no spread. Even converted at the exchange rate, their tonnes (wet/dry), taxes, "
                "delivery and contracts differ, so a converted difference would not be a tradable spread.")
    when = va.get("date") if va.get("date") == vb.get("date") else f"{va.get('date')} / {vb.get('date')}"
    diff = signed(va["value"] - vb["value"], unit)
    if zh:
        return f"价差（{na} − {nb}，{when}）：{diff}。"
    return f"Spread ({na} − {nb}, {when}): {diff}."


def spread_change(a: dict[str, Any], b: dict[str, Any], zh: bool, *, ratio: bool = False) -> str:
    """The spread (or `ratio`) of two histories in one unit at the period's start and end (on common
    dates only)."""
    a, b = localise(a, zh), localise(b, zh)
    fa, la, fb, lb = a.get("first") or {}, a.get("last") or {}, b.get("first") or {}, b.get("last") or {}
    unit = a.get("unit")
    if not ratio and max(a.get("count") or 0, b.get("count") or 0) <= 2:
        return ""  # a day (or the days either side of a closure): `dated_spread` gives each date's spread
    if unit != b.get("unit") or fa.get("date") != fb.get("date") or la.get("date") != lb.get("date") or not all(
            isinstance(x.get("value"), int | float) for x in (fa, la, fb, lb)):
        return ""
    na, nb = _name(a, zh), _name(b, zh)
    if ratio:
        if not fb["value"] or not lb["value"]:
            return ""
        r0, r1 = fa["value"] / fb["value"], la["value"] / lb["value"]
        if zh:
            return (f"比价（{na} ÷ {nb}）：{fa.get('date')} {r0:.4f}，{la.get('date')} {r1:.4f}，"
                    f"期间变化 {r1 - r0:+.4f}（{(r1 / r0 - 1) * 100:+.2f}%）。")
        return (f"Ratio ({na} ÷ {nb}): {r0:.4f} on {fa.get('date')}, {r1:.4f} on {la.get('date')}, a change of "
                f"{r1 - r0:+.4f} ({(r1 / r0 - 1) * 100:+.2f}%).")
    s0, s1 = fa["value"] - fb["value"], la["value"] - lb["value"]
    if zh:
        return (f"价差（{na} − {nb}）：{fa.get('date')} {signed(s0, unit)}，{la.get('date')} {signed(s1, unit)}，"
                f"期间变化 {signed(s1 - s0, unit)}。")
    return (f"Spread ({na} − {nb}): {signed(s0, unit)} on {fa.get('date')}, {signed(s1, unit)} on {la.get('date')}, "
            f"a change of {signed(s1 - s0, unit)}.")


def pct_move(p: dict[str, Any], move: float, zh: bool) -> str:
    """"铁矿石涨10%是多少钱": the latest value moved by `move` %, with the arithmetic and its date."""
    p = localise(p, zh)
    latest = p.get("latest") or {}
    value, unit = latest.get("value"), p.get("unit", "")
    if not isinstance(value, int | float):
        return ""
    out = value * (1 + move / 100)
    if zh:
        return (f"{_name(p, zh)}{'涨' if move > 0 else '跌'} {abs(move):g}% 是 {level(out, unit)}"
                f"（{fmt(value)} × {1 + move / 100:.4f}，以 {latest.get('date')} 的最新值为基准），"
                f"变动 {signed(out - value, unit)}。")
    return (f"The {_name(p, zh)} {'up' if move > 0 else 'down'} {abs(move):g}% is {level(out, unit)} ({fmt(value)} × "
            f"{1 + move / 100:.4f}, from the latest value of {latest.get('date')}), a change of {signed(out - value, unit)}.")


def dated_spread(a: dict[str, Any], b: dict[str, Any], zh: bool) -> str:
    """"那一年前呢" after a spread: the difference of two price histories of one day (or of the trading
    days either side of a closed day) on each date both have; "" for longer periods."""
    a, b = localise(a, zh), localise(b, zh)
    unit = a.get("unit")
    if unit != b.get("unit") or max(a.get("count") or 0, b.get("count") or 0) > 2:
        return ""
    days: dict[str, float] = {}
    for end in ("first", "last"):
        pa, pb = a.get(end) or {}, b.get(end) or {}
        if pa.get("date") and pa.get("date") == pb.get("date") and all(
                isinstance(p.get("value"), int | float) for p in (pa, pb)):
            days[pa["date"]] = pa["value"] - pb["value"]
    if not days:
        return ""
    na, nb = _name(a, zh), _name(b, zh)
    if zh:
        return f"价差（{na} − {nb}）：" + "；".join(f"{d}：{signed(v, unit)}" for d, v in days.items()) + "。"
    return f"Spread ({na} − {nb}): " + "; ".join(f"{d}: {signed(v, unit)}" for d, v in days.items()) + "."


def ratio(a: dict[str, Any], b: dict[str, Any], zh: bool) -> str:
    """"铁矿石和螺纹钢的比价": the ratio of two latest prices in one unit (before: two prices, no
    ratio). The iron ore is the DCE futures when the other side is in yuan (see the planner)."""
    a, b = localise(a, zh), localise(b, zh)
    va, vb = a.get("latest", {}), b.get("latest", {})
    if not all(isinstance(x.get("value"), int | float) and x["value"] > 0 for x in (va, vb)):
        return ""
    na, nb = _name(a, zh), _name(b, zh)
    if a.get("unit") != b.get("unit"):
        return (f"{na}（{a.get('unit')}）和{nb}（{b.get('unit')}）单位不同，它们的比值没有意义，我不计算。" if zh else
                f"The {na} ({a.get('unit')}) and the {nb} ({b.get('unit')}) are in different units, so their ratio "
                "means nothing and I do not compute it.")
    when = va.get("date") if va.get("date") == vb.get("date") else f"{va.get('date')} / {vb.get('date')}"
    x = va["value"] / vb["value"]
    if zh:
        return f"比价（{na} ÷ {nb}，{when}）：{x:.4f}（反过来 {1 / x:.4f}）。"
    return f"Ratio ({na} ÷ {nb}, {when}): {x:.4f} (the other way round {1 / x:.4f})."


def seasonality(p: dict[str, Any], zh: bool) -> str:
    """Mean change of the monthly average by calendar month, with how many years stand behind it."""
    means = {int(m): v for m, v in (p.get("seasonal_mean_change_pct") or {}).items()
             if isinstance(v, int | float)}
    counts = [n for n in (p.get("seasonal_count") or {}).values() if isinstance(n, int)]
    ups = {int(m): v for m, v in (p.get("seasonal_up_pct") or {}).items() if isinstance(v, int | float)}
    if not means:
        return ("- 季节性：这个区间不足 24 个月，无法按月份估计。" if zh
                else "- seasonality: the period is shorter than 24 months, too short to estimate by month.")
    diffusion = "50" in str(p.get("unit", ""))  # PMI: points, not %
    def val(v: float) -> str:
        return points(v, zh) if diffusion else pct(v)
    up = max(means, key=lambda m: means[m])
    down = min(means, key=lambda m: means[m])
    n = f"{min(counts)}–{max(counts)}" if counts and min(counts) != max(counts) else str(counts[0] if counts else "—")
    if zh:
        listing = "，".join(f"{m}月 {val(v)}" + (f"（{ups[m]:.0f}% 的年份上涨）" if m in ups else "")
                            for m, v in sorted(means.items()))
        what = "月均值" if diffusion else "月均价"  # the PMI is an index, not a price
        return (f"- 季节性（各日历月份{what}的平均环比变动，每个月 {n} 个样本）：{listing}\n"
                f"- 平均涨幅最大的是 {up} 月（{val(means[up])}），平均跌幅最大的是 {down} 月（{val(means[down])}）。"
                "这只是历史平均：每个月只有这么几个样本，年与年之间差异很大，不代表每年都会如此。")
    month = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    listing = ", ".join(f"{month[m - 1]} {val(v)}" + (f" (up in {ups[m]:.0f}% of years)" if m in ups else "")
                        for m, v in sorted(means.items()))
    return (f"- seasonality (mean change of the monthly average by calendar month, {n} observations "
            f"per month): {listing}\n"
            f"- largest average rise: {month[up - 1]} ({val(means[up])}); largest average fall: "
            f"{month[down - 1]} ({val(means[down])}). These are historical averages of a few "
            "observations each; years differ a lot, so an average rise does not mean a rise every year.")


def _diffusion(series: str) -> bool:
    """A diffusion index (PMI): its changes are points, not returns."""
    facts = cat.catalogue().get(series)
    return facts is not None and "50" in facts.unit


def _changes_label(a: str, b: str, zh: bool) -> str:
    index = next((s for s in (a, b) if _diffusion(s)), None)
    if index is None:
        return "收益率" if zh else "returns"
    nm = cat.name(index, zh)
    return (f"变动：价格为对数收益率，{nm}为点数变化" if zh
            else f"changes: log returns for prices, point changes for {nm}")


def _beta_meaning(p: dict[str, Any], na: str, nb: str, zh: bool) -> str:
    """Beta of a price on PMI is a return per point: say so, or 0.0097 reads as nothing."""
    beta, a, b = p.get("beta_a_on_b"), str(p.get("a")), str(p.get("b"))
    if not isinstance(beta, int | float) or _diffusion(a) == _diffusion(b):
        return ""
    if _diffusion(b):
        return (f"（{nb}每变动 1 个点，{na}平均变动约 {100 * beta:+.2f}%）" if zh
                else f" ({na} moves about {100 * beta:+.2f}% per 1-point change in {nb})")
    return (f"（{nb}每变动 1%，{na}平均变动约 {beta / 100:+.4f} 个点）" if zh
            else f" ({na} moves about {beta / 100:+.4f} points per 1% change in {nb})")



def _periods(n: int) -> str:
    """"1 period", "3 periods" (a lag of one was "1 periods")."""
    return f"{n} period" if n == 1 else f"{n} periods"


def relate(p: dict[str, Any], zh: bool) -> str:
    rng = p.get("range", {})
    a, b = str(p.get("a")), str(p.get("b"))
    na, nb = cat.name(a, zh), cat.name(b, zh)
    lag = p.get("best_lag")
    changes, meaning = _changes_label(a, b, zh), _beta_meaning(p, na, nb, zh)
    if zh:
        lag_text = ("同步变动最强" if lag == 0 else
                    f"{nb}领先 {lag} 期时相关最强" if isinstance(lag, int) and lag > 0 else
                    f"{na}领先 {-lag if isinstance(lag, int) else lag} 期时相关最强")
        text = (f"**{na}** 与 **{nb}**（{p.get('frequency')} {changes}，{rng.get('first')} 至 {rng.get('last')}，{rng.get('n')} 期）：\n"
                f"- 相关系数 {fmt(p.get('correlation'), 4)}，β（{na}对{nb}）{fmt(p.get('beta_a_on_b'), 4)}{meaning}\n"
                f"- 领先滞后：{lag_text}（相关 {fmt(p.get('best_lag_correlation'), 4)}）")
    else:
        lag_text = ("strongest at lag 0 (they move together)" if lag == 0 else
                    f"strongest when {nb} leads by {_periods(lag)}" if isinstance(lag, int) and lag > 0 else
                    f"strongest when {na} leads by {_periods(-lag) if isinstance(lag, int) else lag}")
        text = (f"**{na}** vs **{nb}** ({p.get('frequency')} {changes}, {rng.get('first')} to {rng.get('last')}, {rng.get('n')} periods):\n"
                f"- correlation {fmt(p.get('correlation'), 4)}, beta of {na} on {nb} {fmt(p.get('beta_a_on_b'), 4)}{meaning}\n"
                f"- lead/lag: {lag_text} (correlation {fmt(p.get('best_lag_correlation'), 4)})")
    return text + _rolls_left_out(p, zh) + _source(p, zh)


def _rolls_left_out(p: dict[str, Any], zh: bool) -> str:
    """How many likely contract-roll days' returns a daily correlation left out, and which."""
    rolls = p.get("roll_days_left_out")
    if not isinstance(rolls, dict):
        return ""
    count, dates = int(rolls.get("count") or 0), [str(d) for d in rolls.get("dates") or []]
    shown = "、".join(dates[:6]) + ("等" if len(dates) > 6 else "")
    if zh:
        return ("\n- 期间没有发现换月日（连续主力合约换到另一合约、价格跳到新合约水平的日子），没有剔除任何收益" if not count else
                f"\n- 已剔除 {count} 个换月日的收益（{shown}）：连续主力合约在这些天换到另一合约，价格跳到新合约的水平，"
                "不是行情变动；上面的期数和相关系数都不含这些天")
    shown = ", ".join(dates[:6]) + (", …" if len(dates) > 6 else "")
    return ("\n- no likely contract-roll days in the period, so no returns were left out" if not count else
            f"\n- {count} likely contract-roll day{'s' if count > 1 else ''} left out ({shown}): the continuous "
            "main contract switched to another contract and jumped to its level, which is no market move; "
            "the periods counted and the correlation above exclude them")


def margin(p: dict[str, Any], zh: bool) -> str:
    rng, last, unit = p.get("range", {}), p.get("last", {}), p.get("unit", "")
    fresh = p.get("freshness") if isinstance(p.get("freshness"), dict) else {}
    ended = bool(fresh.get("last_date")) and fresh.get("last_date") != last.get("date")  # "in 2025"
    product = "热卷" if p.get("product") == "hrc" else "螺纹钢"
    if zh:
        text = (f"**{p.get('name_zh')}**（{product} − 1.6 × 铁矿石 − 0.5 × 焦炭，单位 {p.get('unit')}）：\n"
                f"- {'期末值' if ended else '最新'} {level(last.get('value'), unit)}（{last.get('date')}），处于 {rng.get('first')} 以来第 {fmt(p.get('percentile_in_range'))} 百分位\n"
                f"- 均值 {level(p.get('mean'), unit)}，最低 {level(p.get('min'), unit)}（{p.get('min_date')}），"
                f"最高 {level(p.get('max'), unit)}（{p.get('max_date')}）\n"
                "- 利润收缩时钢厂倾向减产、压低铁矿石需求；利润扩张则支撑矿价。"
                f"\n注意：连续合约的换月日期不同（{product} 1/5/10 月，铁矿石 1/5/9 月），换月时利润会跳动。")
    else:
        text = (f"**{p.get('name_en')}** ({p.get('formula')}, unit {p.get('unit')}):\n"
                f"- {'value at the end of the period' if ended else 'latest'} {level(last.get('value'), unit)} ({last.get('date')}), percentile {fmt(p.get('percentile_in_range'))} since {rng.get('first')}\n"
                f"- mean {level(p.get('mean'), unit)}, min {level(p.get('min'), unit)} ({p.get('min_date')}), "
                f"max {level(p.get('max'), unit)} ({p.get('max_date')})\n"
                "- Shrinking margins push mills to cut output and weigh on ore demand; wide margins support ore."
                f"\nCaveat: {p.get('caveat')}")
    return text + _source(p, zh)


def annualised(p: dict[str, Any], zh: bool) -> str:
    """The compound change per year between a history's first and last values (not for the PMI)."""
    f, last = p.get("first") or {}, p.get("last") or {}
    if "50" in str(p.get("unit", "")) or not all(isinstance(x.get("value"), int | float) and x["value"] > 0
                                                 for x in (f, last)):
        return ""
    years = (pd.Timestamp(last["date"]) - pd.Timestamp(f["date"])).days / 365.25
    if years < 1:
        return ""
    rate = ((last["value"] / f["value"]) ** (1 / years) - 1) * 100
    futures = p.get("series") in _CONTINUOUS
    if zh:
        return (f"**年化（复合）涨跌**：{f.get('date')} 至 {last.get('date')} 共 {years:.2f} 年，"
                f"({fmt(last['value'])} ÷ {fmt(f['value'])})^(1/{years:.2f}) − 1 = {rate:+.2f}%/年。"
                "这是首尾两点算出的平均速度，中间的涨跌远比它大"
                + ("；连续合约没有换月调整，也不含保证金收益，不是投资收益率。" if futures else "；它是价格的变化，不是投资收益率。"))
    return (f"**Annualised (compound) change**: {f.get('date')} to {last.get('date')}, {years:.2f} years: "
            f"({fmt(last['value'])} / {fmt(f['value'])})^(1/{years:.2f}) − 1 = {rate:+.2f}% a year. It is the average "
            "pace between two points; the moves in between were far larger"
            + ("; the continuous contract is not roll-adjusted and earns no margin interest, so it is no investment "
               "return." if futures else "; it is a price change, not an investment return."))


def relations_compared(payloads: list[dict[str, Any]], zh: bool) -> str:
    """Two correlations with the same first series, ranked (each on its own sample and frequency)."""
    if len(payloads) != 2 or payloads[0].get("a") != payloads[1].get("a"):
        return ""
    rows = [(p.get("correlation"), cat.name(str(p.get("b")), zh), (p.get("range") or {}), p.get("frequency"))
            for p in payloads]
    if not all(isinstance(r[0], int | float) for r in rows):
        return ""
    rows.sort(key=lambda r: r[0], reverse=True)
    a = cat.name(str(payloads[0].get("a")), zh)
    same = rows[0][3] == rows[1][3]
    if zh:
        listing = " > ".join(f"{n} {c:.4f}（{r.get('first')} 至 {r.get('last')}）" for c, n, r, _ in rows)
        return (f"**与{a}的相关系数**：{listing}。{rows[0][1]}和它的同步性更高"
                + ("。" if same else "；两者的样本频率不同（日度/月度），比较只是大致的。") + "相关不是因果。")
    listing = " > ".join(f"{n} {c:.4f} ({r.get('first')} to {r.get('last')})" for c, n, r, _ in rows)
    return (f"**Correlation with {a}**: {listing}. {rows[0][1]} moves more closely with it"
            + ("." if same else "; the samples differ in frequency (daily/monthly), so the comparison is rough.")
            + " Correlation is not causation.")


def margins_compared(payloads: list[dict[str, Any]], zh: bool) -> str:
    """The rebar and hot-rolled coil margins' latest values side by side (same unit, same formula)."""
    by = {("hrc" if p.get("product") == "hrc" else "rebar"): p for p in payloads}
    if set(by) != {"rebar", "hrc"}:
        return ""
    r, h = (by[k].get("last") or {} for k in ("rebar", "hrc"))
    if not all(isinstance(x.get("value"), int | float) for x in (r, h)):
        return ""
    unit = localise(by["rebar"], zh).get("unit", "")
    diff = h["value"] - r["value"]
    when = r.get("date") if r.get("date") == h.get("date") else f"{r.get('date')} / {h.get('date')}"
    if zh:
        return (f"**对比**（{when}）：热卷盘面利润 {level(h['value'], unit)}，螺纹钢盘面利润 {level(r['value'], unit)}；"
                f"热卷{'高' if diff > 0 else '低'} {signed(abs(diff), unit).lstrip('+')}。两者用同一公式（−1.6 × 铁矿石 − 0.5 × 焦炭），"
                "差别只在成材价格。")
    return (f"**Compared** ({when}): hot-rolled coil margin {level(h['value'], unit)}, rebar margin "
            f"{level(r['value'], unit)}; HRC is {signed(abs(diff), unit).lstrip('+')} {'higher' if diff > 0 else 'lower'}. "
            "Both use the same formula (−1.6 × iron ore − 0.5 × coke); only the steel price differs.")


def generic(p: Any, zh: bool) -> str:
    if not isinstance(p, dict):
        return str(p)
    lines = [f"**{_name(p, zh)}**" if (p.get("series") or p.get("name_zh")) else ""]
    lines += [f"- {k}: {fmt(v)}" for k, v in _scalars(p)]
    return "\n".join(x for x in lines if x) + _source(p, zh)


def _forecast_rows(p: dict[str, Any]) -> list[dict[str, Any]]:
    for key in ("points", "forecast", "rows", "path", "values"):
        rows = p.get(key)
        if isinstance(rows, list) and rows and isinstance(rows[0], dict):
            return rows
    return []


def _band(row: dict[str, Any], level: int) -> tuple[Any, Any]:
    lo = hi = None
    for k, v in row.items():
        if str(level) in k and re.search(r"lo|lower", k):
            lo = v
        elif str(level) in k and re.search(r"hi|upper", k):
            hi = v
    for key in ("intervals", "bands"):
        if isinstance(row.get(key), dict) and str(level) in row[key]:
            band = row[key][str(level)]
            if isinstance(band, dict):
                lo, hi = band.get("lower", band.get("lo")), band.get("upper", band.get("hi"))
            elif isinstance(band, list | tuple) and len(band) == 2:
                lo, hi = band
    return lo, hi


def _mean(row: dict[str, Any]) -> Any:
    for key in ("mean", "forecast", "point", "value", "yhat"):
        if key in row:
            return row[key]
    return None


RISKS_ZH = ("风险：澳大利亚与巴西发运（飓风、雨季、检修）、中国粗钢限产与地产需求、港口库存变化、钢厂利润与"
            "煤焦成本、美元兑人民币汇率；统计模型不包含政策与突发事件。")
RISKS_EN = ("Risks: Australian and Brazilian shipments (cyclones, rainy season, maintenance), Chinese "
            "steel output curbs and property demand, port stocks, mill margins and coke costs, the "
            "USD/CNH rate; the statistical baseline ignores policy and shocks.")


METHOD_ZH = {
    "naive": "随机游走（沿用最新值，区间随期数的平方根扩大）",
    "drift": "带漂移的随机游走（延续历史平均变化）",
    "ets": "指数平滑 ETS（阻尼趋势，季节性显著时加季节项）",
    "arima": "ARIMA(1,1,0) 差分自回归",
    "theta": "Theta 方法（季节性显著时先去季节）",
    "ensemble": "ETS、ARIMA、Theta 三者的平均",
    "nowcast": "现货月均价的即时预测（按大商所期货月均价的变动推算到期货数据的最后一个月，再从期货的最新价位随机游走）",
}


def _reason(p: dict[str, Any], zh: bool) -> str:
    if not zh:
        return str(p.get("reason") or "")
    method = str(p.get("method"))
    scores = p.get("backtest_mase")
    how = METHOD_ZH.get(method, method)
    if isinstance(scores, dict) and scores:
        ranked = sorted((v, m) for m, v in scores.items() if isinstance(v, int | float))
        listing = "，".join(f"{m} {v:.3f}" for v, m in ranked[:4])
        return (f"自动选择：在近期滚动回测中 {method} 的 MASE 最低（{listing}；随机游走 = 1）。"
                f"{method} 是{how}。")
    return f"{method}：{how}。"


def forecast(p: dict[str, Any], zh: bool, focus: str | None = None, *, average: bool = False,
             why_wide: bool = False) -> str:
    """The forecast path, with the periods asked about (from `focus`, else those after today) in
    full and the ones between the data's end and them summed up as what they are: forecasts too."""
    unit = p.get("unit", "")
    digits = digits_of(unit)
    rows = _forecast_rows(p)
    method = p.get("method_used") or p.get("method")
    last_obs = p.get("last_observation") or p.get("last") or {}
    past = [str(d) for d in p.get("periods_already_past") or []]
    asked_for = focus
    if focus is None and past and len(past) < len(rows):
        focus = str(rows[len(past)].get("date"))
    before = [r for r in rows if focus and str(r.get("date")) < focus]
    asked = rows[len(before):]
    first_date = rows[0].get("date") if rows else None
    last_date = rows[-1].get("date") if rows else None
    lines = [f"**{_name(p, zh)}** 预测（方法 {method}，{len(rows)} 期：{first_date} 至 {last_date}，单位 {unit}）："
             if zh else
             f"**{_name(p, zh)}** forecast (method {method}, {len(rows)} periods: {first_date} to "
             f"{last_date}, unit {unit}):"]
    if isinstance(last_obs, dict) and last_obs.get("value") is not None:
        lines.append(f"- 最新实际值 {level(last_obs.get('value'), unit)}（{last_obs.get('date')}），预测从这一天之后开始" if zh
                     else f"- last actual {level(last_obs.get('value'), unit)} ({last_obs.get('date')}); the forecast starts after it")
    carried = _carried(p)
    bridged = [r for r in before if str(r.get("date")) in carried]
    if every_carried := [r for r in rows if str(r.get("date")) in carried]:
        lines.append(_bridged_line(p, every_carried, unit, digits, zh))
    if forecast_only := [r for r in before if str(r.get("date")) not in carried]:
        gap = forecast_only[-1]
        lo80, hi80 = _band(gap, 80)
        all_past = all(str(r.get("date")) in past for r in forecast_only)
        lines.append(
            f"- 数据只到 {last_obs.get('date')}：其后的 {len(forecast_only)} 期（{forecast_only[0].get('date')} 至 {gap.get('date')}）"
            f"{'虽然已早于今天，' if all_past else ''}本地没有实际数据，它们本身也是预测"
            f"（{gap.get('date')}：{level(_mean(gap), unit)}，80% 区间 {fmt(lo80, digits)} – {fmt(hi80, digits)}）。"
            f"你问的时期从 {focus} 开始，要先跨过这些预测期，所以区间更宽。" if zh and not bridged else
            f"- 再往后的 {len(forecast_only)} 期（{forecast_only[0].get('date')} 至 {gap.get('date')}）"
            f"{'虽然已早于今天，' if all_past else ''}期货也没有数据，它们本身也是预测"
            f"（{gap.get('date')}：{level(_mean(gap), unit)}，80% 区间 {fmt(lo80, digits)} – {fmt(hi80, digits)}）。"
            f"你问的时期从 {focus} 开始，要先跨过这些预测期，所以区间更宽。" if zh else
            f"- The data ends on {last_obs.get('date')}: the {len(forecast_only)} period(s) after it "
            f"({forecast_only[0].get('date')} to {gap.get('date')}) "
            f"{'are already in the past but ' if all_past else ''}have no actual data here, so they are "
            f"forecasts too ({gap.get('date')}: {level(_mean(gap), unit)}, 80% range {fmt(lo80, digits)} – "
            f"{fmt(hi80, digits)}). The time you asked about starts on {focus}, after them, so its "
            "ranges are wider." if not bridged else
            f"- The {len(forecast_only)} period(s) after those ({forecast_only[0].get('date')} to {gap.get('date')}) "
            f"{'are already in the past but ' if all_past else ''}have no futures data either, so they are "
            f"forecasts too ({gap.get('date')}: {level(_mean(gap), unit)}, 80% range {fmt(lo80, digits)} – "
            f"{fmt(hi80, digits)}). The time you asked about starts on {focus}, after them, so its "
            "ranges are wider.")
    elif uncarried := [d for d in past if d not in carried]:
        span = uncarried[0] if len(uncarried) == 1 else \
            f"{uncarried[0]} 至 {uncarried[-1]}" if zh else f"{uncarried[0]} to {uncarried[-1]}"
        lines.append(
            (f"- 注意：数据只到 {last_obs.get('date')}，所以前 {len(past)} 期（{span}）"
             f"已早于今天，但本地还没有这些期间的实际数据；它们仍是预测值。" if zh else
             f"- Note: the data ends on {last_obs.get('date')}, so the first {len(past)} period(s) "
             f"({span}) are already in the past but have no actual data here; they are still forecasts.")
            if len(uncarried) == len(past) else
            (f"- 注意：{span} 已早于今天，但本序列和期货都还没有这{'些期间' if len(uncarried) > 1 else '一期'}的数据；"
             "它仍是预测值，不是推算。" if zh else
             f"- Note: {span} {'are' if len(uncarried) > 1 else 'is'} already in the past but neither this series "
             "nor the futures have data for it here: it is still a forecast, not carried over."))
    if asked_for is None and past and rows and len(past) >= len(rows):
        # A horizon counted from stale data: every period shown is before today, none is ahead of it.
        lines.append(
            "- 所以这里没有一期在今天之后：要看今天之后的某个时间，请直接问那个日期，例如“2027年3月铁矿石价格”。"
            if zh else
            "- So none of these periods is after today: to see a time ahead of today, ask for that "
            "date, e.g. 'iron ore price in March 2027'.")
    if p.get("reason"):
        lines.append(f"- 方法选择：{_reason(p, zh)}" if zh else f"- method choice: {_reason(p, zh)}")
    whole = 12 if p.get("frequency") in ("monthly", "月度") else 6  # a year of months, a week of days
    show = asked if len(asked) <= whole else [asked[0], asked[len(asked) // 2], asked[-1]]
    for row in show:
        lo80, hi80 = _band(row, 80)
        lo95, hi95 = _band(row, 95)
        mark = ("（由期货月均价推算）" if zh else " (carried over by the futures' monthly average)") \
            if str(row.get("date")) in carried else ""
        lines.append(
            f"- {row.get('date')}：{level(_mean(row), unit)}，80% 区间 {fmt(lo80, digits)} – {fmt(hi80, digits)}，"
            f"95% 区间 {fmt(lo95, digits)} – {fmt(hi95, digits)}{mark}" if zh else
            f"- {row.get('date')}: {level(_mean(row), unit)}, 80% range {fmt(lo80, digits)} – {fmt(hi80, digits)}, "
            f"95% range {fmt(lo95, digits)} – {fmt(hi95, digits)}{mark}"
        )
    if average and len(asked) > 1:
        lines.append(_average_line(asked, unit, digits, zh))
    if adjusted := p.get("adjusted"):
        lines.append(_adjusted_line(adjusted, unit, digits, zh))
        lines.append(_band_record(p, adjusted, len(rows), zh))
    if why_wide and rows:
        lines.append(_why_wide(p, rows, len(before), zh))
    if note := _closed_note(p.get("closed"), zh):
        lines.append(note)
    if asked and (note := _asked_on_closure(p.get("closed"), asked_for, str(asked[0].get("date")), zh)):
        lines.insert(1, note)
    lines.append(RISKS_ZH if zh else RISKS_EN)
    return "\n".join(lines) + _source(p, zh)


def _carried(p: dict[str, Any]) -> set[str]:
    """The forecast's periods the futures' monthly averages carried over (`nowcast` past its data)."""
    return {str(d) for d in (p.get("bridged") or {}).get("periods") or []}


def _bridged_line(p: dict[str, Any], rows: list[dict[str, Any]], unit: Any, digits: int, zh: bool) -> str:
    """Periods past the monthly data's end that the daily indicator traded in: carried over by how its
    monthly average moved (the `nowcast` method), so closer to data than to a forecast, and said so."""
    bridged = p.get("bridged") or {}
    indicator, through = str(bridged.get("indicator")), bridged.get("indicator_last_date")
    last = (p.get("last_observation") or p.get("last") or {}).get("date")
    end = rows[-1]
    lo80, hi80 = _band(end, 80)
    span = (f"{rows[0].get('date')} 至 {end.get('date')} 这 {len(rows)} 期" if len(rows) > 1 else f"{end.get('date')}") if zh \
        else (f"the {len(rows)} periods {rows[0].get('date')} to {end.get('date')}" if len(rows) > 1 else str(end.get("date")))
    if zh:
        return (f"- {span}还没有本序列的数据，但{cat.name(indicator, True)}有到 {through} 的日度数据："
                f"按期货月均价相对 {last} 那个月的变动推算（{end.get('date')}：{level(_mean(end), unit)}，"
                f"80% 区间 {fmt(lo80, digits)} – {fmt(hi80, digits)}）。区间来自这种推算过去的误差，"
                "比没有期货数据的纯预测窄得多；它仍是估计，不是实际数据。")
    return (f"- {span[:1].upper()}{span[1:]} {'have' if len(rows) > 1 else 'has'} no data of this series yet, "
            f"but the {cat.name(indicator, False)} have daily data to {through}: "
            f"carried over by how the futures' monthly average moved since the month of {last} "
            f"({end.get('date')}: {level(_mean(end), unit)}, 80% range {fmt(lo80, digits)} – {fmt(hi80, digits)}). "
            "The range is this estimate's past error, much narrower than a forecast without futures data; "
            "it is still an estimate, not data.")


def _average_line(asked: list[dict[str, Any]], unit: Any, digits: int, zh: bool) -> str:
    """"2027年平均价格": the mean of the periods' medians, said to be a forecast; its band is bounded
    by the average of the periods' bounds (that is the band if every period moved in step; they do
    not quite, so the average's true range is somewhat narrower)."""
    mean = sum(float(_mean(r)) for r in asked) / len(asked)
    lo80, hi80 = (sum(float(_band(r, 80)[i]) for r in asked) / len(asked) for i in (0, 1))
    lo95, hi95 = (sum(float(_band(r, 95)[i]) for r in asked) / len(asked) for i in (0, 1))
    a, b = asked[0].get("date"), asked[-1].get("date")
    if zh:
        return (f"- **{a} 至 {b} 的平均价格（预测，不是实际数据）**：{len(asked)} 期中位预测的平均 {level(mean, unit)}；"
                f"80% 区间约 {fmt(lo80, digits)} – {fmt(hi80, digits)}，95% 区间约 {fmt(lo95, digits)} – {fmt(hi95, digits)}"
                "（各期区间的平均；各期并非完全同步变动，平均价的实际区间比这略窄，这是偏宽的估计）。")
    return (f"- **Average over {a} to {b} (a forecast, not data)**: the mean of the {len(asked)} periods' "
            f"medians is {level(mean, unit)}; 80% range about {fmt(lo80, digits)} – {fmt(hi80, digits)}, 95% "
            f"range about {fmt(lo95, digits)} – {fmt(hi95, digits)} (the periods' ranges averaged; the "
            "periods do not move fully in step, so the average's true range is somewhat narrower: this "
            "errs wide).")


def _adjusted_line(adjusted: list[dict[str, Any]], unit: Any, digits: int, zh: bool) -> str:
    """One-off shocks the fit left out (the PMI's 2020 COVID months), said with their weight."""
    days = "、".join(f"{a.get('date')}（实际 {fmt(a.get('actual'), digits)}）" for a in adjusted) if zh else \
        ", ".join(f"{a.get('date')} (actual {fmt(a.get('actual'), digits)})" for a in adjusted)
    used, share = adjusted[0].get("used"), adjusted[0].get("share_of_squared_changes")
    if zh:
        return (f"- 区间的估计没有用一次性冲击 {days}：拟合时用之前的 {fmt(used, digits)} 代替。它们占拟合期内"
                f"各期变化平方和的 {share_pct(share)}，带上它们区间会明显更宽；如果再出现同样的冲击，这个区间会低估风险。")
    return (f"- The bands leave out the one-off shock {days}: the fit used {fmt(used, digits)} instead. "
            f"Those months are {share_pct(share)} of the squared period changes in the fit window; with "
            "them the bands would be much wider. If a shock like it came again, these bands would understate the risk.")


def _band_record(p: dict[str, Any], adjusted: list[dict[str, Any]], steps: int, zh: bool) -> str:
    """How often bands of this method, this many periods ahead, held the outcome from 2021 on, and
    why they are wide when they are (a diffusion index comes back towards 50; a random walk's band
    does not)."""
    series, method = str(p.get("series")), str(p.get("method"))
    got = coverage.measured(series, method, steps) if steps else None
    if got is None or got["80"] is None:
        return ""
    whole, recent = coverage.swings(series, {str(a.get("date")): float(a.get("used")) for a in adjusted})
    wide = got["80"] > 0.9
    if zh:
        line = (f"- 区间准不准（实测）：{got['first']} 至 {got['last']} 的 {got['origins']} 次回测中，同一方法（{method}）"
                f"提前 {steps} 期的 80% 区间覆盖了 {share(got['80'] * 100)} 的实际值，95% 区间覆盖了 {share(got['95'] * 100)}。")
        if wide:
            line += (f"80% 区间覆盖远超 80%，说明这么远的区间偏宽：PMI 围绕 50 上下波动、会回归，而模型的区间按随机游走随期数扩大；"
                     f"拟合期还包括 2008–2009 年的大幅波动（全样本月度变化的标准差 {fmt(whole)} 点，2015 年以来 {fmt(recent)} 点）。"
                     "实际的不确定性很可能比区间小，但区间没有据此收窄。")
        return line
    line = (f"- How good the bands were (measured): over {got['origins']} backtests from {got['first']} to {got['last']}, "
            f"the same method ({method}) {steps} periods ahead had {share(got['80'] * 100)} of outcomes inside its 80% "
            f"band and {share(got['95'] * 100)} inside its 95% band.")
    if wide:
        line += (" Far above 80%: at this distance the bands are too wide. The PMI swings around 50 and comes back, "
                 "while the model's band widens as a random walk's does, and the fit window holds 2008-2009's large "
                 f"swings (standard deviation of monthly changes {fmt(whole)} points over the whole history, "
                 f"{fmt(recent)} since 2015). The real uncertainty is likely smaller; the bands are not narrowed for it.")
    return line


def share_pct(value: Any) -> str:
    return f"{float(value) * 100:.2f}%" if isinstance(value, int | float) else "?"


def _why_wide(p: dict[str, Any], rows: list[dict[str, Any]], gap: int, zh: bool) -> str:
    """"为什么预测区间这么宽": the width read from this forecast's own numbers — the per-period
    scatter the model estimated, how it adds up over the periods, and the periods without data.
    Periods the futures' monthly averages carried over (`_bridged_line`) come first and are said
    apart: the width builds up from the first period after them."""
    carried = _carried(p)
    bridged = [r for r in rows if str(r.get("date")) in carried]
    rows = rows[len(bridged):] or rows
    gap = max(gap - len(bridged), 0)
    first, last = rows[0], rows[-1]
    unit = p.get("unit", "")
    digits = digits_of(unit)
    z80 = 1.2815516
    log = p.get("point") == "median"

    def spread(row: dict[str, Any]) -> tuple[float, float]:
        lo, hi = (float(x) for x in _band(row, 80))
        mid = float(_mean(row))
        return (lo / mid - 1, hi / mid - 1) if log else (lo - mid, hi - mid)

    (lo1, hi1), (lon, hin) = spread(first), spread(last)
    if log:
        sigma = math.log(float(_band(first, 80)[1]) / float(_mean(first))) / z80
        step = f"{sigma * 100:.2f}%"
        one, far = f"{lo1 * 100:+.2f}% 到 {hi1 * 100:+.2f}%", f"{lon * 100:+.2f}% 到 {hin * 100:+.2f}%"
        one_en, far_en = f"{lo1 * 100:+.2f}% to {hi1 * 100:+.2f}%", f"{lon * 100:+.2f}% to {hin * 100:+.2f}%"
    else:
        sigma = hi1 / z80
        step = f"{fmt(sigma, digits)} {unit}"
        one = one_en = f"{fmt(lo1, digits)} – {fmt(hi1, digits)}"
        far = far_en = f"{fmt(lon, digits)} – {fmt(hin, digits)}"
    ratio = (hin - lon) / (hi1 - lo1) if hi1 != lo1 else float("nan")
    n = len(rows)
    if bridged:
        lo_b, hi_b = (fmt(x, digits) for x in _band(bridged[-1], 80))
        through = (p.get("bridged") or {}).get("indicator_last_date")
    if zh:
        out = ["- **为什么区间这么宽**（用这个预测自己的数字）："]
        if bridged:
            out.append(f"  0. 前 {len(bridged)} 期（到 {bridged[-1].get('date')}）有期货数据推算，区间窄"
                       f"（{bridged[-1].get('date')}：80% 区间 {lo_b} – {hi_b}）；期货数据只到 {through}，"
                       "之后的各期没有任何数据，下面从那以后算起。")
        out += [
               f"  1. 单期波动：模型从历史估计的每期变化标准差约 {step}（{'对数变化' if log else '每期变化'}），"
               f"所以第 1 期（{first.get('date')}）的 80% 区间已是中值的 {one}。",
               f"  2. 期数累积：不确定性逐期叠加，第 {n} 期（{last.get('date')}）的 80% 区间是中值的 {far}，"
               f"宽度是第 1 期的 {ratio:.2f} 倍（纯随机游走下约为 √{n} = {math.sqrt(n):.2f}）。"]
        if gap:
            out.append(f"  3. 数据滞后：数据只到 {(p.get('last') or {}).get('date')}，你问的时期之前还有 {gap} 期没有实际数据，"
                       "这些期的不确定性也要算进去。")
        out.append("  80% 区间的意思是：按模型，大约每 5 次会有 1 次实际值落在区间外；区间宽说明统计上能确定的很少，"
                   "不是预计价格会大涨大跌。")
        return "\n".join(out)
    out = ["- **Why the ranges are so wide** (from this forecast's own numbers):"]
    if bridged:
        out.append(f"  0. The first {len(bridged)} period(s) (to {bridged[-1].get('date')}) are carried over by "
                   f"futures data, so their ranges are narrow ({bridged[-1].get('date')}: 80% range {lo_b} – {hi_b}); "
                   f"the futures end on {through}, nothing is known after that, and what follows counts from there.")
    out += [
           f"  1. Per-period scatter: the model estimated a standard deviation of about {step} per period "
           f"({'log change' if log else 'change'}) from the history, so the first period ({first.get('date')}) "
           f"already has an 80% range of {one_en} around the median.",
           f"  2. Horizon: uncertainty adds up period by period; at period {n} ({last.get('date')}) the 80% range "
           f"is {far_en}, {ratio:.2f} times the first period's width (about √{n} = {math.sqrt(n):.2f} for a pure "
           "random walk)."]
    if gap:
        out.append(f"  3. Stale data: the data ends on {(p.get('last') or {}).get('date')}, so {gap} period(s) "
                   "with no actual data come before the time you asked about, and their uncertainty counts too.")
    out.append("  An 80% range means that, by the model, about 1 time in 5 the outcome falls outside it; a wide "
               "range says how little the statistics can pin down, not that a big move is expected.")
    return "\n".join(out)


def _asked_on_closure(closed: Any, asked_for: str | None, first_row: str, zh: bool) -> str:
    """"Rebar in the first week of October 2027": the day asked is an exchange holiday, so no price
    exists for it; the answer starts at the first trading day after it, and says so."""
    if not asked_for or not isinstance(closed, list):
        return ""
    hit = next((c for c in closed if str(c.get("date")) == asked_for[:10]), None)
    if hit is None:
        return ""
    run = [str(c.get("date")) for c in closed if c.get("holiday") == hit.get("holiday")
           and str(c.get("date"))[:4] == asked_for[:4] and asked_for[:10] <= str(c.get("date")) < first_row]
    days = run[0] if len(run) == 1 else (f"{run[0]} 至 {run[-1]}" if zh else f"{run[0]} to {run[-1]}")
    name = HOLIDAY_ZH.get(str(hit.get("holiday")), hit.get("holiday")) if zh else hit.get("holiday")
    guess = ("，按规则推算" if zh else ", projected") if hit.get("projected") else ""
    if zh:
        return (f"- {days} 交易所休市（{name}{guess}），这些天没有价格，也没有预测；"
                f"下面从休市后第一个交易日 {first_row} 开始。")
    return (f"- The exchange is closed on {days} ({name}{guess}): there is no price for those days, and "
            f"no forecast; the rows below start at the first trading day after, {first_row}.")


def _closed_note(closed: Any, zh: bool) -> str:
    """The exchange holidays the forecast dates skip, one run of days per holiday."""
    if not isinstance(closed, list) or not closed:
        return ""
    runs: list[list[dict[str, Any]]] = []
    for c in closed:
        if runs and runs[-1][-1].get("holiday") == c.get("holiday") and \
                str(c.get("date"))[:4] == str(runs[-1][-1].get("date"))[:4]:
            runs[-1].append(c)
        else:
            runs.append([c])

    def span(run: list[dict[str, Any]]) -> str:
        a, b = run[0].get("date"), run[-1].get("date")
        return str(a) if a == b else (f"{a} 至 {b}" if zh else f"{a} to {b}")

    projected = sorted({str(c.get("date"))[:4] for c in closed if c.get("projected")})
    if zh:
        listing = "；".join(f"{HOLIDAY_ZH.get(str(r[0].get('holiday')), r[0].get('holiday'))} {span(r)}"
                           for r in runs)
        text = f"- 预测日期只取交易日，已跳过交易所休市日（{listing}）。"
        if projected:
            text += (f"{'、'.join(projected)} 年的休市安排尚未公布（国务院每年11月前后公布次年安排），"
                     "这些日期是按近年规则推算的。")
        return text
    listing = "; ".join(f"{r[0].get('holiday')} {span(r)}" for r in runs)
    text = f"- Forecast dates are trading days only: the exchange holidays are skipped ({listing})."
    if projected:
        text += (f" The {', '.join(projected)} holiday schedule is not published yet (the State Council "
                 "publishes it around November of the year before): those days are projected from "
                 "recent years' rules.")
    return text


def scenario(p: dict[str, Any], zh: bool) -> str:
    """A conditional, hedged statement: how the price moved historically with the driver."""
    unit_shock = "个点" if p.get("shock_unit") == "points" else "%"
    shock = p.get("shock")
    sample, base = p.get("sample", {}), p.get("base", {})
    e80 = p.get("effect_band_pct", {}).get("80", [None, None])
    o80 = p.get("outcome_band_pct", {}).get("80", [None, None])
    o95 = p.get("outcome_band_pct", {}).get("95", [None, None])
    lv = p.get("implied_band", {}).get("80", [None, None])
    target = cat.name(str(p.get("target")), zh)
    unit = p.get("unit", "")
    freq_zh = FREQ_ZH.get(str(p.get("frequency")), str(p.get("frequency")))  # localise() may have run
    shock_txt = f"{shock:+g}{unit_shock}" if isinstance(shock, int | float) else "—"
    r2 = p.get("r2") if isinstance(p.get("r2"), int | float) else 0.0
    # What R² says depends on its size: "low" was said of 0.56 too.
    share_r2 = f"{100 * r2:.0f}%"
    fit_zh = (f"R² 只有 {fmt(r2)}，这一因素只解释了{target}变动的约 {share_r2}" if r2 < 0.3
              else f"R² {fmt(r2)} 表示这一因素解释了{target}变动的约 {share_r2}，其余来自别的因素")
    fit_en = (f"an R² of only {fmt(r2)} means this driver explains about {share_r2} of the moves of {target}"
              if r2 < 0.3 else
              f"an R² of {fmt(r2)} means this driver explains about {share_r2} of the moves of {target}, the rest "
              "comes from elsewhere")
    level_lines = _level_lines(p, zh) if p.get("level") is not None else []
    if level_lines:
        dunit, dbase = p.get("driver_unit", ""), p.get("driver_base", {})
        dunit = UNIT_ZH.get(dunit, dunit) if zh else dunit
        move = points(shock, zh) if unit_shock == "个点" else pct(shock)
        falls = isinstance(shock, int | float) and shock < 0
        head = (f"**情景：如果{p.get('driver_name_zh')}{'跌到' if falls else '涨到'} {level(p.get('level'), dunit)}**（较最新值 "
                f"{level(dbase.get('value'), dunit)}（{dbase.get('date')}）变动 {move}；看{target}，单位 {p.get('unit')}）"
                if zh else
                f"**Scenario: if the {p.get('driver_name_en')} {'falls' if falls else 'rises'} to "
                f"{level(p.get('level'), dunit)}** (a move of "
                f"{move} from its latest {level(dbase.get('value'), dunit)} on {dbase.get('date')}; effect on "
                f"{target}, unit {p.get('unit')})")
    if zh:
        lines = [
            head if level_lines else
            f"**情景：如果{p.get('driver_name_zh')}变动 {shock_txt}**（{target}，单位 {p.get('unit')}）",
            f"- 历史上（{sample.get('first')} 至 {sample.get('last')}，{sample.get('n')} 个{freq_zh}观测），"
            f"{p.get('driver_name_zh')}每变动 1{'个点' if unit_shock == '个点' else '%'}，{target}同期平均变动 "
            f"{pct(p.get('slope_pct_per_unit'))}（标准误 {fmt(p.get('slope_se'))} 个百分点，R² {fmt(p.get('r2'))}）。",
            f"- 按这个历史关系，这一冲击对应{target}约 {pct(p.get('effect_pct'))}（斜率不确定性的 80% 区间 "
            f"{pct(e80[0])} 至 {pct(e80[1])}）；加上其它因素的波动，80% 区间 {pct(o80[0])} 至 {pct(o80[1])}，"
            f"95% 区间 {pct(o95[0])} 至 {pct(o95[1])}。",
            f"- 以最新值 {level(base.get('value'), unit)}（{base.get('date')}）为基准，约 {level(p.get('implied_level'), unit)}"
            f"（80% 区间 {fmt(lv[0], digits_of(unit))} – {level(lv[1], unit)}）。",
            "这是有条件的估计：它描述的是历史上的同步变动，不是因果关系；同一时期其它因素也在变化，"
            f"{fit_zh}，关系在未来也可能改变。",
        ]
    else:
        lines = [
            head if level_lines else
            f"**Scenario: if {p.get('driver_name_en')} changes by {shock_txt.replace('个点', ' points')}** "
            f"({target}, unit {p.get('unit')})",
            f"- Historically ({sample.get('first')} to {sample.get('last')}, {sample.get('n')} "
            f"{p.get('frequency')} observations), a 1{' point' if unit_shock == '个点' else '%'} change "
            f"in {p.get('driver_name_en')} came with an average {pct(p.get('slope_pct_per_unit'))} "
            f"move in {target} (standard error {fmt(p.get('slope_se'))} percentage points, R² {fmt(p.get('r2'))}).",
            f"- On that relation, this shock would go with about {pct(p.get('effect_pct'))} on {target} "
            f"(80% band from the slope {pct(e80[0])} to {pct(e80[1])}); with everything else that moves "
            f"the price, 80% range {pct(o80[0])} to {pct(o80[1])}, 95% range {pct(o95[0])} to {pct(o95[1])}.",
            f"- From the latest {level(base.get('value'), unit)} ({base.get('date')}): about "
            f"{level(p.get('implied_level'), unit)} (80% range {fmt(lv[0], digits_of(unit))} – {level(lv[1], unit)}).",
            "This is conditional: it describes past co-movement, not causation; other drivers moved at "
            f"the same time, {fit_en}, and the relation may not hold in future.",
        ]
    lines[-1:-1] = level_lines
    return "\n".join(lines) + _source(p, zh)


def _level_lines(p: dict[str, Any], zh: bool) -> list[str]:
    """What a scenario given as a level assumes: where it starts, the base dates, the sample's range."""
    driver = p.get("driver_name_zh") if zh else p.get("driver_name_en")
    target = cat.name(str(p.get("target")), zh)
    dbase, base = p.get("driver_base", {}), p.get("base", {})
    points_ = p.get("shock_unit") == "points"
    lo, hi = p.get("driver_change_range") or [None, None]
    size = (lambda v: points(v, zh)) if points_ else pct
    freq = FREQ_ZH.get(str(p.get("frequency")), str(p.get("frequency"))) if zh else str(p.get("frequency"))
    out = [
        f"- 假设：变动从{driver}的最新值（{dbase.get('date')}）算起，{target}从不晚于那天的最近值（{base.get('date')}）算起；"
        f"估计用的是{freq}变化的线性关系，所以这一变动一次完成还是分几期完成，估计的同步变动相同，但不包括这期间其它因素带来的变化。"
        if zh else
        f"- Assumptions: the move starts from the {driver}'s latest value ({dbase.get('date')}) and {target} from "
        f"its last value on or before that day ({base.get('date')}); the estimate is a linear relation of {freq} "
        "changes, so the co-movement is the same whether the move happens at once or over several periods, "
        "but it leaves out whatever else moves in the meantime."]
    days = (pd.Timestamp(str(dbase.get("date"))) - pd.Timestamp(str(base.get("date")))).days
    if days > 31:  # the target's data ends well before the driver's: the two bases are apart
        out.append(f"- 注意：{target}的数据只到 {base.get('date')}，比{driver}的基准早 {days} 天，"
                   "这期间它的实际变动不在估计里。" if zh else
                   f"- Note: {target}'s data ends on {base.get('date')}, {days} days before the {driver}'s base, "
                   "and its actual moves in between are not in the estimate.")
    if p.get("outside_sample"):
        out.append(
            f"- 这一变动超出了样本中任何单期变动的范围（{size(lo)} 至 {size(hi)}）：如果一期之内发生，属于外推，"
            "历史上没有可比的经验，结果更不可靠。" if zh else
            f"- This move is outside every single-period move in the sample ({size(lo)} to {size(hi)}): "
            "if it happened within one period it would be an extrapolation with no precedent in the data, "
            "and less reliable.")
    f = p.get("driver_freshness")
    if isinstance(f, dict) and f.get("stale"):
        out.append(
            f"- {driver}的“最新值”是 {f.get('last_date')} 的，比今天（{f.get('today')}）早 {f.get('age_days')} 天；"
            "今天的实际价格我没有，情景从那个值算起。" if zh else
            f"- The {driver}'s 'latest' value is from {f.get('last_date')}, {f.get('age_days')} days before "
            f"today ({f.get('today')}); I do not have today's price, so the scenario starts from that value.")
    return out


def backtest(p: dict[str, Any], zh: bool) -> str:
    p = localise(p, zh)  # the analyst renders backtests itself, not through render()
    o = p.get("origins", {})
    cov = p.get("coverage_pct", {})
    unit = p.get("unit", "")
    method = p.get("method")
    if zh:
        text = (f"**{_name(p, zh)}** 回测（方法 {method}，提前 {p.get('horizon')} 期，"
                f"{o.get('count')} 个起点 {o.get('first')} – {o.get('last')}）：\n"
                f"- MAE {level(p.get('mae'), unit)}，RMSE {level(p.get('rmse'), unit)}，"
                f"MAPE {share(p.get('mape_pct'))}，MASE {fmt(p.get('mase'), 3)}"
                f"（随机游走 MAE {level(p.get('naive_mae'), unit)}；MASE<1 表示优于“不变”预测）\n"
                f"- 区间覆盖率：80% 区间 {share(cov.get('80'))}，95% 区间 {share(cov.get('95'))}")
    else:
        text = (f"**{_name(p, zh)}** backtest (method {method}, {p.get('horizon')} periods ahead, "
                f"{o.get('count')} origins {o.get('first')} – {o.get('last')}):\n"
                f"- MAE {level(p.get('mae'), unit)}, RMSE {level(p.get('rmse'), unit)}, "
                f"MAPE {share(p.get('mape_pct'))}, MASE {fmt(p.get('mase'), 3)} "
                f"(random-walk MAE {level(p.get('naive_mae'), unit)}; MASE < 1 beats 'no change')\n"
                f"- interval coverage: 80% {share(cov.get('80'))}, 95% {share(cov.get('95'))}")
    verdict = _backtest_verdict(p, zh)
    return text + (f"\n{verdict}" if verdict else "") + _source(p, zh)


def series_reliability(backtests: list[dict[str, Any]], zh: bool) -> str:
    """"Which forecast is more reliable?" over backtests of different series: ranked by MASE (each
    error against "no change" on its own series) and by MAPE (in per cent), both unit-free, unlike
    MAE; said when the two disagree and when none beat "no change"."""
    rows = [p for p in backtests if isinstance(p.get("mase"), int | float) and isinstance(p.get("mape_pct"), int | float)]
    if len(rows) < 2:
        return ""
    by_mase = sorted(rows, key=lambda p: p["mase"])
    by_mape = sorted(rows, key=lambda p: p["mape_pct"])
    sep = " < "
    mase = sep.join(f"{_name(p, zh)} {fmt(p['mase'], 3)}" for p in by_mase)
    mape = sep.join(f"{_name(p, zh)} {share(p['mape_pct'])}" for p in by_mape)
    same = by_mase[0] is by_mape[0]
    none = all(p["mase"] >= 1 for p in rows)
    if zh:
        text = (f"**哪个预测更可靠**（MAE 各用各的单位，不能直接比；下面两个指标可以比）：按 MASE（相对“不变”预测的误差）{mase}；"
                f"按 MAPE（百分比误差）{mape}。")
        text += f"两个指标都是{_name(by_mase[0], zh)}更好。" if same else "两个指标的结论不一致，没有哪一个明显更可靠。"
        if none:
            text += "不过它们的 MASE 都不小于 1：这段时期都没有比直接沿用最新值更好。"
        return text
    text = (f"**Which is more reliable** (MAE is in each series' own unit, so it does not compare; these two do): "
            f"by MASE (error against 'no change') {mase}; by MAPE (per cent error) {mape}. ")
    text += (f"Both measures favour {_name(by_mase[0], zh)}." if same
             else "The two measures disagree, so neither is clearly more reliable.")
    if none:
        text += " Neither beat 'no change', though: both MASEs are 1 or more."
    return text


def _backtest_verdict(p: dict[str, Any], zh: bool) -> str:
    """What the numbers mean: a MASE of 1.009 is a tie with "no change", not a skill, and an 80 %
    band that held 96.8 % of the outcomes was too wide (a forecast that oversold its uncertainty)."""
    out: list[str] = []
    mase = p.get("mase")
    if isinstance(mase, int | float):
        if abs(mase - 1) < 0.02:
            out.append("- 准确度与“不变”的随机游走不相上下（MASE 与 1 相差不到 0.02）。" if zh else
                       "- Accuracy is a tie with the 'no change' random walk (MASE within 0.02 of 1).")
        elif mase < 1:
            out.append(f"- 误差比“不变”预测小约 {100 * (1 - mase):.0f}%。" if zh else
                       f"- Errors about {100 * (1 - mase):.0f}% smaller than the 'no change' forecast.")
        else:
            out.append(f"- 误差比“不变”预测大约 {100 * (mase - 1):.0f}%：这段时期不如直接沿用最新值。" if zh else
                       f"- Errors about {100 * (mase - 1):.0f}% larger than the 'no change' forecast: "
                       "over this period simply keeping the latest value did better.")
    n = (p.get("origins") or {}).get("count")
    for lv, got in (p.get("coverage_pct") or {}).items():
        if not isinstance(got, int | float) or not isinstance(n, int) or n < 1:
            continue
        want = float(lv)
        # Two binomial standard errors (at least 5 points): closer than that is sampling noise.
        tol = max(5.0, 200 * ((want / 100) * (1 - want / 100) / n) ** 0.5)
        if got > want + tol:
            out.append(f"- {lv}% 区间偏宽：实际值落在区间内的比例是 {share(got)}，高于 {lv}%，区间高估了不确定性。"
                       if zh else
                       f"- The {lv}% band was too wide: {share(got)} of outcomes fell inside it, more than "
                       f"{lv}%, so it overstated the uncertainty.")
        elif got < want - tol:
            out.append(f"- {lv}% 区间偏窄：实际值落在区间内的比例只有 {share(got)}，低于 {lv}%，真实风险比区间显示的大。"
                       if zh else
                       f"- The {lv}% band was too narrow: only {share(got)} of outcomes fell inside it, less than "
                       f"{lv}%, so the real risk was larger than the band showed.")
    return "\n".join(out)


def method_ranking(results: list[dict[str, Any]], zh: bool) -> str:
    """Several backtests of one series: the table of methods by MASE, with interval coverage."""
    ranked = sorted((r for r in results if isinstance(r.get("mase"), int | float)), key=lambda r: r["mase"])
    if not ranked:
        return ""
    best = ranked[0]
    o, unit = best.get("origins", {}), localise(best, zh).get("unit", "")
    lines = [f"**{_name(best, zh)}** 各预测方法的回测（提前 {best.get('horizon')} 期，{o.get('count')} 个起点 "
             f"{o.get('first')} – {o.get('last')}，按 MASE 排序）：" if zh
             else f"**{_name(best, zh)}** forecasting methods backtested ({best.get('horizon')} periods ahead, "
             f"{o.get('count')} origins {o.get('first')} – {o.get('last')}, by MASE):",
             f"| 方法 | MASE | MAE（{unit}） | MAPE | 80% 覆盖率 | 95% 覆盖率 |" if zh
             else f"| method | MASE | MAE ({unit}) | MAPE | 80% coverage | 95% coverage |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in ranked:
        cov = r.get("coverage_pct", {})
        lines.append(f"| {r.get('method')} | {fmt(r.get('mase'), 3)} | {fmt(r.get('mae'), digits_of(unit))} | "
                     f"{share(r.get('mape_pct'))} | {share(cov.get('80'))} | {share(cov.get('95'))} |")
    if zh:
        lines.append(f"MASE 最低的是 {best.get('method')}（MASE < 1 表示优于“不变”的随机游走预测）；"
                     "覆盖率越接近 80% / 95%，区间越可信。差距小于约 0.02 时可视为不相上下。")
    else:
        lines.append(f"Lowest MASE: {best.get('method')} (below 1 beats the 'no change' random walk); "
                     "coverage close to 80% / 95% means honest intervals. Gaps under about 0.02 are a tie.")
    return "\n".join(lines) + _source(best, zh)


def chart(p: dict[str, Any], zh: bool) -> str:
    png, horizon = p.get("png"), p.get("forecast_horizon")
    # The tool's title is bilingual ("Iron ore … / 铁矿石…"): name the series in one language.
    title = cat.name(str(p.get("series")), zh) if p.get("series") else p.get("title")
    if p.get("compare"):
        other, scale = cat.name(str(p["compare"]), zh), p.get("scale")
        title = f"{title} 与 {other}（指数，{scale}）" if zh else f"{title} vs {other} (indexed, {scale})"
    if horizon:
        title = f"{title}（含 {horizon} 期预测）" if zh else f"{title}, with a {horizon}-period forecast"
    if zh:
        return f"图表「{title}」已保存为 PNG： {png}\n（网页可用 ECharts 配置 {p.get('echarts')} 渲染）"
    return f"Chart \"{title}\" saved as PNG: {png}\n(ECharts option for the web page: {p.get('echarts')})"


def report(p: dict[str, Any], zh: bool) -> str:
    if zh:
        return (f"报告已导出：{p.get('report')}（{p.get('sections')} 个问答，{p.get('figures')} 张图）。")
    sections, figures = p.get("sections"), p.get("figures")
    return (f"Report exported: {p.get('report')} ({sections} {'section' if sections == 1 else 'sections'}, "
            f"{figures} {'figure' if figures == 1 else 'figures'}).")


RENDERERS: dict[str, Callable[[dict[str, Any], bool], str]] = {
    "latest_price": latest,
    "price_history": history,
    "list_series": catalogue,
    "describe_series": describe,
    "relate_series": relate,
    "mill_margin": margin,
    "forecast_price": forecast,
    "backtest_forecast": backtest,
    "price_scenario": scenario,
    "make_chart": chart,
    "export_report": report,
}


def render(tool: str, text: str, zh: bool, *, seasonal: bool = False, focus: str | None = None,
           average: bool = False, why_wide: bool = False, moves: str | None = None,
           high_low: bool = False) -> str:
    p = payload_of(text)
    if not isinstance(p, dict):
        return text.strip()
    if tool == "forecast_price":
        return forecast(localise(p, zh), zh, focus, average=average, why_wide=why_wide)
    if tool == "describe_series" and (seasonal or moves or high_low):
        return describe(localise(p, zh), zh, seasonal=seasonal, moves=moves, high_low=high_low)
    fn = RENDERERS.get(tool, generic)
    return fn(localise(p, zh), zh)
