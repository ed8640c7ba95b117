"""`orecast db migrate-state`: rewrite threads an older analyst wrote to its current state version.

    orecast db migrate-state --dry-run
    orecast db migrate-state --batch 200

Reads already upcast old threads (see checkpoint/upcast.py); this makes it permanent, a thread per
transaction, so it can be stopped and run again at any time.
"""

from __future__ import annotations

import json

import typer
from rich.console import Console

from orecast.checkpoint import StateMigration, StateVersionError
from orecast.cli.common import MAX_COUNT, DatabaseUrl, fail, open_store
from orecast.cli.progress import Tally, run_to_end


def migrate_state_command(
    batch: int = typer.Option(100, "--batch", min=1, max=MAX_COUNT, help="Threads looked up per page."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count what would be rewritten; change nothing."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Rewrite checkpoints older agents wrote to the analyst's current state version (resumable)."""
    from orecast.agent.state import ANALYST_STATE  # the agent's imports only for this command

    tally = Tally("threads")

    async def run() -> StateMigration:
        async with open_store(database_url, read_only=True) as opened:
            saver = opened.with_state_schema(ANALYST_STATE)
            with tally.bar("migrating state", await saver.acount_old_state_threads(), as_json) as advance:
                try:
                    return await saver.amigrate_state(batch=batch, dry_run=dry_run, progress=advance)
                except StateVersionError as exc:
                    fail(str(exc))

    then = "nothing was changed" if dry_run else "run the same command again to rewrite the rest"
    result = run_to_end(run(), tally, then)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False))
        return
    verb = "would rewrite" if dry_run else "rewrote"
    threads = f"{result.threads} thread{'' if result.threads == 1 else 's'}"
    Console().print(
        f"{'dry run: ' if dry_run else ''}{verb} {threads} to state version {result.version}: "
        f"{result.checkpoints} checkpoints, {result.values} values, {result.writes} pending writes",
        highlight=False,
        soft_wrap=True,
    )
    for thread_id in result.newer:
        typer.echo(f"warning: thread {thread_id!r} was written by a newer state version; left as it is", err=True)


def add_db_commands(app: typer.Typer) -> None:
    app.command("migrate-state")(migrate_state_command)
