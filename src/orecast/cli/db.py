"""`orecast db …`: migrate the checkpoint store, look at its size, import from the official savers;
archive, restore, prune and stats live in their own modules (cli/archive.py, cli/prune.py, cli/stats.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import psycopg
import typer
from rich.console import Console
from rich.table import Table

from orecast.checkpoint import default_database_url, migrations
from orecast.checkpoint.importer import FORMATS, ImportReport, import_threads, open_source
from orecast.checkpoint.urls import parse_url
from orecast.cli import archive as archive_cli
from orecast.cli import migrate_state as migrate_state_cli
from orecast.cli import prune as prune_cli
from orecast.cli import stats as stats_cli
from orecast.cli import sweep as sweep_cli
from orecast.cli.common import DatabaseUrl, fail, open_store
from orecast.cli.progress import Tally, run_to_end
from orecast.cli.store_probe import schema_version

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


def _location(format: str, url: str) -> str:
    """Where a database lives, comparable between the source and the target."""
    if format == "langgraph-postgres" and not url.startswith(("postgresql://", "postgres://")):
        raise ValueError("langgraph-postgres needs a postgresql:// URL in --from")
    if format == "langgraph-sqlite" or url.startswith("sqlite://"):
        path = parse_url(url).target if url.startswith("sqlite://") else url
        return str(Path(path).resolve())
    return parse_url(url).target


# A dry run into a store that does not exist yet compares with an empty one: every thread is new, and
# nothing is created ("write nothing").
EMPTY_STORE = "sqlite:///:memory:"


def _no_store_yet(url: str) -> bool:
    try:
        return schema_version(parse_url(url)) is None
    except Exception:  # unreachable, unreadable: opening it says why, in one line
        return False


def _mib(n: int) -> str:
    return f"{n / 1024 / 1024:.2f} MiB"


def _print_report(report: ImportReport, source: str, target: str) -> None:
    verb = "would import" if report.dry_run else "imported"
    typer.echo(f"{'dry run: ' if report.dry_run else ''}{source} -> {target}")
    typer.echo(
        f"threads      {verb} {report.threads}, already there {report.threads_skipped}, "
        f"refused {len(report.refused)}"
    )
    typer.echo(f"checkpoints  {verb} {report.checkpoints}, already there {report.checkpoints_skipped}")
    typer.echo(f"writes       {verb} {report.writes}, already there {report.writes_skipped}")
    typer.echo(
        f"bytes        source {_mib(report.source_bytes)}; orecast store "
        f"{_mib(report.target_bytes_before)} before, {_mib(report.target_bytes_after)} after"
    )


@db_app.command("import")
def import_(
    source_url: str = typer.Option(
        ..., "--from", help="The official saver's database: postgresql://… or a SQLite file (path or sqlite:///…)"
    ),
    format: str = typer.Option(..., "--format", help=" or ".join(FORMATS)),
    thread: list[str] = typer.Option(None, "--thread", help="Import only this thread (repeatable)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Read and check everything, write nothing."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json", help="The report as JSON."),
) -> None:
    """Import threads written by LangGraph's official savers (see docs/migrating.md).

    Resumable: run it again after an interruption and it writes only what is missing."""
    if format not in FORMATS:
        fail(f"unknown format {format!r}: use {' or '.join(FORMATS)}", 2)
    target_url = database_url or default_database_url()
    try:
        same = _location(format, source_url) == _location("", target_url)
    except ValueError as exc:
        fail(str(exc), 2)
    if same:
        fail("the orecast store must be another database (or schema) than the one imported from", 2)

    tally = Tally("checkpoints")

    async def run() -> tuple[ImportReport, str, str]:
        try:
            store_url = EMPTY_STORE if dry_run and _no_store_yet(target_url) else target_url
            async with open_source(format, source_url) as source, open_store(store_url, read_only=dry_run) as saver:
                total = await source.count_checkpoints(await source.thread_ids(thread or None))
                with tally.bar("importing", total, as_json) as advance:
                    report = await import_threads(
                        source,
                        saver,
                        thread_ids=thread or None,
                        dry_run=dry_run,
                        progress=lambda _thread, done: advance(done),
                    )
                where = parse_url(target_url)
                target = f"{where.scheme} {where.redacted()}"
                return report, source.description, target
        except (OSError, ValueError) as exc:
            fail(str(exc), 2)
        except psycopg.Error as exc:
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            fail(f"cannot read {parse_url(source_url).redacted()}: {first_line}")

    then = "nothing was changed" if dry_run else "run the same command again to import the rest"
    report, source_name, target_name = run_to_end(run(), tally, then)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(report), ensure_ascii=False))
    else:
        _print_report(report, source_name, target_name)
    for message in report.refused:
        typer.echo(f"error: {message}", err=True)
    for thread_id in report.missing:
        typer.echo(f"error: no thread {thread_id!r} in the source", err=True)
    if report.refused or report.missing:
        raise typer.Exit(1)


for _module in (archive_cli, migrate_state_cli, prune_cli, stats_cli, sweep_cli):
    _module.add_db_commands(db_app)


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")

