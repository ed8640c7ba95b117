"""`orecast db stats`: who uses the store, how much, which tools, and how big it is."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import typer
from rich.console import Console
from rich.table import Table

from orecast.checkpoint.stats import StoreStats, store_stats
from orecast.cli.common import DatabaseUrl, open_store
from orecast.cli.terminal import stored


def _count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def stats_command(
    top: int = typer.Option(10, "--top", min=1, help="How many tools to rank."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Active threads (24 h / 7 days), turns, the tool ranking and the size of each table."""

    async def run() -> StoreStats:
        async with open_store(database_url, read_only=True) as saver:
            return await store_stats(saver, now=datetime.now(UTC), top=top)

    stats = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(stats.to_dict(), ensure_ascii=False))
        return
    console = Console()
    console.print(f"[bold]{stats.dialect}[/]  {stats.threads:,} threads, {stats.messages:,} messages", highlight=False)
    usage = Table("", "last 24 h", "last 7 days", "all time", title="activity")
    usage.add_row("active threads", _count(stats.active_threads["24h"]), _count(stats.active_threads["7d"]), _count(stats.threads))
    usage.add_row("turns", _count(stats.turns["24h"]), _count(stats.turns["7d"]), _count(stats.turns["total"]))
    console.print(usage)
    tools = Table("tool", "calls", "errors", "error rate", "pending", title="tools")
    for tool in stats.tools:
        tools.add_row(stored(tool.tool), f"{tool.calls:,}", f"{tool.errors:,}", f"{tool.error_rate:.1%}", f"{tool.pending:,}")
    console.print(tools if stats.tools else "no tool calls yet")
    sizes = Table("table", "rows", "KiB", title="size")
    for name, info in stats.tables.items():
        size = info.get("bytes")
        sizes.add_row(name, f"{info['rows']:,}", "" if size is None else f"{size / 1024:,.1f}")
    console.print(sizes)
    if stats.bytes is not None:
        console.print(f"total on disk: {stats.bytes / 1024 / 1024:.2f} MiB")
    sweep = stats.sweep
    if sweep.get("last_run_at") is None:
        console.print("last sweep: never (orecast db sweep, or the service's background sweep)", highlight=False)
    else:
        success = sweep["last_success_at"]
        console.print(
            f"last sweep: {sweep['last_run_at']:%Y-%m-%d %H:%M} UTC, {sweep['last_status']}, "
            f"{sweep['threads_deleted']} deleted, {sweep['threads_pruned']} pruned"
            + (f"; error: {stored(sweep['last_error'])}" if sweep["last_error"] else "")
            + (f"; last success {success:%Y-%m-%d %H:%M} UTC" if success and sweep["last_status"] != "ok" else ""),
            highlight=False,
        )
    for note in stats.notes:
        console.print(note, style="dim")


def add_db_commands(app: typer.Typer) -> None:
    app.command("stats")(stats_command)
