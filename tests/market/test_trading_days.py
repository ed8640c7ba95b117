"""Daily futures forecasts land on exchange trading days: no weekend, no Chinese public holiday.

The expected holidays are read from `chinese_calendar` (the State Council's schedules) and from the
bundled exchange data itself, not from the module under test.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import chinese_calendar
import pandas as pd
import pytest

from orecast import market
from orecast.market import MarketError, trading_days

DATA = Path(market.__file__).parent / "data"
FUTURES = (
    "dce_iron_ore_futures_daily.csv",
    "dce_coke_futures_daily.csv",
    "dce_coking_coal_futures_daily.csv",
    "shfe_rebar_futures_daily.csv",
    "shfe_hot_rolled_coil_futures_daily.csv",
)


def holiday(day: pd.Timestamp) -> bool:
    return day.date() in chinese_calendar.holidays and day.weekday() < 5


@pytest.mark.parametrize("series", ["dce_iron_ore_daily", "shfe_rebar_daily", "dce_coke_daily"])
def test_a_daily_futures_forecast_skips_the_exchange_holidays(series: str) -> None:
    # From the data's end (2026-08-21) over the Mid-Autumn and National Day holidays of 2026.
    fc = market.forecast(series, 40, "naive")
    last = market.load_series(series).index[-1]
    days = pd.bdate_range(last + timedelta(days=1), periods=60)
    expected = [d for d in days if not holiday(d)][:40]
    assert list(fc.mean.index) == expected
    assert not any(holiday(d) for d in fc.mean.index)
    assert pd.Timestamp("2026-10-08") in fc.mean.index  # the first day after National Day trades
    closed = {c["date"]: c["holiday"] for c in fc.to_dict()["closed"]}
    assert closed["2026-10-01"] == "National Day" and closed["2026-09-25"] == "Mid-autumn Festival"


def test_usd_cnh_trades_through_chinese_holidays() -> None:
    # Offshore yuan has rows on China's holidays (2025-10-01 …): plain weekdays, no holiday skipped.
    fc = market.forecast("usd_cnh_daily", 150, "naive")
    last = market.load_series("usd_cnh_daily").index[-1]
    assert list(fc.mean.index) == list(pd.bdate_range(last + timedelta(days=1), periods=150))
    assert "closed" not in fc.to_dict()


def test_the_calendar_agrees_with_the_exchanges_own_data() -> None:
    """No bundled DCE/SHFE row falls on a day the calendar calls closed (2013 on: the rebar file
    has one stray 2010 row), and the exchanges traded on nearly every day it calls open."""
    rows: set[date] = set()
    for file in FUTURES:
        dates = pd.read_csv(DATA / file, parse_dates=["date"])["date"]
        rows |= {d.date() for d in dates if d.year >= 2013}
    assert all(trading_days.is_trading_day(d) for d in rows)
    open_days = trading_days.trading_days(min(rows), max(rows))
    missing = [d for d in open_days if d.date() not in rows]
    assert len(missing) <= 10, missing  # gaps of the data source, one to three a year at most


def test_a_year_without_a_published_schedule_is_projected() -> None:
    first, last = trading_days.official_years()
    assert last == 2026  # chinesecalendar 1.11.0: bump the projected expectations with it
    spring = [c for c in trading_days.closures(2027) if c.holiday == "Spring Festival"]
    # 除夕 2027 is Friday 5 February: closed from it through the eighth day, as in 2025 and 2026.
    assert [c.day for c in spring] == [date(2027, 2, 5), *(date(2027, 2, d) for d in range(8, 13))]
    assert all(c.projected for c in trading_days.closures(2027))
    assert not any(c.projected for c in trading_days.closures(2026))
    assert not trading_days.is_trading_day(date(2027, 10, 4))  # National Day week
    assert trading_days.is_trading_day(date(2027, 2, 15))


# Chinese New Year, Dragon Boat and Mid-Autumn of the years the projection is checked on (HKO tables).
LUNAR = {
    2024: (date(2024, 2, 10), date(2024, 6, 10), date(2024, 9, 17)),
    2025: (date(2025, 1, 29), date(2025, 5, 31), date(2025, 10, 6)),
    2026: (date(2026, 2, 17), date(2026, 6, 19), date(2026, 9, 25)),
}


@pytest.mark.parametrize("year", sorted(LUNAR))
def test_the_projection_rules_reproduce_the_published_schedules(
    monkeypatch: pytest.MonkeyPatch, year: int
) -> None:
    monkeypatch.setitem(trading_days.LUNAR_HOLIDAYS, year, LUNAR[year])
    published = {d for d in chinese_calendar.holidays if d.year == year and d.weekday() < 5}
    published |= {d for d in trading_days.EXTRA_CLOSURES if d.year == year}
    assert set(trading_days._projected(year)) == published


def test_a_year_beyond_the_lunar_table_is_an_error_not_weekdays() -> None:
    with pytest.raises(MarketError, match="no holiday calendar for 2036") as err:
        trading_days.closures(2036)
    assert err.value.code == "no_calendar"
    with pytest.raises(MarketError, match="known to 2035"):  # not a crash, and no weekday guess
        market.forecast("dce_iron_ore_daily", 3000, "naive")
    assert trading_days.next_trading_days(date(2026, 12, 31), 1)[0] == pd.Timestamp("2027-01-04")
    assert trading_days.trading_days(date(2027, 2, 1), date(2027, 2, 14)).size == 4  # 1-4 Feb


def test_the_weekdays_calendar_keeps_every_weekday() -> None:
    days = trading_days.trading_days(date(2026, 9, 28), date(2026, 10, 9), trading_days.WEEKDAYS)
    assert list(days) == list(pd.bdate_range("2026-09-28", "2026-10-09"))
    exchange = trading_days.trading_days(date(2026, 9, 28), date(2026, 10, 9))
    assert [d for d in days if d not in exchange] == list(
        pd.bdate_range("2026-10-01", "2026-10-07")
    )
