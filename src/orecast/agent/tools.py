"""The agent's tools: thin wrappers around `orecast.market` that answer in compact JSON.

Every answer carries the series id, its unit, the dates it covers and the `source`, so the model
(offline analyst or LLM) can cite them. Long histories are thinned to at most `MAX_POINTS` points
— the model needs the shape and the key numbers, not 3,000 rows. Bad input (`MarketError`) comes
back to the model as an error message it can correct, never as a crash of the run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from orecast import market
from orecast.agent.clock import freshness
from orecast.agent.market_errors import tool_error
from orecast.market.chart import png_labels
from orecast.market.errors import MarketError

MAX_POINTS = 40
MARKET_TOOLS = (
    "price_scenario",
    "list_series",
    "latest_price",
    "price_history",
    "describe_series",
    "relate_series",
    "mill_margin",
    "forecast_price",
    "backtest_forecast",
    "make_chart",
)


def dumps(payload: Any) -> str:
    """Compact JSON; floats cut to 10 significant digits, dates as ISO strings."""
    return json.dumps(_clean(payload), ensure_ascii=False, separators=(",", ":"))


def payload_of(text: str) -> Any:
    """JSON of a tool result, tolerant of a notice the approval middleware puts before it.

    The result is the JSON object that ends the text: the first `{` from which the rest parses.
    """
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    for i, ch in enumerate(text):
        if ch == "{":
            try:
                return json.loads(text[i:])
            except ValueError:
                continue
    return None


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "to_dict") and not isinstance(value, pd.Series | pd.DataFrame):
        return _clean(value.to_dict())
    if isinstance(value, pd.Timestamp):
        return value.date().isoformat() if value == value.normalize() else value.isoformat()
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return float(f"{value:.10g}")
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalars
        return _clean(value.item())
    if isinstance(value, Path):
        return str(value)
    return value


def _meta(series: pd.Series) -> dict[str, Any]:
    meta = dict(series.attrs.get("orecast", {}))
    return {
        "series": meta.get("id", series.name),
        "name_zh": meta.get("name_zh"),
        "name_en": meta.get("name_en"),
        "unit": meta.get("unit"),
        "frequency": meta.get("frequency"),
        "source": meta.get("source"),
    }


def _point(series: pd.Series, i: int) -> dict[str, Any]:
    return {"date": series.index[i].date().isoformat(), "value": float(series.iloc[i])}


def _guard(fn: Callable[..., Any]) -> Callable[..., str]:
    """Run a market call; `MarketError` becomes a ToolException the model sees as an error (JSON:
    the English line, its code and parameters, so the answer can be worded in either language)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> str:
        try:
            return dumps(fn(*args, **kwargs))
        except MarketError as exc:
            raise ToolException(tool_error(exc)) from None

    return run


# ---- the tool bodies (plain functions, typed; docstrings are what the model reads) ----------


def list_series() -> dict[str, Any]:
    """List every available series: id, Chinese and English name, unit, frequency, date range, source."""
    rows = [info.to_dict() for info in market.list_series()]
    keep = ("id", "name_zh", "name_en", "unit", "frequency", "start", "end", "source")
    return {"series": [{k: r.get(k) for k in keep} for r in rows], "count": len(rows)}


def latest_price(series: str) -> dict[str, Any]:
    """Latest value of a series with its date, and the change vs. the previous observation, one
    calendar month and one calendar year earlier (the last observation on or before that date —
    the same definition as describe_series). `freshness` says how old the last value is today;
    when `stale` is true, say so. `series`: an id from list_series."""
    s = market.load_series(series)
    last = _point(s, -1)
    out: dict[str, Any] = {**_meta(s), "latest": last, "changes": {}}
    refs: dict[str, tuple[pd.Timestamp, float] | None] = {
        "previous": (s.index[-2], float(s.iloc[-2])) if len(s) > 1 else None,
        "1m": market.reference_point(s, market.CHANGE_WINDOWS["1m"]),
        "1y": market.reference_point(s, market.CHANGE_WINDOWS["12m"]),
    }
    for label, ref in refs.items():
        if ref is None:
            continue
        prev = {"date": ref[0].date().isoformat(), "value": ref[1]}
        out["changes"][label] = {
            "from": prev,
            "change": last["value"] - prev["value"],
            "change_pct": (last["value"] / prev["value"] - 1) * 100 if prev["value"] else None,
        }
    out["freshness"] = freshness(last["date"], str(out["frequency"]))
    return out


