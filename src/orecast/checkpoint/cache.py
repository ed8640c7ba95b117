"""Per-thread memory of stored items, so a put does not re-encode the history it already stored.

Items are immutable once written (content-addressed inside a thread). Each item has a private
*pristine* copy, never handed out. Reads share one decoded object per item (never an object the graph
passed to a put), without copying it on every read: an object a caller edited in place differs from
the pristine copy, and is then neither handed out again nor taken for the stored item by a put (which
stores its new content instead). A thread's cache is keyed by its
*incarnation*: deleting and re-creating a thread (here or in another process) gives it a new incarnation
and the old cache is never consulted again.
"""

from __future__ import annotations

import copy
import gc
import operator
import struct
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from orecast.checkpoint.encoding import MESSAGE_CLASSES, from_ranges

MISSING = object()
_ATOMS = frozenset((str, int, float, bool, type(None), bytes))
# How many checkpoints' written messages a thread remembers (a turn needs its head's; forks re-read).
WRITTEN_CHECKPOINTS = 16
# Root checkpoints whose message count a thread's cache keeps (`ThreadItems.counts`): a fork usually
# starts from a checkpoint read or stored lately.
COUNTED_CHECKPOINTS = 256
# Channels (per namespace) whose last encoding a thread's cache keeps: a subgraph's namespace is new at
# each turn, so the oldest go first.
ENCODED_CHANNELS = 256

# (clear, change, preview): how a write moves the message count (see core.count_messages).
CountChange = tuple[int, int, str | None]


@dataclass
class WrittenMessages:
    """The `messages` writes stored for one checkpoint of the root namespace, as count changes.

    They move the thread's message count only when the checkpoint that applies them (the child) is
    stored. `complete` once this process stored the checkpoint itself: the run that writes for it is
    then this process's, so every write for it went through here; otherwise they are read back.
    """

    complete: bool = False
    # (task_path, task_id, idx) -> change: a write stored again replaces itself instead of adding up
    changes: dict[tuple[str, str, int], CountChange] = field(default_factory=dict)

# Checkpoints whose state versions a thread remembers: a subagent's steps (namespaces of their own)
# come between the parent's read and its next put, and a miss costs the put a query.
STATE_VERSIONS = 64
MAX_LISTS = 16  # lists remembered per thread for prefix matching (see `known_prefix`)


def unchanged(obj: Any, pristine: Any) -> bool:
    """Whether `obj` still equals its pristine copy (it may have been edited in place since).

    Checked for every item of a list on every put, so messages are compared by their field dicts in C:
    pydantic's own `__eq__` does the same after Python-level checks that cost three times as much. A
    message whose dict holds more than its fields compares unequal, which only makes a put store it
    again.
    """
    if type(obj) is not type(pristine):
        return False
    if isinstance(obj, BaseMessage):
        return (
            obj.__dict__ == pristine.__dict__
            and obj.__pydantic_extra__ == pristine.__pydantic_extra__
            and obj.__pydantic_private__ == pristine.__pydantic_private__
        )
    return bool(obj == pristine)


# What `unchanged` compares of a message, each fetched in C for a whole list at once.
_FIELDS = operator.attrgetter("__dict__")
_EXTRA = operator.attrgetter("__pydantic_extra__")
_PRIVATE = operator.attrgetter("__pydantic_private__")
# A compared state's marker for an object that is not a message (compared as a whole).
_WHOLE = object()

# (type, fields, extra, private) of a message's pristine copy; (type, copy, _WHOLE, None) otherwise.
State = tuple[type, Any, Any, Any]


def compared_state(pristine: Any) -> State:
    """What a check compares an object with: its pristine copy's type and, for a message, the fields
    `unchanged` compares (fetched once: a pristine copy never changes), else the copy itself."""
    if isinstance(pristine, BaseMessage):
        if type(pristine) not in _LISTED_IN_ORDER:
            _LISTED_IN_ORDER[type(pristine)] = _listed_in_order(pristine)
        return type(pristine), pristine.__dict__, pristine.__pydantic_extra__, pristine.__pydantic_private__
    return type(pristine), pristine, _WHOLE, None


# The parts `gc.get_referents` lists for a message (`_listed_in_order`), and where a check finds them.
_PARTS = 5
_EXTRA_AT, _PRIVATE_AT, _FIELDS_AT = 0, 2, 3
# Per message class: whether its instances list their parts as `_listed_in_order` says.
_LISTED_IN_ORDER: dict[type, bool] = {}


