"""Answers a seventh QA pass found wrong (asked on Monday 2026-12-07, as a user would).

Every expected number is recomputed here with pandas from the bundled CSVs, not read from the tools.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from tests.agent.conftest import run_turn
from tests.agent.test_answers_qa5 import DATA, _settles, _wb_iron_ore, pinned_today
from tests.agent.test_answers_qa6 import _futures, roll_days

__all__ = ["pinned_today"]  # the autouse fixture that pins today to 2026-12-07, shared with QA5


def _week_verdict(values: pd.Series, first: str, last: str) -> tuple[str, str]:
    """The zh word and numbers of a period's change, from the last value before it."""
    before = values[: pd.Timestamp(first) - pd.Timedelta(days=1)]
    inside = values[first:last]
    v0, v1 = float(before.iloc[-1]), float(inside.iloc[-1])
    word = "涨了" if v1 > v0 else "跌了"
    numbers = (f"从 {before.index[-1].date()} 的 {v0:,.2f} 元/吨 到 {inside.index[-1].date()} 的 {v1:,.2f} 元/吨，"
               f"{(v1 / v0 - 1) * 100:+.2f}%")
    return word, numbers


async def test_did_rebar_rise_or_fall_last_week_is_a_verdict(agent: Any, thread_id: str) -> None:
    # Was: a forecast of last week with no verdict.
    turn = await run_turn(agent, thread_id, "上周螺纹钢涨了还是跌了")
    assert [c.name for c in turn.calls] == ["price_history"]
    rebar = _settles("shfe_rebar_futures_daily.csv")
    last = rebar.index[-1]
    assert last < pd.Timestamp("2026-11-30")
    assert "2026-11-30 至 2026-12-06 没有实际数据" in turn.text
    assert "不能说那段时间涨了还是跌了" in turn.text
    monday = last - pd.Timedelta(days=last.weekday())
    word, numbers = _week_verdict(rebar, str(monday.date()), str(last.date()))
    assert f"数据里最后一周（{monday.date()} 至 {last.date()}）{word}：{numbers}" in turn.text


