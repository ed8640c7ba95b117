"""Questions about the data itself that were answered with the help text or the whole history's
statistics: "周线数据" (the futures' weekly bars), "平均每天涨跌多少" (the mean daily change over the
last year of data) and "多久更新一次" (each series' frequency, last date and the edition bundled).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from orecast import market
from orecast.agent.offline import catalogue as cat
from orecast.agent.offline.compose import FREQ_ZH, UNIT_ZH, period_end
from orecast.market.catalog import get_spec
from orecast.market.loaders import _read_bundled_csv
from orecast.market.rolls import likely_rolls
from orecast.market.source_names import source_zh

# What each kind of question about the data says, in Chinese and English.
_ASKED = {
    "weekly": r"周线|周k|周度数据|每周(?:的)?(?:收盘|开盘|价格|行情|数据)|按周|\bweek(?:ly)? bars\b|"
              r"\bweekly (?:data|prices?|closes?|candles?|bars?|ohlc|chart|quotes?)\b",
    "daily_mean": r"平均每天|每天平均|日均涨跌|平均日涨跌|平均每日|每日平均|平均一天|一天平均|per day on average|"
                  r"average daily (?:change|move|return|gain|loss)|(?:change|move)s? on an average day|"
                  r"on average (?:each|per|a) (?:day|trading day)",
    "count": r"多少(?:条|个|行)(?:数据|观测|记录|样本)?|几条数据|数据量|样本量|(?:数据|观测|记录)(?:有)?多少(?:条|个|行)|"
             r"how many (?:data ?points|observations|rows|records|values|data)\b|how much data|number of (?:observations|data ?points|rows)",
    "updates": r"多久更新|多长时间更新|更新频率|更新一次|什么时候更新|何时更新|最后更新|最近更新|更新到哪|last updated|"
               r"how often .{0,30}updat|update frequency|when (?:was|were|is|are) .{0,30}updated|"
               r"how (?:fresh|current|up[- ]to[- ]date)",
}
_PATTERNS = {kind: re.compile(pattern, re.I) for kind, pattern in _ASKED.items()}
WEEKS_SHOWN = 8
OHLC = ("open_cny_per_t", "high_cny_per_t", "low_cny_per_t", "close_cny_per_t", "settle_cny_per_t")


def asks_weekly(text: str) -> bool:
    return bool(_PATTERNS["weekly"].search(text))


def asks_daily_mean(text: str) -> bool:
    return bool(_PATTERNS["daily_mean"].search(text)) and bool(re.search(r"涨|跌|变动|波动|change|move|return|gain|loss|rise|fall", text, re.I))


def asks_updates(text: str) -> bool:
    return bool(_PATTERNS["updates"].search(text))


def asks_count(text: str) -> bool:
    return bool(_PATTERNS["count"].search(text))


def count(series: str, start: str | None, end: str | None, zh: bool) -> str | None:
    """"螺纹钢有多少条数据", "2025年有多少个交易日": the series' observations (over the period asked),
    their first and last dates, from the data file; for futures, the days the settle is missing (the
    close stands in for it); a series that uses only part of its file says from when and why."""
    values = market.load_series(series)
    if start or end:
        values = values.loc[start or None:period_end(end or start) if (end or start) else None]
    if values.empty:
        return None
    facts = cat.catalogue()[series]
    name = cat.name(series, zh)
    first, last = values.index[0].date(), values.index[-1].date()
    frame = _bars(series)
    missing = int(frame["settle_cny_per_t"].loc[values.index[0]:values.index[-1]].isna().sum()) \
        if frame is not None else 0
    since = get_spec(series).first_date
    if zh:
        text = (f"**{name}**：{len(values):,} 个{FREQ_ZH.get(facts.frequency, facts.frequency)}观测，"
                f"从 {first} 到 {last}（本地数据文件，不会自己更新）。")
        if missing:
            text += f"其中 {missing} 天没有结算价，用当天的收盘价代替。"
        if since and not start:
            text += f"数据文件里还有 {since} 以前的值，但单位或口径不同，这个序列从 {since} 起算。"
        return text
    text = (f"**{name}**: {len(values):,} {facts.frequency} observations, from {first} to {last} (the local data "
            "file; it does not update itself).")
    if missing:
        text += f" On {missing} of those days the settle is missing and the day's close stands in for it."
    if since and not start:
        text += f" The file holds values before {since} too, in another unit or basis; this series starts there."
    return text


def _bars(series: str) -> pd.DataFrame | None:
    frame = _read_bundled_csv(get_spec(series).file)
    return frame if set(OHLC) <= set(frame.columns) else None


def weekly(series: str, start: str | None, end: str | None, zh: bool) -> tuple[str, dict[str, str]] | None:
    """The weekly bars (open, high, low, close, last settle; weeks ending Friday) of a futures series
    over [start, end], else its last `WEEKS_SHOWN` weeks; and the dates of the history to show."""
    frame = _bars(series)
    if frame is None:
        return None
    # The week before the period gives its first week's change.
    settles = frame["settle_cny_per_t"].resample("W-FRI").last().dropna().shift(1)
    if start or end:
        frame = frame.loc[start or None:end or None]
    if frame.empty:
        return None
    weeks = frame.resample("W-FRI").agg({"open_cny_per_t": "first", "high_cny_per_t": "max", "low_cny_per_t": "min",
                                          "close_cny_per_t": "last", "settle_cny_per_t": "last"}).dropna(how="all")
    days = frame.index.to_series().resample("W-FRI").agg(["first", "last"]).dropna()
    shown = weeks.iloc[-WEEKS_SHOWN:] if not (start or end) or len(weeks) > 3 * WEEKS_SHOWN else weeks
    if len(shown) > 3 * WEEKS_SHOWN:
        shown = shown.iloc[-3 * WEEKS_SHOWN:]
    unit = cat.catalogue()[series].unit
    u = UNIT_ZH.get(unit, unit) if zh else unit
    rows = []
    rolls = likely_rolls(series)
    for label, w in shown.iterrows():
        first, last = days.loc[label, "first"].date(), days.loc[label, "last"].date()
        change = ""
        prev = settles.get(label)
        if prev is not None and not np.isnan(prev):
            change = (f"，周涨跌 {(w['settle_cny_per_t'] / prev - 1) * 100:+.2f}%" if zh else
                      f", week {(w['settle_cny_per_t'] / prev - 1) * 100:+.2f}%")
        # A week with a roll day holds the jump to the next contract, which is no market move.
        if len(rolled := [d.date() for d in rolls if pd.Timestamp(first) <= d <= pd.Timestamp(last)]):
            change += (f"（含疑似换月日 {rolled[0]}，这一周的涨跌含换到下一个合约的价差）" if zh else
                       f" (includes a likely contract roll on {rolled[0]}: the jump to the next contract)")
        rows.append(
            f"- {first} – {last}：开 {w['open_cny_per_t']:,.2f}，高 {w['high_cny_per_t']:,.2f}，低 {w['low_cny_per_t']:,.2f}，"
            f"收 {w['close_cny_per_t']:,.2f}，结算 {w['settle_cny_per_t']:,.2f}{change}" if zh else
            f"- {first} – {last}: open {w['open_cny_per_t']:,.2f}, high {w['high_cny_per_t']:,.2f}, low "
            f"{w['low_cny_per_t']:,.2f}, close {w['close_cny_per_t']:,.2f}, settle {w['settle_cny_per_t']:,.2f}{change}")
    lo, hi = days.loc[shown.index[0], "first"].date(), days.loc[shown.index[-1], "last"].date()
    name = cat.name(series, zh)
    head = (f"**{name}周线**（{lo} 至 {hi}，{len(shown)} 周，按周五结束的自然周，由日度数据汇总：开盘为周内第一个交易日的开盘，"
            f"高低为周内最高最低，收盘和结算为周内最后一个交易日的；周涨跌按结算价对上一周；单位 {u}）：" if zh else
            f"**{name}, weekly bars** ({lo} to {hi}, {len(shown)} weeks ending Friday, built from the daily data: the "
            "week's first open, its high and low, its last close and settle; the week's change is settle to settle; "
            f"unit {u}):")
    if len(weeks) > len(shown):
        head = head[:-1] + (f"，只列出最近 {len(shown)} 周：" if zh else f"; the last {len(shown)} weeks only:")
    return head + "\n" + "\n".join(rows), {"start": lo.isoformat(), "end": hi.isoformat()}


def _daily_changes(series: str, values: pd.Series, inside: np.ndarray) -> tuple[pd.Series, pd.Series, int]:
    """Each day's change against the trading day before, in the unit and in %, for the days `inside`
    that are no roll day; and how many roll days `inside` held (a roll's jump is no market move)."""
    rolls = values.index.isin(likely_rolls(series))
    keep = inside & ~rolls
    change = values.diff()[keep].dropna()
    rel = ((values / values.shift(1) - 1) * 100)[keep].dropna()
    return change, rel, int((inside & rolls).sum())


def daily_mean(series: str, zh: bool) -> tuple[str, dict[str, str]] | None:
    """The mean daily change (signed and absolute, % and in the unit) over the last 12 months of the
    data, roll days left out; and the dates it covers."""
    values = market.load_series(series)
    first = values.index[-1] - pd.DateOffset(years=1)
    change, rel, rolled = _daily_changes(series, values, values.index > first)
    if len(change) < 20:
        return None
    unit = cat.catalogue()[series].unit
    u = UNIT_ZH.get(unit, unit) if zh else unit
    up, down = int((change > 0).sum()), int((change < 0).sum())
    span = (change.index[0].date(), change.index[-1].date())
    name = cat.name(series, zh)
    if zh:
        text = (f"**{name}平均每天涨跌**（默认取数据的最近一年：{span[0]} 至 {span[1]}，{len(change)} 个交易日，每天对前一个交易日的结算价）：\n"
                f"- 平均每天 {rel.mean():+.3f}%（{change.mean():+,.2f} {u}）（涨跌相抵后的净变动）\n"
                f"- 平均每天波动（不计方向）{rel.abs().mean():.3f}%（{change.abs().mean():,.2f} {u}）\n"
                f"- 上涨 {up} 天，下跌 {down} 天，持平 {len(change) - up - down} 天")
        if rolled:
            text += f"\n- 不计 {rolled} 个疑似换月日（连续合约换到下一个合约的价差，不是市场涨跌）"
        return text + "\n要看其他时期，可以问“2025年铁矿石期货平均每天涨跌多少”。", \
            {"start": span[0].isoformat(), "end": span[1].isoformat()}
    text = (f"**{name}, average daily change** (by default the data's last year: {span[0]} to {span[1]}, {len(change)} "
            "trading days, each settle against the one before):\n"
            f"- mean change {rel.mean():+.3f}% ({change.mean():+,.2f} {u}) a day (rises and falls netted)\n"
            f"- mean size of a day's move (either way) {rel.abs().mean():.3f}% ({change.abs().mean():,.2f} {u})\n"
            f"- {up} days up, {down} down, {len(change) - up - down} flat")
    if rolled:
        text += f"\n- {rolled} likely contract-roll days left out (the continuous contract's jump to the next contract, no market move)"
    return text, {"start": span[0].isoformat(), "end": span[1].isoformat()}


def period_daily_mean(series: str, start: str, end: str, zh: bool) -> tuple[str, dict[str, str]] | None:
    """As `daily_mean`, over a period asked for (its first change from the day before it)."""
    values = market.load_series(series)
    inside = (values.index >= pd.Timestamp(start)) & (values.index <= pd.Timestamp(period_end(end)))
    change, rel, rolled = _daily_changes(series, values, inside)
    if len(change) < 3:
        return None
    unit = cat.catalogue()[series].unit
    u = UNIT_ZH.get(unit, unit) if zh else unit
    span = (change.index[0].date(), change.index[-1].date())
    name = cat.name(series, zh)
    text = (f"**{name}平均每天涨跌**（{span[0]} 至 {span[1]}，{len(change)} 个交易日）：平均每天 {rel.mean():+.3f}%"
            f"（{change.mean():+,.2f} {u}），平均每天波动（不计方向）{rel.abs().mean():.3f}%（{change.abs().mean():,.2f} {u}）。"
            if zh else
            f"**{name}, average daily change** ({span[0]} to {span[1]}, {len(change)} trading days): {rel.mean():+.3f}% "
            f"({change.mean():+,.2f} {u}) a day; mean size of a day's move {rel.abs().mean():.3f}% ({change.abs().mean():,.2f} {u}).")
    if rolled:
        # The period's trading days less these: said, or the count reads as the period's days.
        text += (f"不计 {rolled} 个疑似换月日（连续合约换到下一个合约的价差，不是市场涨跌）。" if zh else
                 f" {rolled} likely contract-roll day{'s' if rolled > 1 else ''} left out (the continuous "
                 "contract's jump to the next contract, no market move).")
    return text, {"start": span[0].isoformat(), "end": span[1].isoformat()}


_EDITION = re.compile(r"(edition of|snapshot) (\d{4}-\d{2}-\d{2})")


def named_sources(text: str) -> list[str]:
    """The series of a source named without a series ("世界银行数据什么时候更新"): all of its series."""
    ids = list(cat.catalogue())
    if re.search(r"世界银行|世行|world bank|pink sheet", text, re.I):
        return [s for s in ids if s.endswith("_wb_monthly")]
    if re.search(r"期货|futures|大商所|上期所|\bdce\b|\bshfe\b", text, re.I):
        return [s for s in ids if s.startswith(("dce_", "shfe_"))]
    return []


def updates(series: list[str], zh: bool) -> str:
    """How often each bundled series (or the ones named) comes, its last date and the edition bundled."""
    facts = cat.catalogue()
    wanted = [s for s in series if s in facts] or list(facts)
    sources = {str(d["id"]): str(d.get("source", "")) for d in (i.to_dict() for i in market.list_series())}
    groups: dict[tuple[str, str, str], list[str]] = {}
    for s in wanted:
        groups.setdefault((facts[s].frequency, facts[s].end, sources.get(s, "")), []).append(s)
    lines = []
    for (freq, end, source), members in sorted(groups.items(), key=lambda g: ("daily", "monthly", "annual").index(g[0][0])
                                               if g[0][0] in ("daily", "monthly", "annual") else 9):
        names = [cat.name(s, zh) for s in members]
        shown = ("、" if zh else ", ").join(names[:4]) + (f" 等 {len(names)} 个" if zh and len(names) > 4 else
                                                           f" and {len(names) - 4} more" if len(names) > 4 else "")
        edition = _EDITION.search(source)
        got = (f"，本地这份是 {edition.group(2)} 的{'版本' if edition.group(1) == 'edition of' else '快照'}" if zh else
               f"; the copy here is the {'edition' if edition.group(1) == 'edition of' else 'snapshot'} of {edition.group(2)}") \
            if edition else ""
        src = source_zh(source) if zh else source.split(";")[0]
        lines.append(f"- {shown}：{FREQ_ZH.get(freq, freq)}数据，最新一期 {end}{got}（{src}）" if zh else
                     f"- {shown}: {freq} data, last value {end}{got} ({src})")
    if zh:
        return ("**数据的更新频率和最后日期**（按本地数据文件）：\n" + "\n".join(lines) +
                "\n本地数据不会自己更新：日度的期货每个交易日有新数据，月度的世界银行价格每月发布一次（上个月的均价），"
                "但这里只有上面日期为止的数据。运行 `orecast data update` 可以下载最新的公开数据，`orecast data status` 查看各序列的日期。")
    return ("**How often the data comes and how far it reaches** (from the files here):\n" + "\n".join(lines) +
            "\nThe local data does not update itself: the daily futures get a new value every trading day and the "
            "World Bank publishes each month's average once a month, but here the data stops at the dates above. "
            "`orecast data update` downloads the newest public data; `orecast data status` lists each series' dates.")
