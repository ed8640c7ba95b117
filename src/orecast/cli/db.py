"""`orecast db …`: migrate the checkpoint store and look at its size."""

from __future__ import annotations

import asyncio
import json

import typer
from rich.console import Console
from rich.table import Table

from orecast.checkpoint import migrations
from orecast.cli.common import DatabaseUrl, open_store

db_app = typer.Typer(help="The checkpoint store / 检查点数据库", no_args_is_help=True)


@db_app.command("migrate")
def migrate(database_url: DatabaseUrl = None) -> None:
    """Create or upgrade the schema (idempotent; safe while other processes use the store)."""

    async def run() -> dict:
        async with open_store(database_url) as saver:
            return await saver.astats()

    stats = asyncio.run(run())
    typer.echo(f"schema version {stats['schema_version']} ({stats['dialect']})")


@db_app.command("status")
def status(database_url: DatabaseUrl = None, as_json: bool = typer.Option(False, "--json")) -> None:
    """Schema version, rows and size of each table (creates nothing: see `db migrate`)."""

    async def run() -> dict:
        async with open_store(database_url, read_only=True) as saver:
            stats = await saver.astats()
            stats["latest_schema_version"] = migrations.latest(saver.migrations_package)
            return stats

    stats = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(stats, indent=2))
        return
    console = Console()
    console.print(
        f"[bold]{stats['dialect']}[/] schema version {stats['schema_version']}"
        f" (latest {stats['latest_schema_version']})"
    )
    table = Table("table", "rows", "bytes")
    for name, info in stats["tables"].items():
        table.add_row(name, str(info["rows"]), str(info.get("bytes", "")))
    console.print(table)
    if "bytes" in stats:
        console.print(f"total on disk: {stats['bytes'] / 1024:.1f} KiB")


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")

