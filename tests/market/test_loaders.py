"""Loaders: units and ranges of the real data, no silent NaNs, user CSVs, clear errors."""

from __future__ import annotations

import pandas as pd
import pytest

from orecast.market import MarketError, list_series, load_csv, load_series, meta_of, series_info

REQUIRED_IDS = {
    "iron_ore_wb_monthly", "dce_iron_ore_daily", "shfe_rebar_daily", "shfe_hrc_daily",
    "dce_coke_daily", "dce_coking_coal_daily", "usd_cnh_daily", "china_pmi_monthly",
    "coal_australia_wb_monthly", "brent_wb_monthly", "copper_wb_monthly",
    "metals_index_wb_monthly",
}


def test_catalogue_has_every_required_series_with_source_and_licence():
    rows = {row.id: row for row in list_series()}
    assert REQUIRED_IDS <= rows.keys()
    for row in rows.values():
        assert row.name_zh and row.name_en and row.unit and row.source and row.licence
        assert row.start <= row.end and row.count > 0
        assert set(row.to_dict()) >= {"id", "name_zh", "name_en", "unit", "frequency", "source"}


@pytest.mark.parametrize("series_id", sorted(REQUIRED_IDS))
def test_bundled_series_are_clean_sorted_and_float(series_id):
    values = load_series(series_id)
    assert values.notna().all()
    assert values.index.is_monotonic_increasing and values.index.is_unique
    assert values.dtype == float
    assert meta_of(values).id == series_id


def test_world_bank_iron_ore_is_in_dollars_from_2006_only():
    ore = load_series("iron_ore_wb_monthly")
    assert ore.index[0] == pd.Timestamp("2006-01-01")  # no US-cents-per-dmtu contract era
    assert meta_of(ore).unit == "US$/dmt"
    # Plausibility values from the data README.
    assert ore["2013-01-01"] == pytest.approx(150.49)
    assert ore["2015-12-01"] == pytest.approx(40.50)
    assert ore["2021-06-01"] == pytest.approx(214.43)
    assert ore["2024"].mean() == pytest.approx(109.4, abs=0.1)
    assert load_series("iron_ore_62fe_wb_monthly").index[0] == pd.Timestamp("2008-12-01")


def test_dce_iron_ore_is_cny_per_tonne_in_a_plausible_range():
    ore = load_series("dce_iron_ore_daily")
    assert meta_of(ore).unit == "CNY/t"
    assert ore.index[0] == pd.Timestamp("2013-10-18")
    assert 250 < ore.min() < 320 and 1250 < ore.max() < 1400
    assert ore["2024"].mean() == pytest.approx(821, rel=0.02)


def test_missing_settlement_falls_back_to_the_close_instead_of_nan():
    rebar = load_series("shfe_rebar_daily")
    # Rebar's first year has no settlement price at all; the close fills it, so nothing is lost.
    assert rebar.index[0] == pd.Timestamp("2009-03-27")
    assert rebar.iloc[0] == 3561.0
    assert "close fills" in series_info("shfe_rebar_daily").notes


def test_start_end_and_resampling_use_period_averages():
    daily = load_series("dce_iron_ore_daily", "2024-01", "2024-03")
    monthly = load_series("dce_iron_ore_daily", "2024-01", "2024-03", freq="M")
    assert list(monthly.index) == list(pd.date_range("2024-01-01", periods=3, freq="MS"))
    assert monthly.iloc[0] == pytest.approx(daily["2024-01"].mean())
    last = load_series("dce_iron_ore_daily", "2024-01", "2024-03", freq="M", how="last")
    assert last.iloc[0] == daily["2024-01"].iloc[-1]
    assert meta_of(monthly).frequency == "monthly"


def test_unknown_id_lists_close_matches():
    with pytest.raises(MarketError, match="did you mean.*iron_ore_wb_monthly"):
        load_series("iron_ore_wb_monthy")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"start": "2020", "end": "2019"}, "after end"),
        ({"start": "not a date"}, "not a date"),
        ({"start": "1990", "end": "1991"}, "no data"),
        ({"freq": "D"}, "finer"),
        ({"freq": "fortnight"}, "unknown freq"),
    ],
)
def test_bad_ranges_and_frequencies_are_clear_errors(kwargs, message):
    with pytest.raises(MarketError, match=message):
        load_series("iron_ore_wb_monthly", **kwargs)


def test_user_csv_loads_as_a_series(tmp_path):
    path = tmp_path / "my_prices.csv"
    path.write_text("date,price\n2024-01-31,100\n2024-02-29,\n2024-03-31,102\n2024-04-30,103\n")
    values = load_series(path)
    assert list(values) == [100.0, 102.0, 103.0]
    meta = meta_of(values)
    assert meta.frequency == "monthly" and meta.dropped_missing == 1
    assert "my_prices.csv" in meta.source


def test_csv_without_a_date_column_is_a_clear_error(tmp_path):
    path = tmp_path / "no_dates.csv"
    path.write_text("price,volume\n1,2\n3,4\n5,6\n")
    with pytest.raises(MarketError, match="no date column"):
        load_csv(path)


def test_missing_csv_is_a_clear_error(tmp_path):
    with pytest.raises(MarketError, match="not found"):
        load_series(tmp_path / "nope.csv")
