"""The scenario engine: a regression of period changes, checked against a direct computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from orecast.market import MarketError, load_series, scenario


def test_pmi_scenario_is_the_ols_slope_of_monthly_changes() -> None:
    r = scenario("pmi", 2).to_dict()
    ore = load_series("iron_ore_wb_monthly", freq="M")
    pmi = load_series("china_pmi_monthly", freq="M")
    joined = pd.concat([(100 * np.log(ore).diff()).rename("y"), pmi.diff().rename("x")],
                       axis=1, join="inner").dropna()
    slope = np.polyfit(joined["x"], joined["y"], 1)[0]
    assert r["sample"]["n"] == len(joined)
    assert r["slope_pct_per_unit"] == pytest.approx(slope, rel=1e-3)
    assert r["effect_pct"] == pytest.approx(100 * np.expm1(2 * slope / 100), rel=1e-3)
    lo80, hi80 = r["effect_band_pct"]["80"]
    lo95, hi95 = r["outcome_band_pct"]["95"]
    assert lo95 < lo80 < r["effect_pct"] < hi80 < hi95
    assert 0 <= r["r2"] <= 1
    assert "not causation" in r["caveat"]


def test_steel_output_scenario_runs_on_annual_data_and_a_fall_lowers_the_price() -> None:
    r = scenario("steel_output", -5).to_dict()
    assert r["frequency"] == "annual"
    assert r["sample"]["last"].startswith("2018")
    assert r["slope_pct_per_unit"] > 0  # ore has risen with Chinese steel output
    assert r["effect_pct"] < 0
    assert r["implied_level"] < r["base"]["value"]


def test_unsupported_and_unknown_shocks_are_named() -> None:
    with pytest.raises(MarketError, match="port iron ore inventories"):
        scenario("port_inventory", 10)
    with pytest.raises(MarketError, match="supported drivers: steel_output"):
        scenario("weather", 1)
    with pytest.raises(MarketError, match="above -100"):
        scenario("coke", -150)
