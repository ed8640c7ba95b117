"""likely_rolls against the bundled futures: the roll days found, the real moves left alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orecast.market.rolls import likely_rolls

DATA = Path(__file__).parents[2] / "src/orecast/market/data"


def _frame(file: str) -> pd.DataFrame:
    return pd.read_csv(DATA / file, index_col="date", parse_dates=True)


def test_rolls_with_little_change_in_open_interest_are_found() -> None:
    # Was: missed, their open interest moving less than the 0.14 a roll was told by.
    frame = _frame("dce_iron_ore_futures_daily.csv")
    price = frame["settle_cny_per_t"]
    jump = np.log(frame["open_interest_lots"]).diff().abs()
    rolls = likely_rolls("dce_iron_ore_daily")
    for day, move in (("2019-04-04", -7.87), ("2025-04-02", -4.41)):
        at = pd.Timestamp(day)
        assert round((price[at] / price.shift(1)[at] - 1) * 100, 2) == move
        assert jump[at] < 0.14
        assert at in rolls


@pytest.mark.parametrize(
    ("series", "file", "day"),
    [
        ("dce_iron_ore_daily", "dce_iron_ore_futures_daily.csv", "2019-02-11"),  # Vale's dam, limit up
        ("dce_iron_ore_daily", "dce_iron_ore_futures_daily.csv", "2020-02-03"),  # after the 2020 Spring Festival
        ("dce_iron_ore_daily", "dce_iron_ore_futures_daily.csv", "2014-03-10"),
        ("dce_coking_coal_daily", "dce_coking_coal_futures_daily.csv", "2014-03-10"),
        ("dce_coke_daily", "dce_coke_futures_daily.csv", "2020-02-03"),
    ],
)
def test_real_moves_with_a_gap_and_thin_trading_are_no_rolls(series: str, file: str, day: str) -> None:
    frame = _frame(file)
    at = pd.Timestamp(day)
    gap = frame["open_cny_per_t"][at] / frame["close_cny_per_t"].shift(1)[at] - 1
    assert abs(gap) >= 0.03
    assert at not in likely_rolls(series)


def test_the_open_interest_rule_still_holds() -> None:
    frame = _frame("dce_iron_ore_futures_daily.csv")
    jump = np.log(frame["open_interest_lots"].where(frame["open_interest_lots"] > 0)).diff().abs()
    gap = (frame["open_cny_per_t"] / frame["close_cny_per_t"].shift(1) - 1).abs()
    before = set(frame.index[(jump >= 0.14) & (gap >= 0.03)])
    after = set(likely_rolls("dce_iron_ore_daily"))
    assert before < after and after - before == {pd.Timestamp("2019-04-04"), pd.Timestamp("2025-04-02")}
