"""Reading the official savers' serialised values without trusting them.

The official savers write values with LangGraph's `JsonPlusSerializer`: msgpack, where anything beyond
plain data is a msgpack *extension* naming a Python class (module, name, arguments) that the default,
non-strict serializer imports and calls on load — or, with `pickle_fallback`, a pickle. The importer:

* refuses pickle (and every serialisation other than msgpack): it never unpickles;
* builds only LangGraph's own safe types (messages, `Send`, `Interrupt`, datetimes … —
  `SAFE_MSGPACK_TYPES`), and only when everything inside them is safe too;
* keeps every other extension as the exact msgpack bytes it was read as (`ormsgpack.Ext`). Our saver
  stores those bytes as they are, and its own serializer decides, when the value is read, whether the
  class may be built (strict mode plus the graph's allowlist) — the same rule as for a value the graph
  had written itself. So a crafted row can name `os.system` and nothing happens at import time.
"""

from __future__ import annotations

from typing import Any

import ormsgpack
from langgraph.checkpoint.serde import _msgpack as lg_msgpack
from langgraph.checkpoint.serde import jsonplus
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from orecast.checkpoint.encoding import strict_serializer

# The serialisations the importer reads; "empty" is PostgreSQL's marker of a version without a value.
READABLE_TYPES = ("msgpack", "null", "bytes", "bytearray")
NO_VALUE = "empty"
_UNPACK = ormsgpack.OPT_NON_STR_KEYS
MEMO_BYTES = 64 * 1024 * 1024  # the most serialised bytes whose built values are remembered
# Extensions whose payload is (module, name, …) naming the class to build.
_NAMED = {
    jsonplus.EXT_CONSTRUCTOR_SINGLE_ARG,
    jsonplus.EXT_CONSTRUCTOR_POS_ARGS,
    jsonplus.EXT_CONSTRUCTOR_KW_ARGS,
    jsonplus.EXT_PYDANTIC_V1,
    jsonplus.EXT_PYDANTIC_V2,
}


class RefusedValue(ValueError):
    """A value the importer will not read (pickle, or a serialisation other than msgpack)."""

    def __init__(self, type_tag: str) -> None:
        self.type_tag = type_tag
        if type_tag == "pickle":
            reason = "is a pickle; orecast never unpickles"
        else:
            reason = f"is serialised as {type_tag!r}; only LangGraph's msgpack can be imported"
        super().__init__(reason)


def _opaque(code: int, data: bytes) -> ormsgpack.Ext:
    return ormsgpack.Ext(code, data)


def _all_safe(value: Any) -> bool:
    """Whether every extension inside an already unpacked payload is one LangGraph marks safe."""
    if isinstance(value, ormsgpack.Ext):
        return _is_safe_ext(value.tag, value.data)
    if isinstance(value, list | tuple):
        return all(_all_safe(v) for v in value)
    if isinstance(value, dict):
        return all(_all_safe(k) and _all_safe(v) for k, v in value.items())
    return True


def _is_safe_ext(code: int, data: bytes) -> bool:
    if code == jsonplus.EXT_DELTA_SNAPSHOT:
        return _all_safe(ormsgpack.unpackb(data, ext_hook=_opaque, option=_UNPACK))
    if code == jsonplus.EXT_NUMPY_ARRAY:
        return False  # built from raw buffers: left for the saver's serializer to read
    if code not in _NAMED and code != jsonplus.EXT_METHOD_SINGLE_ARG:
        return False
    payload = ormsgpack.unpackb(data, ext_hook=_opaque, option=_UNPACK)
    if not isinstance(payload, list | tuple) or len(payload) < 3:
        return False
    module, name = payload[0], payload[1]
    if code == jsonplus.EXT_METHOD_SINGLE_ARG:
        if len(payload) < 4 or (module, name, payload[3]) not in lg_msgpack.SAFE_MSGPACK_METHODS:
            return False
    elif (module, name) not in lg_msgpack.SAFE_MSGPACK_TYPES:
        return False
    return _all_safe(payload[2])


class SafeDecoder:
    """`loads_typed` for the official savers' rows: safe types built, the rest kept as msgpack bytes."""

    def __init__(self) -> None:
        # LangGraph's strict serializer builds the safe types (nothing else reaches it).
        self._strict = strict_serializer()
        # The official savers store a thread's messages again in every checkpoint, byte for byte:
        # each is checked and built once, and the same object handed out again (which also lets the
        # saver recognise it as an item it has stored).
        self._built: dict[tuple[int, bytes], Any] = {}
        self._built_bytes = 0

    def _hook(self, code: int, data: bytes) -> Any:
        if code == jsonplus.EXT_DELTA_SNAPSHOT:
            return _DeltaSnapshot(ormsgpack.unpackb(data, ext_hook=self._hook, option=_UNPACK))
        key = (code, data)
        if key in self._built:
            return self._built[key]
        if not _is_safe_ext(code, data):
            return ormsgpack.Ext(code, data)
        value = self._strict.loads_typed(("msgpack", ormsgpack.packb(ormsgpack.Ext(code, data))))
        if self._built_bytes + len(data) > MEMO_BYTES:
            self._built.clear()
            self._built_bytes = 0
        self._built[key] = value
        self._built_bytes += len(data)
        return value

    def loads_typed(self, type_tag: str, data: bytes | None) -> Any:
        if type_tag not in READABLE_TYPES:
            raise RefusedValue(type_tag)
        if type_tag == "msgpack":
            return ormsgpack.unpackb(data or b"", ext_hook=self._hook, option=_UNPACK)
        return self._strict.loads_typed((type_tag, data or b""))
