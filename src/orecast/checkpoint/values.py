"""Values in and out of the store: JSON, serializer leaves, and lists as references to per-thread items."""

from __future__ import annotations

import json
from typing import Any

from orecast.checkpoint.cache import ThreadItems
from orecast.checkpoint.core import (
    MISSING,
    Db,
    SaverCore,
    StaleThreadError,
)
from orecast.checkpoint.encoding import (
    KIND_DELTA,
    KIND_EMPTY,
    KIND_ITEMS,
    KIND_JSON,
    KIND_SERDE,
    CorruptRowError,
    ItemRefs,
    Stored,
    checked_ranges,
    covered,
    embedded_ranges,
    extend_ranges,
    from_ranges,
    is_delta,
    is_item_list,
    item_hash,
    json_text,
    wrap_delta,
)

_NULL = Stored(KIND_JSON, "null")


class ValueStore(SaverCore):
    """Encodes values for storage (storing new items) and decodes stored values (loading items)."""

    # -- encoding values ---------------------------------------------------------------------------

    def _json(self, value: Any) -> Stored:
        return Stored(KIND_JSON, self.codec.dumps(value))

    async def _encode(
        self,
        db: Db,
        thread: ThreadItems,
        thread_id: str,
        value: Any,
        key: tuple[str, str] | None = None,
        *,
        remember: bool = True,
    ) -> Stored:
        """Encode a value; `key` (namespace, channel) names a channel whose lists are usually appended.

        `remember=False` matches a list against what was stored under `key` without recording it
        (a write: it must not replace the channel's list with a one-message list).
        """
        if value is None:
            return _NULL  # most writes to a branch channel, and their values
        if value is MISSING:
            return Stored(KIND_EMPTY)
        if is_delta(value):
            inner = await self._encode(db, thread, thread_id, value.value, key, remember=remember)
            payload = {"kind": inner.kind, "value": json.loads(inner.json) if inner.json else None}
            return Stored(KIND_DELTA, json.dumps(payload, ensure_ascii=False), inner.blob)
        if type(value) is list and value:
            # Usually the list stored last for this channel plus a few new elements.
            known, ranges, prefix = thread.known_prefix(key, value) if key else (0, [], None)
            suffix = value[known:]
            if not suffix or is_item_list(suffix):
                numbers = await self._item_numbers(db, thread, thread_id, suffix)
                ranges = extend_ranges(ranges, numbers)
                if key and remember:
                    thread.remember_list(key, value, ranges, prefix, numbers)
                return Stored(KIND_ITEMS, json_text(ranges))
        if type(value) is dict:
            lists = {name: entry for name, entry in value.items() if is_item_list(entry)}
            if lists:
                # e.g. the graph input {"messages": [...]}: its messages are items like the channel's.
                # A subgraph's input holds its parent's whole list: matched like the channel of that name.
                refs = dict(value)
                for name, entry in lists.items():
                    known, ranges, _ = thread.known_prefix((key[0], name), entry) if key else (0, [], None)
                    numbers = await self._item_numbers(db, thread, thread_id, entry[known:])
                    refs[name] = ItemRefs(extend_ranges(ranges, numbers))
                return self._json(refs)
        return self._json(value)

    async def _item_numbers(
        self, db: Db, thread: ThreadItems, thread_id: str, values: list[Any]
    ) -> list[int]:
        """Item numbers for each element, storing the elements this thread has not stored yet."""
        if not values:
            return []
        # Plain loops: a step adds one or two elements, for which comprehensions cost more.
        numbers: list[int | None] = []
        unknown = []
        for i, v in enumerate(values):
            number = thread.number_of(v)
            numbers.append(number)
            if number is None:
                unknown.append(i)
        if not unknown:
            return numbers  # type: ignore[return-value]
        digests = {}
        new = {}
        for i in unknown:
            text = self.codec.dumps(values[i])
            digests[i] = digest = item_hash(text)
            if digest not in thread.by_hash:
                new[digest] = text
        if new:
            thread.by_hash.update(await self._store_items(db, thread_id, thread.incarnation, new))
        for i in unknown:
            number = thread.by_hash[digests[i]]
            numbers[i] = number
            thread.stored(number, values[i], digests[i])
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
        missing = needed - thread.pristine.keys()  # (in C: a read needs every item of the thread's list)
        if not missing:
            return
        for number, value in await db.fetchall(
            self.q.SELECT_ITEMS, (thread_id, self._json_param(json.dumps(sorted(missing))))
        ):
            thread.loaded(number, self.codec.loads(value), self.codec.loads(value))
        if lost := sorted(n for n in missing if n not in thread.by_number):
            raise CorruptRowError(f"items {lost[:5]} are referenced but not stored").at(
                f"thread {thread_id!r}"
            )

    @staticmethod
    def _ranges_of(kind: str, value: Any) -> list[Any]:
        """The item ranges a stored value refers to, as stored (unchecked)."""
        if kind == KIND_JSON:
            return embedded_ranges(value) if isinstance(value, str) else []
        tree = json.loads(value) if isinstance(value, str) else value
        if kind == KIND_ITEMS:
            return tree
        if kind == KIND_DELTA and tree["kind"] == KIND_ITEMS:
            return tree["value"]
        return []

    @classmethod
    def _items_referenced(cls, kind: str, value: Any, next_item: int) -> set[int]:
        """The item numbers a stored value refers to, checked against the thread's item count."""
        try:
            ranges = cls._ranges_of(kind, value)
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptRowError(f"unreadable {kind} value ({exc!r:.80})") from None
        return covered(checked_ranges(ranges, next_item))

    def _decode(
        self,
        thread: ThreadItems,
        kind: str,
        value: Any,
        blob: bytes | None,
        checked: dict[int, Any] | None = None,
    ) -> Any:
        """The stored value; `checked` holds the items already handed out by this read."""
        if checked is None:
            checked = {}

        def items(ranges: list[list[int]]) -> list[Any]:
            numbers = from_ranges(ranges)
            if checked and checked.keys() >= set(numbers):  # a history page: its lists share most items
                return list(map(checked.__getitem__, numbers))
            objs = thread.items(numbers, ranges)
            checked.update(zip(numbers, objs, strict=True))
            return objs

        if kind == KIND_JSON:
            decoded = self.codec.loads(value)
            if type(decoded) is dict:
                for name, entry in decoded.items():
                    if type(entry) is ItemRefs:
                        decoded[name] = items(entry.ranges)
            return decoded
        if kind == KIND_ITEMS:
            ranges = json.loads(value) if isinstance(value, str) else value
            return items(ranges)
        if kind == KIND_SERDE:
            type_tag = json.loads(value) if isinstance(value, str) else value
            return self.serde.loads_typed((type_tag, bytes(blob or b"")))
        if kind == KIND_DELTA:
            tree = json.loads(value) if isinstance(value, str) else value
            inner_value = json.dumps(tree["value"]) if tree["value"] is not None else None
            return wrap_delta(self._decode(thread, tree["kind"], inner_value, blob, checked))
        raise ValueError(f"unknown stored kind {kind!r}")
