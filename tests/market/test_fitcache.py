"""Model fits kept on disk: a new process reuses them, new data refits only the new origins."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orecast.market import forecast, load_series
from orecast.market.engine import _fit_one
from orecast.market.fitcache import FORMAT


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ORECAST_CACHE_DIR", str(tmp_path))
    _fit_one.cache_clear()  # the in-process cache would hide the disk
    return tmp_path / "fits" / "ore.json"


def short_series(extra: int = 0) -> pd.Series:
    """Five years of monthly iron ore (a short grid keeps the cold run to ~100 fits)."""
    s = load_series("iron_ore_62fe_wb_monthly", start="2020-01", end="2024-12")
    if extra:
        more = pd.date_range(s.index[-1] + pd.offsets.MonthBegin(), periods=extra, freq="MS")
        s = pd.concat([s, pd.Series(s.iloc[-1] * (1 + 0.01 * np.arange(1, extra + 1)), index=more)])
    return pd.Series(s.to_numpy(), index=s.index, name="ore")


def entries(path: Path) -> dict:
    return json.loads(path.read_text())["fits"]


@pytest.mark.slow
def test_fits_are_read_back_from_disk_and_new_data_adds_only_new_origins(cache: Path) -> None:
    first = forecast(short_series(), 3)
    stored = entries(cache)
    assert len(stored) >= 3 * 20  # ets, arima and theta at every origin of the grid

    _fit_one.cache_clear()
    again = forecast(short_series(), 3)
    assert again.method == first.method and again.scores == first.scores
    pd.testing.assert_series_equal(again.mean, first.mean)

    # Proof that the second run read the disk: a doctored entry changes the scores.
    doctored = {k: {**v, "mean": [m + 1.0 for m in v["mean"]]} for k, v in stored.items()}
    cache.write_text(json.dumps({"format": FORMAT, "fits": doctored}))
    _fit_one.cache_clear()
    assert forecast(short_series(), 3).scores != first.scores

    cache.write_text(json.dumps({"format": FORMAT, "fits": stored}))
    _fit_one.cache_clear()
    forecast(short_series(extra=1), 3)
    added = len(entries(cache)) - len(stored)
    assert 0 < added <= 3 * 2, added  # the one or two origins the new month brings, per method


def test_a_damaged_cache_file_is_ignored(cache: Path) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text("{not json")
    fc = forecast(short_series(), 2, "theta")
    assert np.isfinite(fc.mean).all()
    assert len(entries(cache)) >= 1  # rewritten whole


def test_the_disk_cache_can_be_turned_off(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_FIT_CACHE", "0")
    forecast(short_series(), 2, "theta")
    assert not cache.exists()
