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