def price_history(
    series: str, start: str | None = None, end: str | None = None, freq: str | None = None
) -> dict[str, Any]:
    """History of a series between `start` and `end` (YYYY, YYYY-MM or YYYY-MM-DD; both optional),
    optionally resampled with `freq` (W, M, Q, A = period averages). Returns first, last, min, max,
    the change over the period and up to 40 evenly spaced points."""
    s = market.load_series(series, start=start, end=end, freq=freq)
    step = max(1, math.ceil(len(s) / MAX_POINTS))
    idx = list(range(len(s) - 1, -1, -step))[::-1]
    first, last = _point(s, 0), _point(s, -1)
    return {
        **_meta(s),
        "start": first["date"],
        "end": last["date"],
        "count": len(s),
        "first": first,
        "last": last,
        "min": _point(s, int(s.values.argmin())),
        "max": _point(s, int(s.values.argmax())),
        "mean": float(s.mean()),
        "change_pct": (last["value"] / first["value"] - 1) * 100 if first["value"] else None,
        "points": [_point(s, i) for i in idx],
        "points_step": step,
        "freshness": _freshness_of(series, str(_meta(s)["frequency"])),
    }


def describe_series(series: str, start: str | None = None, end: str | None = None) -> dict[str, Any]:
    """Statistics of a series over [start, end] (YYYY, YYYY-MM or YYYY-MM-DD): mean, min, max,
    volatility, drawdown, changes over 1w/1m/3m/12m. For "average price last year" pass that
    calendar year as start and end. `freshness` says how old the data's last value is today."""
    out = market.describe(series, start=start, end=end).to_dict()
    out["freshness"] = _freshness_of(series, str(out["frequency"]))
    return out


def _freshness_of(series: str, frequency: str) -> dict[str, object]:
    """How old the series' newest value is (not the end of the period asked about)."""
    full = market.load_series(series)
    return freshness(full.index[-1].date().isoformat(), frequency)


def relate_series(a: str, b: str, start: str | None = None, end: str | None = None) -> dict[str, Any]:
    """How two series move together over [start, end]: correlation of levels and returns,
    beta, lead/lag. `a`, `b`: series ids. Daily returns on the futures' likely contract-roll days are
    left out (`roll_days_left_out` counts them)."""
    return market.relate(a, b, start=start, end=end, leave_out_rolls=True).to_dict()


def mill_margin(
    start: str | None = None,
    end: str | None = None,
    iron_ore_coef: float = 1.6,
    coke_coef: float = 0.5,
    other_costs: float = 0.0,
    product: str = "rebar",
) -> dict[str, Any]:
    """China's futures steel-mill margin (盘面利润) in CNY/t: rebar (or product="hrc": hot-rolled
    coil) − 1.6 × iron ore − 0.5 × coke (DCE/SHFE settle prices), over [start, end]. Latest value,
    percentile, mean, min, max. `freshness` says how old the last day all three prices traded is today."""
    out: dict[str, Any] = market.mill_margin(
        start=start, end=end, iron_ore_coef=iron_ore_coef, coke_coef=coke_coef,
        other_costs=other_costs, product=product,
    ).to_dict()
    # "钢厂利润现在怎么样": the data's last day, not the window's, decides whether it is stale.
    last = market.mill_margin(product=product).last_date if start or end else out["last"]["date"]
    out["freshness"] = freshness(str(last)[:10], "daily")
    return out


def forecast_price(series: str, horizon: int, method: str = "auto") -> dict[str, Any]:
    """Forecast `horizon` periods ahead (months for monthly series, trading days for daily ones)
    with 80% and 95% intervals, starting after the series' LAST DATE (not after today): check
    `freshness` and `periods_already_past` and label every forecast period by its date.
    `method`: auto (backtests the candidates and keeps the best), naive, drift, ets, arima, theta,
    ensemble, nowcast (World Bank iron ore only)."""
    out: dict[str, Any] = market.forecast(series, horizon, method=method, levels=(80, 95)).to_dict()
    fresh = freshness(str(out["last"]["date"]), str(out["frequency"]))  # type: ignore[index]
    out["freshness"] = fresh
    today = pd.Timestamp(str(fresh["today"]))
    out["periods_already_past"] = [
        row["date"] for row in out["forecast"]  # type: ignore[union-attr]
        if _period_end(pd.Timestamp(row["date"]), str(out["frequency"])) < today
    ]
    return out


def _period_end(day: pd.Timestamp, frequency: str) -> pd.Timestamp:
    """The last day a dated period covers: a monthly average dated 2026-12-01 runs to 2026-12-31,
    so on 2026-12-07 it is the current month, not one already past."""
    ends = {"weekly": pd.DateOffset(days=6), "monthly": pd.offsets.MonthEnd(0),
            "quarterly": pd.offsets.QuarterEnd(0), "annual": pd.offsets.YearEnd(0)}
    return day + ends[frequency] if frequency in ends else day


