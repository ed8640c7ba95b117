"""A thread as a portable file: every checkpoint, pending write, branch and its metadata, in any dialect.

An archive is gzip'd JSON lines. The first line is the header
`{"format": "orecast-thread", "version": 2, "thread_id": …}`, the last `{"type": "end", "counts": …}`
(a file cut short has no end line and is refused). Between them, one record per line:

* `thread`     — the thread's metadata (title included), status, times and its own TTL (`ttl`, if any);
* `item`       — one element of a list value (a message), numbered, each stored once;
* `value`      — one channel version's value, once per (namespace, channel, version);
* `checkpoint` — a checkpoint without its values (they are the `value` records of its versions), with
                 the state schema version that wrote it (`state_version`; upcast.py): values are archived
                 as stored and upcast when read, as in the store;
* `writes`     — one task's pending writes to a checkpoint;
* `tool_call`  — one row of the thread's tool-call audit (`ToolCallAudit.to_dict()` without the row and
  thread ids): timings, status, attempt, as the agent recorded them; imported as they are.

Version 1 archives (before the audit table) still import: their `tool_call` records are the calls read
from the messages (`atool_calls`), which the imported messages give back by themselves, so they are
counted and checked, not stored.

Values are the store's own tagged JSON (`TaggedJson`): messages, tuples, special floats come back as
themselves; anything else is LangGraph's serializer output, rebuilt on import under the same rules as a
stored row (no pickle; only admitted classes are built). Lists of messages are item ranges, as in the
store, so an archive grows linearly with the conversation, not with its square.

Export reads through the saver's public reads (`alist`, `aget_thread`, `aaudit_tool_calls`) plus the task
paths of pending writes; import writes through `aput` / `aput_writes` (and `aimport_tool_calls`), in
checkpoint order — so the threads table
and item numbering come out as if the graph had run on the target, whichever dialect it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import random
import zlib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP, CheckpointTuple

from orecast.checkpoint.audit import ToolCallAudit
from orecast.checkpoint.base import OrecastCheckpointer
from orecast.checkpoint.core import PAGE_SIZE
from orecast.checkpoint.encoding import (
    checked_ranges,
    from_ranges,
    is_delta,
    is_item_list,
    to_ranges,
    wrap_delta,
)
from orecast.checkpoint.ids import MAX_KEY_BYTES, check_id
from orecast.checkpoint.sweep import STRATEGIES, set_thread_ttl, thread_own_ttl
from orecast.checkpoint.threads import THREAD_STATUSES
from orecast.checkpoint.upcast import OLDER_VALUES, WRITE_VERSIONS, StateSchema
from orecast.file_kinds import special_kind

FORMAT = "orecast-thread"
VERSION = 2  # 2: `tool_call` records are the audit table's rows (see the module docstring)
SUFFIX = ".orecast-thread.jsonl.gz"
# The longest line read: one record (a checkpoint, a message). A longer one is no archive's: a gzip bomb
# of one endless line (7 MB of file, gigabytes unpacked) took all the memory, then was a traceback.
MAX_RECORD_CHARS = 64 * 2**20
Progress = Callable[[int], None]  # called with the number of checkpoints just done


class ArchiveError(ValueError):
    """An archive that cannot be read (not one, corrupt, cut short, too new) or cannot be imported."""


@dataclass
class ArchiveSummary:
    """What an archive holds (or an export wrote, or an import stored)."""

    thread_id: str
    checkpoints: int = 0
    writes: int = 0
    values: int = 0
    items: int = 0
    tool_calls: int = 0
    namespaces: list[str] = field(default_factory=list)
    bytes: int = 0  # the file's size

    def counts(self) -> dict[str, int]:
        return {
            "checkpoints": self.checkpoints,
            "writes": self.writes,
            "values": self.values,
            "items": self.items,
            "tool_calls": self.tool_calls,
        }


def archive_name(thread_id: str) -> str:
    """A file name for a thread's archive that any file system accepts (the id is in the header)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in thread_id)[:80].strip(".") or "thread"
    if safe != thread_id:
        safe += "-" + format(zlib.crc32(thread_id.encode("utf-8")), "08x")
    return safe + SUFFIX


