"""Answers a tenth QA pass found wrong (asked on Monday 2026-12-07, as a user would): another series
alone after a question with a relative period, a price target at a named time, what drives iron ore,
"which one" and "both" after two series, two periods carried to another series, a period's mean daily
change with roll days, how many observations, and steel mills' output cut as a scenario.

Every expected number is recomputed here with pandas from the bundled CSVs, or read from the tool's
own result where the answer only restates it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pandas as pd

from orecast.market.rolls import likely_rolls
from tests.agent.conftest import call_args, last_turn, run_turn
from tests.agent.test_answers_qa5 import DATA, _settles, _wb_iron_ore, pinned_today

__all__ = ["pinned_today"]  # the autouse fixture that pins today to 2026-12-07


def _last_week(values: pd.Series) -> tuple[pd.Series, float]:
    """The data's last calendar week (Monday to its last day) and the value before it."""
    end = values.index[-1]
    monday = end - pd.Timedelta(days=end.weekday())
    return values[monday:end], float(values[:monday - pd.Timedelta(days=1)].iloc[-1])


async def test_another_series_alone_asks_the_question_before_of_it(agent: Any) -> None:
    # Was: "What about iron ore?" asked the World Bank's monthly series for 2026-08-17..21 (an error),
    # "and coking coal?" gave its latest price, and "那焦炭呢" after "过去一年" got 15 months of coke
    # (the World Bank's year, from 2025-05-01).
    thread = str(uuid.uuid4())
    await run_turn(agent, thread, "Did rebar rise or fall last week?")
    for question, file, series in (("What about iron ore?", "dce_iron_ore_futures_daily.csv", "dce_iron_ore_daily"),
                                   ("and coking coal?", "dce_coking_coal_futures_daily.csv", "dce_coking_coal_daily")):
        turn = await run_turn(agent, thread, question)
        week, before = _last_week(_settles(file))
        assert call_args(turn) == [("price_history", {"series": series, "start": str(week.index[0].date()),
                                                  "end": str(week.index[-1].date())})]
        end = float(week.iloc[-1])
        verdict = "rose" if end > before else "fell"
        assert (f"it {verdict}: from {before:,.2f} CNY/t on {_settles(file)[:week.index[0]].index[-2].date()} to "
                f"{end:,.2f} CNY/t on {week.index[-1].date()}, {(end / before - 1) * 100:+.2f}%") in turn.text

    coke = _settles("dce_coke_futures_daily.csv")
    start = (coke.index[-1] - pd.DateOffset(years=1)).date()
    turn = await last_turn(agent, "过去一年铁矿石跌了多少", "那焦炭呢")
    assert call_args(turn) == [("price_history", {"series": "dce_coke_daily", "start": str(start)})]
    assert f"“近1年”按这个序列的最后日期倒推：{start} 至 {coke.index[-1].date()}。" in turn.text


async def test_a_price_target_at_a_named_time_is_checked_at_that_time(agent: Any) -> None:
    # Was: every one checked at the forecast's usual end from today (2027-05-01 for the World Bank,
    # 2027-01-04 for the futures), and "明年6月" read as six months.
    wb_end = _wb_iron_ore().index[-1]
    for question, series, last in (("2026年底铁矿石会跌破90美元吗", "iron_ore_wb_monthly", "2026-12-01"),
                                   ("Will iron ore be below 90 dollars by end of 2026?", "iron_ore_wb_monthly", "2026-12-01"),
                                   ("明年6月铁矿石会涨到120美元吗", "iron_ore_wb_monthly", "2027-06-01"),
                                   ("铁矿石期货年底会跌破600元吗", "dce_iron_ore_daily", "2026-12-31")):
        turn = await run_turn(agent, str(uuid.uuid4()), question)
        (name, args), = call_args(turn)
        assert (name, args["series"]) == ("forecast_price", series)
        if series == "iron_ore_wb_monthly":
            asked = pd.Timestamp(last)
            assert args["horizon"] == (asked.year - wb_end.year) * 12 + asked.month - wb_end.month
        rows = json.loads(turn.results[-1].content)["forecast"]
        assert rows[-1]["date"] == last
        assert (f"{last} 的中位数是" in turn.text) or (f"the median for {last} is" in turn.text)


