"""The one exception the market engine raises for bad input.

Callers (the CLI, the agent tools) catch `MarketError` in one place and show its message as a
single line, so every message here must be complete on its own: what was wrong and what to do.
"""

from __future__ import annotations


class MarketError(ValueError):
    """Bad input to `orecast.market`: unknown series, bad horizon, malformed CSV, empty range …"""