def archive_path(folder: Path, thread_id: str, stored: Collection[tuple[str, str]] = ()) -> Path:
    """Where `db archive` writes `thread_id`'s archive in `folder`: never over another thread's archive.

    Different ids can share a file name (`a/b` and `a_b-<its crc>`; ids cut at 80 characters), and the
    folder keeps archives of threads already deleted from the store, so a taken name gets a number.
    An existing archive of the same thread id is replaced only when the thread as stored holds every
    checkpoint in it (`stored`: the thread's (namespace, checkpoint id) pairs; archived, restored,
    archived again). One of an earlier thread under the same id, deleted from the store since, was
    replaced too, and that conversation was then lost.
    """
    first = archive_name(thread_id)
    stem = first[: -len(SUFFIX)]
    path, n = folder / first, 1
    while path.exists() and not _replaceable(path, thread_id, stored):
        n += 1
        path = folder / f"{stem}-{n}{SUFFIX}"
    return path


def _replaceable(path: Path, thread_id: str, stored: Collection[tuple[str, str]]) -> bool:
    """Whether the file at `path` is an archive of `thread_id` all of whose checkpoints are in `stored`."""
    if _archived_thread(path) != thread_id:
        return False
    try:
        held = {(r.get("ns"), r.get("id")) for r in _lines(path) if r.get("type") == "checkpoint"}
    except ArchiveError:
        return False
    return held <= set(stored)


def _archived_thread(path: Path) -> str | None:
    """The thread id in an archive's header; None when the file is not a readable archive."""
    lines = _lines(path)
    try:
        header = next(lines, None)
    except ArchiveError:
        return None
    finally:
        lines.close()
    return header.get("thread_id") if header is not None and header.get("format") == FORMAT else None


# -- export ------------------------------------------------------------------------------------------


