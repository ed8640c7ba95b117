"""Answers an eleventh QA pass found wrong (asked on Monday 2026-12-07, as a user would): a question
that takes a fall (or a rise) for granted, and the title of a report after a conversation about
mostly one subject.

Every expected number is recomputed here with pandas from the bundled CSVs.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pandas as pd

from orecast import market
from orecast.agent.offline import catalogue as cat
from tests.agent.conftest import call_args, last_turn, run_turn
from tests.agent.test_answers_qa5 import _settles, _usd_cnh, _wb_iron_ore, pinned_today

__all__ = ["pinned_today"]  # the autouse fixture that pins today to 2026-12-07


def _year_back(values: pd.Series) -> tuple[pd.Timestamp, float, pd.Timestamp, float]:
    """The past year counted back from the data's last day: the value on (or last before) that day a
    year earlier, and the last one."""
    end = values.index[-1]
    before = values[values.index <= end - pd.DateOffset(years=1)]
    return before.index[-1], float(before.iloc[-1]), end, float(values.iloc[-1])


async def test_a_fall_taken_for_granted_gets_a_verdict_on_each_iron_ore_price(agent: Any) -> None:
    # Was: the World Bank's +12.03% over its year, with no word that it rose (not fell), and nothing
    # of the futures, which did fall; "How much did iron ore fall over the past year?" got 2025.
    wb, dce = _year_back(_wb_iron_ore()), _year_back(_settles("dce_iron_ore_futures_daily.csv"))
    assert wb[3] > wb[1] and dce[3] < dce[1]  # the data's own directions, which the answer must say
    for question in ("过去一年铁矿石跌了多少", "How much did iron ore fall over the past year?"):
        turn = await run_turn(agent, str(uuid.uuid4()), question)
        assert call_args(turn) == [("price_history", {"series": "iron_ore_wb_monthly", "start": str(wb[0].date())}),
                                   ("price_history", {"series": "dce_iron_ore_daily", "start": str(dce[0].date())})]
        wb_rate, dce_rate = (wb[3] / wb[1] - 1) * 100, (dce[3] / dce[1] - 1) * 100
        if question.startswith("过去"):
            assert (f"涨了：从 {wb[0].date()} 的 {wb[1]:,.2f} 美元/干吨 到 {wb[2].date()} 的 {wb[3]:,.2f} 美元/干吨，"
                    f"{wb_rate:+.2f}%（{wb[3] - wb[1]:+,.2f} 美元/干吨）**——你问的是跌了多少，但其实是涨了。") in turn.text
            assert (f"跌了：从 {dce[0].date()} 的 {dce[1]:,.2f} 元/吨 到 {dce[2].date()} 的 {dce[3]:,.2f} 元/吨，"
                    f"{dce_rate:+.2f}%") in turn.text
            assert "两个序列方向不同" in turn.text
        else:
            assert (f"it rose: from {wb[1]:,.2f} US$/dmt on {wb[0].date()} to {wb[3]:,.2f} US$/dmt on {wb[2].date()}, "
                    f"{wb_rate:+.2f}% ({wb[3] - wb[1]:+,.2f} US$/dmt)** — you asked how much it fell, but it in fact rose.") in turn.text
            assert (f"it fell: from {dce[1]:,.2f} CNY/t on {dce[0].date()} to {dce[3]:,.2f} CNY/t on {dce[2].date()}, "
                    f"{dce_rate:+.2f}%") in turn.text


async def test_a_rise_taken_for_granted_over_a_year_says_it_fell(agent: Any, thread_id: str) -> None:
    # Was: the year's statistics, never a word that the futures fell over 2026 so far.
    settles = _settles("dce_iron_ore_futures_daily.csv")
    before, year = settles[:"2025"], settles["2026"]
    turn = await run_turn(agent, thread_id, "今年铁矿石期货涨了多少")
    v0, v1 = float(before.iloc[-1]), float(year.iloc[-1])
    assert v1 < v0
    assert (f"跌了：从 {before.index[-1].date()} 的 {v0:,.2f} 元/吨 到 {year.index[-1].date()} 的 {v1:,.2f} 元/吨，"
            f"{(v1 / v0 - 1) * 100:+.2f}%") in turn.text
    assert "你问的是涨了多少，但其实是跌了" in turn.text


async def test_the_past_year_asked_rise_or_fall_counts_back_from_the_data(agent: Any, thread_id: str) -> None:
    # Was: calendar 2025 for "过去一年" (read as "last year").
    settles = _settles("dce_iron_ore_futures_daily.csv")
    end = settles.index[-1]
    start = (end - pd.DateOffset(years=1)).date()
    turn = await run_turn(agent, thread_id, "过去一年铁矿石涨了还是跌了")
    assert call_args(turn) == [("price_history", {"series": "dce_iron_ore_daily", "start": str(start),
                                                  "end": str(end.date())})]


async def test_a_report_is_titled_by_what_the_conversation_was_mostly_about(agent: Any) -> None:
    # Was: titled after rebar, the last question's series, after three questions on iron ore.
    turn = await last_turn(agent, "铁矿石现在多少钱？", "过去一年铁矿石跌了多少", "铁矿石未来3个月预测",
                           "螺纹钢现在多少钱", "导出报告")
    assert call_args(turn)[0][1]["title"] == "铁矿石分析报告"
    turn = await last_turn(agent, "Forecast iron ore futures for the next month", "and rebar?", "export a report")
    assert call_args(turn)[0][1]["title"] == "DCE iron ore futures, continuous (settle) and SHFE rebar futures, " \
                                             "continuous (settle) analysis report"


async def test_a_rise_taken_for_granted_in_a_named_year_says_it_fell(agent: Any, thread_id: str) -> None:
    # Was: the year's history alone ("change -5.56%"), never that it fell rather than rose.
    rebar = _settles("shfe_rebar_futures_daily.csv")
    before, year = rebar[:"2024"], rebar["2025"]
    v0, v1 = float(before.iloc[-1]), float(year.iloc[-1])
    assert v1 < v0
    turn = await run_turn(agent, thread_id, "How much did rebar rise in 2025?")
    assert (f"it fell: from {v0:,.2f} CNY/t on {before.index[-1].date()} to {v1:,.2f} CNY/t on {year.index[-1].date()}, "
            f"{(v1 / v0 - 1) * 100:+.2f}% ({v1 - v0:+,.2f} CNY/t)** — you asked how much it rose, but it in fact fell.") in turn.text


async def test_since_the_start_of_the_year_is_this_year_so_far(agent: Any) -> None:
    # Was: "比年初跌了多少" after the futures' price gave that price again; "since the start of the
    # year" gave the World Bank's whole history from 2006.
    settles = _settles("dce_iron_ore_futures_daily.csv")
    before, year = settles[:"2025"], settles["2026"]
    v0, v1 = float(before.iloc[-1]), float(year.iloc[-1])
    turn = await last_turn(agent, "铁矿石期货现在多少钱", "比年初跌了多少")
    assert call_args(turn) == [("price_history", {"series": "dce_iron_ore_daily", "start": "2026-01-01", "end": "2026-12-07"})]
    assert (f"跌了：从 {before.index[-1].date()} 的 {v0:,.2f} 元/吨 到 {year.index[-1].date()} 的 {v1:,.2f} 元/吨，"
            f"{(v1 / v0 - 1) * 100:+.2f}%") in turn.text
    turn = await run_turn(agent, str(uuid.uuid4()), "How much has iron ore fallen since the start of the year?")
    assert [a["start"] for _, a in call_args(turn)] == ["2026-01-01", "2026-01-01"]
    wb = _wb_iron_ore()
    w0, w1 = float(wb[:"2025"].iloc[-1]), float(wb.iloc[-1])
    assert w1 > w0
    assert f"{(w1 / w0 - 1) * 100:+.2f}% ({w1 - w0:+,.2f} US$/dmt)** — you asked how much it fell, but it in fact rose." in turn.text


async def test_how_sure_after_a_forecast_checks_that_forecast(agent: Any) -> None:
    # Was: "How sure are you?" out of scope; "可信度多少" the latest prices.
    for first, then in (("Forecast iron ore for the next 3 months", "How sure are you?"),
                        ("明年铁矿石均价预测", "可信度多少")):
        thread = str(uuid.uuid4())
        forecast = await run_turn(agent, thread, first)
        (_, asked), = call_args(forecast)
        turn = await run_turn(agent, thread, then)
        assert call_args(turn) == [("backtest_forecast", {"series": asked["series"], "horizon": asked["horizon"],
                                                          "method": "auto"})]


async def test_both_forecast_and_which_is_more_reliable_are_the_two_series(agent: Any) -> None:
    # Was: "forecast both" forecast hot-rolled coil alone; "which forecast is more reliable?" checked
    # it alone, then (with two series) went to the quant subagent, which checked iron ore.
    thread = str(uuid.uuid4())
    await run_turn(agent, thread, "How much did rebar rise in 2025?")
    await run_turn(agent, thread, "and hot rolled coil?")
    both = await run_turn(agent, thread, "forecast both for next month")
    assert [(n, a["series"]) for n, a in call_args(both)] == [("forecast_price", "shfe_rebar_daily"),
                                                             ("forecast_price", "shfe_hrc_daily")]
    which = await run_turn(agent, thread, "which forecast is more reliable?")
    assert [(n, a["series"], a["horizon"]) for n, a in call_args(which)] == [
        ("backtest_forecast", a["series"], a["horizon"]) for _, a in call_args(both)]
    mase = {json.loads(r.content)["series"]: json.loads(r.content)["mase"] for r in which.results}
    ranked = sorted(mase, key=lambda s: mase[s])
    assert " < ".join(f"{cat.name(s, False)} {mase[s]:.3f}" for s in ranked) in which.text


async def test_compared_with_a_year_earlier_is_the_same_month_a_year_before(agent: Any) -> None:
    # Was: the correlation of the World Bank's price with the futures.
    wb = _wb_iron_ore()
    turn = await last_turn(agent, "What was the iron ore price in March 2026?", "How does that compare with a year earlier?")
    assert call_args(turn) == [("describe_series", {"series": "iron_ore_wb_monthly", "start": m, "end": m})
                               for m in ("2025-03", "2026-03")]
    a, b = float(wb["2025-03"].iloc[0]), float(wb["2026-03"].iloc[0])
    assert f"the second is {(b / a - 1) * 100:+.2f}% ({b - a:+,.2f} US$/dmt) against the first" in turn.text


async def test_which_one_fell_more_this_year_is_this_year(agent: Any) -> None:
    # Was: last week's dates again, from the two verdicts before it.
    turn = await last_turn(agent, "Did coke rise last month?", "And coking coal?", "Which one fell more this year?")
    assert call_args(turn) == [("price_history", {"series": s, "start": "2026-01-01", "end": "2026-12-07"})
                               for s in ("dce_coke_daily", "dce_coking_coal_daily")]


async def test_the_biggest_drop_that_month_is_that_months(agent: Any) -> None:
    # Was: the whole history's largest one-day falls (2020-02-03 first).
    settles = _settles("dce_iron_ore_futures_daily.csv")
    change = (settles / settles.shift(1) - 1)["2026-07"] * 100
    turn = await last_turn(agent, "Show me iron ore futures in July 2026", "What was the biggest daily drop that month?")
    assert call_args(turn) == [("describe_series", {"series": "dce_iron_ore_daily", "start": "2026-07", "end": "2026-07"})]
    assert f"**Largest one-day fall**: {change.idxmin().date()} {change.min():+.2f}%" in turn.text


async def test_which_year_was_higher_is_the_two_years_compared(agent: Any) -> None:
    # Was: out of scope.
    wb = _wb_iron_ore()
    turn = await last_turn(agent, "iron ore price in 2015 vs 2021", "which year was higher?")
    assert call_args(turn) == [("describe_series", {"series": "iron_ore_wb_monthly", "start": y, "end": y})
                               for y in ("2015", "2021")]
    a, b = float(wb["2015"].mean()), float(wb["2021"].mean())
    assert f"the second is {(b / a - 1) * 100:+.2f}%" in turn.text


async def test_the_spread_after_two_series_is_theirs(agent: Any) -> None:
    # Was: rebar's latest price alone.
    hrc, rebar = _settles("shfe_hot_rolled_coil_futures_daily.csv"), _settles("shfe_rebar_futures_daily.csv")
    turn = await last_turn(agent, "热卷和螺纹钢哪个涨得多（今年）", "价差现在多少")
    assert call_args(turn) == [("latest_price", {"series": s}) for s in ("shfe_hrc_daily", "shfe_rebar_daily")]
    assert f"{hrc.index[-1].date()}）：{float(hrc.iloc[-1] - rebar.iloc[-1]):+,.2f} 元/吨" in turn.text


async def test_the_mill_margin_over_a_period_and_no_forecast_of_it(agent: Any) -> None:
    # Was: "How has it changed this year?" out of scope; "Will it improve next quarter?" the World
    # Bank iron ore forecast, a number for another thing than asked.
    margin = market.mill_margin(start="2026-01-01")
    thread = str(uuid.uuid4())
    await run_turn(agent, thread, "What's the rebar mill margin now?")
    turn = await run_turn(agent, thread, "How has it changed this year?")
    assert call_args(turn) == [("mill_margin", {"start": "2026-01-01", "end": "2026-12-07"})]
    assert f"mean {margin.mean:,.2f} CNY/t" in turn.text
    turn = await run_turn(agent, thread, "Will it improve next quarter?")
    assert call_args(turn) == [] and "I have no forecast of the mill margin" in turn.text


async def test_what_it_does_to_iron_ore_relates_the_series_before_to_it(agent: Any) -> None:
    # Was: iron ore's latest price, nothing of the PMI (or crude steel) asked about just before.
    for first, series in (("PMI最近怎么样", "china_pmi_monthly"), ("中国粗钢产量2024年多少", "crude_steel_china_annual")):
        turn = await last_turn(agent, first, "对铁矿石有什么影响")
        assert call_args(turn) == [("relate_series", {"a": series, "b": "iron_ore_wb_monthly"})]
        assert f"相关系数 {json.loads(turn.results[-1].content)['correlation']:.4f}" in turn.text


async def test_when_was_that_is_the_day_of_the_extreme_asked(agent: Any) -> None:
    # Was: out of scope.
    wb = _wb_iron_ore()
    turn = await last_turn(agent, "铁矿石历史最高价是多少", "是什么时候")
    assert f"的最高值 {wb.max():,.2f} 美元/干吨 出现在 {wb.idxmax().date()}" in turn.text
    rebar = _settles("shfe_rebar_futures_daily.csv")["2025"]
    turn = await last_turn(agent, "What was the lowest rebar price in 2025?", "When was that?")
    assert f"{rebar.min():,.2f} CNY/t, was on {rebar.idxmin().date()}" in turn.text


async def test_is_a_scenario_reliable_points_to_its_own_fit(agent: Any) -> None:
    # Was: "这个结论可靠吗" out of scope; "Is that reliable?" a backtest of the iron ore forecast.
    for first, then, words in (("如果人民币贬值5%铁矿石会怎样", "这个结论可靠吗", "这个情景结论有多可靠"),
                               ("What if PMI falls 1 point, what happens to iron ore?", "Is that reliable?",
                                "How far this scenario can be trusted")):
        thread = str(uuid.uuid4())
        scenario = await run_turn(agent, thread, first)
        turn = await run_turn(agent, thread, then)
        assert call_args(turn) == call_args(scenario)
        r2 = json.loads(turn.results[-1].content)["r2"]
        assert words in turn.text and f"{r2:.2f}" in turn.text


async def test_how_much_the_yuan_rose_is_the_exchange_rate(agent: Any, thread_id: str) -> None:
    # Was: the iron ore futures' year ("人民币" read as the yuan-priced futures).
    fx = _usd_cnh()
    start = (fx.index[-1] - pd.DateOffset(years=1)).date()
    turn = await run_turn(agent, thread_id, "过去一年人民币升了多少")
    assert call_args(turn) == [("price_history", {"series": "usd_cnh_daily", "start": str(start)})]
    year = fx[str(start):]
    assert f"人民币对美元升值 {(year.iloc[0] / year.iloc[-1] - 1) * 100:.2f}%" in turn.text
    assert "其实是" not in turn.text  # the rate falling is the yuan rising: no premise to correct


async def test_how_far_below_the_high_is_said_in_numbers(agent: Any) -> None:
    # Was: the statistics again, the latest value and the high left to set against each other.
    wb = _wb_iron_ore()
    turn = await last_turn(agent, "铁矿石历史最高价是多少", "现在离最高点跌了多少")
    last, high = float(wb.iloc[-1]), float(wb.max())
    assert (f"最新 {last:,.2f} 美元/干吨（{wb.index[-1].date()}）比最高 {high:,.2f} 美元/干吨（{wb.idxmax().date()}）"
            f"{(last / high - 1) * 100:+.2f}%（{last - high:+,.2f} 美元/干吨）") in turn.text
