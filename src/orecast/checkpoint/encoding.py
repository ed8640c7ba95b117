"""How values are stored: queryable JSON where the value allows, LangGraph's strict serializer otherwise.

A stored value is a `Stored(kind, json, blob)`:

* ``json``  — `json` holds the value in *tagged JSON*: plain JSON for str/int/float/bool/None, lists and
  string-keyed dicts; `{"$t": …}` objects for what JSON cannot say exactly (tuples, special floats,
  LangChain messages, and anything else, which is embedded as strict msgpack in base64).
* ``items`` — a list of messages/dicts stored as *item references*: `json` holds ranges of per-thread item
  numbers, each item (one message) is stored once in the items table. This is what makes storage linear:
  an appended message list refers to the items it already has instead of copying them.
* ``delta`` — LangGraph's `_DeltaSnapshot` wrapper around one of the kinds above (`json` has the inner kind).
* ``serde`` — bytes from the store's serializer, `StoreSerializer` (`blob`, with its type tag in `json`).
* ``empty`` — a channel version with no value (a DeltaChannel sentinel).

No pickle anywhere: the serializer is built with `pickle_fallback=False`, and it rebuilds objects only
of the types `AdmittedTypes` describes (docs/checkpoint.md, "Which types come back").
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import json
import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import orjson
from langchain_core import messages as lc_messages
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from langgraph.checkpoint.serde import _msgpack as lg_msgpack
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer, _create_msgpack_ext_hook
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from pydantic import BaseModel

KIND_JSON = "json"
KIND_ITEMS = "items"
KIND_DELTA = "delta"
KIND_SERDE = "serde"
KIND_EMPTY = "empty"

TAG = "$t"
ORDER = "$o"  # the key order of a dict, where the database would not keep it

MESSAGE_CLASSES: dict[str, type[BaseMessage]] = {
    cls.__name__: cls
    for cls in (
        lc_messages.AIMessage,
        lc_messages.AIMessageChunk,
        lc_messages.HumanMessage,
        lc_messages.HumanMessageChunk,
        lc_messages.SystemMessage,
        lc_messages.SystemMessageChunk,
        lc_messages.ToolMessage,
        lc_messages.ToolMessageChunk,
        lc_messages.FunctionMessage,
        lc_messages.FunctionMessageChunk,
        lc_messages.ChatMessage,
        lc_messages.ChatMessageChunk,
        lc_messages.RemoveMessage,
    )
}


class AdmittedTypes:
    """The classes a stored value may name to be rebuilt as an object, beyond LangGraph's safe types.

    * Always: the allowlist LangGraph derives from the graph's schemas (`with_allowlist`, strict mode).
    * In LangGraph's default mode, where it hands over no allowlist, also the *data classes* a graph's
      state is made of: a pydantic model (not a Runnable: no models, tools or chains), a dataclass, an
      enum or a named tuple, defined under that name in a module this process has already imported.
      Nothing is imported for a row, and no other class or function is ever called: `subprocess.Popen`,
      `os.system` or `builtins.eval` named in a crafted row come back as the row's plain data.
    """

    def __init__(self, allowlist: frozenset[tuple[str, ...]], data_classes: bool) -> None:
        self.allowlist = allowlist
        self.data_classes = data_classes

    def __contains__(self, key: object) -> bool:
        if key in self.allowlist:
            return True
        return self.data_classes and isinstance(key, tuple) and len(key) == 2 and is_data_class(*key)


def is_data_class(module_name: object, name: object) -> bool:
    if not isinstance(module_name, str) or not isinstance(name, str):
        return False
    module = sys.modules.get(module_name)
    cls = getattr(module, name, None) if module is not None else None
    if not isinstance(cls, type) or cls.__module__ != module_name or cls.__name__ != name:
        return False
    if issubclass(cls, BaseException | Runnable):
        return False
    if issubclass(cls, Enum | BaseModel) or dataclasses.is_dataclass(cls):
        return True
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


class StoreSerializer(JsonPlusSerializer):
    """LangGraph's serializer without pickle, rebuilding only LangGraph's safe types and `AdmittedTypes`."""

    def __init__(self, allowlist: frozenset[tuple[str, ...]] = frozenset(), *, data_classes: bool) -> None:
        self.admitted = AdmittedTypes(allowlist, data_classes)
        super().__init__(
            pickle_fallback=False,
            allowed_msgpack_modules=None,
            __unpack_ext_hook__=_create_msgpack_ext_hook(self.admitted),  # type: ignore[arg-type]
        )

    def with_msgpack_allowlist(self, extra_allowlist: Iterable[tuple[str, ...] | type]) -> StoreSerializer:
        extra = {(e.__module__, e.__name__) if isinstance(e, type) else tuple(e) for e in extra_allowlist}
        merged = self.admitted.allowlist | extra
        if merged == self.admitted.allowlist:
            return self
        return StoreSerializer(merged, data_classes=self.admitted.data_classes)


def strict_serializer() -> StoreSerializer:
    """The store's serializer; in LangGraph's strict mode it rebuilds only what the graph allowlists."""
    return StoreSerializer(data_classes=not lg_msgpack.STRICT_MSGPACK_ENABLED)


@dataclass(frozen=True, slots=True)
class Stored:
    kind: str
    json: str | None = None
    blob: bytes | None = None


@dataclass(frozen=True, slots=True)
class ItemRefs:
    """A list stored as item references inside a JSON dict (e.g. the input `{"messages": [...]}`)."""

    ranges: list[list[int]]


def _plain_float(value: float) -> bool:
    # Such floats survive JSON and PostgreSQL's numeric JSONB unchanged (no exponent, no -0.0, finite).
    if not math.isfinite(value) or (value == 0.0 and math.copysign(1.0, value) < 0):
        return False
    text = repr(value)
    return "e" not in text and "E" not in text


def _jsonb_key_order(key: str) -> tuple[int, bytes]:
    encoded = key.encode("utf-8")
    return (len(encoded), encoded)


def _in_jsonb_order(keys: tuple[str, ...]) -> bool:
    """Whether JSONB keeps an object's keys in this order (it sorts them, shorter first)."""
    return list(keys) == sorted(keys, key=_jsonb_key_order)


