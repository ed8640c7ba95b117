"""Forecasts asked from today on data that ends earlier: the horizon the user asked for, and the
periods between the data's end and today said to be forecasts too.

The data's last dates are read from the bundled CSVs with pandas and the expected horizons counted
from them and the pinned "today"; the numbers are the engine's forecast for that horizon.
"""

from __future__ import annotations

import re
import uuid
from datetime import date
from pathlib import Path
from typing import Any

import chinese_calendar
import pandas as pd
import pytest

from orecast import market
from tests.agent.conftest import run_turn
from tests.agent.test_conversation import assert_number
from tests.agent.test_nowcast_bridge_answer import futures_months_after

TODAY = pd.Timestamp(date(2026, 12, 7))
DATA = Path(market.__file__).parent / "data"
CSV = {
    "iron_ore_wb_monthly": ("iron_ore_monthly_worldbank.csv", "iron_ore_price"),
    "dce_iron_ore_daily": ("dce_iron_ore_futures_daily.csv", "settle_cny_per_t"),
    "shfe_rebar_daily": ("shfe_rebar_futures_daily.csv", "settle_cny_per_t"),
}


@pytest.fixture(autouse=True)
def pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", TODAY.date().isoformat())


def last_date(series: str) -> pd.Timestamp:
    file, column = CSV[series]
    frame = pd.read_csv(DATA / file, parse_dates=["date"])
    return frame.loc[frame[column].notna() | frame["close_cny_per_t"].notna()
                     if "close_cny_per_t" in frame else frame[column].notna(), "date"].max()


def months(a: pd.Timestamp, b: pd.Timestamp) -> int:
    return (b.year - a.year) * 12 + b.month - a.month


def row(text: str, day: pd.Timestamp, fc: market.Forecast, zh: bool) -> None:
    """The forecast of `day` is a row of the answer: median with its unit, 80% and 95% ranges."""
    i = list(fc.mean.index).index(day)
    line = next((x for x in text.splitlines() if x.startswith(f"- {day.date()}")), "")
    assert line, f"no row for {day.date()}:\n{text}"
    for value in (fc.mean.iloc[i], fc.lower[80].iloc[i], fc.upper[80].iloc[i], fc.lower[95].iloc[i],
                  fc.upper[95].iloc[i]):
        assert_number(line, float(value))
    assert re.search(r"美元/干吨|元/吨" if zh else r"US\$/dmt|CNY/t", line), line


@pytest.mark.parametrize(("question", "n"), [
    ("预测未来3个月铁矿石价格", 3),
    ("Forecast iron ore for the next 3 months", 3),
    ("Forecast the World Bank iron ore price for the next 12 months", 12),
])
async def test_the_next_months_are_the_months_from_today(
    agent: Any, thread_id: str, question: str, n: int
) -> None:
    turn = await run_turn(agent, thread_id, question)
    zh = "铁" in question
    last = last_date("iron_ore_wb_monthly")
    first = TODAY.replace(day=1)  # this month's average is not known yet: it is the first asked
    asked = pd.date_range(first, periods=n, freq="MS")
    horizon = months(last, asked[-1])
    assert turn.call("forecast_price").args == {
        "series": "iron_ore_wb_monthly", "horizon": horizon, "method": "auto"}
    fc = market.forecast("iron_ore_wb_monthly", horizon)
    for day in asked:
        row(turn.text, day, fc, zh)
    gap = pd.date_range(last + pd.offsets.MonthBegin(1), first - pd.offsets.MonthBegin(1), freq="MS")
    assert len(gap) == months(last, first) - 1 > 0  # the data is that stale
    # The months the DCE futures traded in are carried over by their averages; the rest are forecasts.
    carried = futures_months_after(last)
    rest = gap[len(carried):]
    for part, words in ((carried, ("期货", "推算") if zh else ("futures", "carried over")),
                        (rest, ("本身也是预测",) if zh else ("forecasts too",))):
        span = f"{part[0].date()} 至 {part[-1].date()}" if zh else f"{part[0].date()} to {part[-1].date()}"
        assert any(span in line and all(w in line for w in words) for line in turn.text.splitlines()), turn.text
    assert str(last.date()) in turn.text and str(TODAY.date()) in turn.text
    for day in gap[:-1]:  # the months before today are summed up, not listed as the answer
        assert not re.search(rf"^- {day.date()}[:：]", turn.text, re.M), turn.text


