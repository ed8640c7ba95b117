"""DeltaChannel history: the writes along a checkpoint's parent chain back to the nearest stored value."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    DeltaChannelHistory,
    get_checkpoint_id,
)

from orecast.checkpoint.core import (
    PAGE_SIZE,
    Db,
)
from orecast.checkpoint.encoding import (
    KIND_EMPTY,
    from_ranges,
)
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
        wanted = list(channels)
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        result: dict[str, DeltaChannelHistory] = {}
        async with self._read() as db:
            target_id = get_checkpoint_id(config)
            if target_id:
                row = await db.fetchone(self.q.SELECT_PARENT_ID, (thread_id, ns, target_id))
            else:
                row = await db.fetchone(self.q.SELECT_LATEST_PARENT_ID, (thread_id, ns))
            if row is None:
                return {ch: {"writes": []} for ch in wanted}
            incarnation = row[1]
            chain, seeds = await self._walk_to_seeds(db, thread_id, ns, row[0], wanted)
            # Values: the seeds, and the writes of each chain.
            seed_pairs = [{"t": thread_id, "n": ns, "c": ch, "v": v} for ch, (_cid, v) in seeds.items()]
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
            thread = self.items.get(thread_id, incarnation)
            needed: set[int] = set()
            for row in seed_rows:
                needed.update(from_ranges(self._ranges_of(row[4], row[5])))
            for row in write_rows:
                needed.update(from_ranges(self._ranges_of(row[4], row[5])))
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

    async def _walk_to_seeds(
        self, db: Db, thread_id: str, ns: str, start: str | None, channels: Sequence[str]
    ) -> tuple[dict[str, list[str]], dict[str, tuple[str, str]]]:
        """Ancestors from `start` up to each channel's nearest stored value (its seed), nearest first.

        Returns the chain of checkpoint ids per channel (seed included) and (checkpoint id, version) of
        each seed found. The chain is read a page at a time and the walk stops once all seeds are found.
        """
        cursor = start
        chain: dict[str, list[str]] = {ch: [] for ch in channels}
        seeds: dict[str, tuple[str, str]] = {}
        open_channels = set(channels)
        while cursor is not None and open_channels:
            ancestors = await db.fetchall(self.q.SELECT_ANCESTORS, (thread_id, ns, cursor, PAGE_SIZE))
            if not ancestors:
                break
            pairs = []
            versions_by_ancestor = []
            for _cid, _parent, versions in ancestors:
                versions = json.loads(versions) if isinstance(versions, str) else versions
                versions_by_ancestor.append(versions)
                for ch in open_channels:
                    if ch in versions:
                        pairs.append({"t": thread_id, "n": ns, "c": ch, "v": str(versions[ch])})
            populated: set[tuple[str, str]] = set()
            if pairs:
                for _t, _n, ch, version, kind, _v, _b in await db.fetchall(
                    self.q.SELECT_CHANNEL_VALUES, (self._json_param(json.dumps(pairs)),)
                ):
                    if kind != KIND_EMPTY:
                        populated.add((ch, version))
            for (cid, _parent, _), versions in zip(ancestors, versions_by_ancestor, strict=True):
                for ch in list(open_channels):
                    chain[ch].append(cid)
                    version = versions.get(ch)
                    if version is not None and (ch, str(version)) in populated:
                        seeds[ch] = (cid, str(version))
                        open_channels.discard(ch)
                if not open_channels:
                    break
            cursor = ancestors[-1][1] if open_channels else None
        return chain, seeds
