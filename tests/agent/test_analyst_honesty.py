"""Answers a fourth QA pass found wrong, misleading or overconfident, asked as a user would.

Every expected number is recomputed here with pandas from the bundled CSVs (not through the
analyst), and "today" is pinned so the dates in the answers are the same on any day.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import orecast.market
from orecast import market
from tests.agent.conftest import run_turn
from tests.agent.test_conversation import assert_number

TODAY = date(2026, 12, 7)
DATA = Path(orecast.market.__file__).parent / "data"


@pytest.fixture(autouse=True)
def pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", TODAY.isoformat())


def settle(file: str) -> pd.Series:
    frame = pd.read_csv(DATA / file, parse_dates=["date"], index_col="date")
    return frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"]).dropna()


def world_bank() -> pd.Series:
    frame = pd.read_csv(DATA / "iron_ore_monthly_worldbank.csv", parse_dates=["date"], index_col="date")
    return frame["iron_ore_price"].dropna()


async def test_a_backtest_says_what_its_numbers_mean(agent: Any, thread_id: str) -> None:
    """An 80 % band that held 96.8 % of the outcomes was reported without a word: it was too wide.
    The answer now gives the RMSE too, and says that a MASE of 1.009 is a tie with "no change"."""
    turn = await run_turn(agent, thread_id, "铁矿石期货未来5个交易日的预测准吗？回测一下")
    result = market.backtest("dce_iron_ore_daily", 5, "auto")
    table = result.table[result.table["step"] == 5]
    rmse = float(((table["yhat"] - table["y"]) ** 2).mean() ** 0.5)
    inside = float(((table["y"] >= table["lo-80"]) & (table["y"] <= table["hi-80"])).mean())
    assert_number(turn.text, rmse)
    assert "RMSE" in turn.text
    assert inside > 0.9  # the data's fact this test is about
    assert f"80% 区间偏宽：实际值落在区间内的比例是 {100 * inside:.2f}%" in turn.text
    assert "不相上下" in turn.text


def year_change(file: str, year: str) -> float:
    prices = settle(file).loc[year]
    return 100 * (prices.iloc[-1] / prices.iloc[0] - 1)


REBAR, HRC = "shfe_rebar_futures_daily.csv", "shfe_hot_rolled_coil_futures_daily.csv"
ORE, COKING_COAL = "dce_iron_ore_futures_daily.csv", "dce_coking_coal_futures_daily.csv"
NAMES = {
    REBAR: ("上期所螺纹钢期货（连续，结算价）", "SHFE rebar futures, continuous (settle)"),
    HRC: ("上期所热轧卷板期货（连续，结算价）", "SHFE hot-rolled coil futures, continuous (settle)"),
    ORE: ("大商所铁矿石期货（连续，结算价）", "DCE iron ore futures, continuous (settle)"),
}


@pytest.mark.parametrize(("question", "files", "year", "verdict"), [
    # Both rose in 2020: "which fell more" was answered "HRC rose most", as if one had fallen.
    ("2020年螺纹钢和热卷哪个跌得多？", (REBAR, HRC), "2020", "两者都上涨了，没有一个下跌；{}涨得最少"),
    ("Which fell more in 2020, iron ore futures or rebar?", (ORE, REBAR), "2020",
     "Neither fell: both rose; {} rose least"),
    # Both fell in 2024: the verdict named the one that fell least, not the one asked about.
    ("2024年螺纹钢和热卷哪个跌得多？", (REBAR, HRC), "2024", "两者都下跌了，{}跌得最多"),
])
async def test_which_fell_more_answers_the_direction_asked(
    agent: Any, thread_id: str, question: str, files: tuple[str, str], year: str, verdict: str
) -> None:
    turn = await run_turn(agent, thread_id, question)
    changes = {f: year_change(f, year) for f in files}
    for change in changes.values():
        assert f"{change:+.2f}%" in turn.text
    smaller = min(changes, key=changes.__getitem__)
    zh = "年" in question
    assert verdict.format(NAMES[smaller][0 if zh else 1]) in turn.text
    assert ("涨得最多" if zh else "rose most") not in turn.text


async def test_which_fell_more_when_only_one_fell(agent: Any, thread_id: str) -> None:
    """2026 to the data's end: iron ore fell, coking coal rose; "coking coal rose most" was the
    answer to "which fell more"."""
    turn = await run_turn(agent, thread_id, "2026年铁矿石期货和焦煤哪个跌得多？")
    ore, coal = year_change(ORE, "2026"), year_change(COKING_COAL, "2026")
    assert ore < 0 < coal
    assert f"只有大商所铁矿石期货（连续，结算价）（{ore:+.2f}%）下跌" in turn.text
    assert f"大商所焦煤期货（连续，结算价）（{coal:+.2f}%）上涨" in turn.text
    assert "涨得最多" not in turn.text
