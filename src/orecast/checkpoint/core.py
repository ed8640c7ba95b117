"""The part of the saver every other part builds on: what a dialect provides, and versions.

Storage model (see `encoding.py` and docs/checkpoint.md): one row per checkpoint (its JSON without channel
values), one row per channel *version*, and list channels such as `messages` stored as references to
per-thread items, each message stored once — so a conversation's storage grows linearly.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import random
import re
import weakref
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Protocol, Self

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
)

from orecast.checkpoint import migrations
from orecast.checkpoint.cache import ItemCache
from orecast.checkpoint.encoding import (
    CorruptRowError,
    TaggedJson,
    strict_serializer,
)
from orecast.checkpoint.upcast import StateSchema

SCHEMA_VERSION_DEFAULT = 1
PAGE_SIZE = 100
# Where a dialect keeps small channel values in the checkpoint's own row (`inline_values`):
# the stored document's key {channel: [kind, JSON text]}, and how long that JSON text may be.
INLINE_KEY = "vals"
INLINE_MAX_CHARS = 200
# The stored document's key for the number of messages in a root checkpoint's state, where the put
# knew it: the thread's count after a put that forks from an earlier checkpoint is that one's plus
# what was written for it, not the head's plus that.
MESSAGE_COUNT = "msgs"
FILTER_KEY = re.compile(r"^[A-Za-z0-9_.-]+$")
# Metadata LangGraph adds per checkpoint; the rest of the first checkpoint's metadata seeds the thread's.
CHECKPOINT_ONLY_METADATA = {"source", "step", "parents", "run_id", "counters_since_delta_snapshot", "writes"}
MISSING = object()
# LangGraph copies every plain `configurable` value into checkpoint metadata; a key named like a
# credential is dropped so a secret passed in the run config is never stored.
SECRET_KEY = re.compile(r"api[_-]?key|token|secret|passw|authori[sz]ation|credential|cookie", re.I)


def without_secrets(metadata: Mapping[str, Any]) -> dict[str, Any]:
    kept = {}
    for k, v in metadata.items():  # (every put: a loop costs less than a comprehension's frame)
        if not _secret_key(k):
            kept[k] = v
    return kept


@functools.lru_cache(maxsize=1024)
def _secret_key(key: str) -> bool:
    # every put checks its metadata's keys, nearly always the same few
    return SECRET_KEY.search(key) is not None


class Db(Protocol):
    """The few calls the shared logic needs from a connection (one transaction or one read)."""

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None: ...
    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...
    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None: ...
    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...


def put_parameters(checkpoint_row: Sequence[Any], record: Sequence[Any]) -> dict[str, Any]:
    """A put's checkpoint row and thread record (as `_store_put` gets them) as the named parameters of
    the dialects that store a put with named-parameter statements (PostgreSQL, MySQL)."""
    thread_id, ns, checkpoint_id, parent_id, checkpoint, metadata, run_id, schema_version = checkpoint_row
    now, seed, head, clear, message_count, preview, root, _cid, _tid, incarnation = record
    return {
        "thread_id": thread_id,
        "ns": ns,
        "incarnation": incarnation,
        "checkpoint_id": checkpoint_id,
        "parent_id": parent_id,
        "checkpoint": checkpoint,
        "metadata": metadata,
        "run_id": run_id,
        "schema_version": schema_version,
        "now": now,
        "seed": seed,
        "head": head,
        "clear": clear,
        "message_count": message_count,
        "preview": preview,
        "root": root,
    }


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_datetime(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


# langgraph.graph.message's RemoveMessage id that clears the list (tests/checkpoint/test_graphs.py checks
# it is LangGraph's): importing it from there loads all of langgraph.graph, ~0.6 s of CPU for
# every `orecast db …` or `orecast threads …` process, which never builds a graph.
REMOVE_ALL_MESSAGES = "__remove_all__"

PREVIEW_CHARS = 200
PREVIEW_SCAN = 1000  # characters of a message's text read for its preview, unless they collapse to fewer
PREVIEW_FIRST_SCAN = 256  # read first (a preview of text without runs of whitespace needs 200)


def message_text(message: Any) -> str | None:
    if not isinstance(message, BaseMessage):
        return None
    content = message.content
    if isinstance(content, str):
        if len(content) > PREVIEW_CHARS:
            head = content[: PREVIEW_CHARS + 1]
            # Printable text has no whitespace but " " (nor NUL): with no run of spaces and no space
            # first, its first 200 characters are the collapsed text's (the usual message).
            if head.isprintable() and "  " not in head and head[0] != " ":
                return content[:PREVIEW_CHARS]
        # A preview is 200 characters of the text with its whitespace collapsed, which the start of a
        # long message gives as well (the collapsed start is a prefix of the collapsed whole): a
        # little more than 200 characters nearly always, else up to PREVIEW_SCAN, else all of it.
        for scan in (PREVIEW_FIRST_SCAN, PREVIEW_SCAN):
            start = " ".join(content[:scan].replace("\x00", " ").split())
            if len(start) >= PREVIEW_CHARS:
                return start[:PREVIEW_CHARS]
            if len(content) <= scan:
                break
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
    return text[:PREVIEW_CHARS] or None


def count_messages(values: list[Any]) -> tuple[int, int, str | None]:
    """(clear, change, preview) of written messages: how the thread's message count moves.

    DeltaChannel message lists are stored whole only at snapshots; between them the count and the
    preview follow the written messages.
    """
    clear, delta = 0, 0
    written: list[BaseMessage] = []
    for value in values:
        if type(value) is list and _only_messages(value):
            # by type, in C: a subgraph's output writes the thread's whole list back to its parent
            delta += len(value)
            written += value
            continue
        for message in value if isinstance(value, list) else [value]:
            if isinstance(message, RemoveMessage):
                if message.id == REMOVE_ALL_MESSAGES:
                    clear, delta = 1, 0
                else:
                    delta -= 1
            elif isinstance(message, BaseMessage):
                delta += 1
                written.append(message)
    # The preview is the last message with text: look from the end, so a node that writes back the
    # whole history (a subgraph's output) costs one message's text, not the thread's.
    preview = next((text for m in reversed(written) if (text := message_text(m))), None)
    return clear, delta, preview


def _only_messages(values: list[Any]) -> bool:
    """Whether every element is a message and none a RemoveMessage."""
    # A long list (a subgraph's whole history) by its set of types, in C; a short one in a plain loop.
    for t in set(map(type, values)) if len(values) > 8 else map(type, values):
        if not issubclass(t, BaseMessage) or issubclass(t, RemoveMessage):
            return False
    return True


def combine_counts(changes: Iterable[tuple[int, int, str | None]]) -> tuple[int, int, str | None]:
    """One (clear, change, preview) for several, applied in order."""
    clear, delta, preview = 0, 0, None
    for this_clear, this_delta, this_preview in changes:
        if this_clear:
            clear, delta = 1, this_delta
        else:
            delta += this_delta
        preview = this_preview or preview
    return clear, delta, preview


class WriteOrder:
    """The order one thread's writes take turns in: first come, first served, except that a write that
    starts again (`StaleThreadError`) goes before every write that came after it."""

    __slots__ = ("_tickets", "_holder", "_waiting", "__weakref__")

    def __init__(self) -> None:
        self._tickets = 0
        self._holder: int | None = None
        self._waiting: list[tuple[int, asyncio.Future[None]]] = []  # by ticket

    def ticket(self) -> int:
        self._tickets += 1
        return self._tickets

    def locked(self) -> bool:
        return self._holder is not None

    async def acquire(self, ticket: int) -> None:
        while self._waiting and self._waiting[0][1].done():  # cancelled while waiting
            self._waiting.pop(0)
        if self._holder is None and (not self._waiting or self._waiting[0][0] > ticket):
            self._holder = ticket
            return
        waiter = asyncio.get_running_loop().create_future()
        bisect.insort(self._waiting, (ticket, waiter), key=lambda entry: entry[0])
        try:
            await waiter
        except asyncio.CancelledError:
            if not waiter.cancelled():  # its turn came, then it was cancelled: the next one's
                self.release()
            raise

    def release(self) -> None:
        self._holder = None
        while self._waiting:
            ticket, waiter = self._waiting.pop(0)
            if not waiter.done():  # (a cancelled waiter is skipped)
                self._holder = ticket
                waiter.set_result(None)
                return


class ThreadTurn:
    """One write's turn in its thread's `WriteOrder`: released once, when the write ends, or earlier by a
    dialect whose queue keeps a thread's statements in order (PostgreSQL's and MySQL's group commit,
    queued.py), once the write's last statement is in that queue. The thread's next write then prepares
    its statements while this one's are on their way."""

    __slots__ = ("_order", "_ticket", "held")

    def __init__(self, order: WriteOrder) -> None:
        self._order = order
        self._ticket = order.ticket()
        self.held = False

    async def acquire(self) -> None:
        await self._order.acquire(self._ticket)
        self.held = True

    async def __aenter__(self) -> ThreadTurn:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        if self.held:
            self.held = False
            self._order.release()


