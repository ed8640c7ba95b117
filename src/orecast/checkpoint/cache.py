"""Per-thread memory of stored items, so a put does not re-encode the history it already stored.

Items are immutable once written (content-addressed inside a thread), so decoded items can be shared by
every read. A thread's cache is keyed by its *incarnation*: deleting and re-creating a thread (here or in
another process) gives it a new incarnation and the old cache is never consulted again.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

MISSING = object()
MAX_LISTS = 16  # lists remembered per thread for prefix matching (see `known_prefix`)


@dataclass
class ThreadItems:
    incarnation: str
    by_number: dict[int, Any] = field(default_factory=dict)
    by_hash: dict[str, int] = field(default_factory=dict)
    # id(obj) -> (obj, item_no, obj.id at store time); holding obj keeps id() unique while cached.
    by_identity: dict[int, tuple[Any, int, Any]] = field(default_factory=dict)
    # The last list stored per (namespace, channel) and its ranges: an appended list is matched by one
    # C-level prefix scan, and only its new suffix is encoded.
    last_lists: dict[tuple[str, str], tuple[list[Any], list[list[int]]]] = field(default_factory=dict)
    # For DeltaChannel history walks: each checkpoint's parent and channel versions, and whether a
    # channel version holds a stored value. Both are fixed once the checkpoint is stored (a re-put of
    # the same checkpoint drops its entry), so history reads walk shared chains in memory.
    ancestry: dict[tuple[str, str], tuple[str | None, dict[str, Any]]] = field(default_factory=dict)
    populated: dict[tuple[str, str, str], bool] = field(default_factory=dict)

    def remember(self, number: int, obj: Any, digest: str | None = None) -> None:
        self.by_number[number] = obj
        if digest is not None:
            self.by_hash[digest] = number
        self.by_identity[id(obj)] = (obj, number, getattr(obj, "id", None))

    def number_of(self, obj: Any) -> int | None:
        """The item number of an object stored before, if it is the very same, unchanged object."""
        hit = self.by_identity.get(id(obj))
        if hit is None or hit[0] is not obj:
            return None
        # add_messages assigns ids in place to messages that had none: such an object changed.
        if getattr(obj, "id", None) != hit[2]:
            return None
        return hit[1]

    def known_prefix(self, key: tuple[str, str], values: list[Any]) -> tuple[int, list[list[int]]]:
        """(length, ranges) of the last list stored under `key` if `values` starts with it, else (0, []).

        A namespace seen for the first time (a subgraph runs in a new one every turn) is matched
        against the root namespace's list of the same channel, which its input usually starts with:
        otherwise each turn would look up every message of the thread one by one.
        """
        for candidate in (key, ("", key[1])):
            last = self.last_lists.get(candidate)
            if last is None or len(last[0]) > len(values):
                continue
            objs, ranges = last
            if all(map(operator.is_, objs, values)):
                return len(objs), ranges
        return 0, []

    def remember_list(self, key: tuple[str, str], values: list[Any], ranges: list[list[int]]) -> None:
        # Bounded: each subgraph run adds a namespace, and each entry holds a whole list.
        self.last_lists.pop(key, None)
        self.last_lists[key] = (list(values), ranges)
        while len(self.last_lists) > MAX_LISTS:
            del self.last_lists[next(iter(self.last_lists))]

    def size(self) -> int:
        return len(self.by_number)


class ItemCache:
    """An LRU of `ThreadItems`, bounded by the total number of cached items."""

    def __init__(self, max_items: int = 200_000) -> None:
        self.max_items = max_items
        self._threads: OrderedDict[str, ThreadItems] = OrderedDict()

    def get(self, thread_id: str, incarnation: str) -> ThreadItems:
        entry = self._threads.get(thread_id)
        if entry is None or entry.incarnation != incarnation:
            entry = ThreadItems(incarnation)
            self._threads[thread_id] = entry
        self._threads.move_to_end(thread_id)
        self._evict()
        return entry

    def peek(self, thread_id: str) -> ThreadItems | None:
        """The cached entry of a thread whose incarnation this process has seen, if any."""
        entry = self._threads.get(thread_id)
        if entry is not None:
            self._threads.move_to_end(thread_id)
        return entry

    def drop(self, thread_id: str) -> None:
        self._threads.pop(thread_id, None)

    def clear(self) -> None:
        self._threads.clear()

    def _evict(self) -> None:
        total = sum(t.size() for t in self._threads.values())
        while total > self.max_items and len(self._threads) > 1:
            _, oldest = self._threads.popitem(last=False)
            total -= oldest.size()