async def test_what_drives_iron_ore_says_what_the_data_has_and_relates_it(agent: Any) -> None:
    # Was: the latest prices of the two iron ore series, nothing about drivers.
    pmi_end = pd.read_csv(DATA / "china_nbs_manufacturing_pmi_monthly.csv", index_col="date",
                          parse_dates=True).index[-1].date()
    for question in ("影响铁矿石价格的因素有哪些", "What drives iron ore prices?"):
        turn = await run_turn(agent, str(uuid.uuid4()), question)
        assert [(n, a["a"], a["b"]) for n, a in call_args(turn)] == [
            ("relate_series", "dce_iron_ore_daily", "shfe_rebar_daily"),
            ("relate_series", "dce_iron_ore_daily", "dce_coke_daily"),
            ("relate_series", "iron_ore_wb_monthly", "china_pmi_monthly"),
            ("relate_series", "iron_ore_wb_monthly", "usd_cnh_daily")]
        zh = question.startswith("影响")
        assert ("港口库存——没有数据" if zh else "Port inventories — no data") in turn.text
        assert f"{'月度，到' if zh else 'monthly, to'} {pmi_end}" in turn.text
        for result in turn.results:
            corr = json.loads(result.content)["correlation"]
            assert f"{corr:.4f}" in turn.text


async def test_which_one_and_both_are_the_two_series_talked_about(agent: Any) -> None:
    # Was: "and coking coal?" its 2024 alone, "which one is more volatile?" coking coal's whole
    # history, "plot both" coking coal alone.
    thread = str(uuid.uuid4())
    first = await run_turn(agent, thread, "How did iron ore do in 2024 compared with 2023?")
    assert call_args(first) == [("describe_series", {"series": "iron_ore_wb_monthly", "start": y, "end": y})
                            for y in ("2023", "2024")]
    coal = await run_turn(agent, thread, "and coking coal?")
    assert call_args(coal) == [("describe_series", {"series": "dce_coking_coal_daily", "start": y, "end": y})
                           for y in ("2023", "2024")]
    settles = _settles("dce_coking_coal_futures_daily.csv")
    before, after = float(settles["2023"].mean()), float(settles["2024"].mean())
    assert f"the second is {(after / before - 1) * 100:+.2f}% ({after - before:+,.2f} CNY/t) against the first" in coal.text
    which = await run_turn(agent, thread, "which one is more volatile?")
    assert call_args(which) == [("describe_series", {"series": s, "start": "2024", "end": "2024"})
                            for s in ("iron_ore_wb_monthly", "dce_coking_coal_daily")]
    assert "is the most volatile" in which.text
    both = await run_turn(agent, thread, "plot both")
    assert call_args(both) == [("make_chart", {"series": "iron_ore_wb_monthly", "compare": "dce_coking_coal_daily",
                                           "start": "2024", "end": "2024"})]


async def test_a_question_of_its_own_is_not_read_into_the_one_before(agent: Any) -> None:
    # Was: two series after a chart drew the chart again (iron ore against rebar); "现在适合买入吗"
    # after "2015年最低是多少" gave 2015's statistics; "How reliable is that?" was out of scope.
    turn = await last_turn(agent, "画一张2025年以来铁矿石期货和螺纹钢的走势图", "铁矿石和焦煤今年谁涨得多")
    assert call_args(turn) == [("price_history", {"series": s, "start": "2026-01-01", "end": "2026-12-07"})
                           for s in ("dce_iron_ore_daily", "dce_coking_coal_daily")]
    turn = await last_turn(agent, "2015年最低是多少", "现在适合买入吗")
    assert call_args(turn) == [("describe_series", {"series": "iron_ore_wb_monthly"})]
    thread = str(uuid.uuid4())
    forecast = await run_turn(agent, thread, "Forecast the next 6 months with ETS")
    turn = await run_turn(agent, thread, "How reliable is that?")
    # That forecast checked: its method and its reach from the data's end (the months asked are
    # 7 to 12 steps after May), not the usual 6 steps of the automatic method.
    assert call_args(turn) == [("backtest_forecast", {"series": "iron_ore_wb_monthly", "method": "ets",
                                                  "horizon": call_args(forecast)[0][1]["horizon"]})]
    assert call_args(forecast)[0][1]["horizon"] == 12


