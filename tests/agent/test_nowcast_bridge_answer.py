"""The analyst says which months past the World Bank's end the DCE futures carried over, with the value
recomputed here with pandas from the bundled CSVs (not read from the tools)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import orecast.market as market_pkg
from tests.agent.conftest import run_turn
from tests.agent.test_conversation import assert_number

DATA = Path(market_pkg.__file__).parent / "data"


@pytest.fixture(autouse=True)
def pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", date(2026, 12, 7).isoformat())


def futures_months_after(last: pd.Timestamp) -> list[pd.Timestamp]:
    """The months after `last` in which the DCE futures traded at least 10 days, up to the first
    without: the months the nowcast carries the World Bank price over."""
    dce = pd.read_csv(DATA / "dce_iron_ore_futures_daily.csv", index_col="date", parse_dates=True)
    months = np.log(dce["settle_cny_per_t"].fillna(dce["close_cny_per_t"]).dropna()).resample("MS")
    average = months.mean().where(months.count() >= 10)
    out = []
    while np.isfinite(average.get(month := last + pd.offsets.MonthBegin(len(out) + 1), np.nan)):
        out.append(month)
    return out


def carried_over() -> tuple[pd.Timestamp, float]:
    """The last month the futures carry the World Bank price over to, and the price there."""
    wb = pd.read_csv(DATA / "worldbank_commodities_monthly.csv", index_col="date", parse_dates=True)
    wb = wb["iron_ore_cfr_china_usd_per_dmt"].dropna()
    dce = pd.read_csv(DATA / "dce_iron_ore_futures_daily.csv", index_col="date", parse_dates=True)
    average = np.log(dce["settle_cny_per_t"].fillna(dce["close_cny_per_t"]).dropna()).resample("MS").mean()
    month = futures_months_after(wb.index[-1])[-1]
    return month, float(wb.iloc[-1] * np.exp(average[month] - average[wb.index[-1]]))


@pytest.mark.parametrize(("question", "words"), [
    ("铁矿石未来三个月价格预测", ("期货", "推算")),
    ("iron ore price forecast for the next 3 months", ("futures", "carried over")),
])
async def test_a_forecast_says_which_months_the_futures_carried_over(
    agent: Any, thread_id: str, question: str, words: tuple[str, ...]
) -> None:
    # Was: every month after May 2026 flat at May's nowcast (106.01), the futures' fall since unused.
    month, value = carried_over()
    turn = await run_turn(agent, thread_id, question)
    line = next(line for line in turn.text.splitlines() if all(w in line for w in words))
    assert month.date().isoformat() in line
    assert_number(line, value)


async def test_the_past_months_still_forecast_are_told_apart_from_the_carried_over(
    agent: Any, thread_id: str
) -> None:
    # Was: "the first 4 periods (2026-06-01 to 2026-09-01) … are still forecasts", the 3 carried over too.
    last, _ = carried_over()
    turn = await run_turn(agent, thread_id, "预测2026年9月世界银行铁矿石价格")
    note = next(line for line in turn.text.splitlines() if "仍是预测值" in line)
    after = (last + pd.offsets.MonthBegin(1)).date().isoformat()
    assert after in note and "2026-06-01" not in note


async def test_a_past_month_the_futures_traded_in_gets_their_estimate_beside_the_last_data(
    agent: Any, thread_id: str
) -> None:
    # A World Bank month past its data is answered with the nearest earlier month (said not to be the
    # month asked); where the futures traded that month, their carried-over estimate is said too.
    month, value = carried_over()
    turn = await run_turn(agent, thread_id, f"What was the World Bank iron ore price in {month:%B %Y}?")
    line = next(line for line in turn.text.splitlines() if "carried over" in line)
    assert month.strftime("%Y-%m") in line and "an estimate, not data" in line
    assert_number(line, value)
