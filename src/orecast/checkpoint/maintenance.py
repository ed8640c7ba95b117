"""Deleting, copying and pruning threads, collecting what nothing refers to, and store statistics."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig

from orecast.checkpoint.core import (
    Db,
    utc_now,
    version_key,
)
from orecast.checkpoint.encoding import (
    KIND_DELTA,
    KIND_ITEMS,
    KIND_JSON,
    CorruptRowError,
)
from orecast.checkpoint.history import DeltaHistory
from orecast.checkpoint.ids import check_id


class Maintenance(DeltaHistory):
    """delete_thread, copy_thread, delete_for_runs, prune, and the statistics of the store."""

    # -- deleting, copying, pruning ----------------------------------------------------------------

    async def adelete_thread(self, thread_id: str) -> None:
        thread_id = check_id(thread_id, "thread_id")
        async with self._write() as db:
            for sql in self.q.DELETE_THREAD:
                await db.execute(sql, (thread_id,))
        self.items.drop(thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        source = check_id(source_thread_id, "source thread_id")
        target = check_id(target_thread_id, "target thread_id")
        if source == target:
            raise ValueError(f"cannot copy thread {source!r} onto itself")
        async with self._write() as db:
            row = await db.fetchone(self.q.SELECT_THREAD, (source,))
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

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}; use 'keep_latest' or 'delete'")
        for thread_id in [check_id(t, "thread_id") for t in thread_ids]:
            if strategy == "delete":
                await self.adelete_thread(thread_id)
                continue
            await self._keep_latest(thread_id)

    async def _keep_latest(self, thread_id: str) -> None:
        """Keep each namespace's latest checkpoint, and what a DeltaChannel needs to rebuild its value."""
        async with self._read() as db:
            heads = await db.fetchall(self.q.SELECT_NAMESPACE_HEADS, (thread_id,))
        keep: set[tuple[str, str]] = set()
        for ns, cid, versions in heads:
            keep.add((ns, cid))
            versions = json.loads(versions) if isinstance(versions, str) else versions
            config: RunnableConfig = {
                "configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}
            }
            tup = await self.aget_tuple(config)
            if tup is None:
                continue
            # Only DeltaChannels (LangGraph counts their updates in this metadata field) are rebuilt
            # from ancestors; other channels without a value are simply empty (consumed triggers).
            delta_channels = set(tup.metadata.get("counters_since_delta_snapshot") or {})
            unseeded = [
                ch for ch in versions if ch in delta_channels and ch not in tup.checkpoint["channel_values"]
            ]
            if not unseeded:
                continue
            # Such channels are rebuilt from ancestors' writes: keep the chain back to their seeds.
            async with self._read() as db:
                row = await db.fetchone(self.q.SELECT_PARENT_ID, (thread_id, ns, cid))
                chains, _seeds = await self._walk_to_seeds(db, thread_id, ns, row[0] if row else None, unseeded)
            keep.update((ns, c) for ids in chains.values() for c in ids)
        async with self._write() as db:
            rows = await db.fetchall(self.q.SELECT_THREAD_CHECKPOINT_IDS, (thread_id,))
            for ns, cid in rows:
                if (ns, cid) not in keep:
                    await db.execute(self.q.DELETE_CHECKPOINT_WRITES, (thread_id, ns, cid))
                    await db.execute(self.q.DELETE_CHECKPOINT, (thread_id, ns, cid))
            await db.execute(self.q.DELETE_ORPHAN_WRITES, (thread_id,))
            await self._collect_garbage(db, thread_id)

    async def _collect_garbage(self, db: Db, thread_id: str) -> None:
        """Delete channel values no checkpoint refers to and items no value refers to; fix counters."""
        referenced: set[tuple[str, str, str]] = set()
        for ns, versions in await db.fetchall(self.q.SELECT_THREAD_VERSIONS, (thread_id,)):
            versions = json.loads(versions) if isinstance(versions, str) else versions
            referenced.update((ns, ch, version_key(v)) for ch, v in versions.items())
        stored = [r[0] for r in await db.fetchall(self.q.SELECT_THREAD_ITEM_NUMBERS, (thread_id,))]
        # A reference beyond the stored items is a corrupt row: the prune stops (and rolls back).
        bound = max(stored, default=0) + 1
        live_items: set[int] = set()
        try:
            for ns, channel, version, kind, value in await db.fetchall(
                self.q.SELECT_THREAD_VALUE_KEYS, (thread_id,)
            ):
                if (ns, channel, version) not in referenced:
                    await db.execute(self.q.DELETE_CHANNEL_VALUE, (thread_id, ns, channel, version))
                elif kind in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                    live_items.update(self._items_referenced(kind, value, bound))
            for kind, value in await db.fetchall(self.q.SELECT_THREAD_WRITE_REFS, (thread_id,)):
                live_items.update(self._items_referenced(kind, value, bound))
        except CorruptRowError as exc:
            raise exc.at(f"thread {thread_id!r}") from None
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