def _listed_in_order(message: BaseMessage) -> bool:
    """Whether `gc.get_referents` lists every instance of the message's class as [extra, fields set,
    private, fields, class], or a part fewer where one holds nothing.

    It lists what CPython's collector visits in an instance of a class defined in Python: its slots
    (pydantic's `BaseModel` has three), its dict once made (pydantic keeps the fields there and always
    makes it; a check only meets objects whose dict it has read or set), then its class. An instance
    larger than a `BaseModel`'s by more than a `__weakref__` (which is not visited) has a slot more, so
    such classes are left out; the order is read off one instance. Checked against CPython 3.11–3.13
    (3.11 and 3.12 list an instance's attributes one by one until its dict is made, which pydantic
    does at once; 3.13 keeps no attributes outside the dict for a class with slots): a later version
    fetches attribute by attribute until it is checked too.
    """
    cls = type(message)
    if sys.version_info >= (3, 14) or sys.implementation.name != "cpython":
        return False
    weakref = struct.calcsize("P") if cls.__weakrefoffset__ and not BaseModel.__weakrefoffset__ else 0
    if cls.__basicsize__ - weakref != BaseModel.__basicsize__ or cls.__itemsize__:
        return False
    expected = (
        message.__pydantic_extra__,
        message.__pydantic_fields_set__,
        message.__pydantic_private__,
        message.__dict__,
        cls,
    )
    parts = gc.get_referents(message)
    return len(parts) == _PARTS and all(map(operator.is_, parts, expected))


@dataclass(frozen=True, slots=True)
class Pristine:
    """The compared states of a list's items, column by column.

    A put checks the whole message list against the pristine copies (and a read the items it hands
    out), about ten times a turn. Comparing column against column (every type, then every message's
    fields, extra and private attributes) is one C-level list comparison each, with no tuple built per
    item, and a remembered list keeps its columns, so a check does not gather them item by item again.
    """

    types: list[type]
    fields: list[Any]
    extras: list[Any]
    privates: list[Any]
    # every item a message (True), none (False) or some (None)
    messages: bool | None
    # every item a message the codec stores as its fields and extra attributes (`model_dump`)
    dumped: bool
    # every item a message of a class whose parts `gc.get_referents` lists in order (`_listed_in_order`)
    listed: bool = False

    @classmethod
    def of(cls, states: list[State]) -> Pristine:
        if not states:
            return NO_ITEMS
        types, fields, extras, privates = map(list, zip(*states, strict=True))
        whole = extras.count(_WHOLE)  # (only messages' extras and the marker: no user `__eq__` runs)
        messages = True if not whole else False if whole == len(extras) else None
        classes = set(types)
        dumped = messages is True and all(MESSAGE_CLASSES.get(t.__name__) is t for t in classes)
        listed = messages is True and all(_LISTED_IN_ORDER.get(t, False) for t in classes)
        return cls(types, fields, extras, privates, messages, dumped, listed)

    def extended(self, more: Pristine) -> Pristine:
        if not more.types:
            return self
        if not self.types:
            return more
        messages = self.messages if self.messages == more.messages else None
        return Pristine(
            self.types + more.types,
            self.fields + more.fields,
            self.extras + more.extras,
            self.privates + more.privates,
            messages,
            self.dumped and more.dumped,
            self.listed and more.listed,
        )


NO_ITEMS = Pristine([], [], [], [], False, False)


def all_unchanged(objs: list[Any], pristine: Pristine, *, private: bool = True) -> bool:
    """`unchanged` for each object against the pristine copy of the same position.

    `private=False` leaves out the messages' private attributes where the codec stores each message as
    its fields and extra attributes (`model_dump`): they cannot make a stored item differ then.

    Messages' parts are fetched in one C call, `gc.get_referents`, where their classes list them in
    order: an attribute fetch goes through pydantic's `__getattr__` hook, and fetching two parts of each
    message one by one was a quarter of the check (1.1 k of 4.0 k instructions a message).
    """
    if list(map(type, objs)) != pristine.types:
        return False
    if pristine.listed:
        parts = gc.get_referents(*objs)
        # Each object is of its pristine copy's class, so it lists at most `_PARTS` parts: with `_PARTS`
        # each, every object's parts are at the same offsets.
        if len(parts) == _PARTS * len(objs):
            return (
                parts[_FIELDS_AT::_PARTS] == pristine.fields
                and parts[_EXTRA_AT::_PARTS] == pristine.extras
                and ((not private and pristine.dumped) or parts[_PRIVATE_AT::_PARTS] == pristine.privates)
            )
    if pristine.messages:
        return (
            list(map(_FIELDS, objs)) == pristine.fields
            and list(map(_EXTRA, objs)) == pristine.extras
            and ((not private and pristine.dumped) or list(map(_PRIVATE, objs)) == pristine.privates)
        )
    if pristine.messages is False:
        return list(objs) == pristine.fields
    return all(map(_unchanged_from_state, objs, pristine.fields, pristine.extras, pristine.privates))