class StaleThreadError(Exception):
    """The thread row is not the incarnation this process cached: it was deleted elsewhere."""


class SaverCore(BaseCheckpointSaver[str]):
    """State and contract shared by the saver's parts; `OrecastCheckpointer` puts them together."""

    dialect: str = ""
    keeps_key_order: bool = False  # set where the JSON column type reorders object keys (JSONB)
    # The graph's state schema (`with_state_schema`); None: values are read as stored, never upcast.
    state_schema: StateSchema | None = None
    # Set where small channel values live in their checkpoint's row rather than a row each (INLINE_KEY).
    inline_values: bool = False

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
        self._write_orders: weakref.WeakValueDictionary[str, WriteOrder] = weakref.WeakValueDictionary()

    def _write_order(self, thread_id: str) -> WriteOrder:
        order = self._write_orders.get(thread_id)
        if order is None:
            order = self._write_orders[thread_id] = WriteOrder()
        return order

    @asynccontextmanager
    async def _thread_alone(self, thread_id: str) -> AsyncIterator[None]:
        """The thread's turn, once the writes it let go ahead early (`ThreadTurn`) have settled: for work
        that reads and rewrites the thread in a transaction of its own (prune, migrate-state)."""
        async with ThreadTurn(self._write_order(thread_id)):
            await self._writes_settled(thread_id)
            yield

    async def _writes_settled(self, thread_id: str) -> None:
        """Return once every write of `thread_id` this process queued has committed or failed (a dialect
        that releases a thread's lock before its write committed waits here)."""

    def with_state_schema(self, schema: StateSchema | None) -> Self:
        """This saver for a graph with `schema`: it records `schema.version` with every checkpoint and
        upcasts older values on every read. None: values are read as stored.

        The view is the same saver in all but its schema: it shares the very attribute dictionary of
        the saver it came from (connections, caches, locks, background tasks and their counters), so
        several graphs of one service each compile with their own view of one store.
        """
        base = getattr(type(self), "_state_view_of", type(self))
        attrs: dict[str, Any] = {"_state_view_of": base, "state_schema": property(lambda _view: schema)}
        if schema is not None:
            attrs["schema_version"] = property(lambda _view: schema.version)
        view = object.__new__(type(base.__name__, (base,), attrs))
        view.__dict__ = self.__dict__
        # Known, weakly (an export makes a view per thread), so that watching the saver later
        # (`observe.observe`) watches the views graphs already use.
        self.__dict__.setdefault("_state_views", weakref.WeakKeyDictionary())[view] = attrs
        return view

    def with_allowlist(self, extra_allowlist: Any) -> SaverCore:
        clone = super().with_allowlist(extra_allowlist)
        if clone is not self:
            assert isinstance(clone, SaverCore)
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

    @staticmethod
    @abstractmethod
    def _ts(value: datetime) -> Any:
        """A timestamp as the dialect stores it (static: tests write times as the saver does)."""

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

    migrations_package: str = ""  # the folder of this dialect's numbered migrations

    async def _lock_migrations(self, db: Db) -> None:
        """Serialise migrations across processes beyond what the write transaction does."""

    @staticmethod
    async def _read_again_if_torn(read: Callable[[], Awaitable[Any]]) -> Any:
        """`read()`, once more if it found a reference beyond the thread's items. The statements of a read
        each read what is committed when they run (autocommit on SQLite, READ COMMITTED elsewhere): a
        write another process committed between the one that read the thread's item count and the one
        that read the write refers to items that count did not include. A corrupt row fails again."""
        try:
            return await read()
        except CorruptRowError:
            return await read()

    async def setup(self) -> None:
        """Apply the numbered migrations of this dialect (idempotent, safe across processes)."""
        async with self._write() as db:
            await self._lock_migrations(db)
            await db.execute(self.q.CREATE_MIGRATIONS)
            row = await db.fetchone(self.q.SELECT_SCHEMA_VERSION)
            current = row[0] if row else 0
            for version, script in migrations.pending(self.migrations_package, current):
                for statement in migrations.statements(script):
                    await db.execute(statement)
                await db.execute(self.q.INSERT_MIGRATION, (version, self._ts(utc_now())))

    # -- versions ----------------------------------------------------------------------------------

    def get_next_version(self, current: str | float | int | None, channel: None) -> str:
        count = 0 if current is None else version_count(current)
        # LangGraph asks for a version per written channel: random.random() costs a tenth of randrange
        return f"{count + 1:032d}.{int(random.random() * 10**16):016d}"