# A few key sets recur in nearly every message (usage metadata, response metadata, a tool's
# arguments): the order of a small one is checked once, not sorted with a Python key function at
# every encoding.
_KEY_ORDER_KEYS = 16
_small_in_jsonb_order = functools.lru_cache(maxsize=1024)(_in_jsonb_order)


class TaggedJson:
    """Encode/decode tagged JSON, falling back to the serializer for leaves JSON cannot express.

    `keep_key_order`: PostgreSQL's JSONB sorts object keys (shorter first); dicts whose order differs
    record it, so tool-call arguments come back in the order the model wrote them.
    """

    def __init__(self, serde: SerializerProtocol, *, keep_key_order: bool = False) -> None:
        self.serde = serde
        self.keep_key_order = keep_key_order

    # -- encoding --------------------------------------------------------------------------------

    def to_tree(self, value: Any) -> Any:
        t = type(value)
        if t is str:
            # JSONB cannot hold NUL characters: such strings are stored as their NUL-separated parts.
            return value if "\x00" not in value else {TAG: "nul", "p": value.split("\x00")}
        if value is None or t is bool or t is int:
            return value
        if t is dict:
            return self._dict_tree(value)
        if t is list:
            # Plain loops: for the few elements of most containers, cheaper than C-level checks
            # (`set(map(type, ...))` alone costs more than a loop over four elements).
            tree = []
            for v in value:
                tv = type(v)
                if (tv is str and "\x00" not in v) or tv is int or tv is bool or v is None:
                    tree.append(v)
                else:
                    tree.append(self._dict_tree(v) if tv is dict else self.to_tree(v))
            return tree
        if t is float:
            return value if _plain_float(value) else {TAG: "float", "v": repr(value)}
        if t is tuple:
            return {TAG: "tuple", "v": [self.to_tree(v) for v in value]}
        if isinstance(value, BaseMessage) and type(value).__name__ in MESSAGE_CLASSES:
            return self._message_tree(value)
        if t is ItemRefs:
            return {TAG: "items", "r": value.ranges}
        return {TAG: "serde", **self._serde_leaf(value)}

    def _dict_tree(self, value: dict[Any, Any]) -> dict[str, Any]:
        if TAG in value or ORDER in value:
            return self._tagged_dict(value)
        tree = {}
        for k, v in value.items():
            if type(k) is not str or "\x00" in k:
                return self._tagged_dict(value)
            tv = type(v)
            if (tv is str and "\x00" not in v) or tv is int or tv is bool or v is None:
                tree[k] = v
            else:
                tree[k] = self._dict_tree(v) if tv is dict else self.to_tree(v)
        if self.keep_key_order and 1 < len(value):
            keys = tuple(value)
            if not (_small_in_jsonb_order if len(keys) <= _KEY_ORDER_KEYS else _in_jsonb_order)(keys):
                # A sibling key keeps the object itself plain, so `args->>'turn'` still works in SQL.
                tree[ORDER] = list(keys)
        return tree

    def _tagged_dict(self, value: dict[Any, Any]) -> dict[str, Any]:
        """A dict whose keys JSON cannot hold as they are (not str, NUL, a tag's name)."""
        return {TAG: "dict", "v": [[self.to_tree(k), self.to_tree(v)] for k, v in value.items()]}

    def _message_tree(self, message: BaseMessage) -> dict[str, Any]:
        # Defaults are left out (the class is stored), which halves a typical message's size.
        data = message.model_dump(exclude_defaults=True)
        # The fields go back as keyword arguments: their order does not matter, their values' does
        # (and their names are taken as they are, never as tags).
        fields = {}
        for k, v in data.items():
            tv = type(v)
            if (tv is str and "\x00" not in v) or tv is int or tv is bool or v is None:
                fields[k] = v
            else:
                fields[k] = self._dict_tree(v) if tv is dict else self.to_tree(v)
        return {TAG: "msg", "cls": type(message).__name__, "data": fields}

    def _serde_leaf(self, value: Any) -> dict[str, str]:
        type_tag, data = self.serde.dumps_typed(value)
        if type_tag == "pickle":  # pragma: no cover - the serializer is built without pickle
            raise TypeError("pickle is not allowed in orecast checkpoints")
        return {"type": type_tag, "b64": base64.b64encode(data).decode("ascii")}

    def dumps(self, value: Any) -> str:
        try:
            return json_text(self.to_tree(value))
        except RecursionError:
            raise UnstorableValue(
                "a value nested too deeply to store (a list or dict inside another about a thousand "
                "levels down or more); the write was refused and nothing of it stored"
            ) from None

    # -- decoding --------------------------------------------------------------------------------

    def from_tree(self, tree: Any) -> Any:
        t = type(tree)
        if t is list:
            return [self.from_tree(v) for v in tree]
        if t is not dict:
            return tree
        tag = tree.get(TAG)
        if tag is None:
            order = tree.get(ORDER)
            if order is not None:
                return {k: self.from_tree(tree[k]) for k in order}
            return {k: self.from_tree(v) for k, v in tree.items()}
        if tag == "msg":
            cls = MESSAGE_CLASSES[tree["cls"]]
            return cls(**{k: self.from_tree(v) for k, v in tree["data"].items()})
        if tag == "dict":
            return {self.from_tree(k): self.from_tree(v) for k, v in tree["v"]}
        if tag == "nul":
            return "\x00".join(tree["p"])
        if tag == "tuple":
            return tuple(self.from_tree(v) for v in tree["v"])
        if tag == "float":
            return float(tree["v"])
        if tag == "items":
            return ItemRefs(tree["r"])
        if tag == "serde":
            return self.serde.loads_typed((tree["type"], base64.b64decode(tree["b64"])))
        raise ValueError(f"unknown tag in stored value: {tag!r}")

    def loads(self, text: str | Any) -> Any:
        if type(text) is str:
            tree = json.loads(text)
            # Text without a tag key is plain JSON, its own value: no walk (a stored checkpoint, its
            # metadata). Our writers never escape "$", so a tag key is always written as is.
            if '"$t"' not in text and '"$o"' not in text:
                return tree
            return self.from_tree(tree)
        return self.from_tree(json.loads(text) if isinstance(text, str | bytes) else text)


