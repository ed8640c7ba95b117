"""Answers a fifth QA pass found wrong (asked on Monday 2026-12-07, as a user would).

Every expected number is recomputed here with pandas from the bundled CSVs, not read from the tools.
"""

from __future__ import annotations

import math
import re
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import orecast.market as market_pkg
from orecast import market
from orecast.market.rolls import likely_rolls
from tests.agent.conftest import run_turn
from tests.agent.test_conversation import assert_number

TODAY = date(2026, 12, 7)  # a Monday: last Friday is 2026-12-04
DATA = Path(market_pkg.__file__).parent / "data"


@pytest.fixture(autouse=True)
def pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", TODAY.isoformat())


def _settles(file: str) -> pd.Series:
    frame = pd.read_csv(DATA / file, index_col="date", parse_dates=True)
    return frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"]).dropna()


async def test_last_friday_is_2026_12_04_and_the_data_stops_before_it(agent: Any, thread_id: str) -> None:
    # Was: the latest prices of both series, with no word of which day "last Friday" is.
    turn = await run_turn(agent, thread_id, "上周五的价格")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    assert "2026-12-04" in turn.text and "星期五" in turn.text
    assert [c.name for c in turn.calls] == ["latest_price"]
    assert turn.calls[0].args == {"series": "dce_iron_ore_daily"}
    assert f"数据只到 {dce.index[-1].date()}" in turn.text and "不是那天的价格" in turn.text
    assert_number(turn.text, float(dce.iloc[-1]))


