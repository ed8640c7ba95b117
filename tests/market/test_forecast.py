"""Each method on synthetic series with a known answer, and the Forecast object's contract."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from orecast.market import METHODS, Forecast, MarketError, forecast

MODELS = [m for m in METHODS if m != "naive"]


@pytest.mark.parametrize("method", METHODS)
def test_every_method_returns_ordered_bands_on_future_dates(random_walk, method):
    fc = forecast(random_walk, 6, method)
    assert isinstance(fc, Forecast) and fc.method == method
    expected = pd.date_range(random_walk.index[-1], periods=7, freq="MS")[1:]
    assert list(fc.mean.index) == list(expected)
    assert (fc.lower[95] <= fc.lower[80]).all() and (fc.lower[80] <= fc.mean).all()
    assert (fc.mean <= fc.upper[80]).all() and (fc.upper[80] <= fc.upper[95]).all()
    # Uncertainty grows with the horizon.
    width = fc.upper[80] - fc.lower[80]
    assert width.iloc[-1] > width.iloc[0]


def test_naive_repeats_the_last_value(random_walk):
    fc = forecast(random_walk, 4, "naive")
    assert np.allclose(fc.mean, random_walk.iloc[-1])


@pytest.mark.parametrize("method", MODELS)
def test_random_walk_forecasts_stay_near_the_last_value(random_walk, method):
    fc = forecast(random_walk, 3, method)
    # A 5 % monthly random walk: any sensible method stays within a few sigmas of the last value.
    assert abs(np.log(fc.mean.iloc[0] / random_walk.iloc[-1])) < 0.1


@pytest.mark.parametrize("method", ["drift", "ets"])
def test_trend_is_extrapolated(trend, method):
    fc = forecast(trend, 12, method)
    slope = (fc.mean.iloc[-1] - fc.mean.iloc[0]) / 11
    assert slope == pytest.approx(2.0, rel=0.2)
    assert fc.mean.iloc[-1] > trend.iloc[-1] + 12


def test_theta_extrapolates_half_the_trend(trend):
    # The classical Theta forecast weights the regression line (theta = 0) by one half.
    fc = forecast(trend, 12, "theta")
    assert (fc.mean.iloc[-1] - fc.mean.iloc[0]) / 11 == pytest.approx(1.0, rel=0.2)


@pytest.mark.parametrize("method", ["ets", "theta"])
def test_seasonal_pattern_is_reproduced(seasonal, method):
    fc = forecast(seasonal, 12, method)
    t = np.arange(120, 132)
    truth = 100 + 20 * np.sin(2 * np.pi * t / 12)
    naive_error = np.abs(seasonal.iloc[-1] - truth).mean()
    assert np.abs(fc.mean.to_numpy() - truth).mean() < naive_error / 3


def test_to_dict_is_compact_json_with_units_dates_and_source(random_walk):
    data = forecast(random_walk, 2, "drift").to_dict()
    json.dumps(data)
    assert data["unit"] == "u" and data["source"] == "synthetic test data"
    assert data["forecast"][0]["date"] == "2010-01-01"
    assert set(data["forecast"][0]) == {"date", "mean", "lo_80", "hi_80", "lo_95", "hi_95"}


def test_to_frame_has_the_long_shape(random_walk):
    frame = forecast(random_walk, 2, "naive", levels=(50, 90)).to_frame()
    assert list(frame.columns) == ["ds", "mean", "lo-50", "hi-50", "lo-90", "hi-90"]


def test_auto_explains_its_choice_and_avoids_no_change_on_a_trend():
    rng = np.random.default_rng(5)
    index = pd.date_range("1980-01-01", periods=30, freq="YS", name="date")
    trend = pd.Series(10 + 3.0 * np.arange(30) + rng.normal(0, 0.3, 30), index=index, name="t")
    fc = forecast(trend, 1, "auto")
    assert fc.requested_method == "auto"
    assert fc.method in {"drift", "ets", "arima", "theta", "ensemble"}  # anything but "no change"
    assert fc.scores["naive"] == pytest.approx(1.0)
    assert fc.scores[fc.method] == min(fc.scores.values()) < 0.5
    assert "MASE" in fc.reason


def test_prices_are_modelled_in_logs_so_bands_stay_positive(random_walk):
    fc = forecast(random_walk, 24, "naive", levels=(99,))
    assert fc.log_scale and (fc.lower[99] > 0).all()
    # Log bands are asymmetric in price: more room above than below.
    assert (fc.upper[99] - fc.mean).iloc[-1] > (fc.mean - fc.lower[99]).iloc[-1]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((0,), {}, "horizon must be at least 1"),
        ((-3,), {}, "horizon must be at least 1"),
        (("3",), {}, "whole number"),
        ((3, "prophet"), {}, "unknown method 'prophet'"),
        ((3, "naive"), {"levels": (80, 100)}, "between 0 and 100"),
        ((3, "naive"), {"start": "2030"}, "no data"),
    ],
)
def test_bad_input_is_a_market_error(random_walk, args, kwargs, message):
    with pytest.raises(MarketError, match=message):
        forecast(random_walk, *args, **kwargs)


def test_nowcast_needs_an_indicator(random_walk):
    with pytest.raises(MarketError, match="indicator"):
        forecast(random_walk, 1, "nowcast")


def test_world_bank_iron_ore_forecast_from_real_data():
    fc = forecast("iron_ore_wb_monthly", 2, "nowcast")
    assert fc.last_date == pd.Timestamp("2026-05-01")
    assert fc.mean.index[0] == pd.Timestamp("2026-06-01")
    assert "World Bank" in fc.source and fc.unit == "US$/dmt"
    assert 50 < fc.mean.iloc[0] < 200


def test_pmi_bands_are_not_set_by_the_covid_months():
    """The PMI fell to 35.7 in February 2020 and bounced to 52.0: those two months were 57 % of the
    squared monthly changes since 2008, and with them the 80 % band held 98 % of the one-month
    outcomes from 2021 on. The fits now carry January 2020 over them (said in `adjusted`)."""
    from pathlib import Path

    import orecast.market as market_pkg
    from orecast.market import backtest

    csv = Path(market_pkg.__file__).parent / "data" / "china_nbs_manufacturing_pmi_monthly.csv"
    pmi = pd.read_csv(csv, index_col="date", parse_dates=True)["china_nbs_manufacturing_pmi"].dropna()
    changes = pmi.diff().dropna()
    covid = changes[["2020-02-01", "2020-03-01", "2020-04-01"]]
    share = float((covid**2).sum() / (changes**2).sum())
    assert share > 0.5  # the shock dominates the variance: the reason for the adjustment
    fitted = pmi.copy()
    fitted["2020-02-01"] = fitted["2020-03-01"] = pmi["2020-01-01"]
    sigma = float(np.sqrt((fitted.diff().dropna() ** 2).mean()))

    fc = forecast("china_pmi_monthly", 3, "naive")
    half_width = float(fc.upper[80].iloc[0] - fc.mean.iloc[0])
    assert half_width == pytest.approx(1.2815516 * sigma, rel=1e-4)
    adjusted = fc.to_dict()["adjusted"]
    assert [(a["date"], a["actual"], a["used"]) for a in adjusted] == [
        ("2020-02-01", pmi["2020-02-01"], 50.0), ("2020-03-01", pmi["2020-03-01"], 50.0)]
    assert adjusted[0]["share_of_squared_changes"] == pytest.approx(share, abs=1e-5)
    # Scored against the actual values, the 80 % band no longer holds nearly every outcome.
    recent = backtest("china_pmi_monthly", 1, "naive", start="2021-06-01").to_dict()
    assert recent["coverage_pct"]["80"] < 95