def json_text(tree: Any) -> str:
    """Compact JSON text of a tree of plain JSON values, non-ASCII kept as is.

    orjson writes it in a tenth of the time `json.dumps` takes; what orjson refuses (an int beyond 64
    bits, a lone surrogate) goes through `json.dumps`. Text is still read with `json.loads`: orjson
    would read an int beyond 64 bits as a float.
    """
    try:
        return orjson.dumps(tree).decode()
    except TypeError:
        text = json.dumps(tree, ensure_ascii=False, separators=(",", ":"))
    try:  # (orjson refused it: an int beyond 64 bits, fine, or a lone surrogate, which no backend keeps)
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UnstorableValue("a value holds a lone surrogate (text that is not valid Unicode); "
                              "the write was refused and nothing of it stored") from None
    return text


def is_item_list(value: Any) -> bool:
    """Lists of messages or dicts are stored as item references (one row per element, stored once)."""
    if type(value) is not list or not value:
        return False
    # A long list (a subgraph's input and output hold the thread's whole list) by its set of types, in
    # C; a short one (the new messages of a step) in a plain loop.
    for t in set(map(type, value)) if len(value) > 8 else map(type, value):
        if not issubclass(t, _ITEM_TYPES):
            return False
    return True


_ITEM_TYPES = (BaseMessage, dict)