async def test_last_friday_inside_the_data_is_that_day(agent: Any, thread_id: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", "2025-10-13")  # Monday: last Friday 2025-10-10 traded
    turn = await run_turn(agent, thread_id, "last Friday's rebar price")
    rebar = _settles("shfe_rebar_futures_daily.csv")
    assert turn.calls[0].args == {"series": "shfe_rebar_daily", "start": "2025-10-10", "end": "2025-10-10"}
    assert_number(turn.text, float(rebar[pd.Timestamp("2025-10-10")]))


async def test_christmas_2024_is_a_trading_day_in_china_with_its_neighbours(agent: Any, thread_id: str) -> None:
    # Was: the World Bank's 2024 yearly summary, with no word of the day.
    turn = await run_turn(agent, thread_id, "圣诞节2024年铁矿石价格")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    assert turn.calls[0].args == {"series": "dce_iron_ore_daily", "start": "2024-12-25", "end": "2024-12-25"}
    assert "不是中国的法定假日" in turn.text and "SGX" in turn.text
    for day in ("2024-12-24", "2024-12-25", "2024-12-26"):
        assert day in turn.text
        assert_number(turn.text, float(dce[pd.Timestamp(day)]))


async def test_1990_is_the_old_contract_price_in_its_own_unit(agent: Any, thread_id: str) -> None:
    # Was: "no data for 1990" and the 2026 price in US$/dmt, though the file holds 1990 in another unit.
    turn = await run_turn(agent, thread_id, "1990年铁矿石价格")
    raw = pd.read_csv(DATA / "iron_ore_monthly_worldbank.csv", index_col="date", parse_dates=True)
    year = raw.loc["1990"]
    assert set(year["unit"]) == {"US cents per dmtu (1% Fe unit per dry metric tonne)"}
    assert turn.calls == []  # no US$/dmt price beside it
    assert_number(turn.text, float(year["iron_ore_price"].mean()))
    assert "美分/干吨度" in turn.text and "卡拉加斯" in turn.text and "不把它换算" in turn.text
    latest = float(market.load_series("iron_ore_wb_monthly").iloc[-1])
    assert f"{latest:.2f}" not in turn.text


async def test_1990_in_english_is_the_old_contract_price_too(agent: Any, thread_id: str) -> None:
    turn = await run_turn(agent, thread_id, "What was the iron ore price in 1990?")
    raw = pd.read_csv(DATA / "iron_ore_monthly_worldbank.csv", index_col="date", parse_dates=True)
    assert turn.calls == [] and "US cents per dmtu" in turn.text and "Carajas" in turn.text
    assert_number(turn.text, float(raw.loc["1990", "iron_ore_price"].mean()))


async def test_2025_largest_one_day_rise_is_recomputed(agent: Any, thread_id: str) -> None:
    # Was: "I only answer questions about iron ore…" (out of scope).
    turn = await run_turn(agent, thread_id, "2025年最大的单日涨幅")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    change = (dce / dce.shift(1) - 1)["2025"] * 100
    day = change.idxmax()
    assert turn.calls[0].args == {"series": "dce_iron_ore_daily", "start": "2025", "end": "2025"}
    line = next(x for x in turn.text.splitlines() if "最大单日涨幅" in x)
    assert line.split("：", 1)[1].startswith(f"{day.date()} +{change.max():.2f}%")
    assert_number(line, float(dce[day] - dce.shift(1)[day]))
    assert "换月" in turn.text  # a continuous contract's roll is no market move


async def test_2027_average_is_a_forecast_with_its_band(agent: Any, thread_id: str) -> None:
    # Was: the twelve monthly rows only, no average, so nothing answered "average".
    turn = await run_turn(agent, thread_id, "2027年平均价格")
    assert turn.calls[0].name == "forecast_price"
    result = next(r for r in turn.results if r.name == "forecast_price")
    rows = [r for r in _payload(result.content)["forecast"] if r["date"].startswith("2027")]
    assert len(rows) == 12
    line = next(x for x in turn.text.splitlines() if "平均价格" in x)
    assert "预测，不是实际数据" in line
    assert_number(line, float(np.mean([r["mean"] for r in rows])))
    assert_number(line, float(np.mean([r["lo_80"] for r in rows])))
    assert_number(line, float(np.mean([r["hi_80"] for r in rows])))


def _payload(content: Any) -> dict[str, Any]:
    from orecast.agent.tools import payload_of

    return payload_of(content if isinstance(content, str) else str(content))


async def test_why_the_bands_are_wide_is_read_from_the_forecast(agent: Any, thread_id: str) -> None:
    # Was: boilerplate that price data cannot show causes, over the forecast.
    turn = await run_turn(agent, thread_id, "为什么预测区间这么宽")
    assert "不能证明变化的原因" not in turn.text
    p = _payload(next(r for r in turn.results if r.name == "forecast_price").content)
    # The months the futures' averages carried over (nowcast past the World Bank's end) are narrow and
    # said apart; the width builds up from the first month after them.
    carried = p.get("bridged", {}).get("periods", [])
    rows = [r for r in p["forecast"] if r["date"] not in carried]
    first, last = rows[0], rows[-1]
    sigma = math.log(first["hi_80"] / first["mean"]) / 1.2815516
    assert f"{sigma * 100:.2f}%" in turn.text
    ratio = (last["hi_80"] - last["lo_80"]) / (first["hi_80"] - first["lo_80"])
    assert f"{ratio:.2f} 倍" in turn.text and f"√{len(rows)}" in turn.text


async def test_pmi_forecast_says_the_covid_months_are_left_out(agent: Any, thread_id: str) -> None:
    turn = await run_turn(agent, thread_id, "PMI未来3个月预测")
    pmi = pd.read_csv(DATA / "china_nbs_manufacturing_pmi_monthly.csv", index_col="date",
                      parse_dates=True)["china_nbs_manufacturing_pmi"]
    d = pmi.diff().dropna()
    share = (d[["2020-02-01", "2020-03-01", "2020-04-01"]] ** 2).sum() / (d**2).sum() * 100
    assert "2020-02-01" in turn.text and "2020-03-01" in turn.text
    assert f"{share:.2f}%" in turn.text


@pytest.mark.parametrize(("question", "words"), [
    ("今天是几号", "今天是 2026-12-07（星期一）"),
    ("What's the date today?", "Today is 2026-12-07 (Monday)"),
])
async def test_todays_date_is_the_date(agent: Any, thread_id: str, question: str, words: str) -> None:
    # Was: "I only answer questions about iron ore…".
    turn = await run_turn(agent, thread_id, question)
    assert turn.calls == [] and words in turn.text
    dce_end = _settles("dce_iron_ore_futures_daily.csv").index[-1].date().isoformat()
    assert dce_end in turn.text


async def test_price_per_tonne_in_rmb_is_the_yuan_series_only(agent: Any, thread_id: str) -> None:
    # Was: the DCE futures and the World Bank's US$ price, as for a bare "price now".
    turn = await run_turn(agent, thread_id, "多少钱一吨（人民币）")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    assert [(c.name, c.args) for c in turn.calls] == [("latest_price", {"series": "dce_iron_ore_daily"})]
    assert_number(turn.text, float(dce.iloc[-1]))
    assert str(dce.index[-1].date()) in turn.text and "大商所铁矿石期货" in turn.text
    assert "美元/干吨）" not in re.sub(r"以美元/干吨计价", "", turn.text)


# ---- new questions of this pass (Chinese first), each answer recomputed -------------------------

def _wb_iron_ore() -> pd.Series:
    raw = pd.read_csv(DATA / "iron_ore_monthly_worldbank.csv", index_col="date", parse_dates=True)
    return raw.loc["2006-01-01":, "iron_ore_price"]


def _usd_cnh() -> pd.Series:
    return pd.read_csv(DATA / "usd_cnh_daily.csv", index_col="date", parse_dates=True)["usd_cnh"].dropna()


async def test_a_figure_in_dollars_per_tonne_is_converted(agent: Any, thread_id: str) -> None:
    # Was: the DCE price (and before this pass both prices), no conversion: "等于多少" was not read.
    turn = await run_turn(agent, thread_id, "100美元/吨等于多少元/吨")
    fx = _usd_cnh()
    assert [c.args for c in turn.calls] == [{"series": "usd_cnh_daily"}]
    assert_number(turn.text, 100 * float(fx.iloc[-1]))
    assert "只是货币换算" in turn.text


@pytest.mark.parametrize(("question", "series", "to"), [
    ("铁矿石期货换算成美元是多少", "dce_iron_ore_daily", "USD"),
    ("世界银行铁矿石价格折合人民币多少", "iron_ore_wb_monthly", "CNY"),
])
async def test_the_latest_price_is_converted_when_no_figure_is_given(
        agent: Any, thread_id: str, question: str, series: str, to: str) -> None:
    # Was: the price in its own currency only.
    turn = await run_turn(agent, thread_id, question)
    fx = float(_usd_cnh().iloc[-1])
    price = float(_settles("dce_iron_ore_futures_daily.csv").iloc[-1]) if series.startswith("dce") \
        else float(_wb_iron_ore().iloc[-1])
    assert [c.args["series"] for c in turn.calls] == [series, "usd_cnh_daily"]
    assert_number(turn.text, price / fx if to == "USD" else price * fx)
    assert "不是同一天" in turn.text  # the price's date and the rate's date differ


async def test_which_month_iron_ore_rises_most_is_the_seasonality(agent: Any, thread_id: str) -> None:
    # Was: the latest prices ("几月份" was no seasonality word).
    turn = await run_turn(agent, thread_id, "铁矿石几月份最容易涨")
    changes = _wb_iron_ore().pct_change().dropna() * 100
    by_month = changes.groupby(changes.index.month).mean()
    best = int(by_month.idxmax())
    assert f"平均涨幅最大的是 {best} 月（{by_month[best]:+.2f}%）" in turn.text


async def test_rebar_in_the_first_quarter_usually_is_the_seasonality(agent: Any, thread_id: str) -> None:
    # Was: rebar's latest price.
    turn = await run_turn(agent, thread_id, "螺纹钢一季度通常涨还是跌")
    monthly = _settles("shfe_rebar_futures_daily.csv").resample("MS").mean()
    changes = monthly.pct_change().dropna() * 100
    by_month = changes.groupby(changes.index.month).mean()
    for m in (1, 2, 3):
        assert f"{m}月 {by_month[m]:+.2f}%" in turn.text


@pytest.mark.parametrize("question", ["推荐一只钢铁股", "Which steel stocks should I buy?"])
async def test_stock_picks_are_out_of_scope_said_plainly(agent: Any, thread_id: str, question: str) -> None:
    # Was: the generic "I only answer…" (English) or the help text, not that stocks are not covered.
    turn = await run_turn(agent, thread_id, question)
    assert turn.calls == []
    assert ("不提供投资建议" in turn.text) or ("give no investment advice" in turn.text)


async def test_compared_with_the_same_time_last_year_is_the_yearly_change(agent: Any, thread_id: str) -> None:
    # Was: last calendar year's history (2025-01 to 2025-12), which is no year-on-year comparison.
    turn = await run_turn(agent, thread_id, "铁矿石价格比去年同期高还是低")
    assert all(c.name == "latest_price" for c in turn.calls)
    wb = _wb_iron_ore()
    year_before = wb[wb.index <= wb.index[-1] - pd.DateOffset(years=1)].iloc[-1]
    assert f"{(wb.iloc[-1] / year_before - 1) * 100:+.2f}%" in turn.text


async def test_ten_points_of_a_futures_price_are_yuan_not_percent(agent: Any, thread_id: str) -> None:
    # Was: the latest price, with nothing about what a point is.
    turn = await run_turn(agent, thread_id, "铁矿石期货跌了10个点是什么意思")
    last = float(_settles("dce_iron_ore_futures_daily.csv").iloc[-1])
    assert "1 个点 = 1 元/吨" in turn.text
    assert f"约是 {10 / last * 100:.2f}%" in turn.text
    assert_number(turn.text, last * 0.10)  # what 10 % would have been


async def test_pmi_months_in_a_row_below_50(agent: Any, thread_id: str) -> None:
    # Was: the latest PMI only.
    turn = await run_turn(agent, thread_id, "PMI连续几个月低于50了")
    pmi = pd.read_csv(DATA / "china_nbs_manufacturing_pmi_monthly.csv", index_col="date",
                      parse_dates=True)["china_nbs_manufacturing_pmi"].dropna()
    below = pmi < 50
    run = 0
    for flag in reversed(below.to_list()):
        if not flag:
            break
        run += 1
    assert run >= 1 and f"已连续 {run} 个月低于 50（从 {pmi.index[-run].date()} 起）" in turn.text


async def test_yuan_appreciation_this_year_is_usd_cnh_read_the_other_way(agent: Any, thread_id: str) -> None:
    # Was: the World Bank iron ore price's history ("人民币…升值" named no series).
    turn = await run_turn(agent, thread_id, "人民币今年升值了多少")
    fx = _usd_cnh()["2026"]
    assert turn.calls[0].args["series"] == "usd_cnh_daily"
    assert f"人民币对美元升值 {(fx.iloc[0] / fx.iloc[-1] - 1) * 100:.2f}%" in turn.text


async def test_futures_against_the_world_bank_price_is_no_spread(agent: Any, thread_id: str) -> None:
    # Was: the futures price alone; a spread of CNY/t and US$/dmt would be meaningless.
    turn = await run_turn(agent, thread_id, "铁矿石期货和世界银行价格差多少")
    assert [c.args["series"] for c in turn.calls] == ["dce_iron_ore_daily", "iron_ore_wb_monthly"]
    assert "单位不同，直接相减没有意义" in turn.text


async def test_a_change_is_given_in_percent_and_in_dollars(agent: Any, thread_id: str) -> None:
    # Was: the % change only, though "涨了多少美元" was asked.
    turn = await run_turn(agent, thread_id, "铁矿石今年涨了百分之几，涨了多少美元")
    wb = _wb_iron_ore()["2026"]
    assert f"{(wb.iloc[-1] / wb.iloc[0] - 1) * 100:+.2f}%（{wb.iloc[-1] - wb.iloc[0]:+.2f} 美元/干吨）" in turn.text


async def test_two_quarters_compared_are_two_means(agent: Any, thread_id: str) -> None:
    # Was: one range from 2024-10 to 2025-12 and its single mean.
    turn = await run_turn(agent, thread_id, "2024年四季度和2025年四季度铁矿石均价比较")
    wb = _wb_iron_ore()
    a, b = wb["2024-10":"2024-12"].mean(), wb["2025-10":"2025-12"].mean()
    line = next(x for x in turn.text.splitlines() if "均值对比" in x)
    assert_number(line, float(a))
    assert_number(line, float(b))
    assert f"{(b / a - 1) * 100:+.2f}%" in line


@pytest.mark.parametrize(("question", "words"), [
    ("铁矿石期货的涨停板是多少", "我没有交易所规则"),
    ("铁矿石期货一手多少吨", "我没有交易所规则"),
    ("澳元汇率多少", "我没有美元兑人民币以外的汇率"),
])
async def test_rules_and_other_currencies_get_no_substitute_number(
        agent: Any, thread_id: str, question: str, words: str) -> None:
    # Was: the latest iron ore futures price (or USD/CNH for the Australian dollar).
    turn = await run_turn(agent, thread_id, question)
    assert turn.calls == [] and words in turn.text
    assert f"{float(_usd_cnh().iloc[-1]):.4f}" not in turn.text


async def test_the_impact_of_a_rate_hike_is_no_scenario_the_data_has(agent: Any, thread_id: str) -> None:
    # Was: the latest prices, as if they answered the question.
    turn = await run_turn(agent, thread_id, "美联储加息对铁矿石有什么影响")
    assert turn.calls == [] and "我没有利率的历史数据" in turn.text


async def test_will_iron_ore_reach_200_dollars_is_a_target_check(agent: Any, thread_id: str) -> None:
    # Was: the latest price only ("会到" was no level verb).
    turn = await run_turn(agent, thread_id, "铁矿石价格会到200美元吗")
    wb = _wb_iron_ore()
    assert turn.calls[0].name == "forecast_price" and turn.calls[0].args["series"] == "iron_ore_wb_monthly"
    assert f"高 {(200 / wb.iloc[-1] - 1) * 100:.2f}%" in turn.text


async def test_tomorrows_open_says_the_forecast_is_of_the_settle(agent: Any, thread_id: str) -> None:
    # Was: a forecast of the settlement price, presented for "开盘价" without a word.
    turn = await run_turn(agent, thread_id, "铁矿石期货明天开盘价")
    assert turn.calls[0].name == "forecast_price"
    assert "不是开盘价" in turn.text


async def test_dollars_per_tonne_is_the_world_bank_price_alone(agent: Any, thread_id: str) -> None:
    # Was: the DCE price in yuan first ("美元一吨" was not read as a price in dollars).
    turn = await run_turn(agent, thread_id, "铁矿石价格是多少美元一吨")
    assert [c.args for c in turn.calls] == [{"series": "iron_ore_wb_monthly"}]
    assert_number(turn.text, float(_wb_iron_ore().iloc[-1]))


async def test_a_years_average_partly_in_the_data_blends_data_and_forecast(agent: Any, thread_id: str) -> None:
    # Was: "no data holds the period yet" for 2026 (data to May) and no 2026 average at all.
    turn = await run_turn(agent, thread_id, "2026年铁矿石均价预计多少")
    wb = _wb_iron_ore()["2026"]
    assert "还没有实际数据" not in turn.text
    fc = _payload(next(r for r in turn.results if r.name == "forecast_price").content)
    rows = [r for r in fc["forecast"] if r["date"] > str(wb.index[-1].date()) and r["date"] <= "2026-12-31"]
    line = next(x for x in turn.text.splitlines() if "整个时期的平均价格" in x)
    assert_number(line, float(wb.mean()))
    assert_number(line, (float(wb.sum()) + sum(r["mean"] for r in rows)) / (len(wb) + len(rows)))
    assert len(wb) + len(rows) == 12


async def test_the_last_trading_day_before_the_spring_festival(agent: Any, thread_id: str) -> None:
    # Was: the latest price ("春节前" made no day).
    turn = await run_turn(agent, thread_id, "铁矿石期货春节前最后一个交易日价格")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    before = dce[dce.index < pd.Timestamp("2026-02-16")]  # 2026's closure: 2026-02-16 to 2026-02-23
    day = before.index[-1]
    assert turn.calls[0].args == {"series": "dce_iron_ore_daily", "start": str(day.date()), "end": str(day.date())}
    assert_number(turn.text, float(before.iloc[-1]))
    assert "2026-02-16 至 2026-02-23" in turn.text


async def test_cheaper_than_a_year_ago_is_the_yearly_change_in_yuan(agent: Any, thread_id: str) -> None:
    # Was: the whole history's statistics, with no change in yuan.
    turn = await run_turn(agent, thread_id, "铁矿石期货比一年前便宜多少钱")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    before = dce[dce.index <= dce.index[-1] - pd.DateOffset(years=1)].iloc[-1]
    assert [c.name for c in turn.calls] == ["latest_price"]
    assert f"{dce.iloc[-1] - before:+.2f} 元/吨" in turn.text


async def test_ten_percent_up_is_computed_on_each_latest_price(agent: Any, thread_id: str) -> None:
    # Was: the latest prices, with the arithmetic left to the user.
    turn = await run_turn(agent, thread_id, "铁矿石涨10%是多少钱")
    dce = float(_settles("dce_iron_ore_futures_daily.csv").iloc[-1])
    wb = float(_wb_iron_ore().iloc[-1])
    assert [c.args["series"] for c in turn.calls] == ["dce_iron_ore_daily", "iron_ore_wb_monthly"]
    assert f"是 {dce * 1.1:,.2f} 元/吨" in turn.text and f"是 {wb * 1.1:,.2f} 美元/干吨" in turn.text


async def test_a_yuan_figure_is_placed_in_the_yuan_history(agent: Any, thread_id: str) -> None:
    # Was: the World Bank's US$ statistics, which say nothing about 1000 yuan.
    turn = await run_turn(agent, thread_id, "1000元一吨的铁矿石贵吗")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    assert turn.calls[0].args == {"series": "dce_iron_ore_daily"}
    assert f"第 {(dce <= 1000).mean() * 100:.2f} 百分位" in turn.text


async def test_the_spread_of_two_histories_at_start_and_end(agent: Any, thread_id: str) -> None:
    # Was: two histories, no spread.
    turn = await run_turn(agent, thread_id, "今年以来螺纹钢和热卷的价差变化")
    rb = _settles("shfe_rebar_futures_daily.csv")["2026"]
    hc = _settles("shfe_hot_rolled_coil_futures_daily.csv")["2026"]
    s0, s1 = rb.iloc[0] - hc.iloc[0], rb.iloc[-1] - hc.iloc[-1]
    assert f"{s0:+,.2f} 元/吨" in turn.text and f"{s1:+,.2f} 元/吨" in turn.text
    assert f"期间变化 {s1 - s0:+,.2f} 元/吨" in turn.text


async def test_last_week_is_the_calendar_week_before_this_one(agent: Any, thread_id: str) -> None:
    # Was: the whole history since 2013 ("上周" was no period).
    turn = await run_turn(agent, thread_id, "上周铁矿石期货走势")
    assert turn.calls[0].name == "forecast_price"  # the data ends in August: that week is a forecast
    assert "2026-11-30 – 2026-12-06" in turn.text


async def test_this_friday_is_forecast_to_that_day(agent: Any, thread_id: str) -> None:
    # Was: a forecast to today (Monday), not to Friday 2026-12-11.
    turn = await run_turn(agent, thread_id, "这周五铁矿石期货会怎样")
    p = _payload(next(r for r in turn.results if r.name == "forecast_price").content)
    assert p["forecast"][-1]["date"] == "2026-12-11"


async def test_the_futures_average_in_dollars_is_the_world_bank_beside_it(agent: Any, thread_id: str) -> None:
    # Was: the futures' yuan statistics for a question in dollars.
    turn = await run_turn(agent, thread_id, "铁矿石期货2025年平均价格是多少美元")
    assert [c.args["series"] for c in turn.calls] == ["dce_iron_ore_daily", "iron_ore_wb_monthly"]
    assert_number(turn.text, float(_wb_iron_ore()["2025"].mean()))
    assert "没有美元价格" in turn.text


@pytest.mark.parametrize(("question", "words"), [
    ("明天是星期几", "明天是 2026-12-08（星期二）"),
    ("What day is it tomorrow?", "Tomorrow is 2026-12-08 (a Tuesday)"),
])
async def test_tomorrows_weekday_is_a_date(agent: Any, thread_id: str, question: str, words: str) -> None:
    # Was: "I only answer questions about iron ore…".
    turn = await run_turn(agent, thread_id, question)
    assert turn.calls == [] and words in turn.text


async def test_both_currencies_asked_get_both_prices(agent: Any, thread_id: str) -> None:
    # A guard for the RMB fix above: "人民币和美元都要" must keep the dollar price too.
    turn = await run_turn(agent, thread_id, "铁矿石现在是多少钱一吨，人民币和美元都要")
    assert [c.args["series"] for c in turn.calls] == ["dce_iron_ore_daily", "iron_ore_wb_monthly"]


async def test_which_year_was_more_volatile_compares_the_two_years(agent: Any, thread_id: str) -> None:
    # Was: one statistic over 2024-2025 together.
    turn = await run_turn(agent, thread_id, "2024年和2025年哪年铁矿石波动更大")
    # Each year's returns, its first from the December before (QA6: it was left out).
    vol = {y: float(np.log(_wb_iron_ore()).diff()[str(y)].std(ddof=1) * np.sqrt(12) * 100) for y in (2024, 2025)}
    hi, lo = sorted(vol, key=vol.get, reverse=True)
    assert (f"{hi}-01-01 至 {hi}-12-01 {vol[hi]:.2f}% > {lo}-01-01 至 {lo}-12-01 {vol[lo]:.2f}%") in turn.text


@pytest.mark.parametrize("question", ["How much would iron ore be if it rose 20%?", "如果铁矿石涨20%，价格是多少"])
async def test_if_it_rose_20_percent_is_its_own_price_times_1_2(agent: Any, thread_id: str, question: str) -> None:
    # Was: a scenario of rebar moving with iron ore, which was not asked.
    turn = await run_turn(agent, thread_id, question)
    assert all(c.name == "latest_price" for c in turn.calls)
    assert_number(turn.text, float(_settles("dce_iron_ore_futures_daily.csv").iloc[-1]) * 1.2)
    assert_number(turn.text, float(_wb_iron_ore().iloc[-1]) * 1.2)


async def test_the_years_below_a_level_are_listed(agent: Any, thread_id: str) -> None:
    # Was: the latest price, which says nothing about when the price was under 50 dollars.
    turn = await run_turn(agent, thread_id, "在50美元以下的时候铁矿石是哪些年")
    wb = _wb_iron_ore()
    below = wb[wb < 50]
    for year, n in below.groupby(below.index.year).size().items():
        assert f"{year} 年（{n} 个月）" in turn.text
    assert f"共 {len(below)} 个月" in turn.text and str(below.index[-1].date()) in turn.text


async def test_days_of_rebar_below_3000_are_counted(agent: Any, thread_id: str) -> None:
    turn = await run_turn(agent, thread_id, "螺纹钢低于3000元的有多少天")
    rb = _settles("shfe_rebar_futures_daily.csv")
    assert f"共 {int((rb < 3000).sum())} 个交易日" in turn.text


@pytest.mark.parametrize(("question", "words"), [
    ("铁矿石期货均线", "我没有技术指标"),
    ("铁矿石价格与美元指数的关系", "我没有美元指数"),
    ("青岛港PB粉价格", "我没有港口现货价格"),
    ("62%和65%铁矿石价差", "62% 以外品位"),
])
async def test_data_it_lacks_gets_no_substitute(agent: Any, thread_id: str, question: str, words: str) -> None:
    # Was: the latest futures price (均线, PB粉), iron ore against its own futures (美元指数), or the
    # 62% price alone (65%).
    turn = await run_turn(agent, thread_id, question)
    assert turn.calls == [] and words in turn.text


async def test_which_day_fell_most_last_month_is_the_largest_fall(agent: Any, thread_id: str) -> None:
    # Was: the month's history summary, no day.
    turn = await run_turn(agent, thread_id, "最近一个月铁矿石期货哪天跌得最多")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    start = dce.index[-1] - pd.DateOffset(months=1)
    change = (dce / dce.shift(1) - 1)[dce.index >= start] * 100
    line = next(x for x in turn.text.splitlines() if "最大单日跌幅" in x)
    assert line.split("：", 1)[1].startswith(f"{change.idxmin().date()} {change.min():+.2f}%")


async def test_days_in_a_row_is_the_run_the_data_ends_with(agent: Any, thread_id: str) -> None:
    # Was: the latest price only.
    turn = await run_turn(agent, thread_id, "铁矿石期货连续下跌了几天")
    d = _settles("dce_iron_ore_futures_daily.csv").diff().dropna()
    up = d.iloc[-1] > 0
    run = next(i for i, c in enumerate(reversed(d.to_list())) if (c > 0) != up or c == 0)
    assert f"已连续 {run} 个交易日{'上涨' if up else '下跌'}" in turn.text


async def test_the_52_week_high_is_the_last_years_high(agent: Any, thread_id: str) -> None:
    # Was: the latest price.
    turn = await run_turn(agent, thread_id, "What is the 52-week high of iron ore futures?")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    year = dce[dce.index >= dce.index[-1] - pd.DateOffset(years=1)]
    assert turn.calls[0].name == "describe_series"
    assert f"max {year.max():,.2f} CNY/t ({year.idxmax().date()})" in turn.text


async def test_percent_and_yuan_is_a_unit_not_the_exchange_rate(agent: Any, thread_id: str) -> None:
    # Was: coking coal and USD/CNH ("yuan" read as the exchange rate).
    turn = await run_turn(agent, thread_id, "Give me the YTD change for coking coal in percent and yuan")
    jm = _settles("dce_coking_coal_futures_daily.csv")["2026"]
    assert [c.args["series"] for c in turn.calls] == ["dce_coking_coal_daily"]
    assert f"({jm.iloc[-1] - jm.iloc[0]:+,.2f} CNY/t)" in turn.text


async def test_should_i_buy_gets_no_advice_and_the_statistics(agent: Any, thread_id: str) -> None:
    # Was: the latest prices, with nothing on the question.
    turn = await run_turn(agent, thread_id, "铁矿石现在适合买入吗")
    assert turn.calls[0].name == "describe_series" and "我不提供买卖建议" in turn.text
    wb = _wb_iron_ore()
    assert f"第 {(wb <= wb.iloc[-1]).mean() * 100:.2f} 百分位" in turn.text


def _chance_above(row: dict[str, Any], level: float) -> float:
    """P(value ≥ level) on a forecast row, Gaussian in logs from its median and 80 % band."""
    from statistics import NormalDist

    sigma = (math.log(row["hi_80"]) - math.log(row["lo_80"])) / (2 * NormalDist().inv_cdf(0.9))
    return 1 - NormalDist().cdf((math.log(level) - math.log(row["mean"])) / sigma)


async def test_surely_up_next_month_gets_a_probability_not_a_yes(agent: Any, thread_id: str) -> None:
    # Was: the forecast rows, with "一定" left unanswered.
    turn = await run_turn(agent, thread_id, "铁矿石下个月一定会涨吧")
    p = _payload(next(r for r in turn.results if r.name == "forecast_price").content)
    up = _chance_above(p["forecast"][-1], p["last"]["value"])
    assert "不能确定" in turn.text and f"的概率约 {100 * up:.0f}%" in turn.text


@pytest.mark.parametrize("question", ["What's the probability iron ore is above 100 dollars in 6 months?",
                                      "6个月后铁矿石高于100美元的概率"])
async def test_above_a_level_is_the_chance_of_ending_above_it(agent: Any, thread_id: str, question: str) -> None:
    # Was: no probability (English), or "你说涨到100" and the chance of ending *below* 100 (Chinese).
    turn = await run_turn(agent, thread_id, question)
    p = _payload(next(r for r in turn.results if r.name == "forecast_price").content)
    chance = _chance_above(p["forecast"][-1], 100.0)
    assert (f"about {100 * chance:.0f}%" in turn.text) or (f"以上的概率约 {100 * chance:.0f}%" in turn.text)
    assert "涨到 100" not in turn.text and "rises to 100" not in turn.text


async def test_a_week_of_daily_prices_is_the_daily_futures(agent: Any, thread_id: str) -> None:
    # Was: seven *monthly* World Bank steps for "next week".
    turn = await run_turn(agent, thread_id, "铁矿石未来一周每天的价格")
    assert turn.calls[0].args["series"] == "dce_iron_ore_daily"


async def test_futures_against_the_world_bank_over_the_last_year(agent: Any, thread_id: str) -> None:
    # Was: the futures alone, over calendar 2025.
    turn = await run_turn(agent, thread_id, "Compare iron ore futures and the World Bank price over the last year")
    dce, wb = _settles("dce_iron_ore_futures_daily.csv"), _wb_iron_ore()
    assert [c.args for c in turn.calls] == [
        {"series": "dce_iron_ore_daily", "start": str((dce.index[-1] - pd.DateOffset(years=1)).date())},
        {"series": "iron_ore_wb_monthly", "start": str((wb.index[-1] - pd.DateOffset(years=1)).date())}]


async def test_high_minus_low_is_computed(agent: Any, thread_id: str) -> None:
    # Was: the high and the low listed, their difference left to the reader.
    turn = await run_turn(agent, thread_id, "铁矿石期货今年的最高点和最低点差了多少")
    y = _settles("dce_iron_ore_futures_daily.csv")["2026"]
    line = next(x for x in turn.text.splitlines() if "最高与最低相差" in x)
    assert f"{y.max() - y.min():,.2f} 元/吨（最高比最低高 {(y.max() / y.min() - 1) * 100:.2f}%）" in line
    assert str(y.idxmax().date()) in line and str(y.idxmin().date()) in line


async def test_a_month_against_the_month_before_is_two_means(agent: Any, thread_id: str) -> None:
    # Was: "开始日期 2025-12 晚于结束日期 2025-11" (an error), as one reversed range.
    turn = await run_turn(agent, thread_id, "2025年12月铁矿石期货均价和2025年11月比")
    dce = _settles("dce_iron_ore_futures_daily.csv")
    nov, dec = dce["2025-11"].mean(), dce["2025-12"].mean()
    line = next(x for x in turn.text.splitlines() if "均值对比" in x)
    assert line.index("2025-11") < line.index("2025-12")
    assert f"后者比前者 {(dec / nov - 1) * 100:+.2f}%（{dec - nov:+.2f} 元/吨）" in line


async def test_where_the_price_stands_in_its_history_is_its_percentile(agent: Any, thread_id: str) -> None:
    # Was: the whole history's first and last values.
    turn = await run_turn(agent, thread_id, "铁矿石价格现在处于历史什么水平")
    wb = _wb_iron_ore()
    assert turn.calls[0].name == "describe_series"
    assert f"第 {(wb <= wb.iloc[-1]).mean() * 100:.2f} 百分位" in turn.text


async def test_the_ratio_of_two_histories_at_start_and_end(agent: Any, thread_id: str) -> None:
    # Was: the World Bank ore (US$) and rebar (CNY) histories, no ratio (different units).
    turn = await run_turn(agent, thread_id, "铁矿石和螺纹钢的比价今年以来怎么变")
    io = _settles("dce_iron_ore_futures_daily.csv")["2026"]
    rb = _settles("shfe_rebar_futures_daily.csv")["2026"]
    r0, r1 = io.iloc[0] / rb.iloc[0], io.iloc[-1] / rb.iloc[-1]
    assert f"{r0:.4f}" in turn.text and f"{r1:.4f}" in turn.text and f"({(r1 / r0 - 1) * 100:+.2f}%)" \
        .replace("(", "（").replace(")", "）") in turn.text


async def test_share_of_months_the_pmi_was_above_50(agent: Any, thread_id: str) -> None:
    # Was: the latest PMI only.
    turn = await run_turn(agent, thread_id, "PMI高于50的月份占比多少")
    pmi = pd.read_csv(DATA / "china_nbs_manufacturing_pmi_monthly.csv", index_col="date",
                      parse_dates=True)["china_nbs_manufacturing_pmi"].dropna()
    above = int((pmi > 50).sum())
    assert "高于 50.00 的时期" in turn.text
    assert f"共 {above} 个月，占全部 {len(pmi)} 个月的 {above / len(pmi) * 100:.2f}%" in turn.text


async def test_hrc_margin_against_rebar_margin(agent: Any, thread_id: str) -> None:
    # Was: the hot-rolled coil margin alone, no comparison.
    turn = await run_turn(agent, thread_id, "热卷利润是不是比螺纹钢利润高")
    io, ck = _settles("dce_iron_ore_futures_daily.csv"), _settles("dce_coke_futures_daily.csv")
    rb, hc = _settles("shfe_rebar_futures_daily.csv"), _settles("shfe_hot_rolled_coil_futures_daily.csv")
    day = min(io.index[-1], ck.index[-1], rb.index[-1], hc.index[-1])
    m_rb = rb[day] - 1.6 * io[day] - 0.5 * ck[day]
    m_hc = hc[day] - 1.6 * io[day] - 0.5 * ck[day]
    line = next(x for x in turn.text.splitlines() if "**对比**" in x)
    assert f"热卷{'高' if m_hc > m_rb else '低'} {abs(m_hc - m_rb):,.2f} 元/吨" in line


async def test_average_yearly_rise_over_ten_years_is_compound(agent: Any, thread_id: str) -> None:
    # Was: the ten years' statistics, no rate per year.
    turn = await run_turn(agent, thread_id, "过去10年铁矿石平均每年涨多少")
    wb = _wb_iron_ore()
    start = wb[wb.index >= wb.index[-1] - pd.DateOffset(years=10)]
    years = (start.index[-1] - start.index[0]).days / 365.25
    assert f"= {((start.iloc[-1] / start.iloc[0]) ** (1 / years) - 1) * 100:+.2f}%/年" in turn.text


async def test_will_rebar_rise_next_week_gets_a_probability(agent: Any, thread_id: str) -> None:
    # Was: forecast rows only.
    turn = await run_turn(agent, thread_id, "螺纹钢下周会涨吗")
    p = _payload(next(r for r in turn.results if r.name == "forecast_price").content)
    up = _chance_above(p["forecast"][-1], p["last"]["value"])
    assert "不能确定" in turn.text and f"的概率约 {100 * up:.0f}%" in turn.text


async def test_a_sharpe_ratio_needs_data_it_lacks(agent: Any, thread_id: str) -> None:
    # Was: the latest futures price.
    turn = await run_turn(agent, thread_id, "铁矿石期货的夏普比率")
    assert turn.calls == [] and "我没有无风险利率" in turn.text


async def test_two_correlations_of_rebar_are_ranked(agent: Any, thread_id: str) -> None:
    # Was: rebar with coke only; the iron ore side of "比铁矿石高吗" was dropped.
    turn = await run_turn(agent, thread_id, "螺纹钢和焦炭的相关性比铁矿石高吗")
    rb = np.log(_settles("shfe_rebar_futures_daily.csv")).diff()
    corr = {}
    for name, file, series in (("焦炭", "dce_coke_futures_daily.csv", "dce_coke_daily"),
                               ("铁矿石", "dce_iron_ore_futures_daily.csv", "dce_iron_ore_daily")):
        other = np.log(_settles(file)).diff()
        both = pd.concat([rb, other], axis=1, sort=True).dropna()
        # Returns on either contract's likely roll days are left out (a jump to another contract).
        both = both[~both.index.isin(likely_rolls("shfe_rebar_daily").union(likely_rolls(series)))]
        corr[name] = float(both.corr().iloc[0, 1])
    line = next(x for x in turn.text.splitlines() if "的相关系数**" in x)
    first = max(corr, key=corr.get)
    assert line.index(f"{corr[first]:.4f}") < line.index(f"{corr[min(corr, key=corr.get)]:.4f}")
    assert f"{first}期货" in line.split(">")[0]
