"""Backtest arithmetic on a hand-checked case, coverage on simulated data, and no look-ahead."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from orecast.market import MarketError, SeriesMeta, backtest


def annual(values: list[float]) -> pd.Series:
    index = pd.date_range("2000-01-01", periods=len(values), freq="YS", name="date")
    series = pd.Series(values, index=index, dtype=float, name="hand")
    meta = SeriesMeta(id="hand", name_zh="hand", name_en="hand", unit="u", frequency="annual",
                      kind="diffusion", source="hand-made", licence="test")
    series.attrs = {"orecast": meta.to_dict()}
    return series


# Ten values to fit on (the annual minimum), then three origins: positions 9, 10 and 11.
HAND = annual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 17, 20, 20])


def test_random_walk_backtest_matches_hand_arithmetic():
    result = backtest(HAND, 1, "naive", start="2009")
    # Origins 2009 (19 → 17), 2010 (17 → 20), 2011 (20 → 20): errors 2, 3, 0.
    assert result.n_origins == 3
    assert result.first_origin == pd.Timestamp("2009-01-01")
    assert result.last_origin == pd.Timestamp("2011-01-01")
    assert result.mae == pytest.approx(5 / 3)
    assert result.mape == pytest.approx(100 * (2 / 17 + 3 / 20 + 0 / 20) / 3)
    assert result.mase == pytest.approx(1.0)


def test_drift_backtest_matches_hand_arithmetic():
    result = backtest(HAND, 1, "drift", start="2009")
    # Drift = (last - first) / (n - 1): origin 9: 19 + 9/9 = 20 vs 17 → 3;
    # origin 10: 17 + 7/10 = 17.7 vs 20 → 2.3; origin 11: 20 + 10/11 vs 20 → 10/11.
    expected = (3 + 2.3 + 10 / 11) / 3
    assert result.mae == pytest.approx(expected)
    assert result.mase == pytest.approx(expected / (5 / 3))
    table = result.table
    assert list(table["yhat"]) == pytest.approx([20, 17.7, 20 + 10 / 11])
    assert list(table["y"]) == [17, 20, 20]


def test_multi_step_errors_are_scored_at_the_last_step():
    result = backtest(HAND, 2, "naive", start="2009")
    # Origins 2009 (19 → 20 two years on) and 2010 (17 → 20): errors 1 and 3.
    assert result.n_origins == 2
    assert result.mae == pytest.approx(2.0)
    assert result.by_step[0]["mae"] == pytest.approx((2 + 3) / 2)


def test_step_skips_origins():
    assert backtest(HAND, 1, "naive", start="2009", step=2).n_origins == 2


def test_naive_intervals_cover_about_their_level_on_a_simulated_random_walk():
    rng = np.random.default_rng(2024)
    index = pd.date_range("1990-01-01", periods=600, freq="MS", name="date")
    walk = pd.Series(100 * np.exp(np.cumsum(rng.normal(0, 0.04, 600))), index=index, name="sim")
    result = backtest(walk, 1, "naive", start="2000-01")
    assert result.n_origins > 450
    assert 0.75 <= result.coverage[80] <= 0.85
    assert 0.92 <= result.coverage[95] <= 0.98
    assert result.mase == pytest.approx(1.0)


def test_auto_uses_no_data_after_each_origin():
    # Rewriting the last years must not change any forecast made from origins whose horizon ends
    # before them: `auto` may only rank methods on outcomes known at each origin.
    rng = np.random.default_rng(9)
    walk = annual(list(50 + np.cumsum(rng.normal(0.5, 2.0, 32))))
    changed = walk.copy()
    changed.iloc[-6:] = changed.iloc[-6:] * 3
    changed.attrs = walk.attrs
    kwargs = {"start": "2016", "end": "2023"}
    before = backtest(walk, 2, "auto", **kwargs)
    after = backtest(changed, 2, "auto", **kwargs)
    assert before.n_origins == 8
    assert before.table["ds"].max() < changed.index[-6]
    pd.testing.assert_frame_equal(before.table, after.table)
    assert before.chosen == after.chosen
    # ... and the changed future does change forecasts once it is in the past.
    later = {"start": "2016", "end": None}
    assert not backtest(walk, 2, "auto", **later).table.equals(
        backtest(changed, 2, "auto", **later).table
    )


def test_to_dict_reports_origins_metrics_and_source():
    data = backtest(HAND, 1, "naive", start="2009").to_dict()
    assert data["origins"] == {"first": "2009-01-01", "last": "2011-01-01", "count": 3}
    assert data["mase"] == 1.0 and data["source"] == "hand-made"
    assert set(data["coverage_pct"]) == {"80", "95"}


def test_progress_is_reported_up_to_the_total():
    seen: list[tuple[int, int]] = []
    backtest(HAND, 1, "drift", start="2009", progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1][0] == seen[-1][1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"horizon": 0}, "at least 1"),
        ({"horizon": 1, "start": "2001"}, "earliest origin"),
        ({"horizon": 1, "step": 0}, "step"),
        ({"horizon": 1, "method": "magic"}, "unknown method"),
        ({"horizon": 1, "start": "2012"}, "no forecast origin"),
    ],
)
def test_bad_backtest_input_is_a_market_error(kwargs, message):
    with pytest.raises(MarketError, match=message):
        backtest(HAND, **kwargs)


@pytest.mark.slow
def test_arima_intervals_cover_about_their_level_on_simulated_arima_data():
    # Log changes with AR(1) = 0.5: ARIMA(1,1,0) on logs is the true model.
    rng = np.random.default_rng(77)
    shocks = rng.normal(0, 0.04, 560)
    changes = np.zeros(560)
    for t in range(1, 560):
        changes[t] = 0.5 * changes[t - 1] + shocks[t]
    index = pd.date_range("1980-01-01", periods=560, freq="MS", name="date")
    prices = pd.Series(100 * np.exp(np.cumsum(changes)), index=index, name="arima_sim")
    result = backtest(prices, 1, "arima", start="1990-01", step=2)
    assert result.n_origins > 200
    assert 0.72 <= result.coverage[80] <= 0.88
    assert 0.90 <= result.coverage[95] <= 0.99
    assert result.mase < 1.0  # the autocorrelation is real and ARIMA uses it
