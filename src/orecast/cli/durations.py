"""Durations on the command line: the store's parser (`checkpoint/durations.py`), which the service's
settings use too (`ORECAST_THREAD_TTL=90d`)."""

from orecast.checkpoint.durations import parse_duration

__all__ = ["parse_duration"]