def exchange_days(start: pd.Timestamp, end: pd.Timestamp) -> pd.DatetimeIndex:
    """DCE/SHFE trading days: weekdays less China's public holidays (chinese_calendar, to 2026)
    and, for 2027, the closures projected from the rules of the 2025-2026 schedules (New Year 1 Jan;
    除夕 2027-02-05 to the eighth day; 清明 5 Apr; 1-5 May; 端午 9 Jun; 中秋 15 Sep; 1-7 Oct)."""
    projected = {*pd.bdate_range("2027-02-05", "2027-02-12"), pd.Timestamp("2027-01-01"),
                 pd.Timestamp("2027-04-05"), *pd.bdate_range("2027-05-03", "2027-05-05"),
                 pd.Timestamp("2027-06-09"), pd.Timestamp("2027-09-15"),
                 *pd.bdate_range("2027-10-01", "2027-10-07")}
    return pd.DatetimeIndex([d for d in pd.bdate_range(start, end)
                             if d not in projected and d.date() not in chinese_calendar.holidays])


@pytest.mark.parametrize(("question", "series", "months", "weeks"), [
    ("预测未来6个月铁矿石期货价格", "dce_iron_ore_daily", 6, 0),
    ("Forecast rebar for the next 2 weeks", "shfe_rebar_daily", 0, 2),
    ("预测未来3个月螺纹钢期货价格", "shfe_rebar_daily", 3, 0),  # over the Spring Festival of 2027
])
async def test_the_next_trading_days_start_today(
    agent: Any, thread_id: str, question: str, series: str, months: int, weeks: int
) -> None:
    turn = await run_turn(agent, thread_id, question)
    last = last_date(series)
    gap = exchange_days(last + pd.Timedelta(days=1), TODAY - pd.Timedelta(days=1))
    end = TODAY + pd.DateOffset(months=months, weeks=weeks) - pd.Timedelta(days=1)
    asked = exchange_days(TODAY, end)
    n = len(gap) + len(asked)
    assert turn.call("forecast_price").args == {"series": series, "horizon": n, "method": "auto"}
    fc = market.forecast(series, n)
    assert list(fc.mean.index) == [*gap, *asked]  # trading days only: no weekend, no holiday
    assert pd.Timestamp("2026-10-01") not in fc.mean.index
    if months:  # the holidays skipped are named, and 2027's said to be projected
        assert re.search(r"春节 2027-02-05 至 2027-02-12" if "期货" in question else
                         r"Spring Festival 2027-02-05 to 2027-02-12", turn.text), turn.text
        assert re.search(r"尚未公布.*推算" if "期货" in question else r"not published yet.*projected",
                         turn.text)
    for day in (asked[0], asked[-1]):
        row(turn.text, day, fc, "期货" in question)
    assert f"({gap[0].date()} to {gap[-1].date()})" in turn.text or (
        f"（{gap[0].date()} 至 {gap[-1].date()}）" in turn.text)


