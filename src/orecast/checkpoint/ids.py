"""The ids the store accepts, checked at every entry point before anything is read or written.

Thread ids, namespaces, checkpoint ids and task ids are key columns. A NUL character cannot be stored in
a PostgreSQL text column and cuts the id short in SQLite's JSON functions (a put would succeed and its
values never be found again); PostgreSQL cannot index a key above ~2.7 kB. Both backends therefore
accept the same ids: text without NUL, at most `MAX_ID_BYTES` (thread id, namespace) or
`MAX_KEY_BYTES` (checkpoint id, task id) bytes of UTF-8, so a whole primary key stays indexable.
"""

from __future__ import annotations

import math
import os
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import get_checkpoint_id

MAX_ID_BYTES = 1024
MAX_KEY_BYTES = 256


class UnstorableId(ValueError):
    """An id the store cannot keep (a NUL, a lone surrogate, too long): the caller's mistake, which a
    server answers as such (422), not as its own failure."""


def check_id(value: Any, what: str, limit: int = MAX_ID_BYTES) -> str:
    """`value` as the text the store keeps, or an UnstorableId saying why it cannot be kept."""
    if type(value) is str and value.isascii() and len(value) <= limit and "\x00" not in value:
        return value  # the usual id, checked for every put and read: ASCII is its own UTF-8
    text = str(value)
    shown = repr(text[:40]) + ("…" if len(text) > 40 else "")
    if "\x00" in text:
        raise UnstorableId(f"{what} {shown} contains a NUL character, which the store cannot keep")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise UnstorableId(f"{what} {shown} is not valid Unicode (a lone surrogate)") from None
    if size > limit:
        raise UnstorableId(f"{what} {shown} is {size} bytes of UTF-8; the store allows at most {limit}")
    return text


def _unstorable_text(text: str) -> str | None:
    """Why `text` cannot be kept alike by every backend, or None when it can."""
    if "\x00" in text:
        return "contains a NUL character (\\u0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate)"
    return None


def check_document(value: Any, what: str) -> None:
    """Raise UnstorableId when a JSON document the store keeps as JSON (a thread's metadata) holds a key
    or a string no backend can keep as it is: a NUL character (PostgreSQL's jsonb refuses it; SQLite and
    MySQL took it, so the same request was stored on one and refused on another) or a lone surrogate;
    or a NaN or an infinity, which JSON cannot hold.
    Checked before anything is written, so every backend answers alike. Checkpoint values and
    checkpoint metadata need no such check: they are encoded (encoding.py tags a NUL)."""
    stack: list[tuple[str, Any]] = [(what, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            why = _unstorable_text(item)
            if why is not None:
                raise UnstorableId(f"{where} {why}, which the store cannot keep")
        elif isinstance(item, float) and not math.isfinite(item):
            # JSON has no NaN nor Infinity: PostgreSQL refused the document (a 500), SQLite stored text its
            # JSON functions then called malformed (every later run of the thread failed)
            raise UnstorableId(f"{where} is {item!r}, not a finite number, which the store cannot keep")
        elif isinstance(item, dict):
            for key, element in item.items():
                path = f"{where}.{key}" if isinstance(key, str) else f"{where}[{key!r}]"
                if isinstance(key, str) and (why := _unstorable_text(key)) is not None:
                    raise UnstorableId(f"{where} has a key {key[:40]!r} that {why}, which the store cannot keep")
                stack.append((path, element))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{n}]", element) for n, element in enumerate(item))


def config_ids(config: RunnableConfig) -> tuple[str, str, str | None]:
    """(thread_id, checkpoint_ns, checkpoint_id or None) of a config, checked."""
    configurable = config["configurable"]
    thread_id = check_id(configurable["thread_id"], "thread_id")
    checkpoint_ns = check_id(configurable.get("checkpoint_ns", ""), "checkpoint_ns")
    checkpoint_id = get_checkpoint_id(config)
    if checkpoint_id:
        checkpoint_id = check_id(checkpoint_id, "checkpoint_id", MAX_KEY_BYTES)
    return thread_id, checkpoint_ns, checkpoint_id or None


def new_thread_id(at: datetime | None = None) -> str:
    """A new thread id: a UUIDv7 (RFC 9562), whose first 48 bits are the creation time in milliseconds
    and the other 74 random. Ids then sort by creation, and a PostgreSQL store partitioned by thread id
    keeps each month's threads in one partition (deploy/postgres/partition_by_month.sql). `at` backdates
    it (tests, imports)."""
    ms = int(at.timestamp() * 1000) if at is not None else time.time_ns() // 1_000_000
    random = int.from_bytes(os.urandom(10), "big")
    value = (ms & (1 << 48) - 1) << 80 | 0x7 << 76 | (random >> 62 & 0xFFF) << 64 | 0b10 << 62 | random & (1 << 62) - 1
    return str(uuid.UUID(int=value))


_GREGORIAN = datetime(1582, 10, 15, tzinfo=UTC)  # where a UUIDv6's clock starts


def checkpoint_time(checkpoint_id: str | None) -> datetime | None:
    """When a checkpoint was made, from its id: LangGraph's ids are UUIDv6, whose first 60 bits are the
    time in 100 ns since 1582-10-15 (why they sort by time). None for any other id."""
    try:
        value = uuid.UUID(checkpoint_id) if checkpoint_id else None
    except ValueError:
        return None
    if value is None or value.version != 6:
        return None
    ticks = (value.int >> 80) << 12 | (value.int >> 64) & 0xFFF
    return _GREGORIAN + timedelta(microseconds=ticks // 10)
