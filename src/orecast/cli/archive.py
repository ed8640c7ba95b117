"""Thread archives on the command line: `threads export/import` and `db archive/restore`.

    orecast threads export t-42 --out t-42.orecast-thread.jsonl.gz
    orecast threads import t-42.orecast-thread.jsonl.gz [--thread-id t-43] [--replace]
    orecast db archive --idle-for 90d --out archive/ [--dry-run]
    orecast db restore archive/ [--replace]
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from orecast.checkpoint import OrecastCheckpointer, default_database_url
from orecast.checkpoint.archive import (
    SUFFIX,
    ArchiveError,
    ArchiveSummary,
    archive_path,
    export_thread,
    import_archive,
    read_archive,
    stored_share,
)
from orecast.checkpoint.threads import ThreadInfo
from orecast.cli.common import DatabaseUrl, fail, open_store, service_rows_of_thread
from orecast.cli.durations import parse_duration
from orecast.cli.progress import Tally, run_to_end
from orecast.cli.store_lock import moving_threads_alone
from orecast.cli.terminal import escaped


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def _describe(summary: ArchiveSummary) -> str:
    return (
        f"{summary.checkpoints} checkpoints, {summary.writes} writes, {summary.items} messages, "
        f"{len(summary.namespaces)} namespaces"
    )


# -- threads export / import ------------------------------------------------------------------------


def export_command(
    thread_id: str = typer.Argument(..., help="The conversation's thread id."),
    out: str = typer.Option(
        ..., "--out", "-o",
        help="The archive file to write (gzip'd JSON lines), or a folder (an existing one, or ending in /) to write it in.",
    ),
    database_url: DatabaseUrl = None,
) -> None:
    """Write a conversation to a portable archive: every checkpoint, write, branch, namespace and its metadata."""
    # `--out backups/` once wrote a file named `backups`: a folder gets the name `db archive` gives.
    into_folder = out.endswith(("/", os.sep)) or Path(out).is_dir()
    # (in a folder: named once the thread's checkpoints are known, see `archive_path`)
    paths = [Path(out)]

    tally = Tally("checkpoints")

    async def run() -> ArchiveSummary:
        async with open_store(database_url, read_only=True) as saver:
            info = await saver.aget_thread(thread_id)
            if info is None:
                fail(f"no thread {thread_id!r}")
            if into_folder:
                paths[0] = archive_path(Path(out), thread_id, await _checkpoint_ids(saver, thread_id))
            with tally.bar("exporting", info.checkpoint_count) as advance:
                try:
                    if into_folder:
                        paths[0].parent.mkdir(parents=True, exist_ok=True)
                    return await export_thread(saver, thread_id, paths[0], progress=advance)
                except ArchiveError as exc:
                    fail(str(exc))
                except OSError as exc:
                    fail(f"cannot write {paths[0]}: {exc.strerror or exc}")

    summary = run_to_end(run(), tally, f"nothing was written to {out}; run the same command again")
    typer.echo(escaped(f"exported {thread_id}: {_describe(summary)} -> {paths[0]} ({_kib(summary.bytes)})"))


def import_command(
    file: Path = typer.Argument(..., help="An archive written by `orecast threads export` or `db archive`."),
    thread_id: str | None = typer.Option(None, "--thread-id", help="Store it under this id instead."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite a thread that exists under that id."),
    database_url: DatabaseUrl = None,
) -> None:
    """Bring a conversation back from an archive, into any store (SQLite, PostgreSQL or MySQL).

    A thread an earlier import of the same archive left half-written (killed) is written again."""

    tally = Tally("checkpoints")

    async def run() -> tuple[str, ArchiveSummary]:
        async with open_store(database_url) as saver, moving_threads_alone(database_url or default_database_url()):
            try:
                archive = read_archive(saver, file)
                target = thread_id or archive.thread_id
                # A thread an import killed midway left (its first checkpoints) is written again, not refused.
                cut_short = await stored_share(saver, archive, target) == "part"
                with tally.bar("importing", archive.summary.checkpoints) as advance:
                    summary = await import_archive(
                        saver, archive, thread_id=target, replace=replace or cut_short, progress=advance
                    )
            except ArchiveError as exc:
                fail(str(exc))
            return target, summary

    # An import is all or nothing: what a Ctrl-C cut short is deleted again.
    target, summary = run_to_end(run(), tally, "nothing was imported; run the same command again")
    typer.echo(escaped(f"imported {target}: {_describe(summary)} from {file}"))


# -- db archive / restore ---------------------------------------------------------------------------


async def _idle_threads(saver: OrecastCheckpointer, before: datetime) -> list[ThreadInfo]:
    """Threads last updated before `before`, oldest first."""
    found: list[ThreadInfo] = []
    while True:
        page = await saver.asearch_threads(sort_by="updated_at", sort_order="asc", limit=100, offset=len(found))
        found += [t for t in page if t.updated_at < before]
        if len(page) < 100 or page[-1].updated_at >= before:
            return found


async def _checkpoint_ids(saver: OrecastCheckpointer, thread_id: str) -> set[tuple[str, str]]:
    out = set()
    async for tup in saver.alist({"configurable": {"thread_id": thread_id}}):
        conf = tup.config["configurable"]
        out.add((conf["checkpoint_ns"], conf["checkpoint_id"]))
    return out


async def archive_one(
    saver: OrecastCheckpointer, info: ThreadInfo, folder: Path, also: Sequence[str]
) -> dict[str, Any]:
    """Export one thread, check the file reads back complete, then delete the thread from the store
    (and, in the same transaction, `also`: what the service keeps of it)."""
    stored = await _checkpoint_ids(saver, info.thread_id)
    path = archive_path(folder, info.thread_id, stored)
    summary = await export_thread(saver, info.thread_id, path)
    archive = read_archive(saver, path)
    if archive.summary.counts() != summary.counts() or {(c["ns"], c["id"]) for c in archive.checkpoints} != stored:
        path.unlink(missing_ok=True)
        return {"thread_id": info.thread_id, "archived": False, "reason": "the file did not read back the same"}
    now = await saver.aget_thread(info.thread_id)
    if now is None or (now.updated_at, now.head_checkpoint_id) != (info.updated_at, info.head_checkpoint_id):
        path.unlink(missing_ok=True)  # it is in use again: it stays in the store
        return {"thread_id": info.thread_id, "archived": False, "reason": "updated while it was archived"}
    await saver.adelete_thread(info.thread_id, also=also)
    return {"thread_id": info.thread_id, "archived": True, "file": str(path), **summary.counts(), "bytes": summary.bytes}


def archive_command(
    idle_for: str = typer.Option(..., "--idle-for", help="Archive threads not updated for this long: 90d, 12h, 2w …"),
    out: Path = typer.Option(..., "--out", "-o", help="The folder for the archive files (created if missing)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the threads it would archive; change nothing."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Move idle threads out of the store into archive files (one per thread); `db restore` brings them back.

    Each file is read back and checked before its thread is deleted; a thread used meanwhile stays."""
    try:
        before = datetime.now(UTC) - parse_duration(idle_for)
    except ValueError as exc:
        fail(str(exc), 2)

    tally = Tally("threads")

    async def run() -> list[dict[str, Any]]:
        async with open_store(database_url, read_only=True) as saver, contextlib.AsyncExitStack() as alone:
            if not dry_run:  # taken before listing: the threads another archive took are gone by then
                await alone.enter_async_context(moving_threads_alone(database_url or default_database_url()))
            idle = [t for t in await _idle_threads(saver, before) if t.status != "busy"]
            if dry_run:
                return [
                    {
                        "thread_id": t.thread_id,
                        "updated_at": t.updated_at.isoformat(),
                        "checkpoints": t.checkpoint_count,
                        "messages": t.message_count,
                        "title": t.title,
                    }
                    for t in idle
                ]
            try:
                out.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                fail(f"cannot create {out}: {exc.strerror or exc}")
            done = []
            service_rows = await service_rows_of_thread(database_url, saver)
            with tally.bar("archiving", len(idle), as_json) as advance:
                for info in idle:
                    try:
                        done.append(await archive_one(saver, info, out, service_rows))
                    except (ArchiveError, OSError) as exc:
                        done.append({"thread_id": info.thread_id, "archived": False, "reason": str(exc)})
                    advance()
            return done

    # Each thread is deleted only once its file reads back: a Ctrl-C leaves it in the store, or archived.
    rows = run_to_end(run(), tally, "run the same command again to archive the rest")
    if as_json:
        typer.echo(json.dumps({"dry_run": dry_run, "before": before.isoformat(), "threads": rows}, ensure_ascii=False))
    elif dry_run:
        for row in rows:
            typer.echo(escaped(f"would archive {row['thread_id']}  (updated {row['updated_at'][:16]}, {row['checkpoints']} checkpoints)"))
        typer.echo(f"dry run: {len(rows)} threads idle since before {before:%Y-%m-%d %H:%M} UTC")
    else:
        archived = [r for r in rows if r["archived"]]
        for row in rows:
            if not row["archived"]:
                typer.echo(escaped(f"kept {row['thread_id']}: {row['reason']}"), err=True)
        size = sum(r["bytes"] for r in archived)
        typer.echo(f"archived {len(archived)} of {len(rows)} idle threads to {out} ({_kib(size)})")
    if not dry_run and any(not r["archived"] for r in rows):
        raise typer.Exit(1)


