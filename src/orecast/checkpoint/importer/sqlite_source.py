"""Reading `langgraph-checkpoint-sqlite`'s tables (`checkpoints`, `writes`), read-only.

Each checkpoint row holds the whole checkpoint, values included, as one msgpack blob; metadata is JSON.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
from collections.abc import Collection, Sequence
from pathlib import Path

from orecast.checkpoint.importer.decoding import READABLE_TYPES, SafeDecoder
from orecast.checkpoint.importer.source import (
    LoadedCheckpoint,
    Refusal,
    SourceCheckpoint,
    SourceWrite,
)

# The columns the importer reads (an orecast store has tables of the same names, not these columns).
COLUMNS = {
    "checkpoints": {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type",
                    "checkpoint", "metadata"},
    "writes": {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"},
}
SELECT_COLUMNS = "SELECT name FROM pragma_table_info(?)"
# Pages of the official tables and their indexes (as our store's statistics count them).
SELECT_TABLE_BYTES = """
SELECT coalesce(sum(d.pgsize), 0) FROM dbstat AS d JOIN sqlite_schema AS s ON s.name = d.name
WHERE s.tbl_name IN ('checkpoints', 'writes')"""
SELECT_THREADS = "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id"
COUNT_CHECKPOINTS = """
SELECT count(*) FROM checkpoints WHERE thread_id IN (SELECT value FROM json_each(?))"""
# Pickles and other serialisations, whole checkpoints first (their values are inside the blob).
SELECT_REFUSED_CHECKPOINTS = """
SELECT thread_id, checkpoint_ns, checkpoint_id, type FROM checkpoints
WHERE thread_id IN (SELECT value FROM json_each(?)) AND type IS NOT 'msgpack'
ORDER BY thread_id, checkpoint_id"""
SELECT_REFUSED_WRITES = """
SELECT thread_id, checkpoint_ns, checkpoint_id, channel, coalesce(type, 'unknown') FROM writes
WHERE thread_id IN (SELECT value FROM json_each(?))
  AND (type IS NULL OR type NOT IN (SELECT value FROM json_each(?)))
ORDER BY thread_id, checkpoint_id"""
SELECT_CHECKPOINT_KEYS = """
SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints
WHERE thread_id = ? ORDER BY checkpoint_id, checkpoint_ns"""
SELECT_CHECKPOINT = """
SELECT type, checkpoint, metadata FROM checkpoints
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
SELECT_WRITES = """
SELECT checkpoint_ns, checkpoint_id, task_id, {task_path}, idx, channel, type, value FROM writes
WHERE thread_id = ?
ORDER BY checkpoint_ns, checkpoint_id, {task_path}, task_id, idx"""


SQLITE_HEADER = b"SQLite format 3\x00"
LOOKED_AT = 200  # entries of a folder looked at for SQLite files to suggest


def _check_is_a_file(path: Path) -> None:
    """A folder, a device or a missing path each said as such (all three were "no such SQLite file")."""
    if path.is_dir():
        found = _sqlite_files_in(path)
        which = (f"one of the SQLite files in it: {', '.join(found)}" if found else
                 "the file the official SqliteSaver wrote (it holds no SQLite file)")
        raise ValueError(f"{path} is a folder, not a SQLite file: name {which}")
    if path.exists() and not path.is_file():
        raise ValueError(f"{path} is a device, pipe or socket, not a SQLite file")
    if not path.exists():
        raise FileNotFoundError(f"no such SQLite file: {path}")


def _sqlite_files_in(folder: Path) -> list[str]:
    """Paths of the SQLite databases among the first entries of `folder` (their first bytes say so)."""
    found = []
    try:
        entries = sorted(itertools.islice(folder.iterdir(), LOOKED_AT))
    except OSError:
        return []
    for entry in entries:
        try:
            if entry.is_file():
                with entry.open("rb") as file:
                    if file.read(len(SQLITE_HEADER)) == SQLITE_HEADER:
                        found.append(str(entry))
        except OSError:
            continue
    return found[:3] + (["…"] if len(found) > 3 else [])


