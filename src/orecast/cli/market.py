"""`orecast series …`, `orecast forecast` and `orecast backtest`: the market engine on the command line.

The library raises `MarketError`; this module only translates it into one line on stderr and
exit code 2 (see `_fail`). Tables use Rich; `--json` prints the same `to_dict()` the agent sees.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from orecast.cli.progress import progress_bar
from orecast.cli.terminal import escaped
from orecast.market import (
    METHOD_HELP,
    MarketError,
    backtest,
    chart,
    describe,
    forecast,
    list_series,
    load_series,
    mill_margin,
    relate,
)

Start = Annotated[str | None, typer.Option(help="First date, YYYY-MM-DD or YYYY-MM.")]
End = Annotated[str | None, typer.Option(help="Last date, YYYY-MM-DD or YYYY-MM.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]
Method = Annotated[
    str, typer.Option(help="auto, naive, drift, ets, arima, theta, ensemble or nowcast.")
]
Levels = Annotated[
    list[int] | None, typer.Option("--level", help="Interval level in %, repeatable.")
]
Horizon = Annotated[int, typer.Option("--horizon", "-n", help="Periods ahead (days, months…).")]
SeriesId = Annotated[str, typer.Argument(help="Series id (see `orecast series list`) or CSV path.")]


@contextmanager
def _market_errors() -> Iterator[None]:
    """Turn bad input into one line on stderr and exit code 2, never a traceback."""
    try:
        yield
    except MarketError as exc:
        _fail(str(exc), 2)


def _fail(message: str, code: int) -> NoReturn:
    # The message quotes the user's input (a series id, a method, a path): printed as text, never as markup.
    Console(stderr=True).print(f"[red]Error:[/red] {escape(escaped(message))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=code) from None


def _print_json(data: object) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def series_list(as_json: AsJson = False) -> None:
    """List the bundled series: id, names, unit, frequency, range and source.

    Example: orecast series list
    """
    with _market_errors():
        rows = list_series()
    if as_json:
        _print_json([row.to_dict() for row in rows])
        return
    table = Table(title="Bundled series / 内置数据", show_lines=False)
    table.add_column("id", no_wrap=True)
    for column in ("名称", "name", "unit", "freq", "range"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(row.id, row.name_zh, row.name_en, row.unit, row.frequency,
                      f"{row.start[:7]} .. {row.end[:7]}")
    Console().print(table)


def series_show(
    series_id: SeriesId,
    start: Start = None,
    end: End = None,
    freq: Annotated[str | None, typer.Option(help="Resample: W, M, Q or A.")] = None,
    tail: Annotated[int, typer.Option(min=0, help="How many recent values to print.")] = 10,
    as_json: AsJson = False,
) -> None:
    """Describe a series: last value, changes, volatility, drawdown, percentile, recent values.

    Example: orecast series show dce_iron_ore_daily --start 2024 --freq W
    """
    with _market_errors():
        values = load_series(series_id, start, end, freq)
        summary = describe(values)
    data = summary.to_dict()
    if as_json:
        data["recent"] = [
            {"date": d.date().isoformat(), "value": float(v)} for d, v in values.tail(tail).items()
        ]
        _print_json(data)
        return
    console = Console()
    table = Table(title=f"{summary.name_en} / {summary.name_zh} ({summary.unit})")
    table.add_column("statistic")
    table.add_column("value", justify="right")
    table.add_row("last", f"{_fmt(summary.last_value)} on {summary.last_date.date()}")
    for key, value in summary.changes.items():
        suffix = f" {summary.change_unit}" if value is not None else ""
        table.add_row(f"change {key}", _fmt(value) + suffix)
    unit = " %" if summary.change_unit == "%" else " points"  # the PMI moves in points
    table.add_row("volatility (annualised, 1y)", _fmt(summary.volatility_pct) + unit)
    table.add_row("max drawdown", f"{_fmt(summary.max_drawdown_pct)}{unit} "
                  f"({summary.drawdown_peak.date()} → {summary.drawdown_trough.date()})")
    table.add_row("percentile in range", f"{_fmt(summary.percentile, 1)} %")
    table.add_row("range", f"{summary.first_date.date()} .. {summary.last_date.date()} "
                  f"({summary.count} values)")
    console.print(table)
    recent = Table(title="recent values")
    recent.add_column("date")
    recent.add_column(summary.unit, justify="right")
    for date, value in values.tail(tail).items():
        recent.add_row(date.date().isoformat(), _fmt(float(value)))
    console.print(recent)
    console.print(f"Source: {summary.source}", style="dim", highlight=False)


def series_relate(
    a: Annotated[str, typer.Argument(help="First series id.")],
    b: Annotated[str, typer.Argument(help="Second series id.")],
    start: Start = None,
    end: End = None,
    freq: Annotated[str | None, typer.Option(help="Compare at W, M, Q or A.")] = None,
    max_lag: Annotated[int, typer.Option(help="Largest lead/lag tried.")] = 6,
    as_json: AsJson = False,
) -> None:
    """Correlation of returns, beta and lead/lag of two series.

    Example: orecast series relate dce_iron_ore_daily shfe_rebar_daily --freq W
    """
    with _market_errors():
        result = relate(a, b, start=start, end=end, freq=freq, max_lag=max_lag)
    data = result.to_dict()
    if as_json:
        _print_json(data)
        return
    Console().print(
        f"{result.a} vs {result.b} ({result.frequency}, {result.n} returns): "
        f"correlation {result.correlation:.3f}, beta {result.beta:.3f}, "
        f"strongest lag {result.best_lag} (corr {result.best_lag_correlation:.3f}; "
        "lag > 0: b leads)",
        highlight=False,
    )


def series_margin(
    start: Start = None,
    end: End = None,
    iron_ore_coef: Annotated[float, typer.Option(help="Tonnes of ore per tonne of rebar.")] = 1.6,
    coke_coef: Annotated[float, typer.Option(help="Tonnes of coke per tonne of rebar.")] = 0.5,
    as_json: AsJson = False,
) -> None:
    """The futures steel-mill margin 盘面利润: rebar − 1.6 × iron ore − 0.5 × coke.

    Example: orecast series margin --start 2024
    """
    with _market_errors():
        result = mill_margin(start, end, iron_ore_coef=iron_ore_coef, coke_coef=coke_coef)
    data = result.to_dict()
    if as_json:
        _print_json(data)
        return
    Console().print(
        f"Mill margin 盘面利润 ({data['formula']}): {result.last_value:,.1f} CNY/t on "
        f"{result.last_date.date()}, percentile {result.percentile:.1f} % of "
        f"{result.series.index[0].date()} .. {result.last_date.date()} "
        f"(mean {result.mean:,.1f}, min {result.minimum:,.1f}, max {result.maximum:,.1f})",
        highlight=False,
    )


def forecast_command(
    series_id: SeriesId,
    horizon: Horizon,
    method: Method = "auto",
    level: Levels = None,
    start: Start = None,
    end: End = None,
    as_json: AsJson = False,
    plot: Annotated[Path | None, typer.Option(help="Write a PNG chart with the fan.")] = None,
) -> None:
    """Forecast a series with 80/95 % intervals; `auto` picks the method by backtest.

    Model fits are cached on disk, so a repeated `auto` on the same data takes well under a
    second; the first one backtests every method (a progress bar shows).

    Example: orecast forecast iron_ore_wb_monthly --horizon 3 --plot ore.png
    """
    with _market_errors(), _progress_after(0.5, "selecting" if method == "auto" else "fitting") as progress:
        result = forecast(series_id, horizon, method, tuple(level or (80, 95)),
                          start=start, end=end, progress=progress)
    with _market_errors():
        if plot is not None:
            try:
                chart(result.history, forecast=result, start=_plot_start(result), png=plot)
            except OSError as exc:
                _fail(f"cannot write {plot}: {exc.strerror or exc}", 1)
    if as_json:
        data = result.to_dict()
        if plot is not None:
            data["plot"] = str(plot)
        _print_json(data)
        return
    console = Console()
    table = Table(title=f"{result.name_en} / {result.name_zh} — {result.method} ({result.unit})")
    table.add_column("date")
    table.add_column("forecast", justify="right")
    for lv in result.levels:
        table.add_column(f"{lv}% interval", justify="right")
    for i, date in enumerate(result.mean.index):
        bands = [f"{_fmt(float(result.lower[lv].iloc[i]))} – {_fmt(float(result.upper[lv].iloc[i]))}"
                 for lv in result.levels]
        mark = " *" if date in result.bridged else ""
        table.add_row(date.date().isoformat() + mark, _fmt(float(result.mean.iloc[i])), *bands)
    console.print(f"Last: {_fmt(result.last_value)} {result.unit} on {result.last_date.date()}",
                  highlight=False)
    console.print(table)
    if result.bridged:
        console.print(f"* carried over by {result.indicator}'s monthly averages (data to "
                      f"{result.indicator_end.date()}): an estimate, not data / 由期货月均价推算", highlight=False)
    console.print(f"Why {result.method}: {result.reason}", highlight=False)
    if plot is not None:
        console.print(f"Chart written to {plot}", highlight=False)
    console.print(f"Source: {result.source}", style="dim", highlight=False)


def _plot_start(result: Any) -> Any:
    # Show about four horizons of history: enough context without squashing the fan.
    history = result.history
    return history.index[max(0, len(history) - max(60, 8 * result.horizon))]


@contextmanager
def _progress_after(seconds: float, label: str = "backtest") -> Iterator[Callable[[int, int], None]]:
    """A progress callback that shows a bar (on stderr) only once the work has taken `seconds`;
    Ctrl-C meanwhile ends the command with 130 and one line saying how far it got."""
    started = time.monotonic()
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        state["done"], state["total"] = done, total
        if "bar" not in state:
            if time.monotonic() - started < seconds:
                return
            bar = progress_bar(label, "fits")  # none in a pipe: its last frame would stay in the log
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task("backtest", total=total)
        state["bar"].update(state["task"], completed=done, total=total)

    try:
        yield update
    except KeyboardInterrupt:
        if "bar" in state:  # gone before the line, which would otherwise share the screen with it
            state.pop("bar").stop()
        where = f"after {state['done']} of {state['total']} fits" if "total" in state else "before the first fit"
        typer.echo(f"interrupted {where}; run the same command again", err=True)
        raise typer.Exit(130) from None
    finally:
        if "bar" in state:
            state["bar"].stop()


def backtest_command(
    series_id: SeriesId,
    horizon: Horizon,
    method: Method = "auto",
    start: Annotated[str | None, typer.Option(help="First forecast origin, YYYY-MM(-DD).")] = None,
    end: Annotated[str | None, typer.Option(help="Last forecast origin.")] = None,
    step: Annotated[int, typer.Option(help="Periods between origins.")] = 1,
    level: Levels = None,
    as_json: AsJson = False,
) -> None:
    """Rolling-origin backtest: MAE, MAPE, MASE (vs random walk) and interval coverage.

    Example: orecast backtest iron_ore_wb_monthly --horizon 1 --start 2015-01
    """
    with _market_errors(), _progress_after(1.0) as progress:
        result = backtest(series_id, horizon, method, start, step, end=end,
                          levels=tuple(level or (80, 95)), progress=progress)
    data = result.to_dict()
    if as_json:
        _print_json(data)
        return
    console = Console()
    table = Table(title=f"Backtest {result.series_id} — {result.method}, h={result.horizon}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("origins", f"{result.n_origins} ({result.first_origin.date()} .. "
                  f"{result.last_origin.date()}, step {result.step})")
    table.add_row(f"MAE ({result.unit})", _fmt(result.mae, 3))
    table.add_row("MAPE", f"{_fmt(result.mape)} %")
    table.add_row("MASE (random walk = 1)", _fmt(result.mase, 3))
    for lv, cov in result.coverage.items():
        table.add_row(f"{lv}% interval coverage", f"{100 * cov:.1f} %")
    if result.chosen:
        table.add_row("auto chose", ", ".join(f"{m} {n}" for m, n in result.chosen.items()))
    console.print(table)
    console.print(f"Errors at step {result.horizon}; {METHOD_HELP.get(result.method, '')}",
                  style="dim", highlight=False)


def register(app: typer.Typer) -> None:
    """Add `series` (list, show, relate, margin), `forecast` and `backtest` to the main app."""
    series_app = typer.Typer(
        help="Bundled market data / 市场数据: list, show, relate, margin.", no_args_is_help=True
    )
    series_app.command("list")(series_list)
    series_app.command("show")(series_show)
    series_app.command("relate")(series_relate)
    series_app.command("margin")(series_margin)
    app.add_typer(series_app, name="series")
    app.command("forecast")(forecast_command)
    app.command("backtest")(backtest_command)
