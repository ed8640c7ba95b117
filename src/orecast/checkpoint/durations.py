"""Durations: `90d`, `12h`, `2w`, `30m`, `45s` (and combinations such as `1d12h`), on the command line and in settings."""

from __future__ import annotations

import re
from datetime import timedelta

_PART = re.compile(r"(\d+)([wdhms])")
_UNITS = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
# About 1000 years. A duration is subtracted from now (a cutoff, a TTL): longer ones overflow Python's
# datetime (before year 1) or timedelta, and MySQL keeps no date before the year 1000.
LONGEST = timedelta(days=365_000)


def parse_duration(text: str) -> timedelta:
    """A positive duration; ValueError naming the accepted form otherwise."""
    cleaned = text.strip().lower()
    parts = _PART.findall(cleaned)
    if not parts or "".join(n + u for n, u in parts) != cleaned:
        raise ValueError(f"{text!r} is not a duration: use e.g. 90d, 12h, 2w, 30m or 1d12h")
    span = timedelta(0)
    try:
        for number, unit in parts:
            span += timedelta(**{_UNITS[unit]: int(number)})
    except OverflowError:
        span = LONGEST + LONGEST
    if span <= timedelta(0):
        raise ValueError(f"{text!r} is not a positive duration")
    if span > LONGEST:
        raise ValueError(f"{text!r} is longer than {LONGEST.days}d (about 1000 years)")
    return span