def _unchanged_from_state(obj: Any, fields: Any, extra: Any, private: Any) -> bool:
    # (the types are equal: `all_unchanged` compared them first)
    if extra is _WHOLE:
        return bool(obj == fields)
    return bool(_FIELDS(obj) == fields and _EXTRA(obj) == extra and _PRIVATE(obj) == private)


def _clone(value: Any) -> Any:
    t = type(value)
    if t in _ATOMS:
        return value
    # A shallow copy in C, then only the containers copied again: most of a message's values are
    # strings, numbers or None, and a call (or a comprehension's store) for each was most of a copy
    # (eight a turn).
    if t is dict:
        new = value.copy()
        for k, v in value.items():
            if type(v) not in _ATOMS:
                new[k] = _clone(v)
        return new
    if t is list:
        new = value.copy()
        for i, v in enumerate(value):
            if type(v) not in _ATOMS:
                new[i] = _clone(v)
        return new
    return copy.deepcopy(value)


def pristine_copy(obj: Any) -> Any:
    """A deep copy of `obj`: a message is rebuilt as pydantic's `__deepcopy__` does, but its JSON-like
    fields are copied without deepcopy's bookkeeping (a third of its time)."""
    if not isinstance(obj, BaseMessage):
        return copy.deepcopy(obj)
    new = type(obj).__new__(type(obj))
    object.__setattr__(new, "__dict__", _clone(obj.__dict__))
    object.__setattr__(new, "__pydantic_extra__", _clone(obj.__pydantic_extra__))
    object.__setattr__(new, "__pydantic_fields_set__", set(obj.__pydantic_fields_set__))
    object.__setattr__(new, "__pydantic_private__", _clone(obj.__pydantic_private__))
    return new


