"""The accuracy report generator and the nowcast it measures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from orecast.market import backtest, forecast, load_series
from orecast.market.accuracy import Study, render, run


def test_report_has_a_table_per_study_and_a_goal_verdict():
    study = Study("crude_steel_world_annual", (1,), "2014", 1, ("naive", "drift", "auto"), {1: 1.0})
    text = render(run([study]), [study])
    assert "python -m orecast.market.accuracy" in text
    assert "| naive |" in text and "| **auto** |" in text
    assert "| `crude_steel_world_annual` | 1 | ≤ 1.00 |" in text


def test_nowcast_uses_only_the_origin_month_of_futures():
    # From origin 2020-06: June's World Bank average times DCE's June month-end over June mean.
    fc = forecast("iron_ore_wb_monthly", 1, "nowcast", end="2020-06")
    june = np.log(load_series("dce_iron_ore_daily", "2020-06", "2020-06"))
    wb = load_series("iron_ore_wb_monthly")[pd.Timestamp("2020-06-01")]
    assert fc.mean.iloc[0] == pytest.approx(wb * np.exp(june.iloc[-1] - june.mean()))


def test_nowcast_before_the_futures_existed_falls_back_to_the_random_walk_and_says_so():
    # DCE iron ore starts trading in 2013-10: earlier origins have no month-end to use.
    result = backtest("iron_ore_wb_monthly", 1, "nowcast", start="2013-06", end="2013-12")
    assert result.fallbacks == 4  # 2013-06 .. 2013-09
    early = result.table[result.table["cutoff"] < "2013-10-01"]
    assert (early["yhat"] - early["naive"]).abs().max() < 1e-9
    assert result.to_dict()["fallbacks"] == 4
