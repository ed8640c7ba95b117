"""orecast.market: the iron-ore market engine (data, statistics, forecasts, backtests, charts).

Everything the agent says about prices comes from here. The package imports nothing else from
orecast. All bad input raises `MarketError` (a `ValueError`) with a one-line message.

    >>> from orecast.market import forecast
    >>> forecast("iron_ore_wb_monthly", horizon=3).to_dict()["method"]  # doctest: +SKIP
"""

from __future__ import annotations

from orecast.market.backtest import BacktestResult, backtest
from orecast.market.catalog import SeriesInfo, series_ids
from orecast.market.chart import Chart, chart
from orecast.market.errors import MarketError
from orecast.market.forecast import Forecast, forecast
from orecast.market.listing import list_series, series_info
from orecast.market.loaders import SeriesMeta, load_csv, load_series, meta_of
from orecast.market.margin import MillMargin, mill_margin
from orecast.market.methods import METHOD_HELP, METHODS
from orecast.market.scenario import DRIVERS, UNSUPPORTED, Scenario, scenario
from orecast.market.stats import (
    CHANGE_WINDOWS,
    Description,
    Relation,
    describe,
    reference_point,
    relate,
)

__all__ = [
    "CHANGE_WINDOWS",
    "DRIVERS",
    "UNSUPPORTED",
    "METHODS",
    "METHOD_HELP",
    "BacktestResult",
    "Chart",
    "Description",
    "Forecast",
    "MarketError",
    "MillMargin",
    "Relation",
    "Scenario",
    "SeriesInfo",
    "SeriesMeta",
    "backtest",
    "chart",
    "describe",
    "forecast",
    "list_series",
    "load_csv",
    "load_series",
    "meta_of",
    "mill_margin",
    "reference_point",
    "relate",
    "scenario",
    "series_ids",
    "series_info",
]
