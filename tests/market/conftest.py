"""Synthetic series with known answers, shared by the market tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from orecast.market import SeriesMeta


def monthly(values: np.ndarray, name: str, *, kind: str = "price") -> pd.Series:
    """A monthly series carrying metadata, as `load_series` would return it."""
    index = pd.date_range("2000-01-01", periods=len(values), freq="MS", name="date")
    series = pd.Series(np.asarray(values, dtype=float), index=index, name=name)
    meta = SeriesMeta(
        id=name, name_zh=name, name_en=name, unit="u", frequency="monthly", kind=kind,
        source="synthetic test data", licence="test",
    )
    series.attrs = {"orecast": meta.to_dict()}
    return series


@pytest.fixture
def random_walk() -> pd.Series:
    rng = np.random.default_rng(7)
    return monthly(100 * np.exp(np.cumsum(rng.normal(0, 0.05, 120))), "random_walk")


@pytest.fixture
def trend() -> pd.Series:
    rng = np.random.default_rng(11)
    t = np.arange(120)
    return monthly(50 + 2.0 * t + rng.normal(0, 0.5, 120), "trend", kind="diffusion")


@pytest.fixture
def seasonal() -> pd.Series:
    rng = np.random.default_rng(3)
    t = np.arange(120)
    return monthly(
        100 + 20 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1.0, 120), "seasonal",
        kind="diffusion",
    )
