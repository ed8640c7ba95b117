"""Answers a fourth QA pass found wrong, misleading or overconfident, asked as a user would.

Every expected number is recomputed here with pandas from the bundled CSVs (not through the
analyst), and "today" is pinned so the dates in the answers are the same on any day.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd
import pytest

import orecast.market
from orecast import market
from tests.agent.conftest import run_turn
from tests.agent.test_conversation import assert_number

TODAY = date(2026, 12, 7)
DATA = Path(orecast.market.__file__).parent / "data"


@pytest.fixture(autouse=True)
def pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", TODAY.isoformat())


def settle(file: str) -> pd.Series:
    frame = pd.read_csv(DATA / file, parse_dates=["date"], index_col="date")
    return frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"]).dropna()


def world_bank() -> pd.Series:
    frame = pd.read_csv(DATA / "iron_ore_monthly_worldbank.csv", parse_dates=["date"], index_col="date")
    return frame["iron_ore_price"].dropna()


async def test_a_backtest_says_what_its_numbers_mean(agent: Any, thread_id: str) -> None:
    """An 80 % band that held 96.8 % of the outcomes was reported without a word: it was too wide.
    The answer now gives the RMSE too, and says that a MASE of 1.009 is a tie with "no change"."""
    turn = await run_turn(agent, thread_id, "铁矿石期货未来5个交易日的预测准吗？回测一下")
    result = market.backtest("dce_iron_ore_daily", 5, "auto")
    table = result.table[result.table["step"] == 5]
    rmse = float(((table["yhat"] - table["y"]) ** 2).mean() ** 0.5)
    inside = float(((table["y"] >= table["lo-80"]) & (table["y"] <= table["hi-80"])).mean())
    assert_number(turn.text, rmse)
    assert "RMSE" in turn.text
    assert inside > 0.9  # the data's fact this test is about
    assert f"80% 区间偏宽：实际值落在区间内的比例是 {100 * inside:.2f}%" in turn.text
    assert "不相上下" in turn.text


def year_change(file: str, year: str) -> float:
    prices = settle(file).loc[year]
    return 100 * (prices.iloc[-1] / prices.iloc[0] - 1)


REBAR, HRC = "shfe_rebar_futures_daily.csv", "shfe_hot_rolled_coil_futures_daily.csv"
ORE, COKING_COAL = "dce_iron_ore_futures_daily.csv", "dce_coking_coal_futures_daily.csv"
NAMES = {
    REBAR: ("上期所螺纹钢期货（连续，结算价）", "SHFE rebar futures, continuous (settle)"),
    HRC: ("上期所热轧卷板期货（连续，结算价）", "SHFE hot-rolled coil futures, continuous (settle)"),
    ORE: ("大商所铁矿石期货（连续，结算价）", "DCE iron ore futures, continuous (settle)"),
}


@pytest.mark.parametrize(("question", "files", "year", "verdict"), [
    # Both rose in 2020: "which fell more" was answered "HRC rose most", as if one had fallen.
    ("2020年螺纹钢和热卷哪个跌得多？", (REBAR, HRC), "2020", "两者都上涨了，没有一个下跌；{}涨得最少"),
    ("Which fell more in 2020, iron ore futures or rebar?", (ORE, REBAR), "2020",
     "Neither fell: both rose; {} rose least"),
    # Both fell in 2024: the verdict named the one that fell least, not the one asked about.
    ("2024年螺纹钢和热卷哪个跌得多？", (REBAR, HRC), "2024", "两者都下跌了，{}跌得最多"),
])
async def test_which_fell_more_answers_the_direction_asked(
    agent: Any, thread_id: str, question: str, files: tuple[str, str], year: str, verdict: str
) -> None:
    turn = await run_turn(agent, thread_id, question)
    changes = {f: year_change(f, year) for f in files}
    for change in changes.values():
        assert f"{change:+.2f}%" in turn.text
    smaller = min(changes, key=changes.__getitem__)
    zh = "年" in question
    assert verdict.format(NAMES[smaller][0 if zh else 1]) in turn.text
    assert ("涨得最多" if zh else "rose most") not in turn.text


async def test_which_fell_more_when_only_one_fell(agent: Any, thread_id: str) -> None:
    """2026 to the data's end: iron ore fell, coking coal rose; "coking coal rose most" was the
    answer to "which fell more"."""
    turn = await run_turn(agent, thread_id, "2026年铁矿石期货和焦煤哪个跌得多？")
    ore, coal = year_change(ORE, "2026"), year_change(COKING_COAL, "2026")
    assert ore < 0 < coal
    assert f"只有大商所铁矿石期货（连续，结算价）（{ore:+.2f}%）下跌" in turn.text
    assert f"大商所焦煤期货（连续，结算价）（{coal:+.2f}%）上涨" in turn.text
    assert "涨得最多" not in turn.text


def latest(file: str) -> tuple[float, str]:
    prices = settle(file)
    return float(prices.iloc[-1]), prices.index[-1].date().isoformat()


@pytest.mark.parametrize(("question", "file", "level", "words"), [
    # The latest DCE settle is above 700: "涨到 700" is a fall; the answer said "跌到 700" silently.
    ("如果铁矿石涨到700元/吨，螺纹钢会怎样？", ORE, 700.0,
     "注意：你说“涨到 700.00 元/吨”，但铁矿石期货价格的最新值是 {last}（{day}），已经高于这个价位：到 700.00 元/吨 是下跌 {move}"),
    # Without 如果 it was taken for a price put forward: "700 元与最新值 707 元/吨相符".
    ("铁矿石涨到700元会怎样？", ORE, 700.0, "已经高于这个价位：到 700.00 元/吨 是下跌 {move}，不是上涨"),
    ("If rebar falls to 3200 CNY/t, what happens to iron ore?", REBAR, 3200.0,
     "Note: you said 'falls to 3,200.00 CNY/t', but the latest rebar futures price is {last} ({day}), "
     "below it: getting there is a rise of {move}, not a fall."),
])
async def test_a_level_the_other_way_from_the_latest_price_is_said_to_be_so(
    agent: Any, thread_id: str, question: str, file: str, level: float, words: str
) -> None:
    turn = await run_turn(agent, thread_id, question)
    value, day = latest(file)
    unit = "元/吨" if "年" in words or "元" in question else "CNY/t"
    expected = words.format(last=f"{value:,.2f} {unit}", day=day, move=f"{abs(100 * (level / value - 1)):.2f}%")
    assert expected in turn.text
    assert turn.call("price_scenario").args["level"] == level
    assert "相符" not in turn.text and "matches" not in turn.text


def band_probability(forecast: dict, target: float, up: bool) -> float:
    """P(price ≥ target) (or ≤) on the last row, log-normal from the 80 % band."""
    row = forecast["forecast"][-1]
    sd = (np.log(row["hi_80"]) - np.log(row["lo_80"])) / (2 * NormalDist().inv_cdf(0.9))
    below = NormalDist(float(np.log(row["mean"])), float(sd)).cdf(float(np.log(target)))
    return 1 - below if up else below


@pytest.mark.parametrize(("question", "target", "up"), [
    # Answered with the World Bank's US$ forecast: 800 元 was never set against anything.
    ("铁矿石会涨到800元吗？", 800.0, True),
    # Answered "600 yuan does not match the latest price" — a claim check of a target.
    ("What is the probability iron ore falls below 600 CNY/t in 3 months?", 600.0, False),
])
async def test_a_price_target_is_set_against_a_forecast_in_its_own_unit(
    agent: Any, thread_id: str, question: str, target: float, up: bool
) -> None:
    turn = await run_turn(agent, thread_id, question)
    call = turn.call("forecast_price")
    assert call.args["series"] == "dce_iron_ore_daily"
    value, day = latest(ORE)
    move = f"{abs(100 * (target / value - 1)):.2f}%"
    forecast = market.forecast("dce_iron_ore_daily", call.args["horizon"], call.args["method"]).to_dict()
    chance = band_probability(forecast, target, up)
    row = forecast["forecast"][-1]
    if "年" in question or "吗" in question:
        assert f"目标 {target:,.2f} 元/吨 较最新值 {value:,.2f} 元/吨（{day}）{'高' if up else '低'} {move}" in turn.text
        assert f"{row['date']} 那天价格在 {target:,.2f} 元/吨 {'以上' if up else '以下'}的概率约 {100 * chance:.0f}%" in turn.text
    else:
        assert f"The target {target:,.2f} CNY/t is {move} {'above' if up else 'below'}" in turn.text
        assert f"{'at or above' if up else 'at or below'} {target:,.2f} CNY/t on {row['date']} is about {100 * chance:.0f}%" in turn.text
    assert "not a judgement" in turn.text or "不是判断" in turn.text
    assert "does not match" not in turn.text and "不符" not in turn.text


@pytest.mark.parametrize(("question", "file", "day", "why"), [
    # Answered "dce_iron_ore_daily has no data between 2024-06-08 and 2024-06-08", as if the data had a hole.
    ("铁矿石期货2024年6月8日的价格？", ORE, "2024-06-08", "是星期六，不交易"),
    ("大商所铁矿石期货2025年10月1日收盘价是多少？", ORE, "2025-10-01", "交易所休市（国庆节）"),
    ("What was the rebar price on 2024-10-03?", REBAR, "2024-10-03", "is an exchange holiday (National Day)"),
])
async def test_a_day_the_exchange_is_closed_says_why_and_shows_the_days_around_it(
    agent: Any, thread_id: str, question: str, file: str, day: str, why: str
) -> None:
    turn = await run_turn(agent, thread_id, question)
    prices = settle(file)
    when = pd.Timestamp(day)
    assert when not in prices.index
    before, after = prices[:when].iloc[-1:], prices[when:].iloc[:1]
    assert f"{day} {why}" in turn.text
    for part in (before, after):
        assert part.index[0].date().isoformat() in turn.text
        assert f"{part.iloc[0]:,.2f}" in turn.text
    assert "没有数据" not in turn.text and "no data" not in turn.text
    if "收盘" in question:  # the prices are settles: said, not passed off as closes
        assert "是结算价" in turn.text


@pytest.mark.parametrize(("question", "series"), [
    # "美元/吨" holds "元/吨": the dollar claim went to the yuan futures and was never checked.
    ("铁矿石价格是100美元/吨对吗？", ["iron_ore_wb_monthly"]),
    # Only the first figure was checked; the dollar one was dropped.
    ("铁矿石价格是700元/吨还是100美元/干吨？", ["dce_iron_ore_daily", "iron_ore_wb_monthly"]),
    # A price asked in US$/dmt led with the yuan futures.
    ("铁矿石价格是多少美元/干吨？", ["iron_ore_wb_monthly"]),
])
async def test_a_price_in_dollars_is_the_world_bank_price(
    agent: Any, thread_id: str, question: str, series: list[str]
) -> None:
    turn = await run_turn(agent, thread_id, question)
    assert [c.args["series"] for c in turn.calls if c.name == "latest_price"] == series
    wb = world_bank()
    assert f"{wb.iloc[-1]:,.2f} 美元/干吨（{wb.index[-1].date().isoformat()}）" in turn.text
    if "100美元" in question:
        assert abs(100 / wb.iloc[-1] - 1) > 0.01
        assert (f"你说的 100.00 美元与铁矿石价格（世界银行，CFR中国）的最新值 {wb.iloc[-1]:,.2f} 美元/干吨"
                f"（{wb.index[-1].date().isoformat()}）不符") in turn.text
    if "700元" in question:
        value, day = latest(ORE)
        assert f"你说的 700.00 元与大商所铁矿石期货（连续，结算价）的最新值 {value:,.2f} 元/吨（{day}）相符" in turn.text


@pytest.mark.parametrize(("question", "file", "month"), [
    # "去年12月" was read as all of last year: the 2025 average (100.18) stood for December's (104.59).
    ("去年12月铁矿石均价", None, "2025-12"),
    ("去年十二月螺纹钢均价是多少？", REBAR, "2025-12"),
    ("今年3月铁矿石期货均价", ORE, "2026-03"),
])
async def test_a_month_of_last_year_is_that_month(agent: Any, thread_id: str, question: str,
                                                  file: str | None, month: str) -> None:
    turn = await run_turn(agent, thread_id, question)
    prices = world_bank() if file is None else settle(file)
    assert turn.calls[0].args["start"] == turn.calls[0].args["end"] == month
    assert_number(turn.text, float(prices.loc[month].mean()))
    year = prices.loc[month[:4]].mean()
    assert f"{year:,.2f}" not in turn.text or abs(year - prices.loc[month].mean()) < 0.005


def pmi() -> pd.Series:
    frame = pd.read_csv(DATA / "china_nbs_manufacturing_pmi_monthly.csv", parse_dates=["date"], index_col="date")
    return frame["china_nbs_manufacturing_pmi"]


@pytest.mark.parametrize("question", ["PMI在2025年有几个月高于50？", "China PMI history in 2025"])
async def test_a_pmi_history_counts_points_and_months_above_50(agent: Any, thread_id: str, question: str) -> None:
    """The PMI's history said "区间涨跌 +2.04%" for 49.1 → 50.1 (a diffusion index moves in points)
    and never answered how many months were above 50."""
    turn = await run_turn(agent, thread_id, question)
    year = pmi().loc["2025"]
    change = year.iloc[-1] - year.iloc[0]
    above, below = int((year > 50).sum()), int((year < 50).sum())
    if "年" in question:
        assert f"区间涨跌 {change:+.2f} 个点" in turn.text
        assert f"{len(year)} 个月中 {above} 个月高于 50（扩张），{below} 个月低于 50（收缩）" in turn.text
    else:
        assert f"change {change:+.2f} points" in turn.text
        assert f"of {len(year)} months, {above} above 50 (expansion), {below} below 50 (contraction)" in turn.text
    assert f"{100 * (year.iloc[-1] / year.iloc[0] - 1):+.2f}%" not in turn.text


def usd_cnh() -> pd.Series:
    return pd.read_csv(DATA / "usd_cnh_daily.csv", parse_dates=["date"], index_col="date")["usd_cnh"]


CONVERSIONS = {  # question: (amount, converted to yuan?)
    # Answered "100 美元与最新值 108.64 美元/干吨不符": a conversion read as a claim.
    "铁矿石价格100美元/吨相当于多少元/吨？": (100.0, True),
    # Out of scope ("I only answer questions about iron ore …").
    "Convert 108 USD/dmt to yuan per tonne": (108.0, True),
    "700元/吨折合多少美元？": (700.0, False),
}


@pytest.mark.parametrize("question", CONVERSIONS)
async def test_a_conversion_is_the_arithmetic_at_the_latest_rate_with_what_it_is_not(
    agent: Any, thread_id: str, question: str
) -> None:
    amount, to_yuan = CONVERSIONS[question]
    turn = await run_turn(agent, thread_id, question)
    fx = usd_cnh()
    rate, day = float(fx.iloc[-1]), fx.index[-1].date().isoformat()
    out = amount * rate if to_yuan else amount / rate
    assert f"{rate:.4f}" in turn.text and day in turn.text
    assert f"{out:,.2f}" in turn.text
    assert ("只是货币换算" in turn.text) or ("currency conversion only" in turn.text)
    assert "不符" not in turn.text and "only answer questions" not in turn.text


async def test_a_pmi_target_is_in_points(agent: Any, thread_id: str) -> None:
    """"PMI above 50" was "1.63% above the latest 49.20": a diffusion index moves in points."""
    turn = await run_turn(agent, thread_id, "What's the chance PMI goes above 50 next month?")
    last = pmi().iloc[-1]
    assert turn.call("forecast_price").args["series"] == "china_pmi_monthly"
    assert f"The target 50.00 index (50 = no change) is {50 - last:.2f} points above" in turn.text
    assert f"{100 * (50 / last - 1):.2f}%" not in turn.text
    assert "the chance the index is at or above" in turn.text


@pytest.mark.parametrize(("question", "tool"), [
    # Answered with the latest price: "in 2 years" was not read as a horizon.
    ("What will iron ore be worth in 2 years?", "forecast_price"),
    # Answered with the latest price; "bull or bear" already got the statistics.
    ("Is the iron ore market bullish or bearish?", "describe_series"),
])
async def test_questions_about_the_future_and_the_regime_get_their_tool(
    agent: Any, thread_id: str, question: str, tool: str
) -> None:
    turn = await run_turn(agent, thread_id, question)
    assert [c.name for c in turn.calls] == [tool]
    if tool == "forecast_price":
        months = turn.calls[0].args["horizon"]
        last = world_bank().index[-1]
        # 24 months counted from today's month: December 2026 to November 2028.
        assert last + pd.DateOffset(months=months) == pd.Timestamp(TODAY.replace(day=1)) + pd.DateOffset(months=23)


async def test_which_fell_more_without_a_period_compares_the_last_year(agent: Any, thread_id: str) -> None:
    """No period named: two latest prices were shown and the question was not answered."""
    turn = await run_turn(agent, thread_id, "哪个跌得多，铁矿石期货还是螺纹钢？")
    changes = {}
    for file in (ORE, REBAR):
        prices = settle(file)
        before = prices[: prices.index[-1] - pd.DateOffset(years=1)]
        changes[file] = 100 * (prices.iloc[-1] / before.iloc[-1] - 1)
        assert f"{changes[file]:+.2f}%（{before.index[-1].date().isoformat()} 至 {prices.index[-1].date()}）" in turn.text
    assert "你没有说时期" in turn.text
    fell_most = min(changes, key=changes.__getitem__)
    assert all(c < 0 for c in changes.values())
    assert f"两者都下跌了，{NAMES[fell_most][0]}跌得最多" in turn.text


@pytest.mark.parametrize("question", ["你的数据更新到什么时候？", "How recent is your data?"])
async def test_how_recent_the_data_is_lists_each_series_last_date(
    agent: Any, thread_id: str, question: str
) -> None:
    """Answered "I only answer questions about iron ore …": the data's end is a fair question."""
    turn = await run_turn(agent, thread_id, question)
    assert [c.name for c in turn.calls] == ["list_series"]
    assert f"{world_bank().index[-1].date()}" in turn.text
    assert f"{settle(ORE).index[-1].date()}" in turn.text
    assert f"{usd_cnh().index[-1].date()}" in turn.text