class SqliteSource:
    """A `SqliteSaver` / `AsyncSqliteSaver` database file, opened read-only."""

    def __init__(self, path: str) -> None:
        _check_is_a_file(Path(path))
        self.path = path
        self.description = f"langgraph-sqlite {path}"
        self.conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            columns = {
                table: {row[0] for row in self.conn.execute(SELECT_COLUMNS, (table,))} for table in COLUMNS
            }
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise ValueError(f"{path} is not a SQLite database: {exc}") from exc
        for table, wanted in COLUMNS.items():
            if not wanted <= columns[table]:
                self.conn.close()
                what = f"no table {table!r}" if not columns[table] else f"table {table!r} lacks its columns"
                raise ValueError(f"{path} is not a langgraph-checkpoint-sqlite database ({what})")
        # Databases written before the column existed (the official saver reads them the same way).
        has_path = "task_path" in columns["writes"]
        self._select_writes = SELECT_WRITES.format(task_path="task_path" if has_path else "''")
        self.decoder = SafeDecoder()

    async def size_bytes(self) -> int:
        try:
            return int(self.conn.execute(SELECT_TABLE_BYTES).fetchone()[0])
        except sqlite3.OperationalError:  # an SQLite built without the dbstat table
            return os.path.getsize(self.path)

    async def thread_ids(self, wanted: Collection[str] | None) -> list[str]:
        found = [str(row[0]) for row in self.conn.execute(SELECT_THREADS)]
        return found if wanted is None else [t for t in found if t in set(wanted)]

    async def count_checkpoints(self, thread_ids: Sequence[str]) -> int:
        return int(self.conn.execute(COUNT_CHECKPOINTS, (json.dumps(list(thread_ids)),)).fetchone()[0])

    async def refusals(self, thread_ids: Sequence[str]) -> list[Refusal]:
        ids = json.dumps(list(thread_ids))
        out = [
            Refusal(t, ns, cid, "the checkpoint", type_tag or "unknown")
            for t, ns, cid, type_tag in self.conn.execute(SELECT_REFUSED_CHECKPOINTS, (ids,))
        ]
        out += [
            Refusal(t, ns, cid, f"a pending write to {channel!r}", type_tag)
            for t, ns, cid, channel, type_tag in self.conn.execute(
                SELECT_REFUSED_WRITES, (ids, json.dumps(READABLE_TYPES))
            )
        ]
        return out

    async def checkpoints(self, thread_id: str) -> list[SourceCheckpoint]:
        return [
            SourceCheckpoint(ns, cid, parent)
            for ns, cid, parent in self.conn.execute(SELECT_CHECKPOINT_KEYS, (thread_id,))
        ]

    async def load(
        self, thread_id: str, checkpoint: SourceCheckpoint, stored: Collection[tuple[str, str]]
    ) -> LoadedCheckpoint:
        type_tag, blob, metadata = self.conn.execute(
            SELECT_CHECKPOINT, (thread_id, checkpoint.ns, checkpoint.checkpoint_id)
        ).fetchone()
        return LoadedCheckpoint(
            checkpoint=self.decoder.loads_typed(type_tag, blob),
            metadata=json.loads(metadata) if metadata is not None else {},
        )

    async def thread_writes(self, thread_id: str) -> dict[tuple[str, str], list[SourceWrite]]:
        out: dict[tuple[str, str], list[SourceWrite]] = {}
        for ns, cid, task_id, task_path, idx, channel, type_tag, value in self.conn.execute(
            self._select_writes, (thread_id,)
        ):
            write = SourceWrite(task_id, task_path, idx, channel, type_tag or "unknown", value)
            out.setdefault((ns, cid), []).append(write)
        return out

    async def aclose(self) -> None:
        self.conn.close()
