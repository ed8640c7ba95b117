"""Comparison charts: two series on their common dates, each an index that is 100 at the first.

Every expected value is recomputed here with pandas from the series as loaded, not taken from the
chart code.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from orecast.market import MarketError, chart, load_series


def test_two_daily_series_are_indexed_to_100_on_their_first_common_day(tmp_path) -> None:
    result = chart("dce_iron_ore_daily", compare="shfe_rebar_daily", start="2024", png=tmp_path / "c.png")
    ore, rebar = load_series("dce_iron_ore_daily")["2024":], load_series("shfe_rebar_daily")["2024":]
    days = ore.index.intersection(rebar.index)
    expected_ore = ore[days] / ore[days[0]] * 100
    expected_rebar = rebar[days] / rebar[days[0]] * 100
    assert result.compared is not None
    pd.testing.assert_index_equal(result.history.index, days, check_names=False)
    assert result.history.to_numpy() == pytest.approx(expected_ore.to_numpy())
    assert result.compared.values.to_numpy() == pytest.approx(expected_rebar.to_numpy())
    assert result.unit == f"100 = {days[0].date().isoformat()}"
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    spec = result.spec
    json.dumps(spec)
    assert [s["name"] for s in spec["series"]] == [
        "DCE iron ore futures, continuous (settle) / 大商所铁矿石期货（连续，结算价）",
        "SHFE rebar futures, continuous (settle) / 上期所螺纹钢期货（连续，结算价）",
    ]
    assert spec["series"][1]["data"][-1] == pytest.approx(expected_rebar.iloc[-1], abs=1e-3)
    assert spec["yAxis"]["name"] == result.unit
    assert spec["xAxis"]["data"][0] == days[0].date().isoformat()
    assert "DCE" in spec["title"]["subtext"] and "SHFE" in spec["title"]["subtext"]


def test_a_monthly_and_a_daily_series_meet_at_monthly_averages() -> None:
    result = chart("iron_ore_wb_monthly", compare="shfe_rebar_daily", start="2020")
    ore = load_series("iron_ore_wb_monthly")["2020":]
    rebar = load_series("shfe_rebar_daily").resample("MS").mean()["2020":]
    months = ore.index.intersection(rebar.index)
    assert result.compared is not None
    assert len(result.history) == len(months) and result.history.index[-1] == months[-1]
    assert result.compared.values.to_numpy() == pytest.approx((rebar[months] / rebar[months[0]] * 100).to_numpy())
    assert result.history.to_numpy() == pytest.approx((ore[months] / ore[months[0]] * 100).to_numpy())


@pytest.mark.parametrize(("kwargs", "code"), [
    ({"compare": "shfe_rebar_daily", "horizon": 6}, "compare_with_forecast"),
    ({"compare": "dce_iron_ore_daily"}, "same_series"),
    ({"compare": "shfe_rebar_daily", "start": "2030"}, "no_data_in_range"),
])
def test_what_cannot_be_compared_is_a_clear_error(kwargs: dict, code: str) -> None:
    with pytest.raises(MarketError) as caught:
        chart("dce_iron_ore_daily", **kwargs)
    assert caught.value.code == code


def test_a_series_that_starts_at_zero_or_below_is_not_indexed() -> None:
    days = pd.date_range("2024-01-01", periods=30, freq="D")
    margin = pd.Series([float(i - 1) for i in range(30)], index=days, name="margin")  # 0 on the 2nd
    with pytest.raises(MarketError) as caught:
        chart(margin, compare="dce_iron_ore_daily")
    assert caught.value.code == "compare_not_positive"
    assert caught.value.params["date"] == "2024-01-02"  # the first day both have (the 1st is a holiday)