@pytest.mark.parametrize(("question", "series", "first", "last"), [
    # On 2026-12-07 "下个月" was December (this month) and "下周" the week of 12-07 (this week).
    ("下个月铁矿石价格预测", "iron_ore_wb_monthly", "2027-01-01", "2027-01-01"),
    ("铁矿石期货下周的价格预测", "dce_iron_ore_daily", "2026-12-14", "2026-12-18"),
    ("Forecast rebar for next month", "shfe_rebar_daily", "2027-01-04", "2027-01-29"),
])
async def test_next_month_and_next_week_are_the_calendar_periods_after_this_one(
    agent: Any, thread_id: str, question: str, series: str, first: str, last: str
) -> None:
    turn = await run_turn(agent, thread_id, question)
    call = turn.call("forecast_price")
    assert call.args["series"] == series
    forecast = market.forecast(series, call.args["horizon"], call.args["method"]).to_dict()
    assert forecast["forecast"][-1]["date"] == last  # the last trading day (month) asked
    assert re.search(rf"^- {first}[:：]", turn.text, re.M)
    this = pd.Timestamp(TODAY).date().isoformat()
    assert not re.search(rf"^- {this}[:：]", turn.text, re.M)  # this week / month is not the answer


async def test_next_month_as_a_follow_up_forecasts_the_series_talked_about(agent: Any, thread_id: str) -> None:
    await run_turn(agent, thread_id, "铁矿石期货价格")
    turn = await run_turn(agent, thread_id, "那下个月呢？")
    call = turn.call("forecast_price")
    assert call.args["series"] == "dce_iron_ore_daily"
    forecast = market.forecast("dce_iron_ore_daily", call.args["horizon"], call.args["method"]).to_dict()
    assert forecast["forecast"][-1]["date"] == "2027-01-29"