# PostgreSQL prints JSONB with a space after the colon, SQLite keeps our compact text.
_EMBEDDED_ITEMS = re.compile(r'"\$t":\s?"items"')


def embedded_ranges(text: str) -> list[list[int]]:
    """Item ranges referenced by the top-level values of a stored JSON dict."""
    if _EMBEDDED_ITEMS.search(text) is None:
        return []
    tree = json.loads(text)
    if type(tree) is not dict:
        return []
    return [r for v in tree.values() if type(v) is dict and v.get(TAG) == "items" for r in v["r"]]


def item_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def to_ranges(numbers: Sequence[int]) -> list[list[int]]:
    """[1,2,3,7,8,5] -> [[1,3],[7,8],[5,5]]: an appended list stays one range however long it gets."""
    return extend_ranges([], numbers)


def extend_ranges(ranges: list[list[int]], numbers: Sequence[int]) -> list[list[int]]:
    """`ranges` (not modified) followed by `numbers`, merged where they continue the last range."""
    out = [list(r) for r in ranges]
    for n in numbers:
        if out and out[-1][1] + 1 == n:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


class UnstorableValue(ValueError):
    """A value no backend can keep as JSON (a lone surrogate, nesting deeper than the encoder goes):
    the caller's, refused before anything of the write is stored."""


class CorruptRowError(ValueError):
    """A stored row that cannot be what the saver wrote (edited by hand, or crafted)."""

    def at(self, place: str) -> CorruptRowError:
        return CorruptRowError(f"corrupt stored row ({place}): {self}")


def checked_ranges(ranges: Any, next_item: int) -> list[list[int]]:
    """`ranges` if each is [start, end] of item numbers the thread has allocated (1 … next_item-1).

    Checked before anything is expanded: a crafted range must not cost time or memory.
    """
    if type(ranges) is not list:
        raise CorruptRowError(f"item ranges are a {type(ranges).__name__}, not a list")
    for r in ranges:
        if not (
            type(r) is list
            and len(r) == 2
            and type(r[0]) is int
            and type(r[1]) is int
            and 1 <= r[0] <= r[1] < next_item
        ):
            raise CorruptRowError(
                f"item range {json.dumps(r)[:40]} is not within the thread's items 1..{next_item - 1}"
            )
    return ranges


def covered(ranges: Sequence[Sequence[int]]) -> set[int]:
    """The item numbers `ranges` cover, each counted once however often the ranges repeat them."""
    out: set[int] = set()
    done = 0
    for start, end in sorted(ranges):
        if end > done:
            out.update(range(max(start, done + 1), end + 1))
            done = end
    return out


def from_ranges(ranges: Iterable[Sequence[int]]) -> list[int]:
    out: list[int] = []
    for start, end in ranges:
        out.extend(range(start, end + 1))
    return out


def wrap_delta(value: Any) -> _DeltaSnapshot:
    return _DeltaSnapshot(value)


def is_delta(value: Any) -> bool:
    return isinstance(value, _DeltaSnapshot)
