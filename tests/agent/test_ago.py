""""一年前", "three months ago": the day that long before today, not a horizon ahead nor the latest value.

"一年前铁矿石期货价格是多少" gave the latest price, "那一年前呢" after a spread a 312-day forecast. Today
is pinned; every expected number is read from the bundled series here.
"""

from __future__ import annotations

from typing import Any

import pytest

from orecast import market
from tests.agent.conftest import run_turn
from tests.agent.test_conversation import assert_number


@pytest.fixture(autouse=True)
def pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", "2026-12-07")  # a Monday: a year before is a Sunday


def _on(series: str, day: str) -> float:
    values = market.load_series(series)
    return float(values[values.index.to_period("D" if len(day) == 10 else "M") == day].iloc[0])


@pytest.mark.parametrize(("question", "named"), [
    ("一年前铁矿石期货价格是多少", "“一年前”是 2025-12-07（星期日"),
    # Iron ore's day is the daily futures', as for "上周五" (the World Bank's is a monthly average).
    ("iron ore price a year ago", "'a year ago' is 2025-12-07 (a Sunday"),
])
async def test_a_year_ago_is_that_day_with_the_trading_days_around_it(
    agent: Any, thread_id: str, question: str, named: str
) -> None:
    turn = await run_turn(agent, thread_id, question)
    assert [(c.name, c.args) for c in turn.calls] == [
        ("price_history", {"series": "dce_iron_ore_daily", "start": "2025-12-05", "end": "2025-12-08"})]
    assert named in turn.text
    assert_number(turn.text, _on("dce_iron_ore_daily", "2025-12-05"))
    assert f"{market.load_series('dce_iron_ore_daily').iloc[-1]:.2f}" not in turn.text  # not the latest


async def test_a_day_ago_past_the_data_is_answered_as_last_friday_is(agent: Any, thread_id: str) -> None:
    """"三个月前" (2026-09-07) after the data's end (2026-08-21): the nearest earlier day with data, said
    not to be that day, as "上周五" is answered; it was a forecast of that day."""
    turn = await run_turn(agent, thread_id, "三个月前螺纹钢多少钱")
    assert [(c.name, c.args) for c in turn.calls] == [("latest_price", {"series": "shfe_rebar_daily"})]
    assert "“三个月前”是 2026-09-07" in turn.text and "不是那天的价格" in turn.text
    assert_number(turn.text, _on("shfe_rebar_daily", "2026-08-21"))


@pytest.mark.parametrize(("question", "series", "month"), [
    ("半年前的PMI", "china_pmi_monthly", "2026-06"),
])
async def test_a_monthly_series_gives_the_month_of_that_day(
    agent: Any, thread_id: str, question: str, series: str, month: str
) -> None:
    turn = await run_turn(agent, thread_id, question)
    assert [(c.name, c.args) for c in turn.calls] == [
        ("price_history", {"series": series, "start": month, "end": month})]
    assert_number(turn.text, _on(series, month))


async def test_the_pmi_month_is_not_called_an_average_price(agent: Any, thread_id: str) -> None:
    turn = await run_turn(agent, thread_id, "半年前的PMI")
    assert "月度指数" in turn.text and "均价" not in turn.text


async def test_a_year_ago_after_a_spread_is_both_prices_and_their_spread_then(agent: Any, thread_id: str) -> None:
    await run_turn(agent, thread_id, "螺纹钢和热卷的价差最近多少？")
    turn = await run_turn(agent, thread_id, "那一年前呢")
    assert [c.name for c in turn.calls] == ["price_history", "price_history"]
    assert [c.args["series"] for c in turn.calls] == ["shfe_rebar_daily", "shfe_hrc_daily"]
    for day in ("2025-12-05", "2025-12-08"):
        spread = _on("shfe_rebar_daily", day) - _on("shfe_hrc_daily", day)
        assert f"{day}：{spread:+,.2f} 元/吨" in turn.text
    # and again, past the data's end: both at their last day, with the spread there
    turn = await run_turn(agent, thread_id, "三个月前呢")
    assert [(c.name, c.args["series"]) for c in turn.calls] == [
        ("latest_price", "shfe_rebar_daily"), ("latest_price", "shfe_hrc_daily")]
    spread = _on("shfe_rebar_daily", "2026-08-21") - _on("shfe_hrc_daily", "2026-08-21")
    assert f"2026-08-21）：{spread:+,.2f} 元/吨" in turn.text


@pytest.mark.parametrize("question", ["螺纹钢和热卷明年的价格", "rebar and hrc prices tomorrow"])
async def test_a_forecast_to_a_date_covers_every_series_named(agent: Any, thread_id: str, question: str) -> None:
    """It forecast the rebar alone and dropped the coil without a word."""
    turn = await run_turn(agent, thread_id, question)
    assert [c.args["series"] for c in turn.calls if c.name == "forecast_price"] == [
        "shfe_rebar_daily", "shfe_hrc_daily"]
