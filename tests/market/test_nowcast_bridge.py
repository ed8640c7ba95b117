"""The nowcast past the World Bank's last month: the DCE futures' monthly averages carry it over the
months they traded in, and its bands come from the same estimate's past errors. Each expectation is
recomputed with pandas from the bundled CSVs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from orecast.market import backtest, forecast, load_series

WB, DCE = "iron_ore_wb_monthly", "dce_iron_ore_daily"
MIN_DAYS = 10  # the days a month's futures must have traded to count
WINDOW = 300  # the monthly fit window


def futures_months() -> tuple[pd.Series, pd.Series]:
    """The futures' log monthly average and log(month-end) − log(average), where they traded enough."""
    months = np.log(load_series(DCE)).resample("MS")
    traded = months.count() >= MIN_DAYS
    return months.mean().where(traded), (months.last() - months.mean()).where(traded)


def months_after_the_world_bank() -> list[pd.Timestamp]:
    wb = load_series(WB)
    average, _ = futures_months()
    later = []
    for month in pd.date_range(wb.index[-1], periods=24, freq="MS")[1:]:
        if not np.isfinite(average.get(month, np.nan)):
            break
        later.append(month)
    return later


def test_the_futures_months_carry_the_last_monthly_average_over():
    wb, (average, premium) = load_series(WB), futures_months()
    last, later = wb.index[-1], months_after_the_world_bank()
    assert len(later) >= 1  # the bundled futures run past the bundled World Bank data
    fc = forecast(WB, len(later) + 2, "nowcast")
    assert list(fc.bridged) == later
    for month in later:
        assert fc.mean[month] == pytest.approx(wb[last] * np.exp(average[month] - average[last]), rel=1e-9)
    # After them: a random walk from the futures' last level, as the one-month nowcast is.
    end = later[-1]
    expected = wb[last] * np.exp(average[end] - average[last] + premium[end])
    assert fc.mean.iloc[len(later)] == pytest.approx(expected, rel=1e-9)
    assert fc.mean.iloc[-1] == pytest.approx(expected, rel=1e-9)
    assert fc.to_dict()["bridged"] == {
        "indicator": DCE,
        "indicator_last_date": load_series(DCE).index[-1].date().isoformat(),
        "periods": [m.date().isoformat() for m in later],
    }


def test_the_carried_over_months_bands_are_the_estimates_own_past_errors():
    wb, (average, _) = load_series(WB), futures_months()
    y, a = np.log(wb), average.reindex(wb.index)
    lead = len(months_after_the_world_bank())
    fc = forecast(WB, 1, "nowcast")
    origin = len(y) - 1
    # From each past origin p: p's value moved as the futures' average moved to p + 1.
    past = np.arange(max(0, origin + 1 - WINDOW), origin)
    errors = y.to_numpy()[past + 1] - (y.to_numpy()[past] + a.to_numpy()[past + 1] - a.to_numpy()[past])
    sd = float(np.sqrt(np.mean(errors[np.isfinite(errors)] ** 2)))
    middle = np.log(fc.mean.iloc[0])
    assert lead >= 1
    assert np.log(fc.lower[80].iloc[0]) == pytest.approx(middle - norm.ppf(0.9) * sd, rel=1e-9)
    assert np.log(fc.upper[95].iloc[0]) == pytest.approx(middle + norm.ppf(0.975) * sd, rel=1e-9)
    # Far narrower than a forecast without the futures' months (the random walk's one-month band).
    naive = forecast(WB, 1, "naive")
    assert fc.upper[80].iloc[0] / fc.lower[80].iloc[0] < naive.upper[80].iloc[0] / naive.lower[80].iloc[0]


def test_a_cut_off_origin_does_not_see_the_futures_after_it():
    fc = forecast(WB, 3, "nowcast", end="2026-04")
    assert fc.bridged == () and "bridged" not in fc.to_dict()
    april = np.log(load_series(DCE, "2026-04", "2026-04"))
    wb = load_series(WB)[pd.Timestamp("2026-04-01")]
    assert fc.mean.iloc[2] == pytest.approx(wb * np.exp(april.iloc[-1] - april.mean()))


def test_auto_ranks_the_nowcast_with_the_same_head_start_it_has_live():
    # The backtest's origins see the futures as many months ahead as the live forecast does.
    fc = forecast(WB, 3, "auto")
    assert fc.method == "nowcast" and fc.bridged
    assert fc.scores["nowcast"] < 0.5 * fc.scores["naive"]


def test_the_backtest_measures_the_nowcast_as_published():
    # A backtest states how the method did when the World Bank figure came out (the futures known to
    # that month's end): no head start, so docs/forecast-accuracy.md's figures stand.
    result = backtest(WB, 1, "nowcast", start="2020-06", end="2020-08")
    average, premium = futures_months()
    wb = load_series(WB)
    for _, row in result.table.iterrows():
        cutoff = pd.Timestamp(row["cutoff"])
        assert row["yhat"] == pytest.approx(wb[cutoff] * np.exp(premium[cutoff]), rel=1e-9)