class Tally:
    """The number of items cached by an `ItemCache`'s threads, kept as they grow: summing every
    thread's size at each lookup cost a pass over all cached threads (thousands in a server)."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items = 0


@dataclass
class ThreadItems:
    incarnation: str
    # The cache's tally while this entry is in it (None once evicted or dropped: a write still holding
    # the entry may go on adding items, which then count nowhere).
    tally: Tally | None = None
    by_number: dict[int, Any] = field(default_factory=dict)
    pristine: dict[int, Any] = field(default_factory=dict)
    # `compared_state` of each pristine copy
    states: dict[int, State] = field(default_factory=dict)
    by_hash: dict[str, int] = field(default_factory=dict)
    # id(obj) -> (obj, item_no); holding obj keeps id() unique while cached.
    by_identity: dict[int, tuple[Any, int]] = field(default_factory=dict)
    # The last list stored or read per (namespace, channel), its ranges and its items' compared states
    # (None until a check needs them): an appended list is matched by one C-level prefix scan, and only
    # its new suffix is encoded.
    last_lists: dict[tuple[str, str], tuple[list[Any], list[list[int]], Pristine | None]] = field(
        default_factory=dict
    )
    # For DeltaChannel history walks: each checkpoint's parent and channel versions, and whether a
    # channel version holds a stored value. Both are fixed once the checkpoint is stored (a re-put of
    # the same checkpoint drops its entry), so history reads walk shared chains in memory.
    ancestry: dict[tuple[str, str], tuple[str | None, dict[str, Any]]] = field(default_factory=dict)
    populated: dict[tuple[str, str, str], bool] = field(default_factory=dict)
    written: dict[str, WrittenMessages] = field(default_factory=dict)
    # Root checkpoint id -> the number of messages in its state, as stored in its document
    # (core.MESSAGE_COUNT) or put by this process: a put whose messages are a DeltaChannel's writes
    # counts from its parent's, so a fork does not add them to the head's count.
    counts: dict[str, int] = field(default_factory=dict)
    # (ns, checkpoint id) -> (state schema version, older values) of checkpoints read or stored lately: a
    # put knows which values its parent refers to that an older schema wrote (see upcast.py).
    state_versions: dict[tuple[str, str], tuple[int, dict[str, int]]] = field(default_factory=dict)
    # Where values live in their checkpoint's row (core.INLINE_KEY): per (namespace, channel), the
    # last value put or resumed, as (version key, kind, JSON text, kept in the row), so a put copies an
    # unchanged value into its row without encoding it again (kind None: that version has no value).
    encoded: dict[tuple[str, str], tuple[str, str | None, str | None, bool]] = field(default_factory=dict)
    # The ranges a read checked last and their items' compared states (see `known_pristine`).
    read_pristine: tuple[list[list[int]], Pristine] | None = None
    # The thread's next item number as this process last saw it (0: unknown). A dialect may number new
    # items with it and store them in the statement that refers to them (PostgreSQL does).
    next_item: int = 0
    # Set when a write prepared with this entry failed after the thread's next write had started from
    # it (a dialect that lets writes go ahead early, `core.ThreadTurn`): the entry may name items and
    # checkpoints that were never stored, so the cache no longer hands it out.
    stale: bool = False
    # The thread's `core.WriteOrder`, which the saver knows only weakly: kept alive while the thread is
    # cached, it is not made again (with its weak reference) for each write of a turn.
    write_order: Any = None

    def written_at(self, checkpoint_id: str) -> WrittenMessages:
        entry = self.written.get(checkpoint_id)
        if entry is None:
            entry = self.written[checkpoint_id] = WrittenMessages()
            while len(self.written) > WRITTEN_CHECKPOINTS:
                del self.written[min(self.written)]  # ids sort by time: forget the oldest
        return entry

    def knows_every_hash(self) -> bool:
        """Whether `by_hash` holds every item the thread has numbered (1 to next_item - 1): then an
        encoding it does not hold is a new item. Items read (not stored) by this process are known by
        number only, and a number lost to a failed write leaves a gap, so this errs towards False."""
        return len(self.by_hash) >= self.next_item - 1

    def counted(self, checkpoint_id: str, count: int) -> None:
        self.counts.pop(checkpoint_id, None)
        self.counts[checkpoint_id] = count
        if len(self.counts) > COUNTED_CHECKPOINTS:
            del self.counts[next(iter(self.counts))]

    def remember_state_version(self, key: tuple[str, str], version: int, older: dict[str, int]) -> None:
        self.state_versions.pop(key, None)
        self.state_versions[key] = (version, older)
        while len(self.state_versions) > STATE_VERSIONS:
            del self.state_versions[next(iter(self.state_versions))]

    def encoding(self, key: tuple[str, str], entry: tuple[str, str | None, str | None, bool]) -> None:
        """Remember what (namespace, channel) holds at a version: `encoded`'s entry."""
        self.encoded.pop(key, None)
        self.encoded[key] = entry
        if len(self.encoded) > ENCODED_CHANNELS:
            del self.encoded[next(iter(self.encoded))]

    def loaded(self, number: int, obj: Any, pristine: Any) -> None:
        """Item `number`, read from the database: `obj` for readers, `pristine` an equal private copy."""
        if number not in self.pristine:
            self.by_number[number] = obj
            self.pristine[number] = pristine
            self.states[number] = compared_state(pristine)
            self.by_identity[id(obj)] = (obj, number)
            if self.tally is not None:
                self.tally.items += 1

    def stored(self, number: int, obj: Any, digest: str) -> None:
        """Item `number` is what the graph's `obj` was when stored; readers get copies, never `obj`."""
        self.by_hash[digest] = number
        if number not in self.pristine:
            self.pristine[number] = pristine = pristine_copy(obj)
            self.states[number] = compared_state(pristine)
            if self.tally is not None:
                self.tally.items += 1
        self.by_identity[id(obj)] = (obj, number)

    def item(self, number: int) -> Any:
        """Item `number` for a reader: the object readers share, or a fresh copy if it was edited."""
        obj = self.by_number.get(number, MISSING)
        pristine = self.pristine[number]
        if unchanged(obj, pristine):
            return obj
        self.by_identity.pop(id(obj), None)
        fresh = pristine_copy(pristine)
        self.by_number[number] = fresh
        self.by_identity[id(fresh)] = (fresh, number)
        return fresh

    def items(self, numbers: list[int], ranges: list[list[int]] | None = None) -> list[Any]:
        """`item` of each number (`ranges`, if given, are those numbers as stored): the objects readers
        share, checked in one go when none was edited."""
        objs = list(map(self.by_number.get, numbers))
        for i in [i for i, obj in enumerate(objs) if obj is None]:
            objs[i] = self.item(numbers[i])  # stored by this process, never read: a first copy
        pristine = self.known_pristine(ranges) if ranges is not None else None
        if pristine is None:
            pristine = self.pristine_of(numbers)
            if ranges is not None:
                self.read_pristine = (ranges, pristine)
        if all_unchanged(objs, pristine):
            return objs
        return list(map(self.item, numbers))

    def number_of(self, obj: Any) -> int | None:
        """The item number of an object stored or read before, if it is the very same, unchanged object."""
        hit = self.by_identity.get(id(obj))
        if hit is None or hit[0] is not obj:
            return None
        pristine = self.pristine[hit[1]]
        # e.g. add_messages assigns ids in place to messages that had none: such an object changed.
        return hit[1] if unchanged(obj, pristine) else None

    def pristine_of(self, numbers: list[int]) -> Pristine:
        """The compared states of these items, as columns."""
        return Pristine.of(list(map(self.states.__getitem__, numbers)))

    def known_pristine(self, ranges: list[list[int]]) -> Pristine | None:
        """The compared states of the items `ranges` covers, if a remembered list or the last read has
        them: a run's read returns the list its thread's last put stored, whose columns that put
        remembered; gathering them again item by item was a pass over the whole list."""
        for _objs, known, pristine in self.last_lists.values():
            if pristine is not None and known == ranges:
                return pristine
        if self.read_pristine is not None and self.read_pristine[0] == ranges:
            return self.read_pristine[1]
        return None

    def known_prefix(self, key: tuple[str, str], values: list[Any]) -> tuple[int, list[list[int]], Pristine]:
        """(length, ranges, compared states) of the last list stored under `key` if `values` starts
        with it, unchanged.

        A namespace seen for the first time (a subgraph runs in a new one every turn) is matched
        against the root namespace's list of the same channel, which its input usually starts with:
        otherwise each turn would look up every message of the thread one by one.
        """
        for candidate in (key, ("", key[1])):
            last = self.last_lists.get(candidate)
            if last is None or len(last[0]) > len(values):
                continue
            objs, ranges, pristine = last
            if not all(map(operator.is_, objs, values)):
                continue
            if pristine is None:  # a list read back: its states are gathered once, when first needed
                pristine = self.pristine_of(from_ranges(ranges))
                self.last_lists[candidate] = (objs, ranges, pristine)
            if all_unchanged(objs, pristine, private=False):  # what is stored of them
                return len(objs), ranges, pristine
        return 0, [], NO_ITEMS

    def remember_list(
        self,
        key: tuple[str, str],
        values: list[Any],
        ranges: list[list[int]],
        prefix: Pristine | None = None,
        numbers: list[int] | None = None,
    ) -> None:
        """Remember `values` (stored or read as `ranges`) as the list under `key`; a put passes the
        compared states of the prefix `known_prefix` matched and the item numbers that follow it."""
        if prefix is not None and numbers is not None:
            pristine: Pristine | None = prefix.extended(self.pristine_of(numbers))
        else:
            pristine = self.known_pristine(ranges)
        # Bounded: each subgraph run adds a namespace, and each entry holds a whole list.
        self.last_lists.pop(key, None)
        self.last_lists[key] = (list(values), ranges, pristine)
        while len(self.last_lists) > MAX_LISTS:
            del self.last_lists[next(iter(self.last_lists))]

    def size(self) -> int:
        return len(self.pristine)


