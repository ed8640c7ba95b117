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
    rows = p["forecast"]
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
