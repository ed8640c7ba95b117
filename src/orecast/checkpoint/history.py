"""DeltaChannel history: the writes along a checkpoint's parent chain back to the nearest stored value."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import DeltaChannelHistory

from orecast.checkpoint.cache import ThreadItems
from orecast.checkpoint.core import (
    PAGE_SIZE,
    Db,
    version_key,
)
from orecast.checkpoint.encoding import (
    KIND_EMPTY,
    CorruptRowError,
)
from orecast.checkpoint.ids import config_ids
from orecast.checkpoint.upcast import StateVersionError
from orecast.checkpoint.values import ValueStore


class DeltaHistory(ValueStore):
    """`aget_delta_channel_history`, read with a recursive query that stops at the seeds."""

    # -- DeltaChannel history ----------------------------------------------------------------------

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Writes of `channels` along the parent chain back to each channel's nearest stored value.

        The chain is read in pages by a recursive query that stops as soon as every channel has its seed,
        so the cost depends on the distance to the last snapshot, not on the thread's length.
        """
        if not channels:
            return {}
        if self.state_schema is not None and (named := self.state_schema.channels.intersection(channels)):
            raise StateVersionError(
                f"channel {sorted(named)[0]!r} is a DeltaChannel: its stored values are deltas and cannot be upcast"
            )
        wanted = list(channels)
        thread_id, ns, target_id = config_ids(config)
        return await self._read_again_if_torn(lambda: self._delta_history(thread_id, ns, target_id, wanted))

    async def _delta_history(
        self, thread_id: str, ns: str, target_id: str | None, wanted: list[str]
    ) -> dict[str, DeltaChannelHistory]:
        result: dict[str, DeltaChannelHistory] = {}
        async with self._read() as db:
            if target_id:
                row = await db.fetchone(self.q.SELECT_PARENT_ID, (thread_id, ns, target_id))
            else:
                row = await db.fetchone(self.q.SELECT_LATEST_PARENT_ID, (thread_id, ns))
            if row is None:
                return {ch: {"writes": []} for ch in wanted}
            incarnation, next_item = row[1], row[2]
            thread = self.items.get(thread_id, incarnation)
            chain, seeds = await self._walk_to_seeds(db, thread_id, ns, row[0], wanted, thread)
            # Values: the seeds, and the writes of each chain.
            # `k`: a checkpoint holding that version, where a dialect may keep a small value (INLINE_KEY)
            seed_pairs = [{"t": thread_id, "n": ns, "c": ch, "v": v, "k": cid} for ch, (cid, v) in seeds.items()]
            seed_rows = (
                await db.fetchall(self.q.SELECT_CHANNEL_VALUES, (self._json_param(json.dumps(seed_pairs)),))
                if seed_pairs
                else []
            )
            all_ids = sorted({cid for ids in chain.values() for cid in ids})
            write_rows = (
                await db.fetchall(
                    self.q.SELECT_CHANNEL_WRITES,
                    (
                        thread_id,
                        ns,
                        self._json_param(json.dumps(all_ids)),
                        self._json_param(json.dumps(wanted)),
                    ),
                )
                if all_ids
                else []
            )
            needed: set[int] = set()
            for row in seed_rows:
                needed.update(self._checked_refs(row[4], row[5], next_item, thread_id, row[2]))
            for row in write_rows:
                needed.update(self._checked_refs(row[4], row[5], next_item, thread_id, row[0]))
            await self._load_items(db, thread, thread_id, needed)
        by_checkpoint: dict[tuple[str, str], list[Any]] = {}
        for cid, task_id, channel, _idx, kind, value, blob in write_rows:
            by_checkpoint.setdefault((cid, channel), []).append(
                (task_id, channel, self._decode(thread, kind, value, blob))
            )
        for ch in wanted:
            # Oldest first; a checkpoint's writes came after its value, so the seed's writes count too.
            collected = [w for cid in reversed(chain[ch]) for w in by_checkpoint.get((cid, ch), [])]
            entry: DeltaChannelHistory = {"writes": collected}
            for row in seed_rows:
                if row[2] == ch:
                    entry["seed"] = self._decode(thread, row[4], row[5], row[6])
            result[ch] = entry
        return result

    def _checked_refs(self, kind: str, value: Any, next_item: int, thread_id: str, where: str) -> set[int]:
        try:
            return self._items_referenced(kind, value, next_item)
        except CorruptRowError as exc:
            raise exc.at(f"thread {thread_id!r}, DeltaChannel history at {where!r}") from None

    async def _walk_to_seeds(
        self,
        db: Db,
        thread_id: str,
        ns: str,
        start: str | None,
        channels: Sequence[str],
        thread: ThreadItems | None = None,
    ) -> tuple[dict[str, list[str]], dict[str, tuple[str, str]]]:
        """Ancestors from `start` up to each channel's nearest stored value (its seed), nearest first.

        Returns the chain of checkpoint ids per channel (seed included) and (checkpoint id, version) of
        each seed found. The chain is read a page at a time and the walk stops once all seeds are found;
        with `thread`, what was read is remembered, so the next walk over the same chain stays in memory.
        """
        ancestry = thread.ancestry if thread is not None else {}
        populated = thread.populated if thread is not None else {}
        cursor = start
        chain: dict[str, list[str]] = {ch: [] for ch in channels}
        seeds: dict[str, tuple[str, str]] = {}
        open_channels = set(channels)
        while cursor is not None and open_channels:
            page: list[tuple[str, str | None, dict[str, Any]]] = []
            known = cursor
            while known is not None and (ns, known) in ancestry and len(page) < PAGE_SIZE:
                parent, versions = ancestry[(ns, known)]
                page.append((known, parent, versions))
                known = parent
            if not page:
                for cid, parent, versions in await db.fetchall(
                    self.q.SELECT_ANCESTORS, (thread_id, ns, cursor, PAGE_SIZE)
                ):
                    versions = json.loads(versions) if isinstance(versions, str) else versions
                    ancestry[(ns, cid)] = (parent, versions)
                    page.append((cid, parent, versions))
                if not page:
                    break
            unknown: dict[tuple[str, str], str] = {}  # (channel, version) -> a checkpoint holding it
            for cid, _parent, versions in page:
                for ch in open_channels:
                    if ch in versions and (ns, ch, version_key(versions[ch])) not in populated:
                        unknown.setdefault((ch, version_key(versions[ch])), cid)
            if unknown:
                pairs = [{"t": thread_id, "n": ns, "c": ch, "v": v, "k": unknown[(ch, v)]} for ch, v in sorted(unknown)]
                found = {
                    (ch, version)
                    for _t, _n, ch, version, kind, _v, _b in await db.fetchall(
                        self.q.SELECT_CHANNEL_VALUES, (self._json_param(json.dumps(pairs)),)
                    )
                    if kind != KIND_EMPTY
                }
                for ch, version in unknown:
                    populated[(ns, ch, version)] = (ch, version) in found
            for cid, _parent, versions in page:
                for ch in list(open_channels):
                    chain[ch].append(cid)
                    version = versions.get(ch)
                    if version is not None and populated.get((ns, ch, version_key(version))):
                        seeds[ch] = (cid, version_key(version))
                        open_channels.discard(ch)
                if not open_channels:
                    break
            cursor = page[-1][1] if open_channels else None
        return chain, seeds