# A channel version is "<count, 32 digits>.<random, 16 digits>": the number of updates of the channel,
# then a random part that keeps two forks' versions apart. It has the official savers' shape, so
# versions compare as strings in update order, also against threads they wrote (their random part is
# `random.random()`). Stores written by earlier orecast versions hold floats, count + random / 10**6
# (e.g. 3.139121); they are read as "<count, 32 digits>.<random, 6 digits>" and their values stay
# stored under the float's text, which `version_key` computes back from that string.
# Stored, a version drops the leading zeros of its count ("15.5719447354942698"): a checkpoint row
# holds about ten versions, and the zeros were a third of its bytes. LangGraph always gets them back
# padded. A checkpoint stored so says `SHORT_VERSIONS`; the `version` column of channel values holds the
# short form (`version_key`; migrations sqlite/003, postgres/004 shortened older rows).
# The shapes are told apart by string methods rather than regular expressions: every put and read
# checks every version of its checkpoint (`isdecimal` is what `\d` matches).
SHORT_VERSIONS = "short_versions"


def version_count(version: str | float | int) -> int:
    return int(version.split(".")[0]) if isinstance(version, str) else int(version)


def version_string(version: str | float | int) -> str | float | int:
    """A version as LangGraph gets it from this store: an earlier orecast's float as a string."""
    if type(version) is not float:
        return version  # a string, or an int some other writer chose: handed back as stored
    count = int(version)
    fraction = round((version - count) * 1_000_000)
    if count + fraction / 1_000_000 != version:
        return version  # not a float orecast wrote
    return f"{count:032d}.{fraction:06d}"