class _Encoder:
    """Values as archive entries: `{"tree": …}`, `{"items": ranges}` or `{"delta": entry}`."""

    def __init__(self, saver: OrecastCheckpointer, emit: Callable[[dict[str, Any]], None]) -> None:
        self.codec = saver.plain_codec
        self.emit = emit
        # The saver hands out one object per unchanged item: most lookups are by identity.
        self.by_id: dict[int, tuple[Any, int]] = {}
        self.by_text: dict[str, int] = {}

    def item(self, value: Any) -> int:
        known = self.by_id.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        tree = self.codec.to_tree(value)
        text = json.dumps(tree, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        number = self.by_text.get(text)
        if number is None:
            number = self.by_text[text] = len(self.by_text) + 1
            self.emit({"type": "item", "n": number, "value": tree})
        self.by_id[id(value)] = (value, number)
        return number

    def entry(self, value: Any) -> dict[str, Any]:
        if is_delta(value):
            return {"delta": self.entry(value.value)}
        if is_item_list(value):
            return {"items": to_ranges([self.item(v) for v in value])}
        return {"tree": self.codec.to_tree(value)}


async def _write_paths(saver: OrecastCheckpointer, tuples: list[CheckpointTuple]) -> dict[tuple[str, str], list[Any]]:
    """(task_path, idx) of each pending write, in the order the tuples list them (the saver's own read)."""
    keys = [
        {"t": c["thread_id"], "n": c["checkpoint_ns"], "c": c["checkpoint_id"]}
        for c in (t.config["configurable"] for t in tuples)
    ]
    out: dict[tuple[str, str], list[Any]] = {}
    async with saver._read() as db:
        rows = await db.fetchall(
            saver.q.SELECT_VALUES_AND_WRITES,
            {"values": saver._json_param("[]"), "writes": saver._json_param(json.dumps(keys))},
        )
    for part, _thread, ns, cid, task_path, task_id, idx, channel, *_value in rows:
        if part == 1:
            out.setdefault((ns, cid), []).append((task_path, task_id, idx, channel))
    return out


_VERSION_KEYS = (OLDER_VALUES, WRITE_VERSIONS)


async def _state_versions(saver: OrecastCheckpointer, thread_id: str) -> dict[tuple[str, str], tuple[int, dict[str, Any]]]:
    """(state version, the document's older values and write versions) of each checkpoint, as stored."""
    async with saver._read() as db:
        rows = await db.fetchall(saver.q.SELECT_THREAD_STATE_VERSIONS, (thread_id,))
    return {
        (ns, cid): (int(version), {k: v for k, v in saver.plain_codec.loads(document).items() if k in _VERSION_KEYS})
        for ns, cid, version, document in rows
    }


async def export_thread(
    saver: OrecastCheckpointer, thread_id: str, path: str | Path, *, progress: Progress | None = None
) -> ArchiveSummary:
    """Write the thread to `path` (replaced atomically once complete). Raises ArchiveError if it has none."""
    thread_id = check_id(thread_id, "thread_id")
    saver = saver.with_state_schema(None)  # values as stored, with the version that wrote them
    info = await saver.aget_thread(thread_id)
    if info is None:
        raise ArchiveError(f"no thread {thread_id!r}")
    path = Path(path)
    partial = path.with_name(path.name + ".part")
    summary = ArchiveSummary(thread_id)
    namespaces: set[str] = set()
    try:
        with gzip.open(partial, "wt", encoding="utf-8", compresslevel=6) as out:

            def emit(record: dict[str, Any]) -> None:
                out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
                out.write("\n")
                kind = record.get("type")
                if kind == "item":
                    summary.items += 1
                elif kind == "value":
                    summary.values += 1

            emit(
                {
                    "format": FORMAT,
                    "version": VERSION,
                    "thread_id": thread_id,
                    "exported_at": datetime.now(UTC).isoformat(),
                    "source": {"dialect": saver.dialect, "schema_version": saver.schema_version},
                }
            )
            own_ttl = await thread_own_ttl(saver, info.thread_id)
            emit(
                {
                    "type": "thread",
                    "metadata": info.metadata,
                    "status": info.status,
                    "created_at": info.created_at.isoformat(),
                    "updated_at": info.updated_at.isoformat(),
                    # the thread's own TTL, if it has one (readers of version 1 ignore the key)
                    **({"ttl": own_ttl} if own_ttl else {}),
                }
            )
            encoder = _Encoder(saver, emit)
            emitted: set[tuple[str, str, str]] = set()
            page: list[CheckpointTuple] = []

            states = await _state_versions(saver, thread_id)

            async def flush() -> None:
                nonlocal states
                paths = await _write_paths(saver, page)
                if any(_key(tup) not in states for tup in page):
                    states = await _state_versions(saver, thread_id)  # stored since the export began
                for tup in page:
                    await _emit_checkpoint(tup, paths, states[_key(tup)], encoder, emitted, emit, summary)
                    namespaces.add(tup.config["configurable"]["checkpoint_ns"])
                if progress:
                    progress(len(page))
                page.clear()

            async for tup in saver.alist({"configurable": {"thread_id": thread_id}}):
                page.append(tup)
                if len(page) == PAGE_SIZE:
                    await flush()
            if page:
                await flush()
            # Oldest first, so attempts are stored in the order they ran.
            for call in reversed(await saver.aaudit_tool_calls(thread_id=thread_id, limit=None)):
                row = {k: v for k, v in call.to_dict().items() if k not in ("audit_id", "thread_id")}
                emit({"type": "tool_call", **row})
                summary.tool_calls += 1
            summary.namespaces = sorted(namespaces)
            emit({"type": "end", "counts": summary.counts()})
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    summary.bytes = path.stat().st_size
    return summary


def _key(tup: CheckpointTuple) -> tuple[str, str]:
    return tup.config["configurable"]["checkpoint_ns"], tup.config["configurable"]["checkpoint_id"]


async def _emit_checkpoint(
    tup: CheckpointTuple,
    paths: dict[tuple[str, str], list[Any]],
    state: tuple[int, dict[str, Any]],
    encoder: _Encoder,
    emitted: set[tuple[str, str, str]],
    emit: Callable[[dict[str, Any]], None],
    summary: ArchiveSummary,
) -> None:
    conf = tup.config["configurable"]
    ns, cid = conf["checkpoint_ns"], conf["checkpoint_id"]
    values = tup.checkpoint["channel_values"]
    for channel, version in tup.checkpoint["channel_versions"].items():
        key = (ns, channel, json.dumps(version))
        if key in emitted or channel not in values:
            continue
        emitted.add(key)
        emit({"type": "value", "ns": ns, "channel": channel, "version": version, "value": encoder.entry(values[channel])})
    stored = {k: v for k, v in tup.checkpoint.items() if k not in ("channel_values", "id")}
    stored.update(state[1])
    parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    emit(
        {
            "type": "checkpoint",
            "ns": ns,
            "id": cid,
            "parent_id": parent,
            "checkpoint": encoder.codec.to_tree(stored),
            "metadata": encoder.codec.to_tree(tup.metadata),
            "state_version": state[0],
        }
    )
    summary.checkpoints += 1
    meta = paths.get((ns, cid), [])
    if len(meta) != len(tup.pending_writes or []):
        raise ArchiveError(f"checkpoint {cid!r} changed while it was exported; export again")
    tasks: dict[tuple[str, str], list[Any]] = {}
    for (task_path, task_id, idx, channel), (w_task, w_channel, value) in zip(meta, tup.pending_writes or [], strict=True):
        if (task_id, channel) != (w_task, w_channel):
            raise ArchiveError(f"checkpoint {cid!r} changed while it was exported; export again")
        tasks.setdefault((task_id, task_path), []).append([idx, channel, encoder.entry(value)])
    for (task_id, task_path), writes in tasks.items():
        emit({"type": "writes", "ns": ns, "checkpoint_id": cid, "task_id": task_id, "task_path": task_path, "writes": writes})
        summary.writes += len(writes)


# -- reading -----------------------------------------------------------------------------------------


@dataclass
class Archive:
    """A whole archive read and decoded (so an import finds every problem before it writes)."""

    header: dict[str, Any]
    thread: dict[str, Any]
    checkpoints: list[dict[str, Any]]  # sorted by (id, ns): parents before children
    writes: dict[tuple[str, str], list[dict[str, Any]]]
    tool_calls: list[dict[str, Any]]  # version 1: calls read from the messages; 2: audit rows
    summary: ArchiveSummary

    @property
    def thread_id(self) -> str:
        return self.header["thread_id"]


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for number, line in enumerate(iter(lambda: f.readline(MAX_RECORD_CHARS + 1), ""), 1):
                if len(line) > MAX_RECORD_CHARS:
                    raise ArchiveError(
                        f"{path}: line {number} is longer than {MAX_RECORD_CHARS // 2**20} Mi characters: "
                        "not an orecast thread archive"
                    )
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ArchiveError(f"{path}: line {number} is not JSON ({exc.msg})") from None
                if type(record) is not dict:
                    raise ArchiveError(f"{path}: line {number} is not a record")
                yield record
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        if isinstance(exc, FileNotFoundError | IsADirectoryError | PermissionError):
            raise ArchiveError(f"cannot read {path}: {exc.strerror}") from None
        raise ArchiveError(f"{path} is not a complete orecast thread archive ({exc})") from None


def read_archive(saver: OrecastCheckpointer, path: str | Path) -> Archive:
    """Read and decode an archive with `saver`'s codec. Raises ArchiveError, naming what is wrong."""
    path = Path(path)
    with contextlib.suppress(OSError):  # a path that cannot be looked at is told when it is read
        # followed if a link: a pipe is not even opened (a FIFO nobody writes to blocked forever)
        if (kind := special_kind(path.stat().st_mode)) is not None:
            raise ArchiveError(f"{path} is a {kind}, not an orecast thread archive")
    records = _lines(path)
    header = next(records, None)
    if header is None or header.get("format") != FORMAT:
        raise ArchiveError(f"{path} is not an orecast thread archive")
    version = header.get("version")
    if type(version) is not int or version < 1:
        raise ArchiveError(f"{path}: unreadable archive version {version!r}")
    if version > VERSION:
        raise ArchiveError(
            f"{path} is archive version {version}; this orecast reads version {VERSION} (upgrade orecast)"
        )
    try:
        return _decode(saver, path, header, records)
    except ArchiveError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ArchiveError(f"{path}: corrupt archive ({type(exc).__name__}: {str(exc)[:200]})") from None


def _channel_versions(versions: Any) -> bool:
    """Whether `versions` maps channel names to versions as LangGraph writes them (a hand-edited archive
    with another shape would be stored, and break every later run of the thread)."""
    return type(versions) is dict and all(
        type(ch) is str and type(v) in (str, int, float) for ch, v in versions.items()
    )


def _decode(saver: OrecastCheckpointer, path: Path, header: dict[str, Any], records: Iterator[dict[str, Any]]) -> Archive:
    codec = saver.plain_codec
    thread_id = check_id(header["thread_id"], "thread_id")
    summary = ArchiveSummary(thread_id)
    items: list[Any] = []
    values: dict[tuple[str, str, str], Any] = {}
    checkpoints: list[dict[str, Any]] = []
    writes: dict[tuple[str, str], list[dict[str, Any]]] = {}
    tool_calls: list[dict[str, Any]] = []
    thread: dict[str, Any] = {}
    end: dict[str, Any] | None = None

    def entry(e: dict[str, Any]) -> Any:
        if "delta" in e:
            return wrap_delta(entry(e["delta"]))
        if "items" in e:
            return [items[n - 1] for n in from_ranges(checked_ranges(e["items"], len(items) + 1))]
        return codec.from_tree(e["tree"])

    for record in records:
        if end is not None:
            raise ArchiveError(f"{path}: records after the end line")
        kind = record.get("type")
        if kind == "item":
            if record["n"] != len(items) + 1:
                raise ArchiveError(f"{path}: item {record['n']!r} out of order")
            items.append(codec.from_tree(record["value"]))
        elif kind == "value":
            ns = check_id(record["ns"], "checkpoint_ns")
            values[(ns, record["channel"], json.dumps(record["version"]))] = entry(record["value"])
        elif kind == "checkpoint":
            ns = check_id(record["ns"], "checkpoint_ns")
            cid = check_id(record["id"], "checkpoint id", MAX_KEY_BYTES)
            parent = record["parent_id"]
            if parent is not None:
                check_id(parent, "parent checkpoint id", MAX_KEY_BYTES)
            checkpoint = codec.from_tree(record["checkpoint"])
            versions = checkpoint["channel_versions"]
            checkpoint["id"] = cid
            checkpoint["channel_values"] = {
                ch: values[k] for ch, v in versions.items() if (k := (ns, ch, json.dumps(v))) in values
            }
            metadata = codec.from_tree(record["metadata"])
            if type(metadata) is not dict or not _channel_versions(versions):
                raise ArchiveError(f"{path}: checkpoint {cid!r} is malformed")
            # Archives written before state versions: their source's version for every checkpoint.
            state_version = record.get("state_version", header.get("source", {}).get("schema_version", 1))
            checkpoint.pop(OLDER_VALUES, None)  # the import works them out again, as a put does
            by_task = checkpoint.pop(WRITE_VERSIONS, None) or {}
            checkpoints.append(
                {"ns": ns, "id": cid, "parent_id": parent, "checkpoint": checkpoint, "metadata": metadata,
                 "state_version": int(state_version), "write_versions": by_task}
            )
        elif kind == "writes":
            key = (check_id(record["ns"], "checkpoint_ns"), record["checkpoint_id"])
            task_id = check_id(record["task_id"], "task_id", MAX_KEY_BYTES)
            rows = [(int(idx), str(channel), entry(e)) for idx, channel, e in record["writes"]]
            writes.setdefault(key, []).append({"task_id": task_id, "task_path": str(record["task_path"]), "writes": rows})
            summary.writes += len(rows)
        elif kind == "tool_call":
            row = {k: v for k, v in record.items() if k != "type"}
            if header["version"] >= 2:
                ToolCallAudit.from_dict(row, thread_id)  # found malformed before anything is written
            tool_calls.append(row)
        elif kind == "thread":
            thread = record
        elif kind == "end":
            end = record
        else:
            raise ArchiveError(f"{path}: unknown record type {kind!r}")
    if end is None:
        raise ArchiveError(f"{path} is cut short (no end line): not a complete archive")
    summary.checkpoints, summary.values, summary.items = len(checkpoints), len(values), len(items)
    summary.tool_calls = len(tool_calls)
    summary.namespaces = sorted({c["ns"] for c in checkpoints})
    if end.get("counts") != summary.counts():
        raise ArchiveError(f"{path}: its records do not add up to its end line ({end.get('counts')} expected)")
    ids = {(c["ns"], c["id"]) for c in checkpoints}
    if len(ids) != len(checkpoints):
        raise ArchiveError(f"{path}: a checkpoint appears twice")
    if orphans := [k for k in writes if k not in ids]:
        raise ArchiveError(f"{path}: writes for checkpoint {orphans[0][1]!r}, which the archive lacks")
    checkpoints.sort(key=lambda c: (c["id"], c["ns"]))
    summary.bytes = path.stat().st_size
    return Archive(header, thread, checkpoints, writes, tool_calls, summary)


# -- import ------------------------------------------------------------------------------------------


async def import_archive(
    saver: OrecastCheckpointer,
    archive: Archive,
    *,
    thread_id: str | None = None,
    replace: bool = False,
    progress: Progress | None = None,
) -> ArchiveSummary:
    """Store the archive's thread as `thread_id` (default: the one it was exported from).

    Refuses (ArchiveError) a thread that exists unless `replace`. All or nothing: a failed import leaves
    the target as it was (with `replace`, the thread is written under a temporary id first, then swapped in).
    """
    target = check_id(thread_id or archive.thread_id, "thread_id")
    exists = await saver.aget_thread(target) is not None
    if exists and not replace:
        raise ArchiveError(f"thread {target!r} already exists; pass --replace to overwrite it, or --thread-id")
    staging = f"{target}.import-{random.randbytes(6).hex()}" if exists else target
    await _store(saver, archive, staging, progress)  # removes what it wrote if it fails
    if exists:
        # Carried to its end even when Ctrl-C cancels the import meanwhile: stopped between the delete
        # and the copy, it would leave the thread only under its staging id.
        swap = asyncio.ensure_future(_swap(saver, staging, target))
        try:
            await asyncio.shield(swap)
        except asyncio.CancelledError:
            await swap
            raise
    own_ttl = archive.thread.get("ttl")
    if isinstance(own_ttl, dict):
        seconds, strategy = own_ttl.get("seconds"), own_ttl.get("strategy")
        ttl = timedelta(seconds=seconds) if type(seconds) is int and seconds > 0 else None
        strategy = strategy if strategy in STRATEGIES else None
        if ttl is not None or strategy is not None:
            await set_thread_ttl(saver, target, ttl, strategy)
    return archive.summary


async def _swap(saver: OrecastCheckpointer, staging: str, target: str) -> None:
    await saver.adelete_thread(target)
    try:
        await saver.acopy_thread(staging, target)
    except Exception as exc:
        raise ArchiveError(
            f"thread {target!r} was deleted but the copy failed ({exc}); the archive's thread is "
            f"stored as {staging!r}"
        ) from exc
    await saver.adelete_thread(staging)


async def stored_share(saver: OrecastCheckpointer, archive: Archive, thread_id: str | None = None) -> str:
    """How much of `archive` the store holds as `thread_id` (default: the archive's own id).

    "all": every checkpoint with its writes (imported before); "part": its first checkpoints, in the
    order an import writes them (an import killed midway); "none": no such thread; "other": a thread
    that is not the archive's (it has checkpoints the archive lacks, or lacks some of its first ones).
    A "part" is replaced without loss: the archive holds all of it and more."""
    target = thread_id or archive.thread_id
    info = await saver.aget_thread(target)
    if info is None:
        return "none"
    order = [(c["ns"], c["id"]) for c in archive.checkpoints]
    if info.checkpoint_count > len(order):
        return "other"
    writes: dict[tuple[str, str], int] = {}
    async for tup in saver.alist({"configurable": {"thread_id": target}}):
        conf = tup.config["configurable"]
        writes[(conf["checkpoint_ns"], conf["checkpoint_id"])] = len(tup.pending_writes or [])
    # An import's first put creates the thread: one without checkpoints (made by the service) is another.
    if not writes or set(writes) != set(order[: len(writes)]):
        return "other"
    complete = len(writes) == len(order) and all(
        writes[key] == sum(len(task["writes"]) for task in archive.writes.get(key, [])) for key in order
    )
    return "all" if complete else "part"


async def _store(saver: OrecastCheckpointer, archive: Archive, thread_id: str, progress: Progress | None) -> None:
    writers: dict[int, OrecastCheckpointer] = {}
    try:
        stored: dict[str, set[tuple[str, str]]] = {}
        for c in archive.checkpoints:
            # Each checkpoint is stored with the state version that wrote it: reads upcast it as before.
            writer = _writer(saver, writers, c["state_version"])
            ns = c["ns"]
            seen = stored.setdefault(ns, set())
            versions = c["checkpoint"]["channel_versions"]
            new_versions = {ch: v for ch, v in versions.items() if (ch, json.dumps(v)) not in seen}
            seen.update((ch, json.dumps(v)) for ch, v in new_versions.items())
            configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
            if c["parent_id"]:
                configurable["checkpoint_id"] = c["parent_id"]
            await writer.aput({"configurable": configurable}, c["checkpoint"], c["metadata"], new_versions)
            config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": c["id"]}}
            for task in archive.writes.get((ns, c["id"]), []):
                # One put_writes per task and kind, as LangGraph made them: special channels (errors,
                # interrupts, resumes) have fixed indexes, the others count from 0.
                for special in (False, True):
                    rows = sorted((w for w in task["writes"] if (w[1] in WRITES_IDX_MAP) == special), key=lambda w: w[0])
                    if rows:
                        version = c["write_versions"].get(task["task_id"], c["state_version"])
                        await _writer(saver, writers, version).aput_writes(
                            config, [(ch, v) for _i, ch, v in rows], task["task_id"], task["task_path"]
                        )
            if progress:
                progress(1)
        if archive.header["version"] >= 2:
            await saver.aimport_tool_calls(
                thread_id, [ToolCallAudit.from_dict(row, thread_id) for row in archive.tool_calls]
            )
        meta = archive.thread.get("metadata")
        status = archive.thread.get("status")
        await saver.aupdate_thread(
            thread_id,
            metadata=meta if isinstance(meta, dict) else None,
            status=status if status in THREAD_STATUSES else None,
        )
    except BaseException:
        await saver.adelete_thread(thread_id)
        raise


def _writer(saver: OrecastCheckpointer, writers: dict[int, OrecastCheckpointer], version: int) -> OrecastCheckpointer:
    """`saver` writing at state `version`, so the thread is stored as the versions that wrote it did."""
    if version not in writers:
        writers[version] = saver.with_state_schema(StateSchema(version=version))
    return writers[version]
