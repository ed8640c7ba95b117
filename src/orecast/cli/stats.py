"""`orecast db stats`: who uses the store, how much, which tools, and how big it is."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from orecast.checkpoint.growth import DayGrowth, store_growth
from orecast.checkpoint.stats import StoreStats, store_stats
from orecast.cli.common import MAX_COUNT, DatabaseUrl, open_store
from orecast.cli.terminal import stored


def _count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


BARS = " ▁▂▃▄▅▆▇█"


def _bar(value: int, top: int) -> str:
    """One block character, as tall as `value` is next to the window's largest."""
    return BARS[round(value / top * (len(BARS) - 1))] if top else BARS[0]


def _growth_table(growth: list[DayGrowth]) -> Table:
    table = Table("day (UTC)", "checkpoints", "turns", "KiB written", "", title="growth")
    top = max(day.bytes for day in growth)
    for day in growth:
        table.add_row(day.day.isoformat(), f"{day.checkpoints:,}", f"{day.turns:,}", f"{day.bytes / 1024:,.1f}", _bar(day.bytes, top))
    return table


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


def stats_command(
    top: int = typer.Option(10, "--top", min=1, max=MAX_COUNT, help="How many tools to rank."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Active threads (24 h / 7 days), turns, the tool ranking (p50/p95 ms), recent failed calls, table
    sizes and growth per day (the last 14 days)."""

    async def run() -> tuple[StoreStats, list[DayGrowth]]:
        async with open_store(database_url, read_only=True) as saver:
            now = datetime.now(UTC)
            return await store_stats(saver, now=now, top=top), await store_growth(saver, now=now)

    stats, growth = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps({**stats.to_dict(), "growth": [day.to_dict() for day in growth]}, ensure_ascii=False))
        return
    console = Console()
    console.print(f"[bold]{stats.dialect}[/]  {stats.threads:,} threads, {stats.messages:,} messages", highlight=False)
    usage = Table("", "last 24 h", "last 7 days", "all time", title="activity")
    usage.add_row("active threads", _count(stats.active_threads["24h"]), _count(stats.active_threads["7d"]), _count(stats.threads))
    usage.add_row("turns", _count(stats.turns["24h"]), _count(stats.turns["7d"]), _count(stats.turns["total"]))
    console.print(usage)
    tools = Table("tool", "calls", "errors", "error rate", "running", "p50 ms", "p95 ms", title="tools")
    for tool in stats.tools:
        tools.add_row(
            stored(tool.tool), f"{tool.calls:,}", f"{tool.errors:,}", f"{tool.error_rate:.1%}", f"{tool.pending:,}",
            _ms(tool.p50_ms), _ms(tool.p95_ms),
        )
    console.print(tools if stats.tools else "no tool calls yet")
    if stats.recent_failures:
        failures = Table("started (UTC)", "tool", "status", "thread", "error", title="recent failed tool calls")
        for failure in stats.recent_failures[:10]:
            failures.add_row(
                failure["started_at"][:19].replace("T", " "),
                stored(failure["tool"]),
                stored(failure["status"]),
                stored(failure["thread_id"]),
                stored(" ".join((failure["error"] or "").split())[:60]),
            )
        console.print(failures)
    sizes = Table("table", "rows", "KiB", title="size")
    for name, info in stats.tables.items():
        size = info.get("bytes")
        sizes.add_row(name, f"{info['rows']:,}", "" if size is None else f"{size / 1024:,.1f}")
    console.print(sizes)
    if stats.bytes is not None:
        console.print(f"total on disk: {stats.bytes / 1024 / 1024:.2f} MiB")
    console.print(_growth_table(growth))
    sweep = stats.sweep
    if sweep.get("last_run_at") is None:
        console.print("last sweep: never (orecast db sweep, or the service's background sweep)", highlight=False)
    else:
        success = sweep["last_success_at"]
        # Text, not markup: the recorded error quotes whatever failed (a thread id, a database message).
        console.print(
            Text(f"last sweep: {sweep['last_run_at']:%Y-%m-%d %H:%M} UTC, {sweep['last_status']}, "
                 f"{sweep['threads_deleted']} deleted, {sweep['threads_pruned']} pruned")
            + (Text("; error: ") + stored(sweep["last_error"]) if sweep["last_error"] else Text())
            + Text(f"; last success {success:%Y-%m-%d %H:%M} UTC" if success and sweep["last_status"] != "ok" else ""),
            highlight=False,
        )
    for note in stats.notes:
        console.print(note, style="dim")


def add_db_commands(app: typer.Typer) -> None:
    app.command("stats")(stats_command)
