"""Follow-ups that name their own period ("2026上半年铁矿石", "那2025年下半年呢", "2024年3月呢")
after a price or a forecast: that period's history, as the same words get in a fresh thread.

Asked on Monday 2026-12-07. Every expected number is recomputed with pandas from the bundled CSVs.
"""

from __future__ import annotations

import uuid
from typing import Any

import pandas as pd

from orecast.agent.offline.intents import parse
from tests.agent.conftest import run_turn
from tests.agent.test_answers_qa5 import DATA, _settles, _wb_iron_ore, pinned_today

__all__ = ["pinned_today"]  # the autouse fixture that pins today to 2026-12-07


def _ends(values: pd.Series, start: str, end: str) -> tuple[str, str]:
    inside = values[start:end]
    return f"{float(inside.iloc[0]):,.2f}", f"{float(inside.iloc[-1]):,.2f}"


async def _calls(agent: Any, *questions: str) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The last question's calls and answer, asked after the others in one thread."""
    thread = str(uuid.uuid4())
    for text in questions[:-1]:
        await run_turn(agent, thread, text)
    turn = await run_turn(agent, thread, questions[-1])
    return [(c.name, dict(c.args)) for c in turn.calls], turn.text


async def _one_call(agent: Any, questions: tuple[str, ...], tool: str, series: str, start: str, end: str) -> str:
    """The answer to the last question, asked after the others, checked to be one call of `tool`."""
    calls, text = await _calls(agent, *questions)
    assert calls == [(tool, {"series": series, "start": start, "end": end})]
    return text


async def test_a_past_half_year_after_a_rebar_verdict_is_its_history(agent: Any) -> None:
    # Was: forecast_price(iron_ore_wb_monthly, horizon 12): "上半年" read as "半年" ahead.
    fresh, _ = await _calls(agent, "2026上半年铁矿石")
    for before in ("上周螺纹钢涨了还是跌了", "螺纹钢价格"):
        calls, text = await _calls(agent, before, "2026上半年铁矿石")
        assert calls == fresh
        assert [c[0] for c in calls] == ["price_history", "price_history"]
        assert {c[1]["series"] for c in calls} == {"iron_ore_wb_monthly", "dce_iron_ore_daily"}
        first, last = _ends(_settles("dce_iron_ore_futures_daily.csv"), "2026-01", "2026-06")
        assert f"起点 {first} 元/吨，终点 {last} 元/吨" in text


async def test_a_past_half_year_after_a_forecast_is_its_history(agent: Any) -> None:
    # Was: the forecast again, 12 months ahead.
    text = await _one_call(agent, ("铁矿石未来三个月预测", "2025上半年铁矿石"), "price_history", "iron_ore_wb_monthly", "2025-01", "2025-06")
    first, last = _ends(_wb_iron_ore(), "2025-01", "2025-06")
    assert f"起点 {first} 美元/干吨" in text and f"{last} 美元/干吨" in text
    assert "预测" not in text.split("\n")[0]
    text = await _one_call(agent, ("iron ore forecast for next 6 months", "what about the first half of 2025"), "price_history", "iron_ore_wb_monthly", "2025-01", "2025-06")
    assert f"from {first} US$/dmt to {last} US$/dmt" in text


async def test_the_other_half_after_a_half_year_average_is_its_average(agent: Any) -> None:
    # Was: a forecast 12 months ahead.
    text = await _one_call(agent, ("2025年上半年铁矿石均价", "那2025年下半年呢"), "describe_series", "iron_ore_wb_monthly", "2025-07", "2025-12")
    mean = float(_wb_iron_ore()["2025-07":"2025-12"].mean())
    assert f"均值 {mean:,.2f} 美元/干吨" in text


async def test_a_month_of_a_year_after_a_price_is_that_month(agent: Any) -> None:
    # Was: "2024年3月" read as 3 months ahead, a forecast of 127 trading days.
    text = await _one_call(agent, ("螺纹钢2025年走势", "2024年3月呢"), "price_history", "shfe_rebar_daily", "2024-03", "2024-03")
    first, last = _ends(_settles("shfe_rebar_futures_daily.csv"), "2024-03", "2024-03")
    assert f"起点 {first} 元/吨，终点 {last} 元/吨" in text
    await _one_call(agent, ("铁矿石价格", "2025年12月呢"), "price_history", "iron_ore_wb_monthly", "2025-12", "2025-12")


async def test_a_past_half_year_after_a_coke_price_is_cokes(agent: Any) -> None:
    text = await _one_call(agent, ("焦炭价格", "2025年上半年呢"), "price_history", "dce_coke_daily", "2025-01", "2025-06")
    first, last = _ends(_settles("dce_coke_futures_daily.csv"), "2025-01", "2025-06")
    assert f"起点 {first} 元/吨，终点 {last} 元/吨" in text


