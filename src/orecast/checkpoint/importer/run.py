"""Copying threads from an official saver's database into an orecast store, resumably.

Everything is written through the saver's public `aput` and `aput_writes`, in the order the official
saver wrote it (checkpoint ids grow with time, across namespaces), each checkpoint followed by its
pending writes — so the threads table, item numbering and interrupt status come out as if the graph had
run on orecast. Each `aput` and each task's `aput_writes` is one transaction: after an interruption a
new run finds what is stored already (by checkpoint id and by task) and writes only the rest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP

from orecast.checkpoint.base import OrecastCheckpointer
from orecast.checkpoint.importer.decoding import RefusedValue
from orecast.checkpoint.importer.source import Refusal, Source, SourceCheckpoint, SourceWrite

# Called after each checkpoint with (thread_id, checkpoints done in this call).
Progress = Callable[[str, int], None]


@dataclass
class ImportReport:
    """What an import did (or, with `dry_run`, would do)."""

    dry_run: bool
    threads: int = 0  # threads with at least one checkpoint or write written
    threads_skipped: int = 0  # threads already complete in the target
    checkpoints: int = 0
    checkpoints_skipped: int = 0
    writes: int = 0
    writes_skipped: int = 0
    refused: list[str] = field(default_factory=list)  # one message per thread left out
    missing: list[str] = field(default_factory=list)  # threads asked for that the source does not have
    source_bytes: int = 0
    target_bytes_before: int = 0
    target_bytes_after: int = 0


@dataclass(slots=True)
class _Present:
    """What the target holds of a thread: checkpoints, with the write calls stored for each."""

    checkpoints: dict[tuple[str, str], set[tuple[str, bool]]] = field(default_factory=dict)
    versions: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # ns -> (channel, version)


async def import_threads(
    source: Source,
    saver: OrecastCheckpointer,
    *,
    thread_ids: Collection[str] | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
    concurrency: int = 4,
) -> ImportReport:
    """Import the threads of `source` (all, or those of `thread_ids`) into `saver`, `concurrency`
    threads at a time (each thread in order).

    Threads holding a value the importer refuses (a pickle, a non-msgpack serialisation) are left out
    whole and named in `report.refused`; the others are imported.
    """
    report = ImportReport(dry_run=dry_run)
    report.source_bytes = await source.size_bytes()
    report.target_bytes_before = await _store_bytes(saver)
    threads = await source.thread_ids(thread_ids)
    if thread_ids is not None:
        report.missing = sorted(set(thread_ids) - set(threads))
    refused: dict[str, Refusal] = {}
    for refusal in await source.refusals(threads):
        refused.setdefault(refusal.thread_id, refusal)
    waiting = list(threads)

    async def worker() -> None:
        while waiting:
            thread_id = waiting.pop(0)
            if thread_id in refused:
                report.refused.append(refused[thread_id].message())
                if progress:
                    progress(thread_id, await source.count_checkpoints([thread_id]))
            else:
                await _import_thread(source, saver, thread_id, report, dry_run, progress)

    # A few threads at once: one thread's steps wait on round trips another's can use.
    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(threads))))))
    report.refused.sort()
    report.target_bytes_after = await _store_bytes(saver)
    return report


async def _store_bytes(saver: OrecastCheckpointer) -> int:
    """The tables' bytes (indexes included), like the source's: a SQLite file's size would count
    free pages and the write-ahead log."""
    stats = await saver.astats()
    sizes = [table.get("bytes") for table in stats["tables"].values()]
    if all(size is not None for size in sizes):
        return sum(int(size) for size in sizes)
    return int(stats.get("bytes", 0))


async def _present(saver: OrecastCheckpointer, thread_id: str) -> _Present:
    present = _Present()
    if await saver.aget_thread(thread_id) is None:
        return present
    async for tup in saver.alist({"configurable": {"thread_id": thread_id}}):
        ns = tup.config["configurable"]["checkpoint_ns"]
        cid = tup.config["configurable"]["checkpoint_id"]
        present.checkpoints[(ns, cid)] = {
            (task_id, channel in WRITES_IDX_MAP) for task_id, channel, _ in tup.pending_writes
        }
        present.versions.setdefault(ns, set()).update(
            (channel, str(version)) for channel, version in tup.checkpoint["channel_versions"].items()
        )
    return present


def _write_calls(writes: list[SourceWrite]) -> dict[tuple[str, str, bool], list[SourceWrite]]:
    """The source's writes as the `put_writes` calls that made them: per task, special channels
    (errors, interrupts, resumes; fixed negative indexes) apart from the rest (indexes 0, 1, …)."""
    calls: dict[tuple[str, str, bool], list[SourceWrite]] = {}
    for write in writes:
        calls.setdefault((write.task_id, write.task_path, write.channel in WRITES_IDX_MAP), []).append(write)
    for rows in calls.values():
        rows.sort(key=lambda w: w.idx)
    return calls


async def _import_thread(
    source: Source,
    saver: OrecastCheckpointer,
    thread_id: str,
    report: ImportReport,
    dry_run: bool,
    progress: Progress | None,
) -> None:
    present = await _present(saver, thread_id)
    checkpoints = await source.checkpoints(thread_id)
    writes = await source.thread_writes(thread_id)
    wrote = False
    done = 0
    try:
        for checkpoint in checkpoints:
            rows = writes.get((checkpoint.ns, checkpoint.checkpoint_id), [])
            wrote |= await _import_checkpoint(
                source, saver, thread_id, checkpoint, rows, present, report, dry_run
            )
            done += 1
            if progress:
                progress(thread_id, 1)
    except RefusedValue as exc:
        # Written after the scan that found the others: the thread stays as far as it got.
        report.refused.append(
            Refusal(thread_id, checkpoint.ns, checkpoint.checkpoint_id, "a value", exc.type_tag).message()
            + f" (imported up to the checkpoint before; {done} of its checkpoints done)"
        )
        return
    if wrote:
        report.threads += 1
    else:
        report.threads_skipped += 1


async def _import_checkpoint(
    source: Source,
    saver: OrecastCheckpointer,
    thread_id: str,
    checkpoint: SourceCheckpoint,
    writes: list[SourceWrite],
    present: _Present,
    report: ImportReport,
    dry_run: bool,
) -> bool:
    """Import one checkpoint and its writes; whether anything was (or would be) written."""
    ns, cid = checkpoint.ns, checkpoint.checkpoint_id
    stored = present.versions.setdefault(ns, set())
    stored_calls = present.checkpoints.get((ns, cid))
    wrote = False
    if stored_calls is None:
        loaded = await source.load(thread_id, checkpoint, stored)
        versions = loaded.checkpoint["channel_versions"]
        new_versions = {ch: v for ch, v in versions.items() if (ch, str(v)) not in stored}
        configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
        if checkpoint.parent_id:
            configurable["checkpoint_id"] = checkpoint.parent_id
        if not dry_run:
            await saver.aput(
                {"configurable": configurable}, loaded.checkpoint, loaded.metadata, new_versions
            )
        stored.update((ch, str(v)) for ch, v in new_versions.items())
        stored_calls = set()
        report.checkpoints += 1
        wrote = True
    else:
        report.checkpoints_skipped += 1
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}}
    for (task_id, task_path, special), rows in _write_calls(writes).items():
        if (task_id, special) in stored_calls:
            report.writes_skipped += len(rows)
            continue
        values = [(w.channel, source.decoder.loads_typed(w.type_tag, w.data)) for w in rows]
        if not dry_run:
            await saver.aput_writes(config, values, task_id, task_path)
        report.writes += len(rows)
        wrote = True
    return wrote