async def test_a_periods_mean_daily_change_says_the_roll_days_it_leaves_out(agent: Any, thread_id: str) -> None:
    # Was: "241 trading days" for 2025's 243, with no word of the two roll days left out.
    coke = _settles("dce_coke_futures_daily.csv")
    change = (coke / coke.shift(1) - 1) * 100
    year = change["2025"]
    rolled = year.index.isin(likely_rolls("dce_coke_daily"))
    kept = year[~rolled]
    assert rolled.sum() >= 1
    turn = await run_turn(agent, thread_id, "average daily change of coke in 2025")
    assert (f"({kept.index[0].date()} to {kept.index[-1].date()}, {len(kept)} trading days): "
            f"{kept.mean():+.3f}%") in turn.text
    assert f"{rolled.sum()} likely contract-roll days left out" in turn.text


async def test_how_many_observations_are_counted_from_the_file(agent: Any) -> None:
    # Was: the latest price alone.
    raw = pd.read_csv(DATA / "shfe_rebar_futures_daily.csv", index_col="date", parse_dates=True)
    turn = await run_turn(agent, str(uuid.uuid4()), "螺纹钢有多少条数据")
    assert (f"{len(raw):,} 个日度观测，从 {raw.index[0].date()} 到 {raw.index[-1].date()}" in turn.text)
    assert f"其中 {int(raw['settle_cny_per_t'].isna().sum())} 天没有结算价" in turn.text
    ore = _settles("dce_iron_ore_futures_daily.csv")["2025"]
    turn = await run_turn(agent, str(uuid.uuid4()), "铁矿石期货2025年有多少个交易日")
    assert f"{len(ore):,} 个日度观测，从 {ore.index[0].date()} 到 {ore.index[-1].date()}" in turn.text
    wb = _wb_iron_ore()
    turn = await run_turn(agent, str(uuid.uuid4()), "How many data points do you have for iron ore?")
    assert f"{len(wb):,} monthly observations, from {wb.index[0].date()} to {wb.index[-1].date()}" in turn.text


async def test_steel_mills_cutting_output_is_the_crude_steel_scenario(agent: Any, thread_id: str) -> None:
    # Was: "no data for this driver", listing crude steel output among the drivers it has.
    turn = await run_turn(agent, thread_id, "如果钢厂减产10%，会怎样？")
    assert call_args(turn) == [("price_scenario", {"driver": "steel_output", "shock": -10.0,
                                               "target": "iron_ore_wb_monthly"})]


async def test_did_it_rise_over_a_look_back_is_a_verdict(agent: Any) -> None:
    # Was: the three months' history with no word of which way (and so for "热卷呢" after it).
    thread = str(uuid.uuid4())
    for question, file, series in (("螺纹钢过去三个月涨了还是跌了", "shfe_rebar_futures_daily.csv", "shfe_rebar_daily"),
                                   ("热卷呢", "shfe_hot_rolled_coil_futures_daily.csv", "shfe_hrc_daily")):
        values = _settles(file)
        end = values.index[-1]
        start = (end - pd.DateOffset(months=3)).date()
        turn = await run_turn(agent, thread, question)
        assert call_args(turn) == [("price_history", {"series": series, "start": str(start), "end": str(end.date())})]
        before = values[values.index < pd.Timestamp(start)]
        v0, v1 = float(before.iloc[-1]), float(values.iloc[-1])
        word = "涨了" if v1 > v0 else "跌了"
        assert (f"{word}：从 {before.index[-1].date()} 的 {v0:,.2f} 元/吨 到 {end.date()} 的 {v1:,.2f} 元/吨，"
                f"{(v1 / v0 - 1) * 100:+.2f}%") in turn.text


async def test_a_lead_of_one_period_is_one_period(agent: Any, thread_id: str) -> None:
    # Was: "leads by 1 periods".
    turn = await run_turn(agent, thread_id, "correlation of iron ore and coking coal in Q2 2026")
    lag = json.loads(turn.results[-1].content)["best_lag"]
    assert abs(lag) == 1  # the tool's own answer for this quarter; the line below is about its wording
    assert "leads by 1 period (" in turn.text and "1 periods" not in turn.text