MARGINS = {  # question: the steel product the margin is of
    # "历史最低是什么时候" got the lowest value and no date.
    "螺纹钢的钢厂利润历史最低是什么时候？": REBAR,
    "HRC mill margin now?": HRC,
}


@pytest.mark.parametrize("question", MARGINS)
async def test_the_mill_margin_gives_the_days_of_its_extremes(agent: Any, thread_id: str, question: str) -> None:
    product = MARGINS[question]
    turn = await run_turn(agent, thread_id, question)
    both = pd.concat([settle(product), settle(ORE), settle("dce_coke_futures_daily.csv")], axis=1,
                     join="inner").dropna()
    margin = both.iloc[:, 0] - 1.6 * both.iloc[:, 1] - 0.5 * both.iloc[:, 2]
    margin = margin[margin.index >= settle(ORE).index[0]]
    for value, day in ((margin.min(), margin.idxmin()), (margin.max(), margin.idxmax())):
        unit = "元/吨" if "年" in question or "利润" in question else "CNY/t"
        pair = f"{value:,.2f} {unit}（{day.date()}）" if unit == "元/吨" else f"{value:,.2f} {unit} ({day.date()})"
        assert pair in turn.text


RATIOS = {  # question: (numerator, denominator) files; both were answered with two prices, no ratio
    "铁矿石和螺纹钢的比价是多少？": (ORE, REBAR),
    "What's the iron ore to coking coal ratio?": (ORE, COKING_COAL),
}