def _padded_parts(version: str) -> tuple[str, str] | None:
    """(count, "." + random) of a version "<32 digits>.<16 digits>", else None."""
    if len(version) == 49 and version[32] == "." and version[:32].isdecimal() and version[33:].isdecimal():
        return version[:32], version[32:]
    return None


def _short_parts(version: str) -> tuple[str, str] | None:
    """(count, "." + random) of a short version: a count without leading zeros (1–31 digits), then
    "." and 16 digits; else None."""
    size = len(version)
    if not (18 <= size <= 48 and version[-17] == "." and version[-16:].isdecimal()):
        return None
    count = version[:-17]
    if count != "0" and not (count[0] in "123456789" and (len(count) == 1 or count[1:].isdecimal())):
        return None
    return count, version[-17:]


# Each version string is converted a handful of times (a channel's version sits in several checkpoints
# and in `versions_seen`; every put and read converts all of a checkpoint's): the conversions of
# strings are pure, so they are memoised, bounded. Only strings go through them (1 and 1.0 would share
# an entry).
_MEMO_SIZE = 4096
# `_shortened`'s answer for a string that already has the short form.
_SHORT_ALREADY = object()


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _shortened(version: str) -> Any:
    """The short form of a padded version; any other string as it is, or _SHORT_ALREADY when it has
    the short form (a padded version never has it)."""
    padded = _padded_parts(version)
    if padded is not None:
        return (padded[0].lstrip("0") or "0") + padded[1]
    return _SHORT_ALREADY if _short_parts(version) is not None else version


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _padded_string(version: str) -> str:
    short = _short_parts(version)
    return version if short is None else short[0].zfill(32) + short[1]


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _string_key(version: str) -> str:
    # an earlier orecast's float version, read as "<count, 32 digits>.<random, 6 digits>"
    if len(version) == 39 and version[32] == "." and version[:32].isdecimal() and version[33:].isdecimal():
        return str(int(version[:32]) + int(version[33:]) / 1_000_000)
    padded = _padded_parts(version)
    return version if padded is None else (padded[0].lstrip("0") or "0") + padded[1]


