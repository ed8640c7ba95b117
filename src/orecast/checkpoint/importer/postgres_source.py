"""Reading `langgraph-checkpoint-postgres`'s tables (`checkpoints`, `checkpoint_blobs`,
`checkpoint_writes`), in a read-only transaction per statement.

A checkpoint row is JSONB holding the primitive channel values inline; every other value is a row of
`checkpoint_blobs` per (channel, version), written once when the version is new.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import psycopg
from langgraph.checkpoint.serde.types import TASKS

from orecast.checkpoint.importer.decoding import NO_VALUE, READABLE_TYPES, SafeDecoder
from orecast.checkpoint.importer.source import (
    LoadedCheckpoint,
    Refusal,
    SourceCheckpoint,
    SourceWrite,
)

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
SELECT_MISSING_TABLES = "SELECT t FROM unnest(%s::text[]) AS t WHERE to_regclass(t) IS NULL"
# An orecast store has a `checkpoints` table too, without this column.
SELECT_HAS_CHECKPOINT_COLUMN = """
SELECT 1 FROM pg_attribute
WHERE attrelid = to_regclass('checkpoints') AND attname = 'checkpoint' AND NOT attisdropped"""
SELECT_SIZE = """
SELECT coalesce(sum(pg_total_relation_size(to_regclass(t))), 0)
FROM unnest(%s::text[]) AS t WHERE to_regclass(t) IS NOT NULL"""
SELECT_THREADS = "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id"
COUNT_CHECKPOINTS = "SELECT count(*) FROM checkpoints WHERE thread_id = ANY(%s)"
# A blob names no checkpoint: the first checkpoint that reads it is named instead.
SELECT_REFUSED_BLOBS = """
SELECT b.thread_id, b.checkpoint_ns, (
    SELECT min(c.checkpoint_id) FROM checkpoints AS c
    WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
      AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version
), b.channel, b.type
FROM checkpoint_blobs AS b
WHERE b.thread_id = ANY(%s) AND b.type <> ALL(%s)
ORDER BY b.thread_id"""
SELECT_REFUSED_WRITES = """
SELECT thread_id, checkpoint_ns, checkpoint_id, channel, coalesce(type, 'unknown')
FROM checkpoint_writes
WHERE thread_id = ANY(%s) AND (type IS NULL OR type <> ALL(%s))
ORDER BY thread_id, checkpoint_id"""
# The JSONB holds no blobs: a thread's checkpoint rows are small enough to read at once.
SELECT_CHECKPOINTS = """
SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints
WHERE thread_id = %s ORDER BY checkpoint_id, checkpoint_ns"""
SELECT_BLOBS = """
SELECT b.channel, b.type, b.blob
FROM unnest(%s::text[], %s::text[]) AS w(channel, version)
JOIN checkpoint_blobs AS b
  ON b.thread_id = %s AND b.checkpoint_ns = %s AND b.channel = w.channel AND b.version = w.version"""
SELECT_WRITES = """
SELECT checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, coalesce(type, 'unknown'), blob
FROM checkpoint_writes WHERE thread_id = %s
ORDER BY checkpoint_ns, checkpoint_id, task_path, task_id, idx"""
# Checkpoints of format v < 4 kept pending Send()s in their parent's writes.
SELECT_PENDING_SENDS = f"""
SELECT type, blob FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s AND channel = '{TASKS}'
ORDER BY task_path, task_id, idx"""


class PostgresSource:
    """A `PostgresSaver` / `AsyncPostgresSaver` database."""

    def __init__(self, conn: psycopg.AsyncConnection[Any], description: str) -> None:
        self.conn = conn
        self.description = description
        self.decoder = SafeDecoder()

    @classmethod
    async def connect(cls, conninfo: str, description: str) -> PostgresSource:
        conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
        try:
            await conn.execute("SET default_transaction_read_only = on")
            missing = await cls._fetchall(conn, SELECT_MISSING_TABLES, (list(TABLES),))
            official = await cls._fetchall(conn, SELECT_HAS_CHECKPOINT_COLUMN, ())
        except BaseException:
            await conn.close()
            raise
        if missing or not official:
            await conn.close()
            what = f"no table {missing[0][0]!r}" if missing else "its table 'checkpoints' is not the official one"
            raise ValueError(
                f"{description} is not a langgraph-checkpoint-postgres database ({what} on its search_path)"
            )
        return cls(conn, description)

    @staticmethod
    async def _fetchall(
        conn: psycopg.AsyncConnection[Any], sql: str, params: Sequence[Any]
    ) -> list[tuple[Any, ...]]:
        cur = await conn.execute(sql, params)
        return await cur.fetchall()

    async def _rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return await self._fetchall(self.conn, sql, params)

    async def size_bytes(self) -> int:
        rows = await self._rows(SELECT_SIZE, ([*TABLES, "checkpoint_migrations"],))
        return int(rows[0][0])

    async def thread_ids(self, wanted: Collection[str] | None) -> list[str]:
        found = [str(row[0]) for row in await self._rows(SELECT_THREADS, ())]
        return found if wanted is None else [t for t in found if t in set(wanted)]

    async def count_checkpoints(self, thread_ids: Sequence[str]) -> int:
        return int((await self._rows(COUNT_CHECKPOINTS, (list(thread_ids),)))[0][0])

    async def refusals(self, thread_ids: Sequence[str]) -> list[Refusal]:
        ids, readable = list(thread_ids), [*READABLE_TYPES, NO_VALUE]
        out = [
            Refusal(t, ns, cid, f"channel {channel!r}", type_tag)
            for t, ns, cid, channel, type_tag in await self._rows(SELECT_REFUSED_BLOBS, (ids, readable))
        ]
        out += [
            Refusal(t, ns, cid, f"a pending write to {channel!r}", type_tag)
            for t, ns, cid, channel, type_tag in await self._rows(SELECT_REFUSED_WRITES, (ids, readable))
        ]
        return out

    async def checkpoints(self, thread_id: str) -> list[SourceCheckpoint]:
        return [
            SourceCheckpoint(ns, cid, parent, (checkpoint, metadata))
            for ns, cid, parent, checkpoint, metadata in await self._rows(SELECT_CHECKPOINTS, (thread_id,))
        ]

    async def load(
        self, thread_id: str, checkpoint: SourceCheckpoint, stored: Collection[tuple[str, str]]
    ) -> LoadedCheckpoint:
        ns, cid = checkpoint.ns, checkpoint.checkpoint_id
        stored_checkpoint, metadata = checkpoint.row
        # As the official saver reads it: inline primitives, then the blobs of the versions named.
        values = dict(stored_checkpoint.get("channel_values") or {})
        versions = stored_checkpoint["channel_versions"]
        wanted = [
            (channel, str(version))
            for channel, version in versions.items()
            if (channel, str(version)) not in stored or (ns == "" and channel == "messages")
        ]
        if wanted:
            channels, wanted_versions = [list(x) for x in zip(*wanted, strict=True)]
            for channel, type_tag, blob in await self._rows(
                SELECT_BLOBS, (channels, wanted_versions, thread_id, ns)
            ):
                if type_tag != NO_VALUE:
                    values[channel] = self.decoder.loads_typed(type_tag, blob)
        if stored_checkpoint.get("v", 4) < 4 and checkpoint.parent_id:
            sends = await self._rows(SELECT_PENDING_SENDS, (thread_id, ns, checkpoint.parent_id))
            if sends:
                values[TASKS] = [self.decoder.loads_typed(t, b) for t, b in sends]
                versions[TASKS] = max(versions.values()) if versions else "1"
        return LoadedCheckpoint(
            checkpoint={**stored_checkpoint, "id": cid, "channel_values": values},
            metadata=metadata,
        )

    async def thread_writes(self, thread_id: str) -> dict[tuple[str, str], list[SourceWrite]]:
        out: dict[tuple[str, str], list[SourceWrite]] = {}
        for ns, cid, task_id, task_path, idx, channel, type_tag, blob in await self._rows(
            SELECT_WRITES, (thread_id,)
        ):
            out.setdefault((ns, cid), []).append(SourceWrite(task_id, task_path, idx, channel, type_tag, bytes(blob)))
        return out

    async def aclose(self) -> None:
        await self.conn.close()