def _archive_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(path.glob("*" + SUFFIX))
        else:
            files.append(path)
    return files


def restore_command(
    paths: list[Path] = typer.Argument(..., help="Archive files, or folders holding them."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite threads that exist in the store."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Bring archived threads back into the store (the files are kept).

    Resumable: run again after an interruption, it skips the threads restored already and writes
    again the one it was cut short in."""
    files = _archive_files(paths)
    if not files:
        fail("no archive files found (they end in " + SUFFIX + ")", 2)
    tally = Tally("threads")

    async def run() -> list[dict[str, Any]]:
        results = []
        async with open_store(database_url) as saver, moving_threads_alone(database_url or default_database_url()):
            with tally.bar("restoring", len(files), as_json) as advance:
                for file in files:
                    try:
                        archive = read_archive(saver, file)
                        share = await stored_share(saver, archive)
                        if share == "all" and not replace:
                            results.append({"file": str(file), "restored": True, "already": True, **asdict(archive.summary)})
                        else:
                            summary = await import_archive(saver, archive, replace=replace or share == "part")
                            results.append({"file": str(file), "restored": True, "already": False, **asdict(summary)})
                    except ArchiveError as exc:
                        results.append({"file": str(file), "restored": False, "reason": str(exc)})
                    advance()
        return results

    results = run_to_end(run(), tally, "run the same command again to restore the rest")
    if as_json:
        typer.echo(json.dumps(results, ensure_ascii=False))
    else:
        for row in results:
            if not row["restored"]:
                typer.echo(escaped(f"error: {row['reason']}"), err=True)
        restored = [r for r in results if r["restored"]]
        already = sum(1 for r in restored if r["already"])
        typer.echo(f"restored {len(restored)} of {len(results)} threads" + (f" ({already} there already)" if already else ""))
    if any(not r["restored"] for r in results):
        raise typer.Exit(1)


def add_thread_commands(app: typer.Typer) -> None:
    app.command("export")(export_command)
    app.command("import")(import_command)


def add_db_commands(app: typer.Typer) -> None:
    app.command("archive")(archive_command)
    app.command("restore")(restore_command)