def price_scenario(
    driver: str,
    shock: float | None = None,
    target: str = "iron_ore_wb_monthly",
    start: str | None = None,
    level: float | None = None,
) -> dict[str, Any]:
    """Scenario: how `target` has historically moved when `driver` moved by `shock`, estimated by
    regression of period changes on the bundled history, with slope, R², sample and 80%/95%
    bands. `driver`: steel_output (China crude steel, annual, % change), pmi (points), usd_cnh
    (%), coking_coal, coke, rebar, hrc, oil, iron_ore (World Bank, US$/dmt), iron_ore_futures
    (DCE, CNY/t) (% change). A price level instead of a change ("if rebar falls to 3000 CNY/t"):
    pass `level` in the driver series' unit and no shock; the shock is computed from the driver's
    latest value (`driver_base`), and `outside_sample` says whether it exceeds every period move
    in the sample. Shocks with no data (port inventories, shipments, freight, interest rates,
    property, policy) are refused: say the data is missing. Present the result as conditional and
    hedged (co-movement, not causation)."""
    out: dict[str, Any] = market.scenario(driver, shock, target, level=level, start=start).to_dict()
    if level is not None:  # the level is reached from the driver's latest value: how old it is
        driver_series = market.load_series(str(out["driver_series"]))
        out["driver_freshness"] = _freshness_of(str(out["driver_series"]), str(_meta(driver_series)["frequency"]))
    return out


def backtest_forecast(
    series: str, horizon: int, method: str = "auto", start: str | None = None, step: int = 1
) -> dict[str, Any]:
    """Rolling-origin backtest of a forecasting method: errors (MAE, MAPE, MASE, interval
    coverage) at `horizon` periods ahead, origins from `start` (optional) to the end of the data,
    every `step` periods (a larger step is faster). `auto` fits every candidate at each origin, so
    it costs several times one method; compare methods by backtesting each of them."""
    kwargs: dict[str, Any] = {"method": method, "step": step}
    if start:
        kwargs["start"] = start
    out: dict[str, Any] = market.backtest(series, horizon, **kwargs).to_dict()
    if horizon > 6:  # per-step errors of long horizons would swamp the model's context
        out.pop("by_step", None)
    return out


def _asked_in_chinese(state: Any) -> bool:
    messages = state.get("messages", []) if isinstance(state, dict) else getattr(state, "messages", [])
    question = next((m for m in reversed(messages) if getattr(m, "type", "") == "human"), None)
    text = question.content if question is not None and isinstance(question.content, str) else ""
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def chart_tool(charts_dir: Path) -> BaseTool:
    """`make_chart`: PNG file for the terminal, ECharts option (as the message artifact) for the web."""

    def make_chart(
        series: str,
        runtime: ToolRuntime,
        start: str | None = None,
        end: str | None = None,
        forecast_horizon: int = 0,
        method: str = "auto",
        compare: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """Draw a series from `start` to `end` (optional), with a forecast fan of
        `forecast_horizon` periods (0 = none, `method` as in forecast_price), saved as PNG.
        `compare`: a second series drawn with the first instead of a forecast, both as an index
        that is 100 at their first common date (for "A against B", "A 和 B 走势对比图").
        Returns the PNG path and the chart title; the web page renders the ECharts option."""
        horizon = forecast_horizon or None
        # The PNG speaks the user's language: Chinese when the question being answered is.
        lang = "zh" if _asked_in_chinese(runtime.state) else "en"
        key = hashlib.sha1(
            json.dumps([series, start, end, horizon, method, lang, compare]).encode()
        ).hexdigest()[:10]
        charts_dir.mkdir(parents=True, exist_ok=True)
        png = charts_dir / f"{series}-{key}.png"
        try:
            result = market.chart(
                series, horizon=horizon, method=method, start=start, end=end, png=png, lang=lang,
                compare=compare,
            )
        except MarketError as exc:
            raise ToolException(tool_error(exc)) from None
        option = result.to_dict()
        echarts = png.with_suffix(".echarts.json")
        echarts.write_text(dumps(option.get("echarts_option", {})), encoding="utf-8")
        ref = {
            "series": series,
            "title": option.get("title"),
            "unit": option.get("unit"),
            "png": str(png),
            "echarts": str(echarts),
            "forecast_horizon": forecast_horizon,
            **({"compare": compare, "scale": option.get("unit")} if compare else {}),
            "source": option.get("source"),
            "png_language": png_labels(result).language,
        }
        return dumps(ref), {"echarts_option": _clean(option.get("echarts_option", {}))}

    return StructuredTool.from_function(
        make_chart, name="make_chart", response_format="content_and_artifact",
        handle_tool_error=True,
    )


def market_tools(charts_dir: Path) -> list[BaseTool]:
    """The market tools, charts written under `charts_dir`."""
    bodies: list[Callable[..., Any]] = [
        list_series,
        latest_price,
        price_history,
        describe_series,
        relate_series,
        mill_margin,
        forecast_price,
        backtest_forecast,
        price_scenario,
    ]
    return [
        StructuredTool.from_function(
            _guard(body), name=body.__name__, description=body.__doc__ or body.__name__,
            handle_tool_error=True,
        )
        for body in bodies
    ] + [chart_tool(charts_dir)]