async def test_did_rebar_rise_last_week_inside_the_data(
    agent: Any, thread_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORECAST_TODAY", "2025-06-16")  # Monday: last week is 2025-06-09 .. 06-15
    turn = await run_turn(agent, thread_id, "上周螺纹钢涨了还是跌了")
    word, numbers = _week_verdict(_settles("shfe_rebar_futures_daily.csv"), "2025-06-09", "2025-06-15")
    assert f"在 2025-06-09 至 2025-06-15，{word}：{numbers}" in turn.text
    english = await run_turn(agent, thread_id, "did rebar rise last week?")
    assert ("it rose" if word == "涨了" else "it fell") in english.text


async def test_this_week_after_another_period_is_this_week(
    agent: Any, thread_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A question with its own period word is about that period, not the one asked about before.
    monkeypatch.setenv("ORECAST_TODAY", "2025-06-18")  # Wednesday: this week is 2025-06-16 .. 06-18
    await run_turn(agent, thread_id, "螺纹钢2025年3月走势")
    turn = await run_turn(agent, thread_id, "这周涨了吗")
    assert turn.calls[0].args == {"series": "shfe_rebar_daily", "start": "2025-06-16", "end": "2025-06-18"}
    word, numbers = _week_verdict(_settles("shfe_rebar_futures_daily.csv"), "2025-06-16", "2025-06-18")
    assert f"在 2025-06-16 至 2025-06-18，{word}：{numbers}" in turn.text
    assert "2025-03" not in turn.text


async def test_this_week_after_a_month_past_the_data_says_there_is_none(agent: Any, thread_id: str) -> None:
    await run_turn(agent, thread_id, "铁矿石期货8月走势")
    turn = await run_turn(agent, thread_id, "这周涨了吗")
    assert "你问的 2026-12-07 没有实际数据" in turn.text
    assert "2026-08-01" not in turn.text  # not August again


async def test_the_first_half_of_2026_is_the_ore_price_to_may_and_the_futures_for_all_of_it(
    agent: Any, thread_id: str
) -> None:
    # Was: the World Bank's months alone, which end in May 2026, for a half year to June.
    turn = await run_turn(agent, thread_id, "2026上半年铁矿石")
    assert [c.args["series"] for c in turn.calls] == ["iron_ore_wb_monthly", "dce_iron_ore_daily"]
    wb = _wb_iron_ore()
    assert wb.index[-1] < pd.Timestamp("2026-06-01")
    assert f"数据只到 {wb.index[-1].date()}" in turn.text
    dce = _settles("dce_iron_ore_futures_daily.csv").loc["2026-01":"2026-06"]
    assert dce.index[-1].month == 6
    assert f"**大商所铁矿石期货（连续，结算价）** {dce.index[0].date()} 至 {dce.index[-1].date()}" in turn.text
    assert f"区间涨跌 {(dce.iloc[-1] / dce.iloc[0] - 1) * 100:+.2f}%" in turn.text
    ore = wb.loc["2026-01":"2026-06"]
    assert f"区间涨跌 {(ore.iloc[-1] / ore.iloc[0] - 1) * 100:+.2f}%" in turn.text
    assert "两者不是同一个价格" in turn.text and "世界银行的现货月均价" in turn.text  # which is which
    asked_by_name = await run_turn(agent, thread_id, "世界银行铁矿石2026上半年")
    assert [c.args["series"] for c in asked_by_name.calls] == ["iron_ore_wb_monthly"]


@pytest.mark.parametrize(
    ("history", "question", "series", "code"),
    [
        ([], "铁矿石明年1月合约", "dce_iron_ore_daily", "2701"),
        (["螺纹钢价格"], "明年1月合约", "shfe_rebar_daily", "2701"),
        ([], "rb2705多少钱", "shfe_rebar_daily", "2705"),
        ([], "What is the iron ore January contract trading at?", "dce_iron_ore_daily", "2701"),
    ],
)
async def test_one_contract_is_answered_as_the_continuous_contract_said_so(
    agent: Any, thread_id: str, history: list[str], question: str, series: str, code: str
) -> None:
    # Was: the World Bank's forecast to January 2027, or the continuous price, as if it were the contract.
    for earlier in history:
        await run_turn(agent, thread_id, earlier)
    turn = await run_turn(agent, thread_id, question)
    assert [(c.name, c.args) for c in turn.calls] == [("latest_price", {"series": series})]
    file = {"dce_iron_ore_daily": "dce_iron_ore_futures_daily.csv", "shfe_rebar_daily": "shfe_rebar_futures_daily.csv"}
    values = _settles(file[series])
    assert f"{values.iloc[-1]:,.2f}" in turn.text and str(values.index[-1].date()) in turn.text
    if question.isascii():
        assert f"not the {code} contract" in turn.text and "continuous (main) contract" in turn.text
    else:
        assert f"不是 {code} 合约" in turn.text and "连续（主力）合约" in turn.text


async def test_weekly_data_is_the_futures_weekly_bars(agent: Any, thread_id: str) -> None:
    # Was: the help text ("周线数据" named no series); "铁矿石期货周线数据" got the latest price.
    turn = await run_turn(agent, thread_id, "周线数据")
    frame = _futures("dce_iron_ore_futures_daily.csv")
    weeks = frame.resample("W-FRI").agg({"open_cny_per_t": "first", "high_cny_per_t": "max", "low_cny_per_t": "min",
                                         "close_cny_per_t": "last", "settle_cny_per_t": "last"}).dropna(how="all")
    days = frame.index.to_series().resample("W-FRI").agg(["first", "last"]).dropna()
    for label in weeks.index[-8:]:
        w, prev = weeks.loc[label], weeks["settle_cny_per_t"].shift(1)[label]
        assert (
            f"- {days.loc[label, 'first'].date()} – {days.loc[label, 'last'].date()}：开 {w['open_cny_per_t']:,.2f}，"
            f"高 {w['high_cny_per_t']:,.2f}，低 {w['low_cny_per_t']:,.2f}，收 {w['close_cny_per_t']:,.2f}，"
            f"结算 {w['settle_cny_per_t']:,.2f}，周涨跌 {(w['settle_cny_per_t'] / prev - 1) * 100:+.2f}%"
        ) in turn.text
    assert "大商所铁矿石期货" in turn.text and "世界银行铁矿石价格（美元/干吨）是月均价" in turn.text
    rebar = await run_turn(agent, thread_id, "rebar weekly closes")
    assert rebar.calls[0].args["series"] == "shfe_rebar_daily" and "weekly bars" in rebar.text


async def test_average_daily_change_is_the_last_year_of_data_said_so(agent: Any, thread_id: str) -> None:
    # Was: the whole history's statistics of the World Bank's monthly averages.
    turn = await run_turn(agent, thread_id, "平均每天涨跌多少")
    frame = _futures("dce_iron_ore_futures_daily.csv")
    price = frame["price"]
    last = price.index[-1]
    keep = (price.index > last - pd.DateOffset(years=1)) & ~roll_days(frame).to_numpy()
    rel = ((price / price.shift(1) - 1) * 100)[keep].dropna()
    diff = price.diff()[keep].dropna()
    assert f"默认取数据的最近一年：{rel.index[0].date()} 至 {last.date()}，{len(rel)} 个交易日" in turn.text
    assert f"平均每天 {rel.mean():+.3f}%（{diff.mean():+,.2f} 元/吨）" in turn.text
    assert f"平均每天波动（不计方向）{rel.abs().mean():.3f}%（{diff.abs().mean():,.2f} 元/吨）" in turn.text
    year = await run_turn(agent, thread_id, "铁矿石期货2025年平均每天涨跌多少")
    in_2025 = ((price / price.shift(1) - 1) * 100).loc["2025"]
    in_2025 = in_2025[~in_2025.index.isin(roll_days(frame)[roll_days(frame)].index)]
    assert f"2025-01-02 至 2025-12-31，{len(in_2025)} 个交易日）：平均每天 {in_2025.mean():+.3f}%" in year.text


async def test_how_often_the_data_updates_is_each_series_frequency_and_last_date(agent: Any, thread_id: str) -> None:
    # Was: the help text.
    turn = await run_turn(agent, thread_id, "数据多久更新一次")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    wb = _wb_iron_ore()
    pmi = pd.read_csv(DATA / "china_nbs_manufacturing_pmi_monthly.csv", index_col="date", parse_dates=True)
    assert f"大商所铁矿石期货（连续，结算价）、大商所焦炭期货（连续，结算价）、大商所焦煤期货（连续，结算价）：日度数据，最新一期 {dce.index[-1].date()}" in turn.text
    assert "铁矿石价格（世界银行，CFR中国）" in turn.text and f"月度数据，最新一期 {wb.index[-1].date()}" in turn.text
    assert f"中国官方制造业PMI（国家统计局）：月度数据，最新一期 {pmi.index[-1].date()}" in turn.text
    assert "orecast data update" in turn.text
    english = await run_turn(agent, thread_id, "How often is the iron ore data updated?")
    assert f"Iron ore, CFR China (World Bank): monthly data, last value {wb.index[-1].date()}" in english.text


async def test_did_the_futures_rise_in_a_year_in_english_is_a_verdict(agent: Any, thread_id: str) -> None:
    # QA7: "Did iron ore futures rise in 2025?" got the statistics with no answer.
    turn = await run_turn(agent, thread_id, "Did iron ore futures rise in 2025?")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    v0, v1 = float(dce[:"2024-12-31"].iloc[-1]), float(dce.loc["2025"].iloc[-1])
    word = "it rose" if v1 > v0 else "it fell"
    assert f"{word}: from {v0:,.2f} CNY/t on {dce[:'2024-12-31'].index[-1].date()}" in turn.text
    assert f"{(v1 / v0 - 1) * 100:+.2f}%" in turn.text


async def test_a_contracts_forecast_is_the_continuous_contracts_said_so(agent: Any, thread_id: str) -> None:
    # QA7: "i2701合约未来一个月走势预测" got the latest price and no forecast.
    turn = await run_turn(agent, thread_id, "i2701合约未来一个月走势预测")
    assert [c.name for c in turn.calls] == ["forecast_price"]
    assert turn.calls[0].args["series"] == "dce_iron_ore_daily"
    assert "不是 2701 合约" in turn.text


async def test_when_the_world_bank_data_updates_is_its_series_alone(agent: Any, thread_id: str) -> None:
    # QA7: every source listed for a question about the World Bank's.
    turn = await run_turn(agent, thread_id, "世界银行数据什么时候更新")
    wb = _wb_iron_ore()
    assert f"月度数据，最新一期 {wb.index[-1].date()}" in turn.text
    assert "期货" not in turn.text.split("本地数据不会自己更新")[0]


async def test_a_quiet_roll_is_said_to_be_found_by_its_volume(agent: Any, thread_id: str) -> None:
    # QA7: 2025-04-02 left out as a roll "because the open interest jumped 15 %" (it moved 12.7 %).
    turn = await run_turn(agent, thread_id, "铁矿石期货2025年最大跌幅是哪天")
    line = next(x for x in turn.text.splitlines() if "疑似换月日" in x)
    assert "2025-04-02 -4.41%" in line and "成交量" in line


@pytest.mark.parametrize("follow_up", ["那2024年呢", "前年呢"])
async def test_another_period_after_two_series_compared_compares_both_again(
    agent: Any, thread_id: str, follow_up: str
) -> None:
    # QA7: "那2024年呢" after "2025年热卷和螺纹钢谁涨得多" answered rebar alone.
    await run_turn(agent, thread_id, "2025年热卷和螺纹钢谁涨得多")
    turn = await run_turn(agent, thread_id, follow_up)
    assert [c.args["series"] for c in turn.calls] == ["shfe_hrc_daily", "shfe_rebar_daily"]
    line = next(x for x in turn.text.splitlines() if x.startswith("区间涨跌对比"))
    for file in ("shfe_hot_rolled_coil_futures_daily.csv", "shfe_rebar_futures_daily.csv"):
        values = _settles(file).loc["2024"]
        assert f"{(values.iloc[-1] / values.iloc[0] - 1) * 100:+.2f}%（{values.index[0].date()} 至 {values.index[-1].date()}）" in line
