"""describe, relate and mill_margin against values worked out from the definitions."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orecast.market import MarketError, describe, load_series, mill_margin, relate

from .conftest import monthly


def test_describe_changes_drawdown_and_percentile_on_a_known_path():
    # 100 → 200 over 24 months, then halves to 100 over 12 months: drawdown exactly −50 %.
    up = np.linspace(100, 200, 25)
    down = np.linspace(200, 100, 13)[1:]
    series = monthly(np.concatenate([up, down]), "path")
    result = describe(series)
    assert result.last_value == 100
    assert result.max_drawdown_pct == pytest.approx(-50.0)
    assert result.drawdown_peak == series.idxmax()
    assert result.drawdown_trough == series.index[-1]
    assert result.changes["12m"] == pytest.approx(-50.0)
    assert result.changes["1m"] == pytest.approx((100 / (100 + 100 / 12) - 1) * 100)
    assert result.changes["1w"] is None  # monthly data cannot say what happened in a week
    assert result.percentile == pytest.approx(100 * 2 / 37)  # the first and last values are 100
    assert result.change_unit == "%"


def test_describe_volatility_is_annualised_from_the_last_year():
    rng = np.random.default_rng(1)
    series = monthly(100 * np.exp(np.cumsum(rng.normal(0, 0.05, 240))), "vol")
    result = describe(series)
    last_year = np.log(series).diff().iloc[-12:]
    assert result.volatility_pct == pytest.approx(last_year.std() * np.sqrt(12) * 100)


def test_describe_seasonal_pattern_finds_the_planted_month():
    values = np.full(72, 100.0)
    values[np.arange(72) % 12 == 2] = 110.0  # every March 10 % above
    result = describe(monthly(values, "season"))
    assert max(result.seasonal_pct, key=result.seasonal_pct.get) == 3
    assert min(result.seasonal_pct, key=result.seasonal_pct.get) == 4


def test_describe_pmi_changes_are_in_points():
    result = describe("china_pmi_monthly")
    assert result.change_unit == "points"
    pmi = load_series("china_pmi_monthly")
    assert result.changes["1m"] == pytest.approx(pmi.iloc[-1] - pmi.iloc[-2])
    json.dumps(result.to_dict())


def test_relate_recovers_beta_correlation_and_lead():
    rng = np.random.default_rng(4)
    rb = rng.normal(0, 0.03, 200)
    b = monthly(100 * np.exp(np.cumsum(rb)), "b")
    a = monthly(100 * np.exp(np.cumsum(2 * rb)), "a")
    result = relate(a, b)
    assert result.correlation == pytest.approx(1.0)
    assert result.beta == pytest.approx(2.0)
    assert result.best_lag == 0
    lagged = monthly(100 * np.exp(np.cumsum(np.concatenate([[0, 0], rb[:-2]]))), "lagged")
    assert relate(lagged, b).best_lag == 2  # b leads by two months


def test_relate_compares_daily_with_monthly_at_monthly_frequency():
    result = relate("dce_iron_ore_daily", "iron_ore_wb_monthly")
    assert result.frequency == "monthly"
    assert 0.5 < result.correlation < 1.0
    assert "World Bank" in result.to_dict()["source"]


def test_relate_refuses_a_lag_longer_than_the_data_quickly():
    """A max_lag of 10**8 once ran for minutes (a correlation a lag), and a long one found nothing."""
    started = time.monotonic()
    with pytest.raises(MarketError, match="max_lag 100000000 is too long: .* share 3111 returns") as caught:
        relate("dce_iron_ore_daily", "shfe_rebar_daily", max_lag=10**8)
    assert time.monotonic() - started < 10
    with pytest.raises(MarketError, match="use at most 3108"):
        relate("dce_iron_ore_daily", "shfe_rebar_daily", max_lag=3109)
    assert caught.value.code == "max_lag_too_long" and caught.value.params["limit"] == 3108
    assert relate("dce_iron_ore_daily", "shfe_rebar_daily", max_lag=3108).n == 3111


def _bundled_settles(file: str) -> pd.Series:
    frame = pd.read_csv(Path(__file__).parents[2] / "src/orecast/market/data" / file, index_col="date",
                        parse_dates=True)
    return frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"]).dropna()


def test_relate_over_a_period_counts_its_first_return_from_the_day_before():
    # Was: 2025's correlation from 2025's own prices, leaving out 2024-12-31 → 2025-01-02.
    result = relate("dce_iron_ore_daily", "shfe_rebar_daily", start="2025", end="2025")
    ore, rebar = (np.log(_bundled_settles(f)).diff() for f in
                  ("dce_iron_ore_futures_daily.csv", "shfe_rebar_futures_daily.csv"))
    joined = pd.concat([ore, rebar], axis=1, join="inner").dropna().loc["2025"]
    assert joined.index[0] == pd.Timestamp("2025-01-02")
    assert result.first_date == joined.index[0] and result.n == len(joined)
    assert result.correlation == pytest.approx(joined.iloc[:, 0].corr(joined.iloc[:, 1]))
    # Monthly: January's return is from December's mean.
    monthly_result = relate("dce_iron_ore_daily", "iron_ore_wb_monthly", start="2025", end="2025")
    assert monthly_result.n == 12 and monthly_result.first_date == pd.Timestamp("2025-01-01")


def test_relate_needs_overlapping_dates():
    with pytest.raises(MarketError, match="share only"):
        relate("crude_steel_china_annual", "dce_iron_ore_daily")


def test_mill_margin_is_the_formula_on_common_dates():
    result = mill_margin("2024-01", "2024-03", iron_ore_coef=1.5, coke_coef=0.4, other_costs=100)
    day = pd.Timestamp("2024-02-01")
    expected = (
        load_series("shfe_rebar_daily")[day]
        - 1.5 * load_series("dce_iron_ore_daily")[day]
        - 0.4 * load_series("dce_coke_daily")[day]
        - 100
    )
    assert result.series[day] == pytest.approx(expected)
    assert result.series.index.min() >= pd.Timestamp("2024-01-01")
    assert 0 < result.percentile <= 100
    data = result.to_dict()
    assert data["unit"] == "CNY/t" and "1.5 x iron ore" in data["formula"]
    json.dumps(data)


def test_describe_dates_the_low_and_the_high_and_counts_each_months_changes():
    # Rises every January, falls every other month, over three years: 35 monthly changes.
    values = [100.0]
    for i in range(1, 36):
        values.append(values[-1] * (1.10 if (i % 12) == 0 else 0.99))
    series = monthly(np.array(values), "dated")
    d = describe(series).to_dict()
    assert d["min_date"] == series.idxmin().date().isoformat()
    assert d["max_date"] == series.idxmax().date().isoformat()
    assert d["seasonal_count"]["1"] == 2 and d["seasonal_count"]["2"] == 3
    assert d["seasonal_up_pct"]["1"] == 100.0 and d["seasonal_up_pct"]["5"] == 0.0


def test_describe_seasonal_shares_keep_their_digits():
    # Two Januaries of three rise: 66.67 %, not rounded to one digit (70 %).
    values = [100.0]
    for i in range(1, 37):
        values.append(values[-1] * (0.95 if i == 36 else 1.05 if (i % 12) == 0 else 1.0))
    d = describe(monthly(np.array(values), "shares")).to_dict()
    assert d["seasonal_up_pct"]["1"] == pytest.approx(200 / 3, abs=0.01)


def test_the_hrc_margin_is_hot_rolled_coil_not_rebar():
    """The formula on the CSVs' settle prices (close where no settle), on the days all three traded."""
    data = Path(__file__).resolve().parents[2] / "src" / "orecast" / "market" / "data"

    def settle(file: str) -> pd.Series:
        frame = pd.read_csv(data / file, parse_dates=["date"], index_col="date")
        return frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"]).dropna()

    prices = pd.concat([settle("shfe_hot_rolled_coil_futures_daily.csv"),
                        settle("dce_iron_ore_futures_daily.csv"),
                        settle("dce_coke_futures_daily.csv")], axis=1, join="inner")
    expected = prices.iloc[:, 0] - 1.6 * prices.iloc[:, 1] - 0.5 * prices.iloc[:, 2]
    d = mill_margin(product="hrc").to_dict()
    assert d["last"] == {"date": str(expected.index[-1].date()), "value": pytest.approx(expected.iloc[-1])}
    assert d["mean"] == pytest.approx(expected.mean()) and d["min"] == pytest.approx(expected.min())
    assert d["name_en"] == "Futures steel-mill margin (hot-rolled coil)" and d["product"] == "hrc"
    with pytest.raises(MarketError, match="unknown product 'wire'") as err:
        mill_margin(product="wire")
    assert err.value.code == "unknown_product"