@pytest.mark.parametrize(("question", "series", "month"), [
    ("2026年10月世界银行铁矿石价格是多少？", ["iron_ore_wb_monthly"], "2026-10"),
    ("What was the World Bank iron ore price in August 2026?", ["iron_ore_wb_monthly"], "2026-08"),
    ("上个月铁矿石期货均价是多少？", ["dce_iron_ore_daily"], "2026-11"),
    ("What was the rebar price last month?", ["shfe_rebar_daily"], "2026-11"),
    ("2026年10月铁矿石价格是多少？", ["dce_iron_ore_daily", "iron_ore_wb_monthly"], "2026-10"),
])
async def test_a_month_between_the_data_and_today_gets_the_nearest_earlier_month(
    agent: Any, thread_id: str, question: str, series: list[str], month: str
) -> None:
    # As a day past the data's end is answered (QA6: the month got a forecast, the day did not).
    turn = await run_turn(agent, thread_id, question)
    zh = "铁" in question
    assert [c.args["series"] for c in turn.calls] == series
    assert all(c.name in ("price_history", "describe_series") for c in turn.calls)
    for call, s in zip(turn.calls, series, strict=True):
        last = last_date(s)
        assert last < pd.Timestamp(month) <= pd.Timestamp(TODAY)  # after the data, not after today
        values = market.load_series(s)
        held = values[values.index.to_period("M") == last.to_period("M")]
        if s.endswith("_daily"):
            assert call.args == {"series": s, "start": f"{last:%Y-%m}-01", "end": f"{last.date()}"}
            assert_number(turn.text, float(held.mean()))
        else:
            assert call.args == {"series": s, "start": f"{last:%Y-%m}", "end": f"{last:%Y-%m}"}
            assert_number(turn.text, float(held.iloc[-1]))
        assert (f"数据只到 {last.date()}，没有 {month} 的数据" if zh else
                f"data ends on {last.date()}, so there is no data for {month}") in turn.text
    assert ("不是你问的那个月" if zh else "not the month you asked about") in turn.text


async def test_a_month_asked_to_be_forecast_still_is(agent: Any, thread_id: str) -> None:
    turn = await run_turn(agent, thread_id, "预测2026年10月铁矿石价格")
    last = last_date("iron_ore_wb_monthly")
    horizon = months(last, pd.Timestamp("2026-10-01"))
    assert [(c.name, c.args) for c in turn.calls] == [
        ("forecast_price", {"series": "iron_ore_wb_monthly", "horizon": horizon, "method": "auto"})]
    row(turn.text, pd.Timestamp("2026-10-01"), market.forecast("iron_ore_wb_monthly", horizon), True)


@pytest.mark.parametrize(("today", "question", "closed", "why"), [
    ("2026-09-30", "明天螺纹钢期货价格是多少？用naive方法", "2026-10-01", "交易所休市（国庆节）"),
    ("2026-12-11", "What will rebar be tomorrow? naive method", "2026-12-12", "a Saturday"),
])
async def test_tomorrow_without_trading_gets_the_next_trading_day(
    agent: Any, thread_id: str, monkeypatch: pytest.MonkeyPatch, today: str, question: str,
    closed: str, why: str
) -> None:
    monkeypatch.setenv("ORECAST_TODAY", today)
    turn = await run_turn(agent, thread_id, question)
    last = last_date("shfe_rebar_daily")
    after = exchange_days(pd.Timestamp(closed), pd.Timestamp(closed) + pd.Timedelta(days=10))[0]
    horizon = len(exchange_days(last + pd.Timedelta(days=1), after))
    assert [(c.name, c.args) for c in turn.calls] == [
        ("forecast_price", {"series": "shfe_rebar_daily", "horizon": horizon, "method": "naive"})]
    assert closed in turn.text and why in turn.text
    row(turn.text, after, market.forecast("shfe_rebar_daily", horizon, "naive"), "期货" in question)


async def test_a_period_that_opens_on_a_holiday_says_the_exchange_is_closed(agent: Any) -> None:
    """October 2027 opens with the (projected) National Day closure: said, and the rows start after."""
    first = exchange_days(pd.Timestamp("2027-10-01"), pd.Timestamp("2027-10-31"))[0]
    assert first == pd.Timestamp("2027-10-08")
    for question, note in (
        ("2027年10月螺纹钢期货价格预测，用naive方法", "2027-10-01 至 2027-10-07 交易所休市（国庆节，按规则推算）"),
        ("Forecast rebar for October 2027 with the naive method",
         "The exchange is closed on 2027-10-01 to 2027-10-07 (National Day, projected)"),
    ):
        turn = await run_turn(agent, str(uuid.uuid4()), question)
        assert note in turn.text
        assert re.search(rf"^- {first.date()}[:：]", turn.text, re.M)
