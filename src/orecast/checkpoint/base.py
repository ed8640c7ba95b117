"""The saver logic shared by both dialects; `sqlite/` and `postgres/` add connections and SQL.

Storage model (see `encoding.py`): one row per checkpoint (its JSON without channel values), one row per
channel *version* (as the official savers), and — the difference — list channels such as `messages` are
stored as references to per-thread items, each message stored once. A 200-turn conversation therefore
stores each message once instead of once per step.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import weakref
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from typing import Any, Protocol

from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.types import INTERRUPT
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from orecast.checkpoint.cache import ItemCache, ThreadItems
from orecast.checkpoint.encoding import (
    KIND_DELTA,
    KIND_EMPTY,
    KIND_ITEMS,
    KIND_JSON,
    KIND_SERDE,
    ItemRefs,
    Stored,
    TaggedJson,
    embedded_ranges,
    extend_ranges,
    from_ranges,
    is_delta,
    is_item_list,
    item_hash,
    strict_serializer,
    to_ranges,
    wrap_delta,
)
from orecast.checkpoint.threads import ThreadInfo, check_search

SCHEMA_VERSION_DEFAULT = 1
PAGE_SIZE = 100
_FILTER_KEY = re.compile(r"^[A-Za-z0-9_.-]+$")
# Metadata LangGraph adds per checkpoint; the rest of the first checkpoint's metadata seeds the thread's.
_CHECKPOINT_ONLY_METADATA = {"source", "step", "parents", "run_id", "counters_since_delta_snapshot", "writes"}
_MISSING = object()


class Db(Protocol):
    """The few calls the shared logic needs from a connection (one transaction or one read)."""

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None: ...
    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...
    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None: ...
    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...


def _now() -> datetime:
    return datetime.now(UTC)


def _as_datetime(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def _message_text(message: Any) -> str | None:
    if not isinstance(message, BaseMessage):
        return None
    content = message.content
    if isinstance(content, str):
        text = content
    else:
        text = " ".join(
            part if isinstance(part, str) else str(part.get("text", ""))
            for part in content
            if isinstance(part, str | dict)
        )
    text = " ".join(text.replace("\x00", " ").split())
    if not text and getattr(message, "tool_calls", None):
        text = "→ " + ", ".join(call["name"] for call in message.tool_calls)
    return text[:200] or None


def _count_messages(values: list[Any]) -> tuple[int, int, str | None]:
    """(clear, change, preview) of written messages: how the thread's message count moves.

    DeltaChannel message lists are stored whole only at snapshots; between them the count and the
    preview follow the written messages.
    """
    clear, delta, preview = 0, 0, None
    for value in values:
        for message in value if isinstance(value, list) else [value]:
            if isinstance(message, RemoveMessage):
                if message.id == REMOVE_ALL_MESSAGES:
                    clear, delta = 1, 0
                else:
                    delta -= 1
            elif isinstance(message, BaseMessage):
                delta += 1
                preview = _message_text(message) or preview
    return clear, delta, preview


class StaleThreadError(Exception):
    """The thread row is not the incarnation this process cached: it was deleted elsewhere."""


class OrecastCheckpointer(BaseCheckpointSaver[float]):
    """A LangGraph checkpoint saver with linear storage, a threads table and queryable JSON.

    Use `orecast.checkpoint.open_checkpointer(url)` to get one; the async methods are the primary API,
    the sync ones bridge to the event loop the saver was opened on (call them from another thread).
    """

    dialect: str = ""
    keeps_key_order: bool = False  # set where the JSON column type reorders object keys (JSONB)

    def __init__(self, *, schema_version: int = SCHEMA_VERSION_DEFAULT, serde: Any = None) -> None:
        super().__init__(serde=serde or strict_serializer())
        self.schema_version = schema_version
        self.codec = TaggedJson(self.serde, keep_key_order=self.keeps_key_order)
        # Checkpoints and metadata stay plain JSON objects so SQL can filter them (`metadata @> …`).
        self.plain_codec = TaggedJson(self.serde)
        self.items = ItemCache()
        self.loop: asyncio.AbstractEventLoop | None = None
        # Writes of one thread run one at a time, in the order LangGraph submits them, so item numbers
        # follow the conversation's order (ranges stay one range) and no transaction waits on another's
        # row lock while holding a connection.
        self._thread_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def _thread_lock(self, thread_id: str) -> asyncio.Lock:
        lock = self._thread_locks.get(thread_id)
        if lock is None:
            lock = asyncio.Lock()
            self._thread_locks[thread_id] = lock
        return lock

    def with_allowlist(self, extra_allowlist: Any) -> OrecastCheckpointer:
        clone = super().with_allowlist(extra_allowlist)
        if clone is not self:
            assert isinstance(clone, OrecastCheckpointer)
            clone.codec = TaggedJson(clone.serde, keep_key_order=clone.keeps_key_order)
            clone.plain_codec = TaggedJson(clone.serde)
        return clone

    # -- what a dialect provides -------------------------------------------------------------------

    q: Any  # the dialect's queries module: one SQL statement per constant

    @abstractmethod
    def _write(self) -> AbstractAsyncContextManager[Db]:
        """One write transaction."""

    @abstractmethod
    def _read(self) -> AbstractAsyncContextManager[Db]:
        """One read (a connection, no long transaction)."""

    @abstractmethod
    def _ts(self, value: datetime) -> Any:
        """A timestamp as the driver wants it."""

    @abstractmethod
    def _json_param(self, text: str) -> Any:
        """A JSON document as the driver wants it."""

    @abstractmethod
    def _metadata_filter_sql(self, filter: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
        """WHERE clauses (and parameters) for a metadata equality filter on checkpoints."""

    @abstractmethod
    def _thread_search_sql(
        self, metadata: Mapping[str, Any] | None, status: str | None, title: str | None
    ) -> tuple[list[str], list[Any]]:
        """WHERE clauses (and parameters) for a thread search."""

    @abstractmethod
    async def setup(self) -> None:
        """Apply the numbered migrations of this dialect (idempotent, safe across processes)."""

    # -- versions ----------------------------------------------------------------------------------

    def get_next_version(self, current: float | int | str | None, channel: None) -> float:
        # A number, compared as a number by LangGraph: the integer part counts the channel's updates and
        # a random fraction keeps two forks' versions distinct (as the official savers' random suffix
        # does), in 8 characters where the official string takes 49.
        if current is None:
            count = 0
        elif isinstance(current, str):
            count = int(current.split(".")[0])
        else:
            count = int(current)
        return count + 1 + random.randint(1, 999_999) / 1_000_000

    # -- encoding values ---------------------------------------------------------------------------

    def _json(self, value: Any) -> Stored:
        return Stored(KIND_JSON, self.codec.dumps(value))

    async def _encode(
        self, db: Db, thread: ThreadItems, thread_id: str, value: Any, key: tuple[str, str] | None = None
    ) -> Stored:
        """Encode a value; `key` (namespace, channel) names a channel whose lists are usually appended."""
        if value is _MISSING:
            return Stored(KIND_EMPTY)
        if is_delta(value):
            inner = await self._encode(db, thread, thread_id, value.value, key)
            payload = {"kind": inner.kind, "value": json.loads(inner.json) if inner.json else None}
            return Stored(KIND_DELTA, json.dumps(payload, ensure_ascii=False), inner.blob)
        if type(value) is list and value:
            # Usually the list stored last for this channel plus a few new elements.
            known, ranges = thread.known_prefix(key, value) if key else (0, [])
            suffix = value[known:]
            if not suffix or is_item_list(suffix):
                ranges = extend_ranges(ranges, await self._item_numbers(db, thread, thread_id, suffix))
                if key:
                    thread.last_lists[key] = (list(value), ranges)
                return Stored(KIND_ITEMS, json.dumps(ranges))
        if type(value) is dict and any(is_item_list(v) for v in value.values()):
            # e.g. the graph input {"messages": [...]}: its messages are items like the channel's
            refs = dict(value)
            for name, entry in value.items():
                if is_item_list(entry):
                    numbers = await self._item_numbers(db, thread, thread_id, entry)
                    refs[name] = ItemRefs(to_ranges(numbers))
            return self._json(refs)
        return self._json(value)

    async def _item_numbers(
        self, db: Db, thread: ThreadItems, thread_id: str, values: list[Any]
    ) -> list[int]:
        """Item numbers for each element, storing the elements this thread has not stored yet."""
        if not values:
            return []
        numbers: list[int | None] = [thread.number_of(v) for v in values]
        unknown = [i for i, n in enumerate(numbers) if n is None]
        if not unknown:
            return numbers  # type: ignore[return-value]
        texts = {i: self.codec.dumps(values[i]) for i in unknown}
        digests = {i: item_hash(t) for i, t in texts.items()}
        new = {digests[i]: texts[i] for i in unknown if digests[i] not in thread.by_hash}
        if new:
            thread.by_hash.update(await self._store_items(db, thread_id, thread.incarnation, new))
        for i in unknown:
            number = thread.by_hash[digests[i]]
            numbers[i] = number
            thread.remember(number, values[i], digests[i])
        return numbers  # type: ignore[return-value]

    async def _store_items(
        self, db: Db, thread_id: str, incarnation: str, new: dict[str, str]
    ) -> dict[str, int]:
        """Item numbers of the items with these hashes (hash -> JSON), storing those not stored yet."""
        found: dict[str, int] = {}
        for number, digest in await db.fetchall(
            self.q.SELECT_ITEMS_BY_HASH, (thread_id, self._json_param(json.dumps(list(new))))
        ):
            found[digest] = number
        fresh = [d for d in new if d not in found]
        if fresh:
            row = await db.fetchone(self.q.ALLOCATE_ITEMS, (len(fresh), thread_id, incarnation))
            if row is None:
                raise StaleThreadError(thread_id)
            first = row[0] - len(fresh)
            rows = []
            for offset, digest in enumerate(fresh):
                found[digest] = first + offset
                rows.append((thread_id, first + offset, digest, self._json_param(new[digest])))
            await db.executemany(self.q.INSERT_ITEM, rows)
        return found

    # -- decoding values ---------------------------------------------------------------------------

    async def _load_items(self, db: Db, thread: ThreadItems, thread_id: str, needed: set[int]) -> None:
        missing = [n for n in needed if n not in thread.by_number]
        if not missing:
            return
        for number, value in await db.fetchall(
            self.q.SELECT_ITEMS, (thread_id, self._json_param(json.dumps(sorted(missing))))
        ):
            thread.remember(number, self.codec.loads(value))

    @staticmethod
    def _ranges_of(kind: str, value: Any) -> list[Any]:
        if kind == KIND_JSON:
            return embedded_ranges(value) if isinstance(value, str) else []
        tree = json.loads(value) if isinstance(value, str) else value
        if kind == KIND_ITEMS:
            return tree
        if kind == KIND_DELTA and tree["kind"] == KIND_ITEMS:
            return tree["value"]
        return []

    def _decode(self, thread: ThreadItems, kind: str, value: Any, blob: bytes | None) -> Any:
        if kind == KIND_JSON:
            decoded = self.codec.loads(value)
            if type(decoded) is dict:
                for name, entry in decoded.items():
                    if type(entry) is ItemRefs:
                        decoded[name] = [thread.by_number[n] for n in from_ranges(entry.ranges)]
            return decoded
        if kind == KIND_ITEMS:
            ranges = json.loads(value) if isinstance(value, str) else value
            return [thread.by_number[n] for n in from_ranges(ranges)]
        if kind == KIND_SERDE:
            type_tag = json.loads(value) if isinstance(value, str) else value
            return self.serde.loads_typed((type_tag, bytes(blob or b"")))
        if kind == KIND_DELTA:
            tree = json.loads(value) if isinstance(value, str) else value
            inner_value = json.dumps(tree["value"]) if tree["value"] is not None else None
            return wrap_delta(self._decode(thread, tree["kind"], inner_value, blob))
        raise ValueError(f"unknown stored kind {kind!r}")

    # -- threads -----------------------------------------------------------------------------------

    async def _touch_thread(self, db: Db, thread_id: str) -> ThreadItems:
        """Create the thread row if needed; return its item cache (keyed by the row's incarnation).

        The insert does nothing when the row exists, so touching a thread writes no new row version.
        """
        cached = self.items.peek(thread_id)
        if cached is not None:
            # Trusted without a statement; the statements that depend on it check it (StaleThreadError).
            return cached
        now = self._ts(_now())
        await db.execute(self.q.INSERT_THREAD, (thread_id, random.randbytes(8).hex(), now, now))
        row = await db.fetchone(self.q.SELECT_INCARNATION, (thread_id,))
        assert row is not None
        return self.items.get(thread_id, row[0])

    @staticmethod
    def _metadata_seed(metadata: Mapping[str, Any]) -> str:
        """The part of a checkpoint's metadata that describes the thread (user_id, …), as JSON."""
        seed = {
            k: v
            for k, v in metadata.items()
            if k not in _CHECKPOINT_ONLY_METADATA and isinstance(v, str | int | float | bool)
        }
        return json.dumps(seed, ensure_ascii=False)

    def _thread_from_row(self, row: Sequence[Any]) -> ThreadInfo:
        metadata = row[3]
        if isinstance(metadata, str):
            metadata = json.loads(metadata)
        return ThreadInfo(
            thread_id=row[0],
            created_at=_as_datetime(row[1]),
            updated_at=_as_datetime(row[2]),
            metadata=metadata,
            status=row[4],
            head_checkpoint_id=row[5],
            checkpoint_count=row[6],
            message_count=row[7],
            preview=row[8],
        )

    async def aget_thread(self, thread_id: str) -> ThreadInfo | None:
        """The thread's row, or None if no checkpoint was ever stored for it."""
        async with self._read() as db:
            row = await db.fetchone(self.q.SELECT_THREAD, (thread_id,))
        return self._thread_from_row(row) if row else None

    async def asearch_threads(
        self,
        *,
        metadata: Mapping[str, Any] | None = None,
        status: str | None = None,
        title: str | None = None,
        sort_by: str = "updated_at",
        sort_order: str = "desc",
        limit: int = 10,
        offset: int = 0,
    ) -> list[ThreadInfo]:
        """Threads whose metadata contains `metadata`, with `status`, whose title contains `title`."""
        check_search(status, sort_by, sort_order, limit, offset)
        clauses, params = self._thread_search_sql(metadata, status, title)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = self.q.SEARCH_THREADS.format(where=where, sort_by=sort_by, sort_order=sort_order.upper())
        async with self._read() as db:
            rows = await db.fetchall(sql, (*params, limit, offset))
        return [self._thread_from_row(r) for r in rows]

    async def acount_threads(
        self,
        *,
        metadata: Mapping[str, Any] | None = None,
        status: str | None = None,
        title: str | None = None,
    ) -> int:
        check_search(status, "updated_at", "desc", 0, 0)
        clauses, params = self._thread_search_sql(metadata, status, title)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        async with self._read() as db:
            row = await db.fetchone(self.q.COUNT_THREADS.format(where=where), params)
        return int(row[0]) if row else 0

    async def aupdate_thread(
        self,
        thread_id: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        title: str | None = None,
        status: str | None = None,
    ) -> ThreadInfo:
        """Merge `metadata` (and `title`) into the thread's metadata; set its status. Creates the row."""
        check_search(status, "updated_at", "desc", 0, 0)
        patch = dict(metadata or {})
        if title is not None:
            patch["title"] = title
        async with self._write() as db:
            await self._touch_thread(db, thread_id)
            row = await db.fetchone(self.q.SELECT_THREAD, (thread_id,))
            assert row is not None
            current = self._thread_from_row(row)
            merged = {**current.metadata, **patch}
            await db.execute(
                self.q.UPDATE_THREAD,
                (
                    self._json_param(json.dumps(merged, ensure_ascii=False)),
                    status or current.status,
                    self._ts(_now()),
                    thread_id,
                ),
            )
            row = await db.fetchone(self.q.SELECT_THREAD, (thread_id,))
        assert row is not None
        return self._thread_from_row(row)

    # -- put ---------------------------------------------------------------------------------------

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        parent_id = configurable.get("checkpoint_id")
        values = checkpoint["channel_values"]
        # The id is a column of its own; the values are rows of their own.
        stored_checkpoint = {k: v for k, v in checkpoint.items() if k not in ("channel_values", "id")}
        full_metadata = get_checkpoint_metadata(config, metadata)

        messages = values.get("messages", _MISSING)
        if is_delta(messages):
            messages = messages.value
        message_count = len(messages) if isinstance(messages, list) else None
        preview = _message_text(messages[-1]) if message_count else None

        root = checkpoint_ns == ""
        run_id = full_metadata.get("run_id")
        checkpoint_row = (
            thread_id,
            checkpoint_ns,
            checkpoint["id"],
            parent_id,
            self._json_param(self.plain_codec.dumps(stored_checkpoint)),
            self._json_param(self.plain_codec.dumps(full_metadata)),
            str(run_id) if run_id is not None else None,
            self.schema_version,
        )
        record = (
            self._ts(_now()),
            self._json_param(self._metadata_seed(full_metadata)),
            checkpoint["id"] if root else None,
            message_count if root else None,
            preview if root else None,
            1 if root else 0,
            checkpoint["id"],
            thread_id,
        )

        async def put(db: Db, thread: ThreadItems) -> None:
            rows = []
            for channel, version in new_versions.items():
                value = values.get(channel, _MISSING)
                if value is _MISSING:
                    continue  # a channel version without a value (a DeltaChannel between snapshots)
                stored = await self._encode(db, thread, thread_id, value, (checkpoint_ns, channel))
                rows.append(
                    (
                        thread_id,
                        checkpoint_ns,
                        channel,
                        str(version),
                        stored.kind,
                        self._json_param(stored.json) if stored.json is not None else None,
                        stored.blob,
                    )
                )
            if not await self._store_put(db, rows, checkpoint_row, (*record, thread.incarnation)):
                raise StaleThreadError(thread_id)

        await self._write_thread(thread_id, put)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    async def _store_checkpoint(
        self, db: Db, checkpoint_row: Sequence[Any], record: Sequence[Any]
    ) -> bool:
        """Insert (or replace) the checkpoint row and record it in the thread's row.

        False when the thread's incarnation is not the one the put was encoded against.
        """
        inserted = await db.fetchone(self.q.INSERT_CHECKPOINT, checkpoint_row)
        if inserted is None:  # the same checkpoint stored again: replace it
            thread_id, ns, cid, *rest = checkpoint_row
            await db.execute(self.q.UPDATE_CHECKPOINT, (*rest, thread_id, ns, cid))
        now, seed, head, count, preview, root, cid, thread_id, incarnation = record
        row = await db.fetchone(
            self.q.RECORD_CHECKPOINT_IN_THREAD,
            (now, seed, 0 if inserted is None else 1, head, count, preview, root, cid, thread_id, incarnation),
        )
        return row is not None

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        if not writes:
            return
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = configurable["checkpoint_id"]
        special = all(channel in WRITES_IDX_MAP for channel, _ in writes)
        interrupted = any(channel == INTERRUPT for channel, _ in writes)
        counted = [value for channel, value in writes if channel == "messages"] if checkpoint_ns == "" else []

        async def put_writes(db: Db, thread: ThreadItems) -> None:
            rows = []
            for idx, (channel, value) in enumerate(writes):
                stored = await self._encode(db, thread, thread_id, value)
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
            count = _count_messages(counted) if counted else None
            await self._store_writes(db, thread_id, rows, special, interrupted, count)

        await self._write_thread(thread_id, put_writes)

    async def _write_thread(
        self, thread_id: str, work: Callable[[Db, ThreadItems], Awaitable[None]]
    ) -> None:
        """Run one write of a thread, in submission order, retrying once if the cache was stale."""
        async with self._thread_lock(thread_id):
            for attempt in (1, 2):
                try:
                    async with self._write_unit(thread_id) as db:
                        await work(db, await self._touch_thread(db, thread_id))
                    return
                except StaleThreadError:
                    # Deleted (and maybe re-created) by another process since this one cached it.
                    self.items.drop(thread_id)
                    if attempt == 2:
                        raise

    def _write_unit(self, thread_id: str) -> AbstractAsyncContextManager[Db]:
        """The connection for one put or put_writes of `thread_id`: a transaction, unless the dialect
        makes each of them one atomic statement after idempotent item inserts."""
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
        count: tuple[int, int, str | None] | None,
    ) -> None:
        await db.executemany(self.q.UPSERT_WRITE if special else self.q.INSERT_WRITE, rows)
        if interrupted:
            await db.execute(self.q.SET_THREAD_STATUS, ("interrupted", thread_id))
        if count is not None:
            clear, delta, preview = count
            await db.execute(self.q.COUNT_WRITTEN_MESSAGES, (clear, delta, delta, preview, thread_id))

    # -- reads -------------------------------------------------------------------------------------

    async def _tuples(
        self, db: Db, rows: Sequence[Sequence[Any]]
    ) -> list[CheckpointTuple]:
        """Checkpoint tuples for checkpoint rows, loading their channel values, items and writes in bulk.

        A row is (thread_id, ns, id, parent_id, checkpoint, metadata, incarnation).
        """
        if not rows:
            return []
        parsed = []
        wanted: list[dict[str, str]] = []
        for thread_id, ns, cid, parent_id, checkpoint, metadata, incarnation in rows:
            checkpoint = {"id": cid, **self.codec.loads(checkpoint)}
            metadata = self.codec.loads(metadata)
            parsed.append((thread_id, ns, cid, parent_id, checkpoint, metadata, incarnation))
            for channel, version in checkpoint["channel_versions"].items():
                wanted.append({"t": thread_id, "n": ns, "c": channel, "v": str(version)})
        values: dict[tuple[str, str, str, str], tuple[str, Any, bytes | None]] = {}
        if wanted:
            for thread_id, ns, channel, version, kind, value, blob in await db.fetchall(
                self.q.SELECT_CHANNEL_VALUES, (self._json_param(json.dumps(wanted)),)
            ):
                values[(thread_id, ns, channel, version)] = (kind, value, blob)
        keys = [{"t": r[0], "n": r[1], "c": r[2]} for r in parsed]
        writes: dict[tuple[str, str, str], list[tuple[str, str, str, Any, bytes | None]]] = {}
        for thread_id, ns, cid, task_id, channel, kind, value, blob in await db.fetchall(
            self.q.SELECT_WRITES_FOR, (self._json_param(json.dumps(keys)),)
        ):
            writes.setdefault((thread_id, ns, cid), []).append((task_id, channel, kind, value, blob))

        # Items are loaded once per thread for the whole page, then shared.
        caches: dict[str, ThreadItems] = {}
        needed: dict[str, set[int]] = {}
        for thread_id, *_rest, incarnation in parsed:
            caches.setdefault(thread_id, self.items.get(thread_id, incarnation))
        for (thread_id, _ns, _c, _v), (kind, value, _b) in values.items():
            if kind in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                needed.setdefault(thread_id, set()).update(from_ranges(self._ranges_of(kind, value)))
        for (thread_id, _ns, _cid), entries in writes.items():
            for _t, _ch, kind, value, _b in entries:
                if kind in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                    needed.setdefault(thread_id, set()).update(
                        from_ranges(self._ranges_of(kind, value))
                    )
        for thread_id, numbers in needed.items():
            await self._load_items(db, caches[thread_id], thread_id, numbers)

        decoded: dict[tuple[str, str, str, str], Any] = {}
        out = []
        for thread_id, ns, cid, parent_id, checkpoint, metadata, _inc in parsed:
            thread = caches[thread_id]
            channel_values: dict[str, Any] = {}
            for channel, version in checkpoint["channel_versions"].items():
                key = (thread_id, ns, channel, str(version))
                stored = values.get(key)
                if stored is None or stored[0] == KIND_EMPTY:
                    continue
                if key not in decoded:
                    decoded[key] = self._decode(thread, *stored)
                value = decoded[key]
                channel_values[channel] = list(value) if type(value) is list else value
            checkpoint["channel_values"] = channel_values
            pending = [
                (task_id, channel, self._decode(thread, kind, value, blob))
                for task_id, channel, kind, value, blob in writes.get((thread_id, ns, cid), [])
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

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = get_checkpoint_id(config)
        async with self._read() as db:
            if checkpoint_id:
                row = await db.fetchone(
                    self.q.SELECT_CHECKPOINT, (thread_id, checkpoint_ns, checkpoint_id)
                )
            else:
                row = await db.fetchone(self.q.SELECT_LATEST_CHECKPOINT, (thread_id, checkpoint_ns))
            if row is None:
                return None
            tuples = await self._tuples(db, [row])
        return tuples[0]

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
            params.append(str(configurable["thread_id"]))
            if configurable.get("checkpoint_ns") is not None:
                clauses.append(self.q.WHERE_NS)
                params.append(configurable["checkpoint_ns"])
            if checkpoint_id := get_checkpoint_id(config):
                clauses.append(self.q.WHERE_ID)
                params.append(checkpoint_id)
        if filter:
            for key in filter:
                if not _FILTER_KEY.match(key):
                    raise ValueError(f"invalid metadata filter key {key!r}")
            filter_clauses, filter_params = self._metadata_filter_sql(filter)
            clauses += filter_clauses
            params += filter_params
        if before is not None and (before_id := get_checkpoint_id(before)):
            clauses.append(self.q.WHERE_BEFORE)
            params.append(before_id)
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
            async with self._read() as db:
                rows = await db.fetchall(self.q.LIST_CHECKPOINTS.format(where=where), (*page_params, size))
                tuples = await self._tuples(db, rows)
            for tup in tuples:
                yield tup
            if len(rows) < size:
                return
            if remaining is not None:
                remaining -= len(rows)
            last_row = rows[-1]
            last = (last_row[0], last_row[1], last_row[2])

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

    # -- deleting, copying, pruning ----------------------------------------------------------------

    async def adelete_thread(self, thread_id: str) -> None:
        thread_id = str(thread_id)
        async with self._write() as db:
            for sql in self.q.DELETE_THREAD:
                await db.execute(sql, (thread_id,))
        self.items.drop(thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        source, target = str(source_thread_id), str(target_thread_id)
        async with self._write() as db:
            row = await db.fetchone(self.q.SELECT_THREAD, (source,))
            if row is None:
                return
            for sql in self.q.DELETE_THREAD:
                await db.execute(sql, (target,))
            await db.execute(
                self.q.COPY_THREAD_ROW, (target, random.randbytes(8).hex(), self._ts(_now()), source)
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
        for thread_id in map(str, thread_ids):
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
            await self._collect_garbage(db, thread_id)

    async def _collect_garbage(self, db: Db, thread_id: str) -> None:
        """Delete channel values no checkpoint refers to and items no value refers to; fix counters."""
        referenced: set[tuple[str, str, str]] = set()
        for ns, versions in await db.fetchall(self.q.SELECT_THREAD_VERSIONS, (thread_id,)):
            versions = json.loads(versions) if isinstance(versions, str) else versions
            referenced.update((ns, ch, str(v)) for ch, v in versions.items())
        live_items: set[int] = set()
        for ns, channel, version, kind, value in await db.fetchall(
            self.q.SELECT_THREAD_VALUE_KEYS, (thread_id,)
        ):
            if (ns, channel, version) not in referenced:
                await db.execute(self.q.DELETE_CHANNEL_VALUE, (thread_id, ns, channel, version))
            elif kind in (KIND_ITEMS, KIND_DELTA, KIND_JSON):
                live_items.update(from_ranges(self._ranges_of(kind, value)))
        for kind, value in await db.fetchall(self.q.SELECT_THREAD_WRITE_REFS, (thread_id,)):
            live_items.update(from_ranges(self._ranges_of(kind, value)))
        stored = [r[0] for r in await db.fetchall(self.q.SELECT_THREAD_ITEM_NUMBERS, (thread_id,))]
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

    # -- sync bridges ------------------------------------------------------------------------------

    def _run(self, coro: Any) -> Any:
        loop = self.loop
        if loop is None or not loop.is_running():
            coro.close()
            raise RuntimeError("the saver's event loop is not running; open it with open_checkpointer()")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            coro.close()
            raise RuntimeError(
                "sync saver methods cannot run on the saver's own event loop; "
                "use the async methods (e.g. `await saver.aget_tuple(...)`)"
            )
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._run(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        iterator = self.alist(config, filter=filter, before=before, limit=limit)
        while True:
            try:
                yield self._run(anext(iterator))
            except StopAsyncIteration:
                return

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._run(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._run(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._run(self.adelete_thread(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._run(self.acopy_thread(source_thread_id, target_thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._run(self.adelete_for_runs(run_ids))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._run(self.aprune(thread_ids, strategy=strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return self._run(self.aget_delta_channel_history(config=config, channels=channels))
