"""`orecast db prune`: delete old checkpoints, keeping what the kept ones need (see checkpoint/retention.py).

    orecast db prune --keep-latest --dry-run
    orecast db prune --keep-last 20 --thread t-42
    orecast db prune --older-than 30d
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime

import typer
from rich.console import Console
from rich.table import Table

from orecast.checkpoint import OrecastCheckpointer
from orecast.checkpoint.retention import PruneResult
from orecast.cli.common import MAX_COUNT, DatabaseUrl, fail, open_store
from orecast.cli.durations import parse_duration
from orecast.cli.progress import Tally, run_to_end
from orecast.cli.terminal import stored

TOTALS = ("checkpoints_deleted", "writes_deleted", "values_deleted", "items_deleted", "bytes_freed")


async def _all_thread_ids(saver: OrecastCheckpointer) -> list[str]:
    ids: list[str] = []
    while True:
        page = await saver.asearch_threads(sort_by="thread_id", sort_order="asc", limit=500, offset=len(ids))
        ids += [t.thread_id for t in page]
        if len(page) < 500:
            return ids


def prune_command(
    keep_latest: bool = typer.Option(False, "--keep-latest", help="Keep only each namespace's newest checkpoint."),
    keep_last: int | None = typer.Option(None, "--keep-last", min=1, max=MAX_COUNT, help="Keep each namespace's newest N checkpoints."),
    older_than: str | None = typer.Option(None, "--older-than", help="Delete only checkpoints older than this: 30d, 12h …"),
    thread: list[str] = typer.Option(None, "--thread", help="Prune only this thread (repeatable; default: all)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be deleted and the bytes freed; change nothing."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Delete old checkpoints. Never a pending interrupt, a branch point of kept branches, a DeltaChannel
    chain a kept checkpoint is rebuilt from, or a namespace's newest checkpoint: what is kept still loads."""
    if keep_latest and keep_last is not None:
        fail("--keep-latest and --keep-last N exclude each other (--keep-latest is --keep-last 1)", 2)
    if not (keep_latest or keep_last or older_than):
        fail("say what to delete: --keep-latest, --keep-last N and/or --older-than DURATION", 2)
    try:
        cutoff = datetime.now(UTC) - parse_duration(older_than) if older_than else None
    except ValueError as exc:
        fail(str(exc), 2)

    tally = Tally("threads")

    async def run() -> list[PruneResult]:
        async with open_store(database_url, read_only=True) as saver:
            ids = list(dict.fromkeys(thread)) if thread else await _all_thread_ids(saver)
            if thread and (missing := [t for t in ids if await saver.aget_thread(t) is None]):
                fail(f"no thread {missing[0]!r}")
            results = []
            with tally.bar("pruning", len(ids), as_json) as advance:
                for thread_id in ids:
                    results += await saver.aprune(
                        [thread_id], keep_last=keep_last or 1, older_than=cutoff, dry_run=dry_run
                    )
                    advance()
            return results

    then = "nothing was changed" if dry_run else "run the same command again to prune the rest"
    results = run_to_end(run(), tally, then)
    totals = {name: sum(getattr(r, name) for r in results) for name in TOTALS}
    if as_json:
        rows = [{**asdict(r), "deleted": [list(k) for k in r.deleted]} for r in results if r.checkpoints_deleted]
        typer.echo(json.dumps({"dry_run": dry_run, "threads": len(results), "totals": totals, "pruned": rows}, ensure_ascii=False))
        return
    table = Table("thread", "checkpoints", "kept", "writes", "messages", "KiB", "kept to stay loadable")
    for r in results:
        if r.checkpoints_deleted:
            table.add_row(
                stored(r.thread_id),
                str(r.checkpoints_deleted),
                str(r.checkpoints_kept),
                str(r.writes_deleted),
                str(r.items_deleted),
                f"{r.bytes_freed / 1024:.1f}",
                ", ".join(f"{n} {why}" for why, n in r.protected.items()),
            )
    console = Console()
    if table.row_count:
        console.print(table)
    verb = "would delete" if dry_run else "deleted"
    console.print(
        f"{'dry run: ' if dry_run else ''}{verb} {totals['checkpoints_deleted']} checkpoints, "
        f"{totals['writes_deleted']} writes, {totals['values_deleted']} values and {totals['items_deleted']} messages "
        f"in {sum(1 for r in results if r.checkpoints_deleted)} of {len(results)} threads; "
        f"{'would free' if dry_run else 'freed'} {totals['bytes_freed'] / 1024:.1f} KiB of stored data",
        highlight=False,
    )


def add_db_commands(app: typer.Typer) -> None:
    app.command("prune")(prune_command)
