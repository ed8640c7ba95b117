"""`orecast data …`: fetch the newest public market data and see how fresh each series is."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from orecast.market import MarketError
from orecast.market.update import SOURCES, data_status, update_data
from orecast.market.update.store import market_dir

data_app = typer.Typer(help="Market data: update from the public sources, status / 市场数据",
                       no_args_is_help=True)


@data_app.command("update")
def update(
    source: Annotated[
        list[str] | None,
        typer.Option("--source", "-s", help=f"Only these sources (repeatable): {', '.join(SOURCES)}. "
                     "[default: all]", show_default=False),
    ] = None,
    as_json: bool = typer.Option(False, "--json", help="Print JSON for machines."),
) -> None:
    """Download the newest data, validate it, and use it from now on (the bundled data stays the
    fallback). Exit code 1 when any file failed; the data in use for it is unchanged.

    Example: orecast data update --source worldbank
    """
    try:
        results = update_data(source or None)
    except MarketError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in results], ensure_ascii=False, indent=2))
    else:
        console = Console(highlight=False, soft_wrap=True)
        for r in results:
            mark = "[green]✓[/]" if r.ok else "[red]✗[/]"
            console.print(f"{mark} {r.source:9} {r.file}: {r.message}", markup=True)
        console.print(f"[dim]data folder: {market_dir()}[/]")
    if not all(r.ok for r in results):
        raise typer.Exit(1)


@data_app.command("status")
def status(as_json: bool = typer.Option(False, "--json", help="Print JSON for machines.")) -> None:
    """Each series: downloaded or bundled, its source, last date and age in days."""
    rows = data_status()
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in rows], ensure_ascii=False, indent=2))
        return
    table = Table("series", "data", "last date", "age (days)", "source")
    for r in rows:
        table.add_row(r.id, r.origin, r.last_date, str(r.age_days), r.source)
    console = Console(highlight=False)
    console.print(table)
    console.print(f"[dim]downloaded data: {market_dir()} (orecast data update)[/]")


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
