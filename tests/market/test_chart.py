"""Charts: an ECharts option with history, forecast and bands, and a real PNG file."""

from __future__ import annotations

import json

import pytest

from orecast.market import chart, forecast


def test_echarts_spec_has_history_forecast_and_bands(random_walk):
    fc = forecast(random_walk, 6, "naive")
    spec = chart(random_walk, forecast=fc, start="2008-01").spec
    json.dumps(spec)
    x = spec["xAxis"]["data"]
    assert len(x) == 24 + 6 and x[0] == "2008-01-01" and x[-1] == "2010-06-01"
    names = [s["name"] for s in spec["series"]]
    assert names[:2] == ["history", "forecast (naive)"]
    assert {"80% band", "95% band"} <= set(names)
    band = next(s for s in spec["series"] if s["name"] == "80% band")
    lower = next(s for s in spec["series"] if s["name"] == "80% lower")
    # Stacked: lower + band height = upper bound.
    assert lower["data"][-1] + band["data"][-1] == pytest.approx(
        fc.upper[80].iloc[-1], rel=1e-5
    )
    assert "synthetic" in spec["title"]["subtext"]


def test_png_is_written(random_walk, tmp_path):
    path = tmp_path / "fan.png"
    chart(random_walk, horizon=3, method="drift", png=path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