def test_half_a_year_ahead_is_still_a_horizon() -> None:
    assert parse("未来半年铁矿石").horizon == (6, "month")
    assert parse("铁矿石未来3个月").horizon == (3, "month")
    assert parse("2026上半年铁矿石").horizon is None
    assert parse("2024年3月呢").horizon is None


async def test_a_quarter_or_half_without_a_year_takes_the_year_asked_before(agent: Any) -> None:
    # Was: out of scope ("三季度呢", "and Q3?") or a forecast 188 days ahead ("那下半年呢").
    rebar = _settles("shfe_rebar_futures_daily.csv")
    text = await _one_call(agent, ("2025年一季度螺纹钢均价", "三季度呢"), "describe_series", "shfe_rebar_daily", "2025-07", "2025-09")
    assert f"均值 {float(rebar['2025-07':'2025-09'].mean()):,.2f} 元/吨" in text
    text = await _one_call(agent, ("螺纹钢2025年走势", "一季度呢"), "price_history", "shfe_rebar_daily", "2025-01", "2025-03")
    first, last = _ends(rebar, "2025-01", "2025-03")
    assert f"起点 {first} 元/吨，终点 {last} 元/吨" in text
    text = await _one_call(agent, ("2025年上半年铁矿石期货走势", "那下半年呢"), "price_history", "dce_iron_ore_daily", "2025-07", "2025-12")
    first, last = _ends(_settles("dce_iron_ore_futures_daily.csv"), "2025-07", "2025-12")
    assert f"起点 {first} 元/吨，终点 {last} 元/吨" in text
    text = await _one_call(agent, ("iron ore average in Q1 2025", "and Q3?"), "describe_series", "iron_ore_wb_monthly", "2025-07", "2025-09")
    assert f"{float(_wb_iron_ore()['2025-07':'2025-09'].mean()):,.2f} US$/dmt" in text


async def test_a_month_without_a_year_takes_the_year_asked_before(agent: Any) -> None:
    # Was: February 2026 (the latest February), said to be assumed, after a question about 2025.
    text = await _one_call(agent, ("2025年1月铁矿石均价", "2月呢"), "describe_series", "iron_ore_wb_monthly", "2025-02", "2025-02")
    assert f"{float(_wb_iron_ore()['2025-02'].iloc[0]):,.2f} 美元/干吨" in text
    assert "没有说年份" not in text


async def test_a_half_without_a_year_after_a_price_is_this_years(agent: Any) -> None:
    # Was: a forecast 12 months ahead ("上半年" read as "半年").
    fresh, _ = await _calls(agent, "2026上半年铁矿石")
    calls, _ = await _calls(agent, "铁矿石价格", "上半年呢")
    assert calls == fresh


async def test_same_period_last_year_is_the_period_asked_a_year_earlier(agent: Any) -> None:
    # Was: the latest price against a year before it.
    text = await _one_call(agent, ("2025年二季度铁矿石均价", "去年同期呢"), "describe_series", "iron_ore_wb_monthly", "2024-04", "2024-06")
    assert f"均值 {float(_wb_iron_ore()['2024-04':'2024-06'].mean()):,.2f} 美元/干吨" in text
    await _one_call(agent, ("2026上半年铁矿石", "去年同期呢"), "price_history", "iron_ore_wb_monthly", "2025-01", "2025-06")


async def test_switch_to_another_series_keeps_the_period(agent: Any) -> None:
    # Was: rebar's latest price; "换成螺纹钢" already kept the period.
    text = await _one_call(agent, ("iron ore average in H1 2025", "switch to rebar"), "describe_series", "shfe_rebar_daily", "2025-01", "2025-06")
    mean = float(_settles("shfe_rebar_futures_daily.csv")["2025-01":"2025-06"].mean())
    assert f"{mean:,.2f} CNY/t" in text


def test_a_seasonal_quarter_is_not_one_quarter() -> None:
    q = parse("螺纹钢一季度通常涨还是跌")
    assert "seasonal" in q.intents and not q.start


async def test_a_period_after_two_prices_is_both_series_history(agent: Any) -> None:
    # Was: rebar's history alone after the HRC and rebar prices.
    calls, text = await _calls(agent, "热卷和螺纹钢价差", "2025年上半年呢")
    assert calls == [("price_history", {"series": s, "start": "2025-01", "end": "2025-06"})
                     for s in ("shfe_hrc_daily", "shfe_rebar_daily")]
    for file in ("shfe_hot_rolled_coil_futures_daily.csv", "shfe_rebar_futures_daily.csv"):
        first, last = _ends(_settles(file), "2025-01", "2025-06")
        assert f"起点 {first} 元/吨，终点 {last} 元/吨" in text