@pytest.mark.parametrize("question", RATIOS)
async def test_a_ratio_is_computed_in_one_unit(agent: Any, thread_id: str, question: str) -> None:
    top, bottom = RATIOS[question]
    turn = await run_turn(agent, thread_id, question)
    # The ore in yuan (DCE), not the World Bank's dollars: a ratio across currencies means nothing.
    assert [c.args["series"] for c in turn.calls][0] == "dce_iron_ore_daily"
    (a, day), (b, _) = latest(top), latest(bottom)
    assert f"{a / b:.4f}" in turn.text and f"{b / a:.4f}" in turn.text and day in turn.text


async def test_an_amount_in_yuan_is_the_yuan_price_not_the_exchange_rate(agent: Any, thread_id: str) -> None:
    """"Is iron ore at 700 yuan?" read "yuan" as USD/CNH: the World Bank dollar price and the
    exchange rate came back, and the 700 yuan were checked against neither."""
    turn = await run_turn(agent, thread_id, "Is iron ore at 700 yuan?")
    assert [c.args["series"] for c in turn.calls] == ["dce_iron_ore_daily"]
    value, day = latest(ORE)
    assert abs(700 / value - 1) < 0.01
    assert f"The 700.00 yuan you mention matches the latest DCE iron ore futures, continuous (settle), " \
           f"{value:,.2f} CNY/t ({day})" in turn.text
