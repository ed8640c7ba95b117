"""`amigrate_state`: rewrite the values an older state schema wrote, so reads have nothing to upcast.

A thread is rewritten in one transaction: its old channel values and pending writes go through the
upcasters and are stored again under the same keys (their lists of messages or dicts as items, found by
hash among the thread's items, so nothing is stored twice), its checkpoints get the schema's version,
and items no value refers to any more are deleted. Every checkpoint loads before and after, and a run
stopped halfway resumes where it stopped: a migrated thread no longer matches.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from orecast.checkpoint.cache import ThreadItems
from orecast.checkpoint.core import (
    INLINE_KEY,
    INLINE_MAX_CHARS,
    Db,
    version_key,
    with_string_versions,
)
from orecast.checkpoint.encoding import KIND_DELTA, KIND_EMPTY, Stored, from_ranges
from orecast.checkpoint.maintenance import Maintenance
from orecast.checkpoint.upcast import OLDER_VALUES, WRITE_VERSIONS, StateSchema, StateVersionError


@dataclass
class StateMigration:
    """What `amigrate_state` rewrote (or, in a dry run, would rewrite)."""

    version: int
    dry_run: bool
    threads: int = 0
    checkpoints: int = 0
    values: int = 0
    writes: int = 0
    # Threads left alone: written by a newer state schema than the one migrated to.
    newer: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "dry_run": self.dry_run,
            "threads": self.threads,
            "checkpoints": self.checkpoints,
            "values": self.values,
            "writes": self.writes,
            "newer": self.newer,
        }


class StateMigrator(Maintenance):
    """Rewrites old state to the saver's `state_schema` (see `with_state_schema`)."""

    def _schema_to_migrate(self) -> StateSchema:
        if self.state_schema is None:
            raise ValueError("migrating state needs a state schema: saver.with_state_schema(schema)")
        return self.state_schema

    async def acount_old_state_threads(self) -> int:
        """Threads holding values an older state schema wrote (or, skipped by a migration, a newer one)."""
        schema = self._schema_to_migrate()
        async with self._read() as db:
            row = await db.fetchone(self.q.COUNT_OLD_STATE_THREADS, (schema.version,))
        return int(row[0]) if row else 0

    async def amigrate_state(
        self,
        *,
        batch: int = 100,
        dry_run: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> StateMigration:
        """Rewrite every thread that holds older state to `state_schema.version`, `batch` threads a page.

        `progress(n)` is called after each thread. A dry run reads only and counts what would change.
        """
        schema = self._schema_to_migrate()
        if batch < 1:
            raise ValueError("batch must be at least 1")
        result = StateMigration(schema.version, dry_run)
        cursor = ""
        while True:
            async with self._read() as db:
                rows = await db.fetchall(self.q.SELECT_OLD_STATE_THREADS, (schema.version, cursor, batch))
            thread_ids = [_text(r[0]) for r in rows]
            for thread_id in thread_ids:
                async with self._thread_alone(thread_id):
                    if dry_run:
                        async with self._read() as db:
                            await self._migrate_thread(db, thread_id, schema, result, dry_run=True)
                    else:
                        async with self._write() as db:
                            await self._migrate_thread(db, thread_id, schema, result, dry_run=False)
                        self.items.drop(thread_id)  # cached under the incarnation it had
                if progress:
                    progress(1)
            if len(thread_ids) < batch:
                return result
            cursor = thread_ids[-1]

    async def _migrate_thread(
        self, db: Db, thread_id: str, schema: StateSchema, result: StateMigration, *, dry_run: bool
    ) -> None:
        incarnation = random.randbytes(8).hex()
        if not dry_run:
            # First of all: the thread's row lock holds back puts of other processes until this commits;
            # then their cached versions are stale (they read them again), and what they stored before
            # is read below.
            await db.execute(self.q.SET_INCARNATION, (incarnation, thread_id))
        checkpoints: list[tuple[str, str, int, dict[str, Any]]] = []
        value_versions: dict[tuple[str, str, str], int] = {}
        write_versions: dict[tuple[str, str], tuple[int, dict[str, int]]] = {}
        for ns, cid, version, raw in await db.fetchall(self.q.SELECT_THREAD_STATE_VERSIONS, (thread_id,)):
            document = self.plain_codec.loads(raw)
            version = int(version)
            older = {c: int(v) for c, v in (document.get(OLDER_VALUES) or {}).items()}
            by_task = {t: int(v) for t, v in (document.get(WRITE_VERSIONS) or {}).items()}
            if max([version, *older.values(), *by_task.values()]) > schema.version:
                result.newer.append(thread_id)
                return
            checkpoints.append((_text(ns), _text(cid), version, document))
            write_versions[(_text(ns), _text(cid))] = (version, by_task)
            versions = with_string_versions(dict(document))["channel_versions"]
            for channel, channel_version in versions.items():
                value_versions.setdefault(
                    (_text(ns), channel, version_key(channel_version)), older.get(channel, version)
                )
        stale = [c for c in checkpoints if c[2] != schema.version or OLDER_VALUES in c[3] or WRITE_VERSIONS in c[3]]
        if not stale:
            return
        # Values and writes some upcaster changes; the others only need their checkpoints re-stamped.
        old_values = {key: v for key, v in value_versions.items() if schema.needs_upcast(key[1], v)}
        old_writes = {
            key: (v, by_task) for key, (v, by_task) in write_versions.items() if min([v, *by_task.values()]) < schema.version
        }
        value_rows = []
        # Values a dialect keeps in checkpoint documents (INLINE_KEY): (ns, channel, version) -> the
        # entry as stored, and the documents holding one, which are rewritten with the new value too.
        inline_old: dict[tuple[str, str, str], list[Any]] = {}
        for ns, _cid, _version, document in checkpoints:
            for channel, key in _inline_keys(document, ns).items():
                entry = document[INLINE_KEY][channel]
                if key in old_values and entry[0] != KIND_EMPTY:
                    inline_old.setdefault(key, entry)
        if old_values:
            pairs = [{"t": thread_id, "n": ns, "c": ch, "v": v} for ns, ch, v in old_values]
            value_rows = [
                r
                for r in await db.fetchall(self.q.SELECT_CHANNEL_VALUES, (self._json_param(json.dumps(pairs)),))
                if r[4] != KIND_EMPTY
            ]
        write_rows: list[tuple[str, tuple[Any, ...]]] = []
        channels = sorted(schema.channels)
        by_ns: dict[str, list[str]] = {}
        for ns, cid in old_writes:
            by_ns.setdefault(ns, []).append(cid)
        for ns, ids in by_ns.items() if channels else ():
            for row in await db.fetchall(
                self.q.SELECT_CHANNEL_WRITES,
                (thread_id, ns, self._json_param(json.dumps(ids)), self._json_param(json.dumps(channels))),
            ):
                if schema.needs_upcast(row[2], _write_version(old_writes[(ns, _text(row[0]))], _text(row[1]))):
                    write_rows.append((ns, row))
        result.threads += 1
        result.checkpoints += len(stale)
        result.values += len({(_text(r[1]), r[2], r[3]) for r in value_rows} | set(inline_old))
        result.writes += len(write_rows)
        if dry_run:
            return

        # A private cache: what is decoded and encoded here must not reach the shared one.
        thread = ThreadItems(incarnation)
        needed: set[int] = set()
        inline_stored = [(entry[0], entry[1]) for entry in inline_old.values()]
        for kind, value in [r[4:6] for r in value_rows] + [r[4:6] for _ns, r in write_rows] + inline_stored:
            if kind == KIND_DELTA:
                raise StateVersionError(f"thread {thread_id!r}: DeltaChannel values cannot be upcast")
            needed.update(from_ranges(self._ranges_of(kind, value)))
        await self._load_items(db, thread, thread_id, needed)
        # Each value is upcast and encoded once, wherever it is kept.
        upcast: dict[tuple[str, str, str], Stored] = {}

        async def upcast_value(key: tuple[str, str, str], kind: str, value: Any, blob: bytes | None) -> Stored:
            if key not in upcast:
                new = schema.upcast(key[1], self._decode(thread, kind, value, blob), old_values[key])
                upcast[key] = await self._encode(db, thread, thread_id, new, key[:2], remember=False)
            return upcast[key]

        for _t, ns, channel, version, kind, value, blob in value_rows:
            stored = await upcast_value((_text(ns), channel, version), kind, value, blob)
            await db.execute(
                self.q.UPDATE_CHANNEL_VALUE,
                (stored.kind, self._json_param(stored.json) if stored.json is not None else None, stored.blob,
                 thread_id, ns, channel, version),
            )
        # Inline values: the new one replaces the old in every document; one now too large (or binary)
        # for a document gets a row of its own, which the documents name with null as usual.
        entries: dict[tuple[str, str, str], list[str | None] | None] = {}
        for key, (kind, value) in inline_old.items():
            stored = await upcast_value(key, kind, value, None)
            if stored.blob is None and (stored.json is None or len(stored.json) <= INLINE_MAX_CHARS):
                entries[key] = [stored.kind, stored.json]
            else:
                entries[key] = None
                await db.execute(
                    self.q.UPSERT_CHANNEL_VALUE,
                    (thread_id, key[0], key[1], key[2], stored.kind,
                     self._json_param(stored.json) if stored.json is not None else None, stored.blob),
                )
        for ns, (cid, task_id, channel, idx, kind, value, blob) in write_rows:
            written_at = _write_version(old_writes[(ns, _text(cid))], _text(task_id))
            new = schema.upcast(channel, self._decode(thread, kind, value, blob), written_at)
            stored = await self._encode(db, thread, thread_id, new, (ns, channel), remember=False)
            await db.execute(
                self.q.UPDATE_WRITE_VALUE,
                (stored.kind, self._json_param(stored.json) if stored.json is not None else None, stored.blob,
                 thread_id, ns, cid, task_id, idx),
            )
        # Documents that name older values or writes lose those names; the others only get the version.
        # Documents holding old inline values get the new ones.
        renamed = [
            (schema.version, self._json_param(self.plain_codec.dumps(_current(document, ns, entries))), thread_id, ns, cid)
            for ns, cid, _version, document in checkpoints
            if OLDER_VALUES in document or WRITE_VERSIONS in document or _holds(document, ns, entries)
        ]
        if renamed:
            await db.executemany(self.q.UPDATE_CHECKPOINT_STATE, renamed)
        await db.execute(self.q.RESTAMP_THREAD_STATE, (schema.version, thread_id, schema.version))
        if value_rows or write_rows or inline_old:
            await self._collect_garbage(db, thread_id)  # items only the old values referred to


Entries = dict[tuple[str, str, str], list[str | None] | None]


def _inline_keys(document: dict[str, Any], ns: str) -> dict[str, tuple[str, str, str]]:
    """{channel: (ns, channel, version)} of the values a document keeps inline (INLINE_KEY)."""
    versions = with_string_versions(dict(document))["channel_versions"]
    return {
        channel: (ns, channel, version_key(versions.get(channel, "")))
        for channel, entry in (document.get(INLINE_KEY) or {}).items()
        if entry is not None
    }


def _holds(document: dict[str, Any], ns: str, entries: Entries) -> bool:
    return any(key in entries for key in _inline_keys(document, ns).values())


def _current(document: dict[str, Any], ns: str, entries: Entries) -> dict[str, Any]:
    """`document` naming no older values or write versions, its inline values as `entries` has them now."""
    current = {k: v for k, v in document.items() if k not in (OLDER_VALUES, WRITE_VERSIONS)}
    if document.get(INLINE_KEY):
        keys = _inline_keys(document, ns)
        current[INLINE_KEY] = {
            channel: entries.get(keys[channel], entry) if channel in keys else entry
            for channel, entry in document[INLINE_KEY].items()
        }
    return current


def _write_version(versions: tuple[int, dict[str, int]], task_id: str) -> int:
    """The state version of a task's pending writes: its own if recorded, else its checkpoint's."""
    return versions[1].get(task_id, versions[0])


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes | bytearray) else value
