"""The scenario engine: a regression of period changes, checked against a direct computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orecast import market
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


DATA = Path(market.__file__).parent / "data"


def _futures_csv(file: str) -> pd.Series:
    """Settle (close where no settle) straight from the bundled CSV, not through the loaders."""
    frame = pd.read_csv(DATA / file, parse_dates=["date"]).set_index("date")
    return frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"]).dropna()


def test_a_level_is_the_change_from_the_drivers_latest_value() -> None:
    """"If rebar falls to 3000 CNY/t, what happens to iron ore?" computed from the CSVs."""
    rebar = _futures_csv("shfe_rebar_futures_daily.csv")
    ore = _futures_csv("dce_iron_ore_futures_daily.csv")
    r = scenario("rebar", target="dce_iron_ore_daily", level=3000).to_dict()
    shock = 100 * (3000 / rebar.iloc[-1] - 1)
    assert r["shock"] == pytest.approx(shock, rel=1e-9)
    assert r["driver_base"] == {"date": str(rebar.index[-1].date()), "value": rebar.iloc[-1]}
    assert r["level"] == 3000
    dx = 100 * np.log(rebar.resample("MS").mean()).diff()
    dy = 100 * np.log(ore.resample("MS").mean()).diff()
    joined = pd.concat([dy.rename("y"), dx.rename("x")], axis=1, join="inner").dropna()
    slope = np.polyfit(joined["x"], joined["y"], 1)[0]
    assert r["slope_pct_per_unit"] == pytest.approx(slope, rel=1e-4)
    effect = 100 * np.expm1(slope * 100 * np.log1p(shock / 100) / 100)
    assert r["effect_pct"] == pytest.approx(effect, rel=1e-4)
    assert r["implied_level"] == pytest.approx(ore.iloc[-1] * (1 + effect / 100), rel=1e-6)
    assert r["driver_change_range"] == pytest.approx(
        [100 * np.expm1(joined["x"].min() / 100), 100 * np.expm1(joined["x"].max() / 100)], rel=1e-4)
    assert r["outside_sample"] is False
    # The same as a shock of that size: a level is only another way to state it.
    assert scenario("rebar", shock, "dce_iron_ore_daily").effect_pct == pytest.approx(r["effect_pct"])


def test_a_level_far_outside_the_sample_is_flagged_and_the_target_starts_at_the_drivers_date() -> None:
    r = scenario("iron_ore", target="shfe_rebar_daily", level=40).to_dict()
    ore = load_series("iron_ore_wb_monthly")
    rebar = _futures_csv("shfe_rebar_futures_daily.csv")
    assert r["shock"] == pytest.approx(100 * (40 / ore.iloc[-1] - 1))
    assert r["outside_sample"] is True and r["shock"] < r["driver_change_range"][0]
    # The ore's last month is older than rebar's last day: rebar starts from its value then.
    base = rebar[: ore.index[-1]]
    assert r["base"] == {"date": str(base.index[-1].date()), "value": base.iloc[-1]}


@pytest.mark.parametrize(("shock", "level"), [(None, None), (5.0, 3000.0), (None, 0.0), (None, -3.0)])
def test_a_scenario_needs_a_shock_or_a_positive_level(shock: float | None, level: float | None) -> None:
    with pytest.raises(MarketError, match="either a shock or a positive level") as err:
        scenario("rebar", shock, level=level)
    assert err.value.code == "bad_level"
