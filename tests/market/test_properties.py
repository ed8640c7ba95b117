"""Properties that hold for any series: checked on many random ones with Hypothesis."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from orecast.market import backtest, describe

walks = st.lists(
    st.floats(min_value=-0.2, max_value=0.2, allow_nan=False), min_size=40, max_size=80
).map(
    lambda steps: pd.Series(
        100 * np.exp(np.cumsum(steps)),
        index=pd.date_range("2000-01-01", periods=len(steps), freq="MS", name="date"),
        name="walk",
    )
)


@settings(max_examples=25, deadline=None)
@given(walks, st.integers(min_value=1, max_value=3))
def test_naive_backtest_equals_the_direct_formula(walk, horizon):
    result = backtest(walk, horizon, "naive", start=walk.index[36])
    y = walk.to_numpy()
    origins = np.arange(36, len(y) - horizon)
    assert result.n_origins == len(origins)
    assert np.isclose(result.mae, np.mean(np.abs(y[origins + horizon] - y[origins])))
    assert np.isclose(result.mase, 1.0) or result.naive_mae == 0


@settings(max_examples=25, deadline=None)
@given(walks)
def test_describe_stays_in_range(walk):
    result = describe(walk)
    assert 0 < result.percentile <= 100
    assert -100 <= result.max_drawdown_pct <= 0
    assert result.minimum <= result.last_value <= result.maximum
