"""`orecast db sweep`: expire idle threads now, as the service's background sweep does (checkpoint/sweep.py).

    orecast db sweep --dry-run              # what the TTLs would expire now
    ORECAST_THREAD_TTL=90d orecast db sweep # threads idle 90 days, and those past their own TTL
    orecast db sweep --ttl 30d --strategy keep_latest --limit 1000 --json
"""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.text import Text

from orecast.checkpoint.durations import parse_duration
from orecast.checkpoint.sweep import STRATEGIES, SweepResult, TtlPolicy, sweep
from orecast.cli.common import MAX_COUNT, DatabaseUrl, fail, open_store, service_rows_of_thread
from orecast.cli.progress import Tally, run_to_end
from orecast.cli.terminal import stored
from orecast.service.settings import ServiceSettings

SHOWN = 20  # thread ids listed in the terminal; --json lists them all


def sweep_command(
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would expire; change nothing."),
    limit: int | None = typer.Option(None, "--limit", min=1, max=MAX_COUNT, help="Expire at most N threads in this run."),
    ttl: str | None = typer.Option(
        None, "--ttl", help="Default TTL for this run (90d, 12h …); default: ORECAST_THREAD_TTL"
    ),
    strategy: str | None = typer.Option(
        None, "--strategy", help="delete or keep_latest; default: ORECAST_THREAD_TTL_STRATEGY (delete)"
    ),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Delete (or prune to their latest checkpoint) the threads idle past their TTL: their own, or the
    default. Busy threads are left alone; safe to run beside the service and other sweeps."""
    try:
        settings = ServiceSettings()
        policy = settings.ttl_policy()
        if ttl is not None or strategy is not None:
            if strategy is not None and strategy not in STRATEGIES:
                raise ValueError(f"--strategy must be delete or keep_latest, not {strategy!r}")
            policy = TtlPolicy(
                parse_duration(ttl) if ttl is not None else policy.default, strategy or policy.strategy
            )
    except ValueError as exc:
        fail(str(exc).splitlines()[0], 2)
    url = database_url or settings.database_url
    # Ctrl-C: the batch in flight is rolled back; the threads of the batches before are gone, each with
    # its service runs in its own transaction, so running the sweep again just goes on.
    tally = Tally("threads found to expire" if dry_run else "threads expired")
    then = "nothing was changed (dry run)" if dry_run else "run the same command again to expire the rest"

    async def run() -> SweepResult:
        # Like prune and archive it never creates nor migrates a store: a sweep has nothing to expire in
        # a store that is not there (and its --dry-run promises to change nothing).
        async with open_store(url, read_only=True) as saver:
            service_rows = () if dry_run else await service_rows_of_thread(url, saver)
            try:
                return await sweep(
                    saver, policy, limit=limit, dry_run=dry_run, also=service_rows, progress=tally.counter()
                )
            except Exception as exc:  # recorded in sweep_runs; one line here
                fail(f"sweep failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")

    console = Console(stderr=True)
    if as_json:
        result = run_to_end(run(), tally, then)
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False))
        return
    with console.status("sweeping expired threads…"):
        result = run_to_end(run(), tally, then)
    out = Console(soft_wrap=True)  # in a pipe too, each line whole: scripts read them
    shown = ttl or settings.thread_ttl
    default = "none (only threads with their own TTL expire)" if policy.default is None else f"{shown} ({policy.strategy})"
    out.print(f"default TTL: {default}", highlight=False)
    for verb, threads in (("deleted", result.deleted), ("pruned", result.pruned)):
        for thread_id in threads[:SHOWN]:
            out.print(Text(f"  {verb if not dry_run else 'would be ' + verb}  ") + stored(thread_id), highlight=False)
        if len(threads) > SHOWN:
            out.print(f"  … and {len(threads) - SHOWN} more {verb}", highlight=False)
    would = "dry run: would expire" if dry_run else "expired"
    out.print(
        f"{would} {result.expired} threads: {len(result.deleted)} deleted, {len(result.pruned)} pruned to their "
        f"latest checkpoint; {result.checkpoints_deleted} checkpoints",
        highlight=False,
    )


def add_db_commands(app: typer.Typer) -> None:
    app.command("sweep")(sweep_command)