def version_key(version: str | float | int) -> str:
    """The `version` column of a channel value stored under `version`."""
    return _string_key(version) if type(version) is str else str(version)


def with_short_versions(checkpoint: dict[str, Any]) -> dict[str, Any]:
    """`checkpoint` (a copy of what LangGraph gave, to be stored) with its versions short.

    Left as it is if a version already has the short form (another writer's): reads could not tell it
    from a shortened one.
    """
    # Plain loops: comprehensions and generators cost a frame each, more than these few versions.
    versions = checkpoint.get("channel_versions", {})
    seen = checkpoint.get("versions_seen", {})
    short: dict[str, Any] = {}
    short_seen: dict[str, dict[str, Any]] = {}
    pairs = [(versions, short)]  # (versions as given, the same shortened)
    for node, node_versions in seen.items():
        short_seen[node] = short_node = {}
        pairs.append((node_versions, short_node))
    for given, shortened in pairs:
        for channel, version in given.items():
            if type(version) is str:
                version = _shortened(version)
                if version is _SHORT_ALREADY:
                    return checkpoint
            shortened[channel] = version
    if short != versions or short_seen != seen:
        checkpoint["channel_versions"], checkpoint["versions_seen"] = short, short_seen
        checkpoint[SHORT_VERSIONS] = 1
    return checkpoint


def with_string_versions(checkpoint: dict[str, Any]) -> dict[str, Any]:
    """`checkpoint`, as read, with its versions as LangGraph wants them: short ones padded again, and
    the float versions of an older store as strings (see `version_string`)."""
    short = checkpoint.pop(SHORT_VERSIONS, None)
    versions = checkpoint.get("channel_versions", {})
    seen = checkpoint.get("versions_seen", {})
    padded: dict[str, Any] = {}
    padded_seen: dict[str, dict[str, Any]] = {}
    pairs = [(versions, padded)]  # (versions as stored, the same as LangGraph wants them)
    for node, node_versions in seen.items():
        padded_seen[node] = padded_node = {}
        pairs.append((node_versions, padded_node))
    floats = False
    for stored, wanted in pairs:
        for channel, version in stored.items():
            if type(version) is str:
                version = _padded_string(version) if short else version
            elif type(version) is float:
                floats = True
                version = version_string(version)
            wanted[channel] = version
    if short or floats:
        checkpoint["channel_versions"], checkpoint["versions_seen"] = padded, padded_seen
    return checkpoint
