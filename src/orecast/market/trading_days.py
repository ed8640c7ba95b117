"""Trading days of the Chinese futures exchanges (DCE, SHFE): weekdays that are not public holidays.

The exchanges close on China's public holidays (Spring Festival, Qingming, Labour Day, Dragon Boat,
Mid-Autumn, National Day, New Year) and never open on the weekend days the State Council makes
working days. The holidays come from `chinese_calendar` (the State Council's published schedules,
2004 to the package's last year; the bundled DCE/SHFE series have no row on any of them). The
schedule of a year is published in the November before it, so the years after the package's last
one are *projected*: the rules below reproduce the weekday closures of the official 2025 and 2026
schedules (the holiday regulation as amended in November 2024), on the lunar dates in
`LUNAR_HOLIDAYS`. Every projected closure is marked as such, so an answer can say so.

A daily series that is not traded on a Chinese exchange (USD/CNH trades through China's holidays)
uses plain weekdays (`WEEKDAYS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache

import chinese_calendar
import pandas as pd

from orecast.market.errors import MarketError

CN_EXCHANGE = "cn_exchange"
WEEKDAYS = "weekdays"
CALENDARS = (CN_EXCHANGE, WEEKDAYS)

# Days the exchanges were closed beyond the State Council's schedule: none of the bundled DCE and
# SHFE series has a row on them (DCE and SHFE notices of the 2024 Spring Festival closure).
EXTRA_CLOSURES: dict[date, str] = {date(2024, 2, 9): "Spring Festival"}

# Chinese New Year (正月初一), Dragon Boat (五月初五) and Mid-Autumn (八月十五) as Gregorian dates,
# for the years `chinese_calendar` does not cover yet. Source: the Hong Kong Observatory's
# Gregorian-Lunar calendar conversion tables; checked against the `lunardate` and `lunar-python`
# packages, which agree on every date.
LUNAR_HOLIDAYS: dict[int, tuple[date, date, date]] = {
    2027: (date(2027, 2, 6), date(2027, 6, 9), date(2027, 9, 15)),
    2028: (date(2028, 1, 26), date(2028, 5, 28), date(2028, 10, 3)),
    2029: (date(2029, 2, 13), date(2029, 6, 16), date(2029, 9, 22)),
    2030: (date(2030, 2, 3), date(2030, 6, 5), date(2030, 9, 12)),
    2031: (date(2031, 1, 23), date(2031, 6, 24), date(2031, 10, 1)),
    2032: (date(2032, 2, 11), date(2032, 6, 12), date(2032, 9, 19)),
    2033: (date(2033, 1, 31), date(2033, 6, 1), date(2033, 9, 8)),
    2034: (date(2034, 2, 19), date(2034, 6, 20), date(2034, 9, 27)),
    2035: (date(2035, 2, 8), date(2035, 6, 10), date(2035, 9, 16)),
}


@dataclass(frozen=True, slots=True)
class Closure:
    """A weekday the exchanges do not trade."""

    day: date
    holiday: str  # English name, as chinese_calendar spells it ("Spring Festival")
    projected: bool  # True: the year's official schedule was not known to this version

    def to_dict(self) -> dict[str, object]:
        return {"date": self.day.isoformat(), "holiday": self.holiday, "projected": self.projected}


def official_years() -> tuple[int, int]:
    """First and last year of the published schedules `chinese_calendar` holds."""
    years = [d.year for d in chinese_calendar.holidays]
    return min(years), max(years)


def _one_day(day: date) -> list[date]:
    """Weekdays closed for a one-day holiday: it joins the nearest weekend, as the schedules do
    (a Tuesday takes the Monday, a Thursday the Friday, a weekend day the next Monday)."""
    weekday = day.weekday()
    if weekday == 1:
        return [day - timedelta(days=1), day]
    if weekday == 3:
        return [day, day + timedelta(days=1)]
    if weekday >= 5:
        return [day + timedelta(days=7 - weekday)]
    return [day]


def _span(first: date, last: date) -> list[date]:
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def _projected(year: int) -> dict[date, str]:
    if year not in LUNAR_HOLIDAYS:
        # Past the lunar table the exchange's trading days are unknown: no dates are made up.
        raise MarketError(
            f"no holiday calendar for {year}: Chinese exchange trading days are known to "
            f"{max(LUNAR_HOLIDAYS)}; ask for a shorter horizon",
            "no_calendar",
            year=year,
            last=max(LUNAR_HOLIDAYS),
        )
    new_year, dragon_boat, mid_autumn = LUNAR_HOLIDAYS[year]
    days: dict[date, str] = {}

    def add(dates: list[date], name: str) -> None:
        days.update({d: name for d in dates if d.weekday() < 5 and d.year == year})

    add(_one_day(date(year, 1, 1)), "New Year's Day")
    eve = new_year - timedelta(days=1)  # 除夕 has been a holiday since 2025: eight days from it
    add(_span(eve, eve + timedelta(days=7)), "Spring Festival")
    qingming = next(
        d
        for d, term in chinese_calendar.get_solar_terms(date(year, 4, 1), date(year, 4, 30))
        if term == "清明"
    )
    add(_one_day(qingming), "Tomb-sweeping Day")
    add(_span(date(year, 5, 1), date(year, 5, 5)), "Labour Day")
    add(_one_day(dragon_boat), "Dragon Boat Festival")
    if date(year, 9, 29) <= mid_autumn <= date(year, 10, 8):  # one long break with National Day
        add(_span(min(mid_autumn, date(year, 10, 1)), date(year, 10, 8)), "National Day")
    else:
        add(_one_day(mid_autumn), "Mid-autumn Festival")
        add(_span(date(year, 10, 1), date(year, 10, 7)), "National Day")
    return days


@cache
def closures(year: int) -> tuple[Closure, ...]:
    """The weekdays of `year` the exchanges are closed, official or projected."""
    first, last = official_years()
    if year < first:
        raise MarketError(
            f"no holiday calendar before {first}", "no_calendar", year=year, last=last
        )
    if year <= last:
        found = {
            d: str(h)
            for d, h in chinese_calendar.holidays.items()
            if d.year == year and d.weekday() < 5
        }
        found.update({d: h for d, h in EXTRA_CLOSURES.items() if d.year == year})
        return tuple(Closure(d, found[d], False) for d in sorted(found))
    days = _projected(year)
    return tuple(Closure(d, days[d], True) for d in sorted(days))


def _closed(day: date) -> Closure | None:
    return next((c for c in closures(day.year) if c.day == day), None)


def is_trading_day(day: date | pd.Timestamp, calendar: str = CN_EXCHANGE) -> bool:
    day = pd.Timestamp(day).date()
    if day.weekday() >= 5:
        return False
    return calendar == WEEKDAYS or _closed(day) is None


def next_trading_days(
    last: date | pd.Timestamp, n: int, calendar: str = CN_EXCHANGE
) -> pd.DatetimeIndex:
    """The `n` trading days after `last`."""
    out: list[pd.Timestamp] = []
    day = pd.Timestamp(last).normalize()
    while len(out) < n:
        day += pd.Timedelta(days=1)
        if is_trading_day(day, calendar):
            out.append(day)
    return pd.DatetimeIndex(out, name="date")


def trading_days(
    start: date | pd.Timestamp, end: date | pd.Timestamp, calendar: str = CN_EXCHANGE
) -> pd.DatetimeIndex:
    """The trading days from `start` to `end`, both included."""
    days = pd.bdate_range(pd.Timestamp(start).normalize(), pd.Timestamp(end).normalize())
    return pd.DatetimeIndex([d for d in days if is_trading_day(d, calendar)], name="date")


def closures_between(start: date | pd.Timestamp, end: date | pd.Timestamp) -> list[Closure]:
    """The exchange closures from `start` to `end`, both included (weekdays only)."""
    lo, hi = pd.Timestamp(start).date(), pd.Timestamp(end).date()
    return [c for year in range(lo.year, hi.year + 1) for c in closures(year) if lo <= c.day <= hi]
