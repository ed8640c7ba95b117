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
from orecast.checkpoint.core import Db, version_key, with_string_versions
from orecast.checkpoint.encoding import KIND_DELTA, KIND_EMPTY, from_ranges
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
                async with self._thread_lock(thread_id):
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
        result.values += len(value_rows)
        result.writes += len(write_rows)
        if dry_run:
            return

        # A private cache: what is decoded and encoded here must not reach the shared one.
        thread = ThreadItems(incarnation)
        needed: set[int] = set()
        for kind, value in [r[4:6] for r in value_rows] + [r[4:6] for _ns, r in write_rows]:
            if kind == KIND_DELTA:
                raise StateVersionError(f"thread {thread_id!r}: DeltaChannel values cannot be upcast")
            needed.update(from_ranges(self._ranges_of(kind, value)))
        await self._load_items(db, thread, thread_id, needed)
        for _t, ns, channel, version, kind, value, blob in value_rows:
            new = schema.upcast(channel, self._decode(thread, kind, value, blob), old_values[(_text(ns), channel, version)])
            stored = await self._encode(db, thread, thread_id, new, (_text(ns), channel), remember=False)
            await db.execute(
                self.q.UPDATE_CHANNEL_VALUE,
                (stored.kind, self._json_param(stored.json) if stored.json is not None else None, stored.blob,
                 thread_id, ns, channel, version),
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
        renamed = [
            (schema.version, self._json_param(self.plain_codec.dumps(_current(document))), thread_id, ns, cid)
            for ns, cid, _version, document in stale
            if OLDER_VALUES in document or WRITE_VERSIONS in document
        ]
        if renamed:
            await db.executemany(self.q.UPDATE_CHECKPOINT_STATE, renamed)
        await db.execute(self.q.RESTAMP_THREAD_STATE, (schema.version, thread_id, schema.version))
        if value_rows or write_rows:
            await self._collect_garbage(db, thread_id)  # items only the old values referred to


def _current(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in (OLDER_VALUES, WRITE_VERSIONS)}


def _write_version(versions: tuple[int, dict[str, int]], task_id: str) -> int:
    """The state version of a task's pending writes: its own if recorded, else its checkpoint's."""
    return versions[1].get(task_id, versions[0])


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes | bytearray) else value
