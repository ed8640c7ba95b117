"""The one exception the market engine raises for bad input.

Callers (the CLI, the agent tools) catch `MarketError` in one place. Its message is one complete
English line: what was wrong and what to do. `code` and `params` say the same thing as data, so a
caller that answers in another language (the agent answers in Chinese too) can word it itself;
every code is listed in `CODES`.
"""

from __future__ import annotations

from typing import Any

CODES: frozenset[str] = frozenset({
    "bad_aggregation", "bad_coefficients", "bad_date", "bad_horizon", "bad_index", "bad_level", "bad_levels",
    "bad_max_lag", "bad_shock", "compare_with_forecast", "compare_not_positive", "bad_step", "csv_bad_dates", "csv_no_column", "csv_no_date_column",
    "csv_no_numeric", "csv_not_a_file", "csv_not_found", "csv_too_large", "csv_too_short", "csv_unreadable",
    "finer_freq", "horizon_too_long", "invalid", "max_lag_too_long", "no_calendar", "no_data_in_range",
    "no_indicator", "no_origin", "same_series",
    "shock_too_low", "start_after_end", "start_too_early", "too_few_values", "too_little_overlap",
    "too_short", "unknown_driver", "unknown_freq", "unknown_method", "unknown_product", "unknown_series",
    "unknown_source", "unsupported_driver",
})


class MarketError(ValueError):
    """Bad input to `orecast.market`: unknown series, bad horizon, malformed CSV, empty range …

    `code` (one of `CODES`) names the kind of mistake; `params` holds the values the message
    quotes (JSON-ready: strings, numbers, lists of strings).
    """

    def __init__(self, message: str, code: str = "invalid", **params: Any) -> None:
        if code not in CODES:
            raise ValueError(f"unknown MarketError code {code!r}")
        super().__init__(message)
        self.code = code
        self.params = params
