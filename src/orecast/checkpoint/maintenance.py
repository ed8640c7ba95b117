"""Deleting, copying and pruning threads, collecting what nothing refers to, and store statistics."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langgraph.checkpoint.serde.types import INTERRUPT

from orecast.checkpoint.core import (
    INLINE_KEY,
    Db,
    utc_now,
    version_key,
)
from orecast.checkpoint.encoding import (
    KIND_DELTA,
    KIND_EMPTY,
    KIND_ITEMS,
    KIND_JSON,
    CorruptRowError,
)
from orecast.checkpoint.history import DeltaHistory
from orecast.checkpoint.ids import check_id
from orecast.checkpoint.retention import Node, PrunePolicy, PruneResult, plan


class Maintenance(DeltaHistory):
    """delete_thread, copy_thread, delete_for_runs, prune, and the statistics of the store."""

    # -- deleting, copying, pruning ----------------------------------------------------------------

    async def adelete_thread(self, thread_id: str, *, also: Sequence[str] = ()) -> None:
        """Delete the thread. `also`: the caller's statements deleting what it keeps of the thread in
        tables of its own on this database (a run server's runs), run in the same transaction: both go,
        or neither does. A Ctrl-C or a crash between two transactions left the runs of a thread gone."""
        thread_id = check_id(thread_id, "thread_id")
        async with self._write() as db:
            for sql in (*self.q.DELETE_THREAD, *self._callers_sql(also)):
                await db.execute(sql, (thread_id,))
        self.items.drop(thread_id)
        await self._after_thread_deleted(thread_id)

    def _callers_sql(self, statements: Sequence[str]) -> list[str]:
        """A caller's statements, written with `?` placeholders whatever the dialect (the convention of
        `thread_status_statement`), as this dialect's driver takes them."""
        return list(statements) if self.dialect == "sqlite" else [s.replace("?", "%s") for s in statements]

    async def _after_thread_deleted(self, thread_id: str) -> None:
        """What a dialect does once a deleted thread's rows are gone (committed)."""

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        source = check_id(source_thread_id, "source thread_id")
        target = check_id(target_thread_id, "target thread_id")
        if source == target:
            raise ValueError(f"cannot copy thread {source!r} onto itself")
        async with self._write() as db:
            # The copy is of one moment of the source, whatever its runs commit meanwhile: its row, as the
            # copy's next item number, must not be older than the items copied after it.
            for sql in self.q.COPY_ONE_MOMENT:
                await db.execute(sql)
            row = await db.fetchone(self.q.SELECT_THREAD_TO_COPY, (source,))
            if row is None:
                return
            if await db.fetchone(self.q.THREAD_HAS_DATA, (target, target)) is not None:
                raise ValueError(
                    f"cannot copy thread {source!r} onto {target!r}: the target already holds "
                    "checkpoints or writes; delete it first or choose a new thread id"
                )
            for sql in self.q.DELETE_THREAD:
                await db.execute(sql, (target,))
            await db.execute(
                self.q.COPY_THREAD_ROW, (target, random.randbytes(8).hex(), self._ts(utc_now()), source)
            )
            for sql in self.q.COPY_THREAD_DATA:
                await db.execute(sql, (target, source))
        self.items.drop(target)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        ids = [str(r) for r in run_ids]
        if not ids:
            return
        async with self._write() as db:
            rows = await db.fetchall(self.q.SELECT_CHECKPOINTS_OF_RUNS, (self._json_param(json.dumps(ids)),))
            threads = sorted({r[0] for r in rows})
            for thread_id, ns, cid in rows:
                await db.execute(self.q.DELETE_CHECKPOINT_WRITES, (thread_id, ns, cid))
                await db.execute(self.q.DELETE_CHECKPOINT, (thread_id, ns, cid))
            for thread_id in threads:
                await self._collect_garbage(db, thread_id)

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        keep_last: int | None = None,
        older_than: datetime | None = None,
        dry_run: bool = False,
    ) -> list[PruneResult]:
        """Delete old checkpoints of these threads (`keep_latest`), or the threads (`delete`).

        `keep_latest` keeps each namespace's newest `keep_last` checkpoints (default 1) and, with
        `older_than`, all newer than that; plus pending interrupts, DeltaChannel chains and branch points
        kept checkpoints need (see `retention.py`). `dry_run` reports what would go and changes nothing.
        """
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}; use 'keep_latest' or 'delete'")
        policy = PrunePolicy(1 if keep_last is None else keep_last, older_than)
        results = []
        for thread_id in [check_id(t, "thread_id") for t in thread_ids]:
            if strategy == "delete":
                if not dry_run:
                    await self.adelete_thread(thread_id)
                results.append(PruneResult(thread_id, dry_run))
                continue
            async with self._thread_alone(thread_id):
                if dry_run:
                    async with self._read() as db:
                        results.append(await self._prune_thread(db, thread_id, policy, dry_run=True))
                else:
                    # Planned and done in one transaction: a checkpoint stored meanwhile is not lost.
                    async with self._write() as db:
                        results.append(await self._prune_thread(db, thread_id, policy, dry_run=False))
        return results

    async def _prune_thread(self, db: Db, thread_id: str, policy: PrunePolicy, *, dry_run: bool) -> PruneResult:
        result = PruneResult(thread_id, dry_run)
        rows = await db.fetchall(
            self.q.LIST_CHECKPOINTS.format(where=f"WHERE {self.q.WHERE_THREAD}"), (thread_id, 2**62)
        )
        if not rows:
            return result
        keys = [{"t": thread_id, "n": r[1], "c": r[2]} for r in rows]
        writes = await db.fetchall(
            self.q.SELECT_VALUES_AND_WRITES,
            {"values": self._json_param("[]"), "writes": self._json_param(json.dumps(keys))},
        )
        interrupted = {(w[2], w[3]) for w in writes if w[7] == INTERRUPT}
        nodes, sizes = [], {}
        # Values kept in a checkpoint's own row: (ns, cid) -> {channel: [kind, JSON text]}.
        inline: dict[tuple[str, str], dict[str, list[Any]]] = {}
        for _t, ns, cid, parent, checkpoint, metadata, _inc, _next_item, _schema in rows:
            sizes[(ns, cid)] = _size(checkpoint) + _size(metadata)
            checkpoint, metadata = self.codec.loads(checkpoint), self.codec.loads(metadata)
            inline[(ns, cid)] = checkpoint.get(INLINE_KEY) or {}
            ts = checkpoint.get("ts")
            nodes.append(
                Node(
                    ns,
                    cid,
                    parent,
                    datetime.fromisoformat(ts) if isinstance(ts, str) else None,
                    checkpoint.get("channel_versions") or {},
                    frozenset(metadata.get("counters_since_delta_snapshot") or {}),
                    (ns, cid) in interrupted,
                )
            )
        values = await db.fetchall(self.q.SELECT_THREAD_VALUE_KEYS, (thread_id,))
        populated = {(ns, ch, v) for ns, ch, v, kind, _value in values if kind != KIND_EMPTY}
        populated.update(
            (n.ns, ch, version_key(n.versions[ch]))
            for n in nodes
            for ch, entry in inline[n.key].items()
            if entry is not None and entry[0] != KIND_EMPTY and ch in n.versions
        )
        keep, result.protected = plan(nodes, populated, policy)
        gone = [n.key for n in nodes if n.key not in keep]
        result.checkpoints_kept, result.checkpoints_deleted, result.deleted = len(keep), len(gone), sorted(gone)
        if not gone:
            return result
        # What goes with them: their writes, values no kept checkpoint refers to, items nothing refers to.
        referenced = {(n.ns, ch, version_key(v)) for n in nodes if n.key in keep for ch, v in n.versions.items()}
        gone_set = set(gone)
        bound = int(rows[0][7])
        live: set[int] = set()
        dead_values = []
        try:
            for w in writes:
                if (w[2], w[3]) in gone_set:
                    result.writes_deleted += 1
                    result.bytes_freed += _size(w[9]) + _size(w[10])
                elif w[8] in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                    live.update(self._items_referenced(w[8], w[9], bound))
            for key in keep:
                for entry in inline[key].values():
                    if entry is not None and entry[0] in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                        live.update(self._items_referenced(entry[0], entry[1], bound))
            for ns, ch, v, kind, value in values:
                if (ns, ch, v) not in referenced:
                    dead_values.append({"t": thread_id, "n": ns, "c": ch, "v": v})
                elif kind in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                    live.update(self._items_referenced(kind, value, bound))
        except CorruptRowError as exc:
            raise exc.at(f"thread {thread_id!r}") from None
        result.bytes_freed += sum(sizes[k] for k in gone)
        if dead_values:
            for row in await db.fetchall(
                self.q.SELECT_VALUES_AND_WRITES,
                {"values": self._json_param(json.dumps(dead_values)), "writes": self._json_param("[]")},
            ):
                result.values_deleted += 1
                result.bytes_freed += _size(row[9]) + _size(row[10])
        stored = [r[0] for r in await db.fetchall(self.q.SELECT_THREAD_ITEM_NUMBERS, (thread_id,))]
        dead_items = sorted(n for n in stored if n not in live)
        if dead_items:
            for _n, value in await db.fetchall(
                self.q.SELECT_ITEMS, (thread_id, self._json_param(json.dumps(dead_items)))
            ):
                result.items_deleted += 1
                result.bytes_freed += _size(value)
        if not dry_run:
            keys_gone = [(thread_id, ns, cid) for ns, cid in gone]
            await db.executemany(self.q.DELETE_CHECKPOINT_WRITES, keys_gone)
            await db.executemany(self.q.DELETE_CHECKPOINT, keys_gone)
            await db.execute(self.q.DELETE_ORPHAN_WRITES, (thread_id,))
            await self._collect_garbage(db, thread_id)
        return result

    async def _collect_garbage(self, db: Db, thread_id: str) -> None:
        """Delete channel values no checkpoint refers to and items no value refers to; fix counters."""
        # A new incarnation first. Other processes' caches know the items about to go by hash, and a
        # write of theirs whose message has the hash of one (the same question asked again on a new
        # branch) would refer to it by number without storing it: the thread then failed to load in
        # every process but theirs. Their writes now start again from what is stored. And the row's
        # lock holds back their writes until this commits, so none refers to an item read here as dead.
        await db.execute(self.q.SET_INCARNATION, (random.randbytes(8).hex(), thread_id))
        referenced: set[tuple[str, str, str]] = set()
        inline_values: list[list[Any]] = []
        # (ns, versions) per checkpoint, and the values kept in its row where the dialect does that
        for ns, versions, *inline in await db.fetchall(self.q.SELECT_THREAD_VERSIONS, (thread_id,)):
            versions = json.loads(versions) if isinstance(versions, str) else versions
            referenced.update((ns, ch, version_key(v)) for ch, v in versions.items())
            if inline and inline[0] is not None:
                kept = json.loads(inline[0]) if isinstance(inline[0], str) else inline[0]
                inline_values.extend(entry for entry in kept.values() if entry is not None)
        stored = [r[0] for r in await db.fetchall(self.q.SELECT_THREAD_ITEM_NUMBERS, (thread_id,))]
        # A reference beyond the stored items is a corrupt row: the prune stops (and rolls back).
        bound = max(stored, default=0) + 1
        live_items: set[int] = set()
        unreferenced = []
        try:
            for ns, channel, version, kind, value in await db.fetchall(
                self.q.SELECT_THREAD_VALUE_KEYS, (thread_id,)
            ):
                if (ns, channel, version) not in referenced:
                    unreferenced.append((thread_id, ns, channel, version))
                elif kind in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                    live_items.update(self._items_referenced(kind, value, bound))
            for kind, value in [*inline_values, *await db.fetchall(self.q.SELECT_THREAD_WRITE_REFS, (thread_id,))]:
                if kind in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                    live_items.update(self._items_referenced(kind, value, bound))
        except CorruptRowError as exc:
            raise exc.at(f"thread {thread_id!r}") from None
        if unreferenced:
            await db.executemany(self.q.DELETE_CHANNEL_VALUE, unreferenced)
        dead = [n for n in stored if n not in live_items]
        if dead:
            await db.execute(
                self.q.DELETE_ITEMS, (thread_id, self._json_param(json.dumps(dead)))
            )
        await db.execute(self.q.RECOUNT_THREAD, (thread_id, thread_id, thread_id))
        self.items.drop(thread_id)

    # -- maintenance -------------------------------------------------------------------------------

    async def astats(self) -> dict[str, Any]:
        """Row counts per table (and sizes where the dialect can tell)."""
        out: dict[str, Any] = {"dialect": self.dialect, "tables": {}}
        async with self._read() as db:
            row = await db.fetchone(self.q.SELECT_SCHEMA_VERSION)
            out["schema_version"] = row[0] if row else 0
            for table in self.q.TABLES:
                count = await db.fetchone(self.q.COUNT_ROWS.format(table=table))
                out["tables"][table] = {"rows": int(count[0]) if count else 0}
        return out

    async def bench_stats(self) -> dict[str, Any]:
        """Storage as the neutral benchmark (`shared/bench/checkpointer_bench.py`) reports it."""
        stats = await self.astats()
        async with self._read() as db:
            row = await db.fetchone(self.q.PAYLOAD_BYTES)
        return {
            "storage_bytes": stats.get("bytes", 0),
            "payload_bytes": int(row[0] or 0) if row else 0,
            "rows": {table: info["rows"] for table, info in stats["tables"].items()},
        }


def _size(value: Any) -> int:
    """Payload bytes of a stored column as the driver returns it (text, bytes, or parsed JSONB)."""
    if value is None:
        return 0
    if isinstance(value, bytes | bytearray | memoryview):
        return len(value)
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
