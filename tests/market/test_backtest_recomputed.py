"""The backtest's errors recomputed independently: plain pandas/numpy from the bundled CSVs.

Nothing here calls orecast's loaders or models for the expected values: the files are read with
`pandas.read_csv`, the random walk and the drift forecasts (and their Gaussian bands in logs) are
written out from their textbook formulas, and MAE, MAPE, RMSE, the relative MAE (MASE here) and the
80 %/95 % coverage are scored by hand. For the fitted methods (`auto`, `ets`), whose forecasts
cannot be rewritten in a few lines, the backtest's own forecast table is rescored against the CSV's
actual values at each origin + h trading rows, so the scoring and the alignment are still checked.
"""

from __future__ import annotations

from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

import orecast.market
from orecast.market import backtest

DATA = Path(orecast.market.__file__).parent / "data"
Z = {lv: NormalDist().inv_cdf(0.5 + lv / 200) for lv in (80, 95)}


def dce_settle(file: str) -> pd.Series:
    """Settle prices, the close where a day has no settle (as the catalogue documents)."""
    frame = pd.read_csv(DATA / file, parse_dates=["date"], index_col="date")
    return frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"]).dropna()


def wb_iron_ore() -> pd.Series:
    frame = pd.read_csv(DATA / "iron_ore_monthly_worldbank.csv", parse_dates=["date"], index_col="date")
    return frame.loc["2006-01-01":, "iron_ore_price"].dropna()


def by_hand(prices: pd.Series, method: str, horizon: int, origins: list[int], window: int) -> dict:
    """Forecast from each origin with the textbook random walk / drift in logs, then score."""
    logs = np.log(prices.to_numpy(dtype=float))
    rows = []
    for o in origins:
        seen = logs[max(0, o + 1 - window): o + 1]
        diffs = np.diff(seen)
        if method == "naive":
            mean = seen[-1]
            sd = np.sqrt(np.mean(diffs**2)) * np.sqrt(horizon)
        else:  # drift, Hyndman & Athanasopoulos table 5.2
            mean = seen[-1] + horizon * (seen[-1] - seen[0]) / (len(seen) - 1)
            sd = diffs.std(ddof=1) * np.sqrt(horizon * (1 + horizon / (len(seen) - 1)))
        actual = prices.iloc[o + horizon]
        rows.append({
            "yhat": np.exp(mean), "y": actual, "naive": prices.iloc[o],
            **{f"lo-{lv}": np.exp(mean - Z[lv] * sd) for lv in Z},
            **{f"hi-{lv}": np.exp(mean + Z[lv] * sd) for lv in Z},
        })
    return score(pd.DataFrame(rows))


def score(t: pd.DataFrame) -> dict:
    err = (t["yhat"] - t["y"]).abs()
    return {
        "mae": err.mean(),
        "mape": 100 * (err / t["y"].abs()).mean(),
        "rmse": float(np.sqrt(((t["yhat"] - t["y"]) ** 2).mean())),
        "mase": err.mean() / (t["naive"] - t["y"]).abs().mean(),
        "naive_mae": (t["naive"] - t["y"]).abs().mean(),
        **{f"cov{lv}": ((t["y"] >= t[f"lo-{lv}"]) & (t["y"] <= t[f"hi-{lv}"])).mean() for lv in Z},
    }


def assert_agrees(result, expected: dict) -> None:
    got = result.to_dict()
    assert got["mae"] == pytest.approx(expected["mae"], rel=1e-6)
    assert got["mape_pct"] == pytest.approx(expected["mape"], rel=1e-6)
    assert got["rmse"] == pytest.approx(expected["rmse"], rel=1e-6)
    assert got["mase"] == pytest.approx(expected["mase"], rel=1e-6)
    assert got["naive_mae"] == pytest.approx(expected["naive_mae"], rel=1e-6)
    for lv in Z:
        assert got["coverage_pct"][str(lv)] == pytest.approx(100 * expected[f"cov{lv}"], abs=1e-6)


@pytest.mark.parametrize("method", ["naive", "drift"])
@pytest.mark.parametrize("horizon", [1, 5])
def test_dce_iron_ore_backtest_matches_a_hand_computation(method: str, horizon: int) -> None:
    prices = dce_settle("dce_iron_ore_futures_daily.csv")
    start = "2025-01-02"
    result = backtest("dce_iron_ore_daily", horizon, method, start=start, step=5)
    first = int(prices.index.searchsorted(pd.Timestamp(start)))
    origins = list(range(first, len(prices) - horizon, 5))
    assert result.n_origins == len(origins)
    assert result.first_origin == prices.index[origins[0]]
    assert result.last_origin == prices.index[origins[-1]]
    assert_agrees(result, by_hand(prices, method, horizon, origins, window=750))


@pytest.mark.parametrize("method", ["naive", "drift"])
def test_world_bank_iron_ore_backtest_matches_a_hand_computation(method: str) -> None:
    prices = wb_iron_ore()
    result = backtest("iron_ore_wb_monthly", 3, method, start="2015-01")
    first = int(prices.index.searchsorted(pd.Timestamp("2015-01-01")))
    origins = list(range(first, len(prices) - 3))
    assert result.n_origins == len(origins)
    assert_agrees(result, by_hand(prices, method, 3, origins, window=300))


@pytest.mark.parametrize(("series", "file", "method", "horizon"), [
    ("dce_iron_ore_daily", "dce_iron_ore_futures_daily.csv", "auto", 5),
    ("shfe_rebar_daily", "shfe_rebar_futures_daily.csv", "ets", 10),
])
def test_fitted_methods_are_scored_against_the_csv(series: str, file: str, method: str, horizon: int) -> None:
    prices = dce_settle(file)
    result = backtest(series, horizon, method, start="2025-06-02", step=10)
    table = result.table
    last = table[table["step"] == horizon].reset_index(drop=True)
    # Each forecast's outcome is the CSV's settle `horizon` trading rows after its origin.
    at = prices.index.searchsorted(last["cutoff"])
    assert (prices.index[at] == last["cutoff"]).all()
    assert list(last["ds"]) == list(prices.index[at + horizon])
    assert last["y"].to_numpy() == pytest.approx(prices.iloc[at + horizon].to_numpy())
    assert last["naive"].to_numpy() == pytest.approx(prices.iloc[at].to_numpy())
    assert_agrees(result, score(last))
    # Every step, not only the last, is scored the same way.
    for row in result.by_step:
        part = table[table["step"] == row["step"]]
        expected = score(part)
        assert row["mae"] == pytest.approx(expected["mae"], rel=1e-9)
        assert row["rmse"] == pytest.approx(expected["rmse"], rel=1e-9)
        assert row["coverage_80"] == pytest.approx(expected["cov80"])
