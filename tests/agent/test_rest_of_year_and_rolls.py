"""The rest of a year asked ahead ("下半年会怎样"), "和前年比呢" after a named period, correlations
without contract-roll days, a bare contract code ("铁矿石2701") and a quarter with no year ("Q1铁矿石",
"一季度呢" after a forecast).

Asked on Monday 2026-12-07 (the futures end 2026-08-21, the World Bank's months May 2026). Every
expected number is recomputed with pandas from the bundled CSVs, or read from the tool's own result.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from orecast.market.rolls import likely_rolls
from tests.agent.conftest import call_args, last_turn, run_turn
from tests.agent.test_answers_qa5 import _settles, _wb_iron_ore, pinned_today

__all__ = ["pinned_today"]  # the autouse fixture that pins today to 2026-12-07


async def test_the_rest_of_this_year_asked_ahead_is_its_history_then_a_forecast(agent: Any) -> None:
    # Was: the futures' history of 2026-07-01 to 2026-08-21 alone, nothing about the months after it.
    ore = _settles("dce_iron_ore_futures_daily.csv")
    for questions, series, unit in ((("2026上半年铁矿石", "下半年会怎样"), "dce_iron_ore_daily", ore),
                                    (("螺纹钢今年下半年会怎么走",), "shfe_rebar_daily",
                                     _settles("shfe_rebar_futures_daily.csv"))):
        turn = await last_turn(agent, *questions)
        calls = call_args(turn)
        assert [c[0] for c in calls] == ["price_history", "forecast_price"]
        assert calls[0][1] == {"series": series, "start": "2026-07", "end": "2026-08-21"}
        assert calls[1][1]["series"] == series
        assert "你问的时期是 2026-07-01 至 2026-12-31：其中 2026-07-01 至 2026-08-21 有" in turn.text
        inside = unit["2026-07":"2026-08"]
        assert f"起点 {inside.iloc[0]:,.2f} 元/吨，终点 {inside.iloc[-1]:,.2f} 元/吨" in turn.text
        last = json.loads(turn.results[-1].content)["forecast"][-1]
        assert last["date"] == "2026-12-31"
        assert (f"2026-12-31：{last['mean']:,.2f} 元/吨，80% 区间 {last['lo_80']:,.2f} – {last['hi_80']:,.2f}，"
                f"95% 区间 {last['lo_95']:,.2f} – {last['hi_95']:,.2f}") in turn.text


async def test_a_year_word_set_against_a_named_quarter_counts_from_that_quarter(agent: Any) -> None:
    # Was: all of 2024 ("和前年比呢", two years before today) and all of 2025 ("和去年比呢") set
    # against 2025's third quarter.
    wb = _wb_iron_ore()
    for word, year in (("和前年比呢", "2023"), ("和去年比呢", "2024")):
        turn = await last_turn(agent, "2025年三季度铁矿石均价", word)
        assert call_args(turn) == [
            ("describe_series", {"series": "iron_ore_wb_monthly", "start": f"{year}-07", "end": f"{year}-09"}),
            ("describe_series", {"series": "iron_ore_wb_monthly", "start": "2025-07", "end": "2025-09"})]
        before, after = float(wb[f"{year}-07":f"{year}-09"].mean()), float(wb["2025-07":"2025-09"].mean())
        assert f"后者比前者 {(after / before - 1) * 100:+.2f}%" in turn.text


async def test_a_daily_correlation_leaves_out_the_roll_days_and_says_how_many(agent: Any, thread_id: str) -> None:
    # Was: 243 returns with 2025-04-02's roll of iron ore (-4.41 % at the open, no market move) in them.
    turn = await run_turn(agent, thread_id, "2025年铁矿石和螺纹钢的相关性")
    assert call_args(turn) == [("relate_series", {"a": "dce_iron_ore_daily", "b": "shfe_rebar_daily",
                                              "start": "2025", "end": "2025"})]
    ore, rebar = (np.log(_settles(f)).diff() for f in ("dce_iron_ore_futures_daily.csv",
                                                       "shfe_rebar_futures_daily.csv"))
    both = pd.concat([ore, rebar], axis=1, join="inner").dropna().loc["2025"]
    rolled = both.index.isin(likely_rolls("dce_iron_ore_daily").union(likely_rolls("shfe_rebar_daily")))
    kept = both[~rolled]
    assert rolled.sum() >= 1
    assert f"{len(kept)} 期" in turn.text
    assert f"相关系数 {kept.iloc[:, 0].corr(kept.iloc[:, 1]):.4f}" in turn.text
    days = "、".join(d.date().isoformat() for d in both.index[rolled])
    assert f"已剔除 {rolled.sum()} 个换月日的收益（{days}）" in turn.text


async def test_a_bare_contract_code_after_a_name_is_that_contract(agent: Any) -> None:
    # Was: the latest prices of both iron ore series, as if "铁矿石2701" asked for the price now.
    turn = await last_turn(agent, "铁矿石2701")
    assert call_args(turn) == [("latest_price", {"series": "dce_iron_ore_daily"})]
    assert turn.text.startswith("我的数据是大商所铁矿石期货（连续，结算价），即每天成交最活跃的主力合约连起来的序列，"
                                "不是 2701 合约（2027-01 交割）本身")
    turn = await last_turn(agent, "螺纹钢 2705价格")
    assert call_args(turn) == [("latest_price", {"series": "shfe_rebar_daily"})]
    assert "不是 2705 合约（2027-05 交割）本身" in turn.text
    # A year is not a contract, nor is a price.
    turn = await last_turn(agent, "铁矿石2012年走势")
    assert call_args(turn) == [("price_history", {"series": "iron_ore_wb_monthly", "start": "2012", "end": "2012"})]
    assert "合约" not in turn.text.split("\n")[0]


async def test_a_quarter_without_a_year_is_read_and_after_a_forecast_is_the_next_one(agent: Any) -> None:
    # Were: the latest prices ("Q1铁矿石": Q1 not read before a Chinese word) and 2026's first
    # quarter's history after a forecast of the next three months.
    turn = await last_turn(agent, "Q1铁矿石")
    assert call_args(turn) == [("price_history", {"series": "iron_ore_wb_monthly", "start": "2026-01", "end": "2026-03"})]
    assert "“Q1”没有说年份，按今天（2026-12-07）之前最近的一个，即 2026-01 至 2026-03，回答。" in turn.text
    first, last = (f"{float(v):,.2f}" for v in _wb_iron_ore()["2026-01":"2026-03"].iloc[[0, -1]])
    assert f"起点 {first} 美元/干吨，终点 {last} 美元/干吨" in turn.text
    turn = await last_turn(agent, "铁矿石未来三个月预测", "一季度呢")
    assert call_args(turn) == [("forecast_price", {"series": "iron_ore_wb_monthly", "horizon": 10, "method": "auto"})]
    assert "“一季度”没有说年份，按今天（2026-12-07）之后最近的一个，即 2027-01 至 2027-03，回答。" in turn.text
    # After a price it is still the last first quarter in the data, its year said.
    turn = await last_turn(agent, "铁矿石价格", "一季度呢")
    assert call_args(turn) == [("price_history", {"series": "iron_ore_wb_monthly", "start": "2026-01", "end": "2026-03"})]