async def test_a_period_set_against_the_one_before_is_both_side_by_side(agent: Any) -> None:
    # Was: nothing ("和一季度比哪个高"), or only the period just named.
    rebar = _settles("shfe_rebar_futures_daily.csv")
    q1, q2 = (float(rebar[a:b].mean()) for a, b in (("2025-01", "2025-03"), ("2025-04", "2025-06")))
    calls, text = await _calls(agent, "螺纹钢2025年一季度均价", "二季度呢", "和一季度比哪个高")
    assert calls == [("describe_series", {"series": "shfe_rebar_daily", "start": a, "end": b})
                     for a, b in (("2025-01", "2025-03"), ("2025-04", "2025-06"))]
    assert f"后者比前者 {(q2 / q1 - 1) * 100:+.2f}%" in text
    calls, _ = await _calls(agent, "螺纹钢2025年均价", "和2024年比呢")
    assert [c[1]["start"] for c in calls] == ["2024", "2025"]
    calls, _ = await _calls(agent, "iron ore average in Q2 2025", "compared with Q1?")
    assert [(c[1]["start"], c[1]["end"]) for c in calls] == [("2025-01", "2025-03"), ("2025-04", "2025-06")]


async def test_the_same_period_of_another_year_is_that_period_then(agent: Any) -> None:
    # Was: the whole of 2024 ("2024年同期呢") and a forecast 18 months ahead ("a year" a horizon).
    pmi = pd.read_csv(DATA / "china_nbs_manufacturing_pmi_monthly.csv", index_col="date", parse_dates=True)
    text = await _one_call(agent, ("PMI 2025年上半年", "2024年同期呢"), "price_history", "china_pmi_monthly",
                           "2024-01", "2024-06")
    first, last = _ends(pmi["china_nbs_manufacturing_pmi"].dropna(), "2024-01", "2024-06")
    assert f"起点 {first}" in text and f"终点 {last}" in text
    text = await _one_call(agent, ("iron ore Q3 2025 average", "what about the same quarter a year earlier?"),
                           "describe_series", "iron_ore_wb_monthly", "2024-07", "2024-09")
    assert f"{float(_wb_iron_ore()['2024-07':'2024-09'].mean()):,.2f} US$/dmt" in text
    await _one_call(agent, ("螺纹钢2025年三季度均价", "前年同期呢"), "describe_series", "shfe_rebar_daily",
                    "2023-07", "2023-09")


async def test_a_part_of_a_year_without_a_year_says_which_year(agent: Any, thread_id: str) -> None:
    # Was: nothing ("一季度螺纹钢均价" out of scope); the year taken is now said, as for a month.
    turn = await run_turn(agent, thread_id, "一季度螺纹钢均价")
    assert [(c.name, dict(c.args)) for c in turn.calls] == [
        ("describe_series", {"series": "shfe_rebar_daily", "start": "2026-01", "end": "2026-03"})]
    assert "“一季度”没有说年份，按今天（2026-12-07）之前最近的一个，即 2026-01 至 2026-03，回答。" in turn.text
    mean = float(_settles("shfe_rebar_futures_daily.csv")["2026-01":"2026-03"].mean())
    assert f"均值 {mean:,.2f} 元/吨" in turn.text


async def test_last_years_half_and_a_year_set_against_the_one_before(agent: Any) -> None:
    # Were: the whole of 2025; 2024 alone ("和前年比呢" after 2025).
    text = await _one_call(agent, ("iron ore price", "what about last year's second half?"), "price_history",
                           "iron_ore_wb_monthly", "2025-07", "2025-12")
    first, last = _ends(_wb_iron_ore(), "2025-07", "2025-12")
    assert f"from {first} US$/dmt to {last} US$/dmt" in text
    calls, text = await _calls(agent, "铁矿石2025年走势", "和前年比呢")
    assert [c[0] for c in calls] == ["describe_series", "describe_series"]
    assert [c[1]["start"][:4] for c in calls] == ["2024", "2025"]
    means = [float(_wb_iron_ore()[y].mean()) for y in ("2024", "2025")]
    assert f"后者比前者 {(means[1] / means[0] - 1) * 100:+.2f}%" in text


def test_a_usual_half_is_seasonal_and_the_past_half_year_looks_back() -> None:
    # Were: the latest prices ("上半年一般涨还是跌"), H2 2026 ("second half usually"), and the whole
    # history ("过去半年涨了多少": 半年 read as a horizon).
    for text in ("铁矿石上半年一般涨还是跌", "iron ore in the second half usually rises?"):
        q = parse(text)
        assert q.intents[:1] == ["describe"] and "seasonal" in q.intents and not q.start
    q = parse("过去半年铁矿石涨了多少")
    assert q.last_period == (6, "month") and q.horizon is None
