"""Answers a sixth QA pass found wrong (asked on Monday 2026-12-07, as a user would).

Every expected number is recomputed here with pandas from the bundled CSVs, not read from the tools.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.agent.conftest import run_turn
from tests.agent.test_answers_qa5 import DATA, _settles, _usd_cnh, _wb_iron_ore, pinned_today
from tests.agent.test_conversation import assert_number

__all__ = ["pinned_today"]  # the autouse fixture that pins today to 2026-12-07, shared with QA5


def roll_days(frame: pd.DataFrame) -> pd.Series:
    """A continuous contract's likely roll days, recomputed: a gap at the open with the open interest
    jumping, or a larger gap on thin trading on a day not locked at its limit."""
    jump = np.log(frame["open_interest_lots"].where(frame["open_interest_lots"] > 0)).diff().abs()
    signed = frame["open_cny_per_t"] / frame["close_cny_per_t"].shift(1) - 1
    volume = np.log(frame["volume_lots"].where(frame["volume_lots"] > 0)).diff()
    close = frame["close_cny_per_t"]
    locked = ((signed < 0) & (close <= frame["low_cny_per_t"])) | ((signed > 0) & (close >= frame["high_cny_per_t"]))
    return ((jump >= 0.14) & (signed.abs() >= 0.03)) | ((signed.abs() >= 0.04) & (volume <= -0.5) & ~locked)


def _futures(file: str) -> pd.DataFrame:
    frame = pd.read_csv(DATA / file, index_col="date", parse_dates=True)
    frame["price"] = frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"])
    return frame


async def test_a_years_volatility_counts_its_first_change(agent: Any, thread_id: str) -> None:
    # Was: 16.09 %, from 2025's own prices, leaving out the move from 2024-12-31 to 2025-01-02.
    turn = await run_turn(agent, thread_id, "2025年铁矿石期货波动率")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    rets = np.log(dce).diff()["2025"]
    assert rets.index[0] == pd.Timestamp("2025-01-02") and not np.isnan(rets.iloc[0])
    vol = float(rets.std(ddof=1) * np.sqrt(252) * 100)
    without_first = float(rets.iloc[1:].std(ddof=1) * np.sqrt(252) * 100)
    assert f"{vol:.2f}" != f"{without_first:.2f}"
    assert f"年化波动率 {vol:.2f}%" in turn.text


@pytest.mark.parametrize(
    ("question", "file"),
    [
        ("铁矿石期货历史上最大的单日跌幅", "dce_iron_ore_futures_daily.csv"),
        ("What was rebar's largest one-day move?", "shfe_rebar_futures_daily.csv"),
    ],
)
async def test_roll_days_are_no_largest_moves(
    agent: Any, thread_id: str, question: str, file: str
) -> None:
    # Was: 2017-03-22's -14.94 % as iron ore's largest fall, the day the main contract rolled from the
    # May to the September contract (beyond the daily limit: no contract fell that much).
    turn = await run_turn(agent, thread_id, question)
    frame = _futures(file)
    price = frame["price"]
    change = (price / price.shift(1) - 1) * 100
    roll = roll_days(frame)
    kept = change[~roll].dropna()
    zh = "铁" in question
    head = "最大单日跌幅" if zh else "Largest one-day fall"
    line = next(x for x in turn.text.splitlines() if head in x)
    assert f"{kept.idxmin().date()} {kept.min():+.2f}%" in line
    biggest_roll = change[roll].abs().idxmax()
    assert str(biggest_roll.date()) not in line  # a roll, listed apart as one
    rolls = next(x for x in turn.text.splitlines() if ("疑似换月日" in x or "contract-roll" in x))
    assert f"{biggest_roll.date()} {change[biggest_roll]:+.2f}%" in rolls


@pytest.mark.parametrize(
    ("question", "year"),
    [("今年铁矿石和螺纹钢谁涨得多", "2026"), ("2025年铁矿石和螺纹钢谁涨得多", "2025")],
)
async def test_ore_against_rebar_over_a_period_is_the_futures_on_the_same_days(
    agent: Any, thread_id: str, question: str, year: str
) -> None:
    # Was: the World Bank's monthly averages (for 2026 to May only) against rebar's daily settles to August.
    turn = await run_turn(agent, thread_id, question)
    assert [c.args["series"] for c in turn.calls] == ["dce_iron_ore_daily", "shfe_rebar_daily"]
    ore = _settles("dce_iron_ore_futures_daily.csv")[year]
    rebar = _settles("shfe_rebar_futures_daily.csv")[year]
    assert ore.index[-1] == rebar.index[-1]
    line = next(x for x in turn.text.splitlines() if x.startswith("区间涨跌对比"))
    for values in (ore, rebar):
        assert (
            f"{(values.iloc[-1] / values.iloc[0] - 1) * 100:+.2f}%（{values.index[0].date()} 至 {values.index[-1].date()}）"
            in line
        )
    assert "世界银行月度均价" in turn.text  # why the futures


async def test_the_world_bank_against_rebar_says_where_they_overlap(
    agent: Any, thread_id: str
) -> None:
    turn = await run_turn(agent, thread_id, "世界银行铁矿石和螺纹钢今年谁涨得多")
    wb, rebar = _wb_iron_ore()["2026"], _settles("shfe_rebar_futures_daily.csv")["2026"]
    assert f"只在 {rebar.index[0].date()} 至 {wb.index[-1].date()} 重叠" in turn.text


def _payload(turn: Any, tool: str) -> dict[str, Any]:
    from orecast.agent.tools import payload_of

    content = next(r for r in turn.results if r.name == tool).content
    return payload_of(content if isinstance(content, str) else str(content))


@pytest.mark.parametrize(
    ("question", "series"),
    [
        ("铁矿石今年全年会涨还是跌", "iron_ore_wb_monthly"),
        ("螺纹钢期货2026年全年会涨还是跌", "shfe_rebar_daily"),
    ],
)
async def test_the_whole_year_is_measured_from_its_start(
    agent: Any, thread_id: str, question: str, series: str
) -> None:
    # Was: a forecast with no verdict on the year (earlier, set against the latest price, not the year's start).
    turn = await run_turn(agent, thread_id, question)
    values = (
        _wb_iron_ore()
        if series == "iron_ore_wb_monthly"
        else _settles("shfe_rebar_futures_daily.csv")
    )
    base = float(values[:"2025-12-31"].iloc[-1])
    rows = _payload(turn, "forecast_price")["forecast"]
    assert rows[-1]["date"][:7] == "2026-12"  # the year's end, not today
    line = next(x for x in turn.text.splitlines() if "2026 年全年涨跌（以年初为基准" in x)
    assert_number(line, base)
    assert (
        f"较年初 {(float(values['2026'].iloc[-1]) / base - 1) * 100:+.2f}%" in line
    )  # the part the data holds
    assert f"较年初 {(rows[-1]['mean'] / base - 1) * 100:+.2f}%" in line


async def test_which_month_of_a_year_rose_most_is_month_end_to_month_end(
    agent: Any, thread_id: str
) -> None:
    # Was: the year's statistics with "too short for seasonality" and no month.
    turn = await run_turn(agent, thread_id, "2025年铁矿石期货哪个月涨得最多")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    ends = dce.groupby(dce.index.to_period("M")).last()
    change = ((ends / ends.shift(1) - 1) * 100)[
        "2025-01":"2025-12"
    ]  # January from December's last settle
    line = next(x for x in turn.text.splitlines() if "涨得最多的月份" in x)
    top = change.sort_values(ascending=False)
    assert line.index(f"{top.index[0]} {top.iloc[0]:+.2f}%") < line.index(
        f"{top.index[1]} {top.iloc[1]:+.2f}%"
    )
    jan = pd.Period("2025-01", "M")
    if jan in top.index[:3]:
        assert f"{ends[jan - 1]:,.2f} → {ends[jan]:,.2f}" in line


async def test_which_quarter_had_the_highest_average(agent: Any, thread_id: str) -> None:
    # Was: the whole history's statistics, no quarter.
    turn = await run_turn(agent, thread_id, "铁矿石哪个季度均价最高")
    wb = _wb_iron_ore()
    means = wb.groupby(wb.index.to_period("Q")).mean().sort_values(ascending=False)
    line = next(x for x in turn.text.splitlines() if "均价最高的季度" in x)
    best = means.index[0]
    assert f"{best.year} 年第 {best.quarter} 季度 {means.iloc[0]:,.2f}" in line
    assert "数据只到 2026-05-01，不完整" in line  # the last quarter is partial


async def test_which_month_rose_most_in_english_is_month_on_month(
    agent: Any, thread_id: str
) -> None:
    turn = await run_turn(agent, thread_id, "Which month did iron ore rise the most in 2024?")
    wb = _wb_iron_ore()
    change = ((wb / wb.shift(1) - 1) * 100)["2024"]
    line = next(x for x in turn.text.splitlines() if "rose most" in x)
    assert f"{change.idxmax():%Y-%m} {change.max():+.2f}%" in line


async def test_how_long_to_double_is_the_history_not_a_forecast(agent: Any, thread_id: str) -> None:
    # Was: the latest prices, as if they answered "how long".
    turn = await run_turn(agent, thread_id, "铁矿石价格翻倍需要多久")
    wb = _wb_iron_ore()
    last = float(wb.iloc[-1])
    assert f"翻倍是 {last * 2:,.2f} 美元/干吨" in turn.text
    assert f"历史最高 {wb.max():,.2f} 美元/干吨（{wb.idxmax().date()}），从未到过" in turn.text
    near = wb[(wb - last).abs() <= 0.1 * last]
    doubled = [d for d in near.index if (wb[wb.index > d] >= 2 * wb[d]).any()]
    assert f"±10% 以内的 {len(near)} 个月" in turn.text
    assert f"翻倍的有 {len(doubled)} 个（{len(doubled) / len(near) * 100:.2f}%）" in turn.text
    days = {
        d: next(x for x in wb.index[wb.index > d] if wb[x] >= 2 * wb[d]) - d
        for d in wb.index
        if (wb[wb.index > d] >= 2 * wb[d]).any()
    }
    start = min(days, key=days.get)
    assert (
        f"从 {start.date()} 的 {wb[start]:,.2f} 起，用时 约 {days[start].days / 30.44:.1f} 个月"
        in turn.text
    )
    assert "不预测价格哪天到达某个水平" in turn.text


async def test_pmi_bands_say_how_often_they_held_at_the_horizon_asked(
    agent: Any, thread_id: str
) -> None:
    # Was: "from 2021 on, the 80% band held nearly every outcome", measured one month ahead, said of
    # a forecast six (ten) months ahead, where it held every one.
    turn = await run_turn(agent, thread_id, "PMI forecast for next month")
    call = turn.call("forecast_price")
    steps = call.args["horizon"]
    assert _payload(turn, "forecast_price")["method"] == "naive"  # the bands recomputed below
    pmi = pd.read_csv(
        DATA / "china_nbs_manufacturing_pmi_monthly.csv", index_col="date", parse_dates=True
    )["china_nbs_manufacturing_pmi"].dropna()
    fitted = pmi.copy()
    fitted["2020-02-01"] = fitted["2020-03-01"] = pmi[
        "2020-01-01"
    ]  # the COVID months the fit leaves out
    held = {80: [], 95: []}
    z = {80: 1.2815515655446004, 95: 1.959963984540054}
    for o in range(pmi.index.get_loc(pd.Timestamp("2021-01-01")), len(pmi) - steps):
        diffs = np.diff(fitted.to_numpy()[: o + 1])
        sd = np.sqrt(np.mean(diffs**2)) * np.sqrt(steps)  # the random walk's band, in points
        actual = pmi.iloc[o + steps]
        for lv in z:
            held[lv].append(abs(actual - fitted.iloc[o]) <= z[lv] * sd)
    line = next(x for x in turn.text.splitlines() if "How good the bands were" in x)
    assert (
        f"over {len(held[80])} backtests" in line
        and f"({_payload(turn, 'forecast_price')['method']}) {steps} periods ahead" in line
    )
    assert f"{np.mean(held[80]) * 100:.2f}% of outcomes inside its 80% band" in line
    assert f"{np.mean(held[95]) * 100:.2f}% inside its 95% band" in line
    changes = fitted.diff().dropna()
    assert (
        f"{changes.std(ddof=1):.2f} points over the whole history, {changes['2015':].std(ddof=1):.2f} since 2015"
        in line
    )


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("2026年13月铁矿石价格", "2026-13 不是一个存在的日期（一年只有 12 个月）"),
        ("Iron ore price on 2026-13-45", "2026-13-45 is not a date (a year has 12 months)"),
    ],
)
async def test_a_thirteenth_month_is_no_date(
    agent: Any, thread_id: str, question: str, words: str
) -> None:
    # Was: the whole of 2026's history, as if "13月" had not been written.
    turn = await run_turn(agent, thread_id, question)
    assert turn.calls == [] and words in turn.text


async def test_a_years_output_covers_its_whole_year(agent: Any, thread_id: str) -> None:
    # Was: "your period is 2018-01-01 – 2018-12-31 but the data ends on 2018-01-01: not the whole period".
    turn = await run_turn(agent, thread_id, "中国粗钢产量2018年是多少")
    steel = pd.read_csv(DATA / "crude_steel_production_annual_worldsteel.csv", index_col="year")
    assert_number(turn.text, float(steel.loc[2018, "china_crude_steel_mt"]))
    assert "不是整个时期" not in turn.text


async def test_a_month_with_no_year_is_the_latest_such_month(agent: Any, thread_id: str) -> None:
    # Was: "8月" read as a horizon of eight months, and the whole history's statistics.
    turn = await run_turn(agent, thread_id, "铁矿石期货8月的均价")
    august = _settles("dce_iron_ore_futures_daily.csv")["2026-08"]
    assert turn.calls[0].args == {
        "series": "dce_iron_ore_daily",
        "start": "2026-08",
        "end": "2026-08",
    }
    assert f"均值 {august.mean():,.2f} 元/吨" in turn.text
    assert "“8月”没有说年份" in turn.text and "2026-08" in turn.text


@pytest.mark.parametrize("question", ["PMI高于50意味着什么", "What does a PMI below 50 mean?"])
async def test_what_the_pmi_means_is_a_definition_and_its_latest_value(
    agent: Any, thread_id: str, question: str
) -> None:
    # Was: a ten-month PMI forecast (and a check of the level 50), which no one asked for.
    turn = await run_turn(agent, thread_id, question)
    pmi = pd.read_csv(
        DATA / "china_nbs_manufacturing_pmi_monthly.csv", index_col="date", parse_dates=True
    )["china_nbs_manufacturing_pmi"].dropna()
    assert [(c.name, c.args) for c in turn.calls] == [
        ("latest_price", {"series": "china_pmi_monthly"})
    ]
    assert ("荣枯线" in turn.text) or ("expansion and contraction" in turn.text)
    assert_number(turn.text, float(pmi.iloc[-1]))


async def test_futures_in_dollars_is_converted(agent: Any, thread_id: str) -> None:
    # Was: the yuan price alone, though "用美元表示" was asked.
    turn = await run_turn(agent, thread_id, "铁矿石期货用美元表示是多少")
    price = float(_settles("dce_iron_ore_futures_daily.csv").iloc[-1])
    fx = _usd_cnh()
    assert [c.args["series"] for c in turn.calls] == ["dce_iron_ore_daily", "usd_cnh_daily"]
    assert f"{price:,.2f} 元 = {price / float(fx.iloc[-1]):,.2f} 美元" in turn.text


async def test_does_the_pmi_lead_iron_ore_is_a_lead_lag_check(agent: Any, thread_id: str) -> None:
    # Was: the two latest values, with nothing on leading.
    turn = await run_turn(agent, thread_id, "PMI领先铁矿石吗")
    assert [c.name for c in turn.calls] == ["relate_series"]
    assert {turn.calls[0].args["a"], turn.calls[0].args["b"]} == {
        "china_pmi_monthly",
        "iron_ore_wb_monthly",
    }
    assert "领先滞后" in turn.text


async def test_how_many_days_rose_this_year_is_counted(agent: Any, thread_id: str) -> None:
    # Was: the year's first and last price, no count.
    turn = await run_turn(agent, thread_id, "铁矿石期货今年有几天上涨")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    change = dce.diff()["2026"]  # the year's first day against 2025's last
    up, down = int((change > 0).sum()), int((change < 0).sum())
    assert (
        f"{len(change)} 个交易日中**：上涨 {up} 个（{up / len(change) * 100:.2f}%），下跌 {down} 个"
        in turn.text
    )


async def test_two_quarters_and_one_year_are_two_quarters_of_that_year(
    agent: Any, thread_id: str
) -> None:
    # Was: the whole of 2026 as one range; "（2026年）" was the only year written.
    turn = await run_turn(agent, thread_id, "铁矿石一季度和二季度比较（2026年）")
    wb = _wb_iron_ore()
    assert [c.args for c in turn.calls] == [
        {"series": "iron_ore_wb_monthly", "start": "2026-01", "end": "2026-03"},
        {"series": "iron_ore_wb_monthly", "start": "2026-04", "end": "2026-06"},
    ]
    q1, q2 = wb["2026-01":"2026-03"].mean(), wb["2026-04":"2026-06"].mean()
    line = next(x for x in turn.text.splitlines() if "均值对比" in x)
    assert f"{(q2 / q1 - 1) * 100:+.2f}%" in line


# ---- follow-ups in one thread -------------------------------------------------------------------


async def test_converting_after_a_price_converts_that_price(agent: Any, thread_id: str) -> None:
    # Was: the futures price again, in yuan only.
    await run_turn(agent, thread_id, "铁矿石期货最新价格")
    turn = await run_turn(agent, thread_id, "换成美元是多少")
    price = float(_settles("dce_iron_ore_futures_daily.csv").iloc[-1])
    fx = _usd_cnh()
    assert f"{price:,.2f} 元 = {price / float(fx.iloc[-1]):,.2f} 美元" in turn.text


async def test_how_much_dearer_after_a_price_is_the_spread(agent: Any, thread_id: str) -> None:
    # Was: rebar's statistics alone, no difference.
    await run_turn(agent, thread_id, "热卷价格")
    turn = await run_turn(agent, thread_id, "比螺纹钢贵多少")
    hrc, rebar = (
        _settles("shfe_hot_rolled_coil_futures_daily.csv"),
        _settles("shfe_rebar_futures_daily.csv"),
    )
    assert [c.args["series"] for c in turn.calls] == ["shfe_hrc_daily", "shfe_rebar_daily"]
    assert f"{hrc.iloc[-1] - rebar.iloc[-1]:+,.2f} 元/吨" in turn.text


async def test_the_low_after_this_years_high_is_this_years_low(agent: Any, thread_id: str) -> None:
    # Was: the whole history's statistics (low 285 in 2015).
    await run_turn(agent, thread_id, "铁矿石期货今年最高价是多少")
    turn = await run_turn(agent, thread_id, "最低呢")
    year = _settles("dce_iron_ore_futures_daily.csv")["2026"]
    assert f"最低 {year.min():,.2f} 元/吨（{year.idxmin().date()}）" in turn.text


async def test_which_month_after_a_year_of_futures_keeps_both(agent: Any, thread_id: str) -> None:
    # Was: the World Bank series over its whole history.
    await run_turn(agent, thread_id, "2025年铁矿石期货哪个季度均价最高")
    turn = await run_turn(agent, thread_id, "哪个月跌得最多")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    ends = dce.groupby(dce.index.to_period("M")).last()
    change = ((ends / ends.shift(1) - 1) * 100)["2025-01":"2025-12"]
    line = next(x for x in turn.text.splitlines() if "跌得最多的月份" in x)
    assert "大商所铁矿石期货" in line and f"{change.idxmin()} {change.min():+.2f}%" in line


async def test_months_below_50_after_a_pmi_answer_is_the_run(agent: Any, thread_id: str) -> None:
    # Was: "I only answer questions about iron ore…".
    await run_turn(agent, thread_id, "PMI最近几个月怎么样")
    turn = await run_turn(agent, thread_id, "低于50几个月了")
    pmi = pd.read_csv(
        DATA / "china_nbs_manufacturing_pmi_monthly.csv", index_col="date", parse_dates=True
    )["china_nbs_manufacturing_pmi"].dropna()
    run = 0
    for value in reversed(pmi.to_list()):
        if value >= 50:
            break
        run += 1
    assert f"已连续 {run} 个月低于 50" in turn.text


async def test_the_highest_price_in_yuan_is_the_futures(agent: Any, thread_id: str) -> None:
    # Was: the World Bank's high in US$/dmt, though "多少元" was asked.
    turn = await run_turn(agent, thread_id, "铁矿石价格历史最高是多少元")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    assert turn.calls[0].args == {"series": "dce_iron_ore_daily"}
    assert f"最高 {dce.max():,.2f} 元/吨（{dce.idxmax().date()}）" in turn.text


async def test_volatility_beside_rebar_is_the_futures_on_the_same_days(
    agent: Any, thread_id: str
) -> None:
    # Was: the World Bank's monthly averages (smoother by construction) against rebar's daily settles.
    turn = await run_turn(agent, thread_id, "铁矿石年化波动率和螺纹钢比哪个高")
    assert [c.args["series"] for c in turn.calls] == ["dce_iron_ore_daily", "shfe_rebar_daily"]
    vols = {}
    for file in ("dce_iron_ore_futures_daily.csv", "shfe_rebar_futures_daily.csv"):
        prices = _settles(file)
        rets = np.log(prices).diff().dropna()
        vols[file] = float(
            rets[rets.index > prices.index[-1] - pd.DateOffset(years=1)].std(ddof=1)
            * np.sqrt(252)
            * 100
        )
    line = next(x for x in turn.text.splitlines() if x.startswith("年化波动率"))
    for vol in vols.values():
        assert f"{vol:.2f}%" in line


async def test_rebar_in_dollars_is_converted_without_the_ore_caveat(
    agent: Any, thread_id: str
) -> None:
    # Was: the yuan price alone.
    turn = await run_turn(agent, thread_id, "What's the rebar price per ton in dollars?")
    rebar = float(_settles("shfe_rebar_futures_daily.csv").iloc[-1])
    fx = _usd_cnh()
    assert f"{rebar:,.2f} yuan = {rebar / float(fx.iloc[-1]):,.2f} US$" in turn.text
    assert "World Bank iron ore" not in turn.text


async def test_which_forecast_method_is_best_compares_the_methods(
    agent: Any, thread_id: str
) -> None:
    # Was: one forecast with the auto choice, no comparison.
    turn = await run_turn(agent, thread_id, "Which forecast method is best for iron ore?")
    assert len([c for c in turn.calls if c.name == "backtest_forecast"]) > 1


async def test_comparing_the_two_years_asked_before_is_their_two_means(
    agent: Any, thread_id: str
) -> None:
    # Was: the correlation of rebar with iron ore, which was not asked.
    await run_turn(agent, thread_id, "螺纹钢2025年均价")
    await run_turn(agent, thread_id, "那2024年呢")
    turn = await run_turn(agent, thread_id, "两年比较哪个高")
    rebar = _settles("shfe_rebar_futures_daily.csv")
    a, b = rebar["2024"].mean(), rebar["2025"].mean()
    assert [c.name for c in turn.calls] == ["describe_series", "describe_series"]
    line = next(x for x in turn.text.splitlines() if "均值对比" in x)
    assert (
        f"{a:,.2f} 元/吨" in line
        and f"{b:,.2f} 元/吨" in line
        and f"{(b / a - 1) * 100:+.2f}%" in line
    )


async def test_sgx_swaps_are_no_data_here(agent: Any, thread_id: str) -> None:
    # Was: the DCE and World Bank prices, as if they were the SGX swap.
    turn = await run_turn(agent, thread_id, "新加坡铁矿石掉期价格")
    assert turn.calls == [] and "新加坡交易所（SGX）铁矿石掉期" in turn.text


async def test_ever_below_a_level_is_the_periods_below_it(agent: Any, thread_id: str) -> None:
    # Was: the latest price, and "the 40 dollars you mention does not match the latest price".
    turn = await run_turn(agent, thread_id, "Has iron ore ever been below 40 dollars?")
    wb = _wb_iron_ore()
    assert (wb >= 40).all()
    assert (
        f"never below 40.00 US$/dmt between {wb.index[0].date()} and {wb.index[-1].date()} (low {wb.min():,.2f}"
        in turn.text
    )
    assert "does not match" not in turn.text


async def test_january_to_june_of_one_year_is_that_half_year(agent: Any, thread_id: str) -> None:
    # Was: January 2026 alone ("6月" had no year of its own).
    turn = await run_turn(agent, thread_id, "铁矿石期货2026年1月到6月的走势")
    half = _settles("dce_iron_ore_futures_daily.csv")["2026-01":"2026-06"]
    assert turn.calls[0].args == {
        "series": "dce_iron_ore_daily",
        "start": "2026-01",
        "end": "2026-06",
    }
    assert f"{(half.iloc[-1] / half.iloc[0] - 1) * 100:+.2f}%" in turn.text


async def test_this_week_is_no_month(agent: Any, thread_id: str) -> None:
    # A guard for the month fix of this pass, which first answered "no data for 2026-12" here.
    turn = await run_turn(agent, thread_id, "铁矿石期货这周涨了吗")
    assert "没有 2026-12 的数据" not in turn.text


async def test_a_years_mean_in_dollars_converts_that_mean(agent: Any, thread_id: str) -> None:
    # Was: the latest price converted, not 2025's average.
    turn = await run_turn(agent, thread_id, "铁矿石期货2025年均价换成美元")
    dce = _settles("dce_iron_ore_futures_daily.csv")["2025"]
    fx = _usd_cnh()["2025"]
    both = pd.concat([dce, fx], axis=1, join="inner").dropna()
    line = next(x for x in turn.text.splitlines() if "均价换算" in x)
    assert f"均价 {dce.mean():,.2f} 元/吨" in line and f"均值 {fx.mean():.4f}" in line
    assert f"约合 {dce.mean() / fx.mean():,.2f} 美元/吨" in line
    assert f"是 {(both.iloc[:, 0] / both.iloc[:, 1]).mean():,.2f} 美元/吨" in line


async def test_the_most_volatile_year_is_named(agent: Any, thread_id: str) -> None:
    # Was: the highest calendar year's volatility with no year.
    turn = await run_turn(agent, thread_id, "铁矿石期货波动最大的是哪一年")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    rets = np.log(dce).diff().dropna()
    years = {
        y: float(r.std(ddof=1) * np.sqrt(252) * 100)
        for y, r in rets.groupby(rets.index.year)
        if len(r) >= 0.9 * 252
    }
    top = max(years, key=years.get)
    assert f"最高 {years[top]:.2f}%（{top} 年）" in turn.text


async def test_next_monday_is_that_day(agent: Any, thread_id: str) -> None:
    # Was: a forecast of the whole of next week, to 2026-12-20.
    turn = await run_turn(agent, thread_id, "铁矿石期货下周一的价格")
    assert "2026-12-14：" in turn.text and "到 2026-12-20" not in turn.text


async def test_a_dated_day_past_the_data_is_the_nearest_earlier_day(
    agent: Any, thread_id: str
) -> None:
    # Was: a forecast of 2026-11-30, while "上周五" got the nearest earlier day: now both alike.
    turn = await run_turn(agent, thread_id, "2026年11月30日螺纹钢价格")
    rebar = _settles("shfe_rebar_futures_daily.csv")
    assert [(c.name, c.args) for c in turn.calls] == [
        ("latest_price", {"series": "shfe_rebar_daily"})
    ]
    assert "没有 2026-11-30 的价格" in turn.text and "不是那天的价格" in turn.text
    assert_number(turn.text, float(rebar.iloc[-1]))


@pytest.mark.parametrize(
    ("question", "high"),
    [("铁矿石的历史最高价是哪天", True), ("On what date was iron ore at its lowest?", False)],
)
async def test_which_day_is_the_daily_futures_day(
    agent: Any, thread_id: str, question: str, high: bool
) -> None:
    # Was: the World Bank's monthly high dated 2021-06-01, a month read as a day.
    turn = await run_turn(agent, thread_id, question)
    dce, wb = _settles("dce_iron_ore_futures_daily.csv"), _wb_iron_ore()
    assert turn.calls[0].args == {"series": "dce_iron_ore_daily"}
    day = dce.idxmax() if high else dce.idxmin()
    assert f"{dce[day]:,.2f}" in turn.text and str(day.date()) in turn.text
    month = wb.idxmax() if high else wb.idxmin()
    assert f"{month:%Y-%m}" in turn.text and f"{wb[month]:,.2f}" in turn.text


@pytest.mark.parametrize(
    ("question", "file", "year"),
    [
        ("2025年螺纹钢涨了还是跌了", "shfe_rebar_futures_daily.csv", "2025"),
        ("今年以来铁矿石期货涨了多少", "dce_iron_ore_futures_daily.csv", "2026"),
    ],
)
async def test_a_years_change_is_also_given_from_the_year_before(
    agent: Any, thread_id: str, question: str, file: str, year: str
) -> None:
    # Was: only from the year's first trading day, leaving out the move from the last day of the year before.
    turn = await run_turn(agent, thread_id, question)
    prices = _settles(file)
    base = prices[prices.index < pd.Timestamp(f"{year}-01-01")]
    end = prices[year].iloc[-1]
    line = next(x for x in turn.text.splitlines() if "从区间前最后一个值" in x)
    assert (
        f"（{base.index[-1].date()}，{base.iloc[-1]:,.2f} 元/吨）算起：{(end / base.iloc[-1] - 1) * 100:+.2f}%"
        in line
    )


async def test_this_years_correlation_with_rebar_is_the_futures(agent: Any, thread_id: str) -> None:
    # Was: "only 4 common periods, at least 10 needed" (the World Bank's months against rebar's).
    turn = await run_turn(agent, thread_id, "铁矿石和螺纹钢今年的相关性")
    assert [c.args["a"] for c in turn.calls] == ["dce_iron_ore_daily"]
    # The year's first return is from 2025's last settle, as a period's volatility is.
    ore = np.log(_settles("dce_iron_ore_futures_daily.csv")).diff()
    rebar = np.log(_settles("shfe_rebar_futures_daily.csv")).diff()
    both = pd.concat([ore, rebar], axis=1, join="inner").dropna().loc["2026"]
    assert f"{both.index[0].date()} 至" in turn.text and f"{len(both)} 期" in turn.text
    assert f"相关系数 {both.iloc[:, 0].corr(both.iloc[:, 1]):.4f}" in turn.text
