"""The saver: its parts (values, threads, history, maintenance, sync) put together, and the core API.

`put`, `put_writes`, `get_tuple` and `list` live here; `sqlite/` and `postgres/` add connections and SQL.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.types import INTERRUPT

from orecast.checkpoint.audit import AuditMixin
from orecast.checkpoint.cache import ThreadItems
from orecast.checkpoint.core import (
    INLINE_KEY,
    INLINE_MAX_CHARS,
    MESSAGE_COUNT,
    MISSING,
    PAGE_SIZE,
    Db,
    SaverCore,
    StaleThreadError,
    ThreadTurn,
    combine_counts,
    count_messages,
    message_text,
    utc_now,
    version_key,
    with_short_versions,
    with_string_versions,
    without_secrets,
)
from orecast.checkpoint.encoding import (
    KIND_DELTA,
    KIND_EMPTY,
    KIND_ITEMS,
    KIND_JSON,
    CorruptRowError,
    Stored,
    from_ranges,
    is_delta,
    json_text,
)
from orecast.checkpoint.filters import check_metadata_filter
from orecast.checkpoint.ids import MAX_KEY_BYTES, check_id, config_ids
from orecast.checkpoint.maintenance import Maintenance
from orecast.checkpoint.migrate_state import StateMigrator
from orecast.checkpoint.sync import SyncBridge
from orecast.checkpoint.threads import ThreadsMixin
from orecast.checkpoint.upcast import OLDER_VALUES, WRITE_VERSIONS, StateVersionError

# Pending writes per (thread, namespace, checkpoint id): (task id, channel, kind, value, blob), in order.
PendingWrites = dict[tuple[str, str, str], list[tuple[str, str, str, Any, bytes | None]]]


class OrecastCheckpointer(SyncBridge, StateMigrator, Maintenance, ThreadsMixin, AuditMixin, SaverCore):
    """A LangGraph checkpoint saver with linear storage, a threads table and queryable JSON.

    Use `orecast.checkpoint.open_checkpointer(url)` to get one; the async methods are the primary API,
    the sync ones bridge to the event loop the saver was opened on (call them from another thread).
    """

    # -- put ---------------------------------------------------------------------------------------

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        thread_id, checkpoint_ns, parent_id = config_ids(config)
        check_id(checkpoint["id"], "checkpoint id", MAX_KEY_BYTES)
        values = checkpoint["channel_values"]
        # The id is a column of its own; the values are rows of their own.
        stored_checkpoint = dict(checkpoint)
        stored_checkpoint.pop("channel_values", None)
        stored_checkpoint.pop("id", None)
        stored_checkpoint = with_short_versions(stored_checkpoint)
        full_metadata = without_secrets(get_checkpoint_metadata(config, metadata))

        root = checkpoint_ns == ""
        messages = values.get("messages", MISSING)
        snapshot = is_delta(messages)
        if snapshot:
            messages = messages.value
        # The thread's count and preview are the root head's messages: known here when the checkpoint
        # holds the whole list, else (a DeltaChannel between snapshots) the parent's plus what was
        # written for the parent, which this checkpoint applies.
        stated: tuple[int, int, str | None] | None = None
        if root and isinstance(messages, list):
            stated = (1, len(messages), message_text(messages[-1]) if messages else None)
        # Where a put's count is the parent's plus what was written for it (a DeltaChannel between its
        # snapshots, which then count for the puts after them), it is kept per checkpoint
        # (MESSAGE_COUNT). A list's puts each state theirs.
        delta = stated is None or snapshot

        run_id = full_metadata.get("run_id")
        stored_metadata = self._json_param(self.plain_codec.dumps(full_metadata))
        versions = checkpoint["channel_versions"]

        async def put(db: Db, thread: ThreadItems) -> None:
            older, parent = await self._older_values(
                db, thread, thread_id, checkpoint_ns, parent_id, stored_checkpoint, new_versions
            )
            rows = []
            # Where the dialect keeps small values in the checkpoint's row: every channel with a value,
            # as [kind, JSON text], or None when its value has a row of its own (a read looks it up).
            inline: dict[str, list[str | None] | None] = {}

            def keep(channel: str, key: str, stored: Stored) -> None:
                # Small values go in the checkpoint's own row where the dialect does that.
                small = (
                    self.inline_values
                    and stored.kind != KIND_DELTA  # a DeltaChannel's snapshot: the seed its history finds
                    and stored.blob is None
                    and (stored.json is None or len(stored.json) <= INLINE_MAX_CHARS)
                    and version_key(versions.get(channel, "")) == key
                )
                if small:
                    inline[channel] = [stored.kind, stored.json]
                else:
                    inline[channel] = None
                    rows.append(
                        (
                            thread_id,
                            checkpoint_ns,
                            channel,
                            key,
                            stored.kind,
                            self._json_param(stored.json) if stored.json is not None else None,
                            stored.blob,
                        )
                    )
                if self.inline_values:
                    thread.encoding((checkpoint_ns, channel), (key, stored.kind, stored.json if small else None, small))

            for channel, version in new_versions.items():
                value = values.get(channel, MISSING)
                if value is MISSING:
                    # a channel version without a value (a DeltaChannel between snapshots, a consumed input)
                    if self.inline_values:
                        thread.encoding((checkpoint_ns, channel), (version_key(version), None, None, False))
                    continue
                stored = await self._encode(db, thread, thread_id, value, (checkpoint_ns, channel))
                keep(channel, version_key(version), stored)
            if self.inline_values:
                # A checkpoint holds its small values, inherited ones too, so a read needs no other row.
                # An inherited value is copied as stored, never encoded again: as this process last put
                # or read that version (also: that it has no value), else from the parent's row. The
                # value in memory may differ from the stored one: a graph with a newer state schema
                # got it upcast, while `older` makes every read upcast what is stored (once). Only
                # without a stored parent holding that version is it encoded again (a large one is
                # then stored again, which its key makes a no-op).
                for channel, version in versions.items():
                    if channel in new_versions:
                        continue
                    key = version_key(version)
                    known = thread.encoded.get((checkpoint_ns, channel))
                    if known is not None and known[0] == key:
                        if known[1] is not None:
                            inline[channel] = [known[1], known[2]] if known[3] else None
                        continue
                    if parent is None and parent_id is not None:
                        parent = await self._stored_document(db, thread_id, checkpoint_ns, parent_id)
                    entry = _inherited_entry(parent or {}, channel, key)
                    if entry is MISSING:  # no value at that version
                        thread.encoding((checkpoint_ns, channel), (key, None, None, False))
                    elif entry is not _UNKNOWN:  # in the parent's row, or (None) in a row of its own
                        inline[channel] = entry
                        # (for a value in a row the cache needs no kind, only that there is a value)
                        cached = (key, entry[0], entry[1], True) if entry is not None else (key, "", None, False)
                        thread.encoding((checkpoint_ns, channel), cached)
                    elif channel in older:
                        inline[channel] = None  # (not reached: `older` comes from a stored parent)
                    else:
                        value = values.get(channel, MISSING)
                        if value is MISSING or is_delta(value):
                            # a DeltaChannel between snapshots may still have one stored: a read looks it up
                            inline[channel] = None
                            continue
                        keep(channel, key, await self._encode(db, thread, thread_id, value, (checkpoint_ns, channel)))
            if not root:
                clear, count, preview = 0, 0, None
            elif stated is not None:
                clear, count, preview = stated
            else:
                clear, count, preview = await self._messages_written_at(db, thread, thread_id, parent_id)
                counted = thread.counts.get(parent_id) if parent_id is not None else 0
                if counted is None and not clear:
                    # Neither stored by this process nor read: a parent whose count was dropped with the
                    # cache, or one stored before documents kept it (a fork from it counted the head's).
                    counted = await self._message_count_at(db, thread, thread_id, parent_id, parent)
                if not clear and counted is not None:
                    # The parent's count plus what was written for it: right on a fork too, where adding
                    # the change to the thread's count (the head's) was not.
                    clear, count = 1, max(counted + count, 0)
            document = dict(stored_checkpoint)
            if older:
                document[OLDER_VALUES] = older
            if self.inline_values:
                document[INLINE_KEY] = inline
            if root and clear and delta:
                document[MESSAGE_COUNT] = count
            checkpoint_row = (
                thread_id,
                checkpoint_ns,
                checkpoint["id"],
                parent_id,
                self._json_param(self.plain_codec.dumps(document)),
                stored_metadata,
                str(run_id) if run_id is not None else None,
                self.schema_version,
            )
            record = (
                self._ts(utc_now()),
                self._json_param(self._metadata_seed(full_metadata)),
                checkpoint["id"] if root else None,
                clear,
                count,
                preview,
                1 if root else 0,
                checkpoint["id"],
                thread_id,
                thread.incarnation,
            )
            # What the cache learns from this put, before its statement: the thread's next write may
            # start once it is queued (`ThreadTurn`); should it fail, the cache entry goes with it.
            # A checkpoint stored again may have changed: forget what history walks read of it.
            thread.ancestry.pop((checkpoint_ns, checkpoint["id"]), None)
            thread.remember_state_version((checkpoint_ns, checkpoint["id"]), self.schema_version, older)
            if root:
                thread.written_at(checkpoint["id"]).complete = True
                if clear and delta:
                    thread.counted(checkpoint["id"], count)
            if not await self._store_put(db, rows, checkpoint_row, record):
                raise StaleThreadError(thread_id)

        await self._write_thread(thread_id, put)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    async def _older_values(
        self,
        db: Db,
        thread: ThreadItems,
        thread_id: str,
        ns: str,
        parent_id: str | None,
        document: dict[str, Any],
        new_versions: ChannelVersions,
    ) -> tuple[dict[str, int], dict[str, Any] | None]:
        """{channel: state version} of the values this checkpoint shares with its parent that a state
        schema other than this saver's wrote (a thread written by an older graph, continued by this one),
        and the parent's stored document when it was read for that (else None)."""
        if parent_id is None:
            return {}, None
        parent = None
        known = thread.state_versions.get((ns, parent_id))
        if known is None:
            row = await db.fetchone(self.q.SELECT_STATE_VERSION, (thread_id, ns, parent_id))
            if row is None:
                return {}, None
            parent = json.loads(row[1]) if isinstance(row[1], str | bytes) else row[1]
            known = (int(row[0]), dict(parent.get(OLDER_VALUES) or {}))
        parent_version, parent_older = known
        if not parent_older and parent_version == self.schema_version:
            return {}, parent  # (the usual case: the parent and all it refers to are this schema's)
        older = {
            channel: version
            for channel in document.get("channel_versions", {})
            if channel not in new_versions
            and (version := int(parent_older.get(channel, parent_version))) != self.schema_version
        }
        return older, parent

    async def _stored_document(self, db: Db, thread_id: str, ns: str, checkpoint_id: str | None) -> dict[str, Any]:
        """A checkpoint's document as stored ({} when there is none)."""
        row = await db.fetchone(self.q.SELECT_STATE_VERSION, (thread_id, ns, checkpoint_id))
        if row is None:
            return {}
        return json.loads(row[1]) if isinstance(row[1], str | bytes) else row[1]

    def _write_version_known(self, thread: ThreadItems, ns: str, checkpoint_id: str) -> bool:
        """Whether the checkpoint is known to be this schema's (its writes need no note of their version)."""
        known = thread.state_versions.get((ns, checkpoint_id))
        return known is not None and known[0] == self.schema_version

    async def _note_write_version(
        self, db: Db, thread: ThreadItems, thread_id: str, ns: str, checkpoint_id: str, task_id: str
    ) -> None:
        """Record in the checkpoint's document that this task's writes are this schema's version, when
        the checkpoint is another's (so reads upcast them from the right version); called unless
        `_write_version_known`."""
        row = await db.fetchone(self.q.SELECT_STATE_VERSION, (thread_id, ns, checkpoint_id))
        if row is None or int(row[0]) == self.schema_version:
            return  # not stored yet: the graph writing for it stores it, at its own version
        document = self.plain_codec.loads(row[1])
        versions = document.setdefault(WRITE_VERSIONS, {})
        if versions.get(task_id) != self.schema_version:
            versions[task_id] = self.schema_version
            await db.execute(
                self.q.UPDATE_CHECKPOINT_STATE,
                (int(row[0]), self._json_param(self.plain_codec.dumps(document)), thread_id, ns, checkpoint_id),
            )

    async def _store_checkpoint(
        self, db: Db, checkpoint_row: Sequence[Any], record: Sequence[Any]
    ) -> bool:
        """Insert (or replace) the checkpoint row and record it in the thread's row (SQLite's way:
        PostgreSQL and MySQL store a put in a `_store_put` of their own).

        False when the thread's incarnation is not the one the put was encoded against.
        """
        inserted = await db.fetchone(self.q.INSERT_CHECKPOINT, checkpoint_row)
        if inserted is None:  # the same checkpoint stored again: replace it
            thread_id, ns, cid, *rest = checkpoint_row
            await db.execute(self.q.UPDATE_CHECKPOINT, (*rest, thread_id, ns, cid))
        now, seed, head, clear, count, preview, root, cid, thread_id, incarnation = record
        row = await db.fetchone(
            self.q.RECORD_CHECKPOINT_IN_THREAD,
            (
                seed,
                0 if inserted is None else 1,
                head,
                clear,
                count,
                count if inserted is not None else 0,  # a checkpoint stored again applies nothing new
                preview,
                root,
                cid,
                thread_id,
                incarnation,
            ),
        )
        if row is None:
            return False
        await db.execute(self.q.TOUCH_THREAD, (now, thread_id))
        return True

    async def _messages_written_at(
        self, db: Db, thread: ThreadItems, thread_id: str, checkpoint_id: str | None
    ) -> tuple[int, int, str | None]:
        """How the `messages` writes stored for a root checkpoint move the message count."""
        if checkpoint_id is None:
            return 0, 0, None
        known = thread.written.get(checkpoint_id)
        if known is not None and known.complete:
            return combine_counts(known.changes[key] for key in sorted(known.changes))
        # Written (also) by another process, or before this one started: read them back.
        rows = await db.fetchall(
            self.q.SELECT_CHANNEL_WRITES,
            (thread_id, "", self._json_param(json.dumps([checkpoint_id])), self._json_param('["messages"]')),
        )
        needed: set[int] = set()
        for *_ids, kind, value, _blob in rows:
            if kind in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                needed.update(from_ranges(self._ranges_of(kind, value)))
        await self._load_items(db, thread, thread_id, needed)
        return count_messages([self._decode(thread, kind, value, blob) for *_ids, kind, value, blob in rows])

    async def _message_count_at(
        self, db: Db, thread: ThreadItems, thread_id: str, checkpoint_id: str, document: dict[str, Any] | None
    ) -> int | None:
        """The number of messages in a root checkpoint's state (None when it is not stored), for a put
        whose parent's count this process does not hold: as its stored document keeps it, else (a
        checkpoint stored before documents kept it) its nearest `messages` value's length plus the
        messages written since, as the thread's count moves. `document`: the parent's, if already read."""
        if document is None:
            document = await self._stored_document(db, thread_id, "", checkpoint_id)
        if not document:
            return None
        if (stored := document.get(MESSAGE_COUNT)) is not None:
            return int(stored)
        if "messages" not in document.get("channel_versions", {}):
            return 0  # never updated (a graph without messages): no walk to the thread's first checkpoint
        chains, seeds = await self._walk_to_seeds(db, thread_id, "", checkpoint_id, ["messages"], thread)
        count = 0
        if "messages" in seeds:
            seed_id, version = seeds["messages"]
            pairs = [{"t": thread_id, "n": "", "c": "messages", "v": version, "k": seed_id}]
            for *_key, kind, value, blob in await db.fetchall(
                self.q.SELECT_CHANNEL_VALUES, (self._json_param(json.dumps(pairs)),)
            ):
                if kind != KIND_JSON and (ranges := self._ranges_of(kind, value)):  # items: counted unloaded
                    count = len(from_ranges(ranges))
                else:
                    seed = self._decode(thread, kind, value, blob)
                    seed = seed.value if is_delta(seed) else seed
                    count = len(seed) if isinstance(seed, list) else 0
        # Its state is that value plus what was written for each checkpoint from there to its parent.
        written_for = chains["messages"][1:]
        if written_for:
            rows = await db.fetchall(
                self.q.SELECT_CHANNEL_WRITES,
                (thread_id, "", self._json_param(json.dumps(written_for)), self._json_param('["messages"]')),
            )
            needed: set[int] = set()
            for *_ids, kind, value, _blob in rows:
                needed.update(from_ranges(self._ranges_of(kind, value)))
            await self._load_items(db, thread, thread_id, needed)
            clear, change, _preview = count_messages([self._decode(thread, *row[4:]) for row in rows])
            count = max((0 if clear else count) + change, 0)
        return count

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        if not writes:
            return
        thread_id, checkpoint_ns, checkpoint_id = config_ids(config)
        if checkpoint_id is None:
            raise ValueError("put_writes needs a config with a checkpoint_id")
        task_id = check_id(task_id, "task_id", MAX_KEY_BYTES)
        task_path = check_id(task_path, "task_path")
        special, interrupted = True, False
        for channel, _ in writes:  # (a loop: generators cost a frame each, more than these few writes)
            special = special and channel in WRITES_IDX_MAP
            interrupted = interrupted or channel == INTERRUPT

        async def put_writes(db: Db, thread: ThreadItems) -> None:
            rows = []
            for idx, (channel, value) in enumerate(writes):
                # A node may write back the whole history (a subgraph's output): matched by prefix.
                stored = await self._encode(db, thread, thread_id, value, (checkpoint_ns, channel), remember=False)
                rows.append(
                    (
                        thread_id,
                        checkpoint_ns,
                        checkpoint_id,
                        task_id,
                        WRITES_IDX_MAP.get(channel, idx),
                        channel,
                        task_path,
                        stored.kind,
                        self._json_param(stored.json) if stored.json is not None else None,
                        stored.blob,
                    )
                )
            if checkpoint_ns == "":  # (learnt before the statement, as a put's, see there)
                written = thread.written_at(checkpoint_id)
                for idx, (channel, value) in enumerate(writes):
                    if channel == "messages":
                        written.changes[(task_path, task_id, idx)] = count_messages([value])
            note = self.state_schema is not None and not self._write_version_known(thread, checkpoint_ns, checkpoint_id)
            await self._store_writes(
                db, thread_id, rows, special, interrupted, incarnation=thread.incarnation, last=not note
            )
            if note:
                await self._note_write_version(db, thread, thread_id, checkpoint_ns, checkpoint_id, task_id)

        await self._write_thread(thread_id, put_writes)

    async def _write_thread(
        self, thread_id: str, work: Callable[[Db, ThreadItems], Awaitable[None]]
    ) -> None:
        """Run one write of a thread, in submission order, retrying once if the cache was stale.

        The thread's turn is held until the write ends, or until its last statement is queued where
        the dialect keeps a thread's queued statements in order (`ThreadTurn`). A retry keeps its turn,
        or takes it back before the writes that came after it (those that had started failed with it).
        """
        order = self._write_order(thread_id)
        turn = ThreadTurn(order)
        try:
            for attempt in (1, 2):
                if not turn.held:
                    await turn.acquire()
                try:
                    async with self._write_unit(thread_id, turn) as db:
                        thread = await self._touch_thread(db, thread_id)
                        thread.write_order = order
                        await work(db, thread)
                    return
                except StaleThreadError:
                    # Deleted (and maybe re-created) by another process since this one cached it, or an
                    # earlier write this one was prepared after failed.
                    self.items.drop(thread_id)
                    if attempt == 2:
                        raise
                except BaseException:
                    # Rolled back (an error, a cancellation): the cache may name items never committed.
                    self.items.drop(thread_id)
                    raise
        finally:
            turn.release()

    def _write_unit(self, thread_id: str, turn: ThreadTurn) -> AbstractAsyncContextManager[Db]:
        """The connection for one put or put_writes of `thread_id`: a transaction, unless the dialect
        makes each of them one atomic statement after idempotent item inserts. `turn`: the thread's
        lock, which a dialect may release once the write's last statement is queued."""
        return self._write()

    async def _store_put(
        self, db: Db, value_rows: list[tuple[Any, ...]], checkpoint_row: Sequence[Any], record: Sequence[Any]
    ) -> bool:
        """Store a put's channel values, its checkpoint row and its thread record.

        False when the thread's incarnation is not the one the put was encoded against.
        """
        if value_rows:
            await db.executemany(self.q.INSERT_CHANNEL_VALUE, value_rows)
        return await self._store_checkpoint(db, checkpoint_row, record)

    async def _store_writes(
        self,
        db: Db,
        thread_id: str,
        rows: list[tuple[Any, ...]],
        special: bool,
        interrupted: bool,
        *,
        incarnation: str,
        last: bool,
    ) -> None:
        """Store a put_writes' rows, if the thread is still the `incarnation` the cache knew: its values
        may refer to items by the numbers the cache knew (`last`: no statement of it follows)."""
        row = await db.fetchone(self.q.SELECT_INCARNATION, (thread_id,))
        if row is None or row[0] != incarnation:
            raise StaleThreadError(thread_id)
        await db.executemany(self.q.UPSERT_WRITE if special else self.q.INSERT_WRITE, rows)
        if interrupted:
            await db.execute(self.q.SET_THREAD_STATUS, ("interrupted", thread_id))

    # -- reads -------------------------------------------------------------------------------------

    async def _tuples(
        self,
        db: Db,
        rows: Sequence[Sequence[Any]],
        *,
        resumed: bool = False,
        writes: PendingWrites | None = None,
    ) -> list[CheckpointTuple]:
        """Checkpoint tuples for checkpoint rows, loading their channel values, items and writes in bulk.

        A row is (thread_id, ns, id, parent_id, checkpoint, metadata, incarnation, next_item, schema_version).
        `resumed`: the one checkpoint a run continues from, whose lists the next put will most likely
        extend. `writes`: the rows' pending writes, when already read with them.
        """
        if not rows:
            return []
        parsed = []
        wanted: list[dict[str, str]] = []
        next_items: dict[str, int] = {}
        state_versions: dict[tuple[str, str, str], tuple[int, dict[str, int], dict[str, int]]] = {}
        values: dict[tuple[str, str, str, str], tuple[str, Any, bytes | None]] = {}
        inlined: set[tuple[str, str, str, str]] = set()
        counts: dict[tuple[str, str], int] = {}  # (thread, root checkpoint) -> messages in its state
        for thread_id, ns, cid, parent_id, checkpoint, metadata, incarnation, next_item, schema_version in rows:
            next_items[thread_id] = next_item
            checkpoint = with_string_versions({"id": cid, **self.codec.loads(checkpoint)})
            state_versions[(thread_id, ns, cid)] = (
                int(schema_version),
                checkpoint.pop(OLDER_VALUES, None) or {},
                checkpoint.pop(WRITE_VERSIONS, None) or {},
            )
            # Written with its values kept in the row (INLINE_KEY): it names every channel with a value.
            # An inherited one is kept as stored (see `aput`), so a (channel, version) has one value
            # whichever row holds it, and `older` says which state version wrote it.
            inline = checkpoint.pop(INLINE_KEY, None)
            if (count := checkpoint.pop(MESSAGE_COUNT, None)) is not None and ns == "":
                counts[(thread_id, cid)] = count
            metadata = self.codec.loads(metadata)
            parsed.append((thread_id, ns, cid, parent_id, checkpoint, metadata, incarnation))
            for channel, version in checkpoint["channel_versions"].items():
                key = (thread_id, ns, channel, version_key(version))
                entry = inline.get(channel) if inline is not None else None
                if entry is not None:  # kept in the checkpoint's row
                    values[key] = (entry[0], entry[1], None)
                    inlined.add(key)
                elif (inline is None or channel in inline) and key not in inlined:
                    wanted.append({"t": thread_id, "n": ns, "c": channel, "v": key[3]})
        keys = [{"t": r[0], "n": r[1], "c": r[2]} for r in parsed] if writes is None else []
        writes = {} if writes is None else writes
        fetched = (
            await db.fetchall(
                self.q.SELECT_VALUES_AND_WRITES,
                {"values": self._json_param(json_text(wanted)), "writes": self._json_param(json_text(keys))},
            )
            if wanted or keys
            else []
        )
        for part, thread_id, ns, a, _path, b, _idx, c, kind, value, blob in fetched:
            if part == 0:  # a channel value: (channel, version)
                values[(thread_id, ns, a, b)] = (kind, value, blob)
            else:  # a pending write: (checkpoint id, task id, channel)
                writes.setdefault((thread_id, ns, a), []).append((b, c, kind, value, blob))

        # Items are loaded once per thread for the whole page, then shared.
        caches: dict[str, ThreadItems] = {}
        needed: dict[str, set[int]] = {}
        for thread_id, *_rest, incarnation in parsed:
            cache = caches.setdefault(thread_id, self.items.get(thread_id, incarnation))
            cache.next_item = max(cache.next_item, next_items[thread_id])
        for (thread_id, cid), count in counts.items():
            caches[thread_id].counted(cid, count)
        for (thread_id, ns, channel, version), (kind, value, _b) in values.items():
            if kind in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                try:
                    numbers = self._items_referenced(kind, value, next_items[thread_id])
                except CorruptRowError as exc:
                    cid = next(
                        p[2]
                        for p in parsed
                        if p[:2] == (thread_id, ns)
                        and version_key(p[4]["channel_versions"].get(channel)) == version
                    )
                    raise exc.at(
                        f"thread {thread_id!r}, checkpoint {cid!r}, channel {channel!r} version {version!r}"
                    ) from None
                needed.setdefault(thread_id, set()).update(numbers)
        for (thread_id, _ns, cid), entries in writes.items():
            for _t, channel, kind, value, _b in entries:
                if kind in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                    try:
                        numbers = self._items_referenced(kind, value, next_items[thread_id])
                    except CorruptRowError as exc:
                        raise exc.at(
                            f"thread {thread_id!r}, checkpoint {cid!r}, write to {channel!r}"
                        ) from None
                    needed.setdefault(thread_id, set()).update(numbers)
        for thread_id, numbers in needed.items():
            await self._load_items(db, caches[thread_id], thread_id, numbers)

        decoded: dict[tuple[str, str, str, str], Any] = {}
        # A value shared by several checkpoints of the page is upcast once (`upcast.py`).
        upcast: dict[tuple[tuple[str, str, str, str], int], Any] = {}
        checked: dict[str, dict[int, Any]] = {thread_id: {} for thread_id in caches}
        out = []
        for thread_id, ns, cid, parent_id, checkpoint, metadata, _inc in parsed:
            thread = caches[thread_id]
            state_version, older, write_versions = state_versions[(thread_id, ns, cid)]
            thread.remember_state_version((ns, cid), state_version, older)
            channel_values: dict[str, Any] = {}
            for channel, version in checkpoint["channel_versions"].items():
                key = (thread_id, ns, channel, version_key(version))
                stored = values.get(key)
                if stored is None or stored[0] == KIND_EMPTY:
                    if resumed and self.inline_values and stored is None:
                        thread.encoding((ns, channel), (key[3], None, None, False))  # no value
                    continue
                if key not in decoded:
                    decoded[key] = self._decode(thread, *stored, checked[thread_id])
                value = decoded[key]
                written_at = older.get(channel, state_version)
                if self._needs_upcast(channel, written_at):
                    if (key, written_at) not in upcast:
                        upcast[(key, written_at)] = self._upcast(channel, value, written_at)
                    value = upcast[(key, written_at)]
                elif resumed and stored[0] == KIND_ITEMS:
                    thread.remember_list((ns, channel), value, self._ranges_of(*stored[:2]))
                if resumed and self.inline_values:
                    # the value as stored (an upcast one too): what the next put copies into its row
                    small = key in inlined
                    thread.encoding((ns, channel), (key[3], stored[0], stored[1] if small else None, small))
                channel_values[channel] = list(value) if type(value) is list else value
            checkpoint["channel_values"] = channel_values
            pending = [
                (task_id, channel, self._decode(thread, kind, value, blob, checked[thread_id]))
                for task_id, channel, kind, value, blob in writes.get((thread_id, ns, cid), [])
            ]
            if self.state_schema is not None:
                pending = [
                    (task_id, channel, self._upcast(channel, value, write_versions.get(task_id, state_version)))
                    for task_id, channel, value in pending
                ]
            out.append(
                CheckpointTuple(
                    config={
                        "configurable": {
                            "thread_id": thread_id,
                            "checkpoint_ns": ns,
                            "checkpoint_id": cid,
                        }
                    },
                    checkpoint=checkpoint,
                    metadata=metadata,
                    parent_config=(
                        {
                            "configurable": {
                                "thread_id": thread_id,
                                "checkpoint_ns": ns,
                                "checkpoint_id": parent_id,
                            }
                        }
                        if parent_id
                        else None
                    ),
                    pending_writes=pending,
                )
            )
        return out

    def _needs_upcast(self, channel: str, written_at: int) -> bool:
        return self.state_schema is not None and self.state_schema.needs_upcast(channel, written_at)

    def _upcast(self, channel: str, value: Any, written_at: int) -> Any:
        """`value` of `channel` as this saver's state schema has it (a new object when it changes)."""
        if not self._needs_upcast(channel, written_at):
            return value
        if is_delta(value):
            raise StateVersionError(
                f"channel {channel!r} is a DeltaChannel: its stored values are deltas and cannot be upcast"
            )
        assert self.state_schema is not None
        return self.state_schema.upcast(channel, value, written_at)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread_id, checkpoint_ns, checkpoint_id = config_ids(config)

        async def read() -> CheckpointTuple | None:
            async with self._read() as db:
                row, writes = await self._checkpoint_row(db, thread_id, checkpoint_ns, checkpoint_id)
                if row is None:
                    return None
                tuples = await self._tuples(db, [row], resumed=True, writes=writes)
            return tuples[0]

        return await self._read_again_if_torn(read)

    async def _checkpoint_row(
        self, db: Db, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None
    ) -> tuple[Sequence[Any] | None, PendingWrites | None]:
        """The row of a checkpoint (the namespace's newest without an id), and its pending writes if the
        dialect reads them with it (else None: `_tuples` reads them)."""
        if checkpoint_id:
            row = await db.fetchone(self.q.SELECT_CHECKPOINT, (thread_id, checkpoint_ns, checkpoint_id))
        else:
            row = await db.fetchone(self.q.SELECT_LATEST_CHECKPOINT, (thread_id, checkpoint_ns))
        return row, None

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        clauses: list[str] = []
        params: list[Any] = []
        if config is not None:
            configurable = config["configurable"]
            clauses.append(self.q.WHERE_THREAD)
            params.append(check_id(configurable["thread_id"], "thread_id"))
            if configurable.get("checkpoint_ns") is not None:
                clauses.append(self.q.WHERE_NS)
                params.append(check_id(configurable["checkpoint_ns"], "checkpoint_ns"))
            if checkpoint_id := get_checkpoint_id(config):
                clauses.append(self.q.WHERE_ID)
                params.append(check_id(checkpoint_id, "checkpoint_id", MAX_KEY_BYTES))
        if filter:
            check_metadata_filter(filter)
            filter_clauses, filter_params = self._metadata_filter_sql(filter)
            clauses += filter_clauses
            params += filter_params
        if before is not None and (before_id := get_checkpoint_id(before)):
            clauses.append(self.q.WHERE_BEFORE)
            params.append(check_id(before_id, "checkpoint_id", MAX_KEY_BYTES))
        remaining = limit
        last: tuple[str, str, str] | None = None
        while remaining is None or remaining > 0:
            page_clauses = list(clauses)
            page_params = list(params)
            if last is not None:
                page_clauses.append(self.q.WHERE_AFTER_CURSOR)
                page_params += [last[2], last[2], last[0], last[0], last[1]]
            where = f"WHERE {' AND '.join(page_clauses)}" if page_clauses else ""
            size = PAGE_SIZE if remaining is None else min(PAGE_SIZE, remaining)
            # Fetch a page, release the connection, then yield: no lock is held across `yield`.
            rows, tuples = await self._read_again_if_torn(partial(self._list_page, where, (*page_params, size)))
            for tup in tuples:
                yield tup
            if len(rows) < size:
                return
            if remaining is not None:
                remaining -= len(rows)
            last_row = rows[-1]
            last = (last_row[0], last_row[1], last_row[2])


    async def _list_page(self, where: str, params: Sequence[Any]) -> tuple[list[Any], list[CheckpointTuple]]:
        async with self._read() as db:
            rows = await db.fetchall(self.q.LIST_CHECKPOINTS.format(where=where), params)
            return rows, await self._tuples(db, rows)


# `_inherited_entry`: the parent's row does not say (no parent stored, or it holds another version).
_UNKNOWN = object()


def _inherited_entry(parent: dict[str, Any], channel: str, key: str) -> Any:
    """How a parent's stored document keeps `channel` at version `key`: [kind, JSON text] in the
    document (INLINE_KEY); None in a row of its own (also when the parent keeps no values in its
    document); MISSING when that version has no value; _UNKNOWN when the parent does not hold it."""
    versions = parent.get("channel_versions") or {}
    if channel not in versions or version_key(versions[channel]) != key:
        return _UNKNOWN
    kept = parent.get(INLINE_KEY)
    if kept is None:
        return None
    return kept[channel] if channel in kept else MISSING