class ItemCache:
    """An LRU of `ThreadItems`, bounded by the total number of cached items."""

    def __init__(self, max_items: int = 200_000) -> None:
        self.max_items = max_items
        self._threads: OrderedDict[str, ThreadItems] = OrderedDict()
        self._tally = Tally()

    def get(self, thread_id: str, incarnation: str) -> ThreadItems:
        entry = self._threads.get(thread_id)
        if entry is None or entry.incarnation != incarnation or entry.stale:
            if entry is not None:
                self._detach(entry)
            entry = ThreadItems(incarnation, self._tally)
            self._threads[thread_id] = entry
        self._threads.move_to_end(thread_id)
        self._evict()
        return entry

    def peek(self, thread_id: str) -> ThreadItems | None:
        """The cached entry of a thread whose incarnation this process has seen, if any."""
        entry = self._threads.get(thread_id)
        if entry is not None:
            if entry.stale:
                self.drop(thread_id)
                return None
            self._threads.move_to_end(thread_id)
        return entry

    def drop(self, thread_id: str) -> None:
        entry = self._threads.pop(thread_id, None)
        if entry is not None:
            self._detach(entry)

    def clear(self) -> None:
        for entry in self._threads.values():
            entry.tally = None
        self._threads.clear()
        self._tally.items = 0

    def total(self) -> int:
        """Items cached by all threads."""
        return self._tally.items

    def _detach(self, entry: ThreadItems) -> None:
        if entry.tally is not None:
            entry.tally.items -= entry.size()
            entry.tally = None

    def _evict(self) -> None:
        while self._tally.items > self.max_items and len(self._threads) > 1:
            _, oldest = self._threads.popitem(last=False)
            self._detach(oldest)
