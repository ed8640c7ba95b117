"""`SqliteCheckpointer`: one writer connection and one reader connection on a WAL database."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from orecast.checkpoint import migrations
from orecast.checkpoint.base import OrecastCheckpointer
from orecast.checkpoint.core import StaleThreadError, ThreadTurn
from orecast.checkpoint.errors import ReadOnlyStoreError
from orecast.checkpoint.sqlite import queries

BUSY_TIMEOUT_MS = 30_000
BUSY_POLL_MAX_SECONDS = 0.05
# A single writer's checkpoint starts at 64 KiB of WAL (1.7 a turn of a 200-turn chat, 1.9 at 48 KiB):
# the benchmark's growth workload took 4.5-5.1 ms of saver time a turn at its start, not 5.8-6.3, and
# 5.4-6.2 at its end, not 6.2-7.5 (docs/benchmarks.md).
WAL_CHECKPOINT_BYTES = 64 * 1024
# A WAL checkpoint holds this saver's writes back for its last copy (see `_checkpoint_wal`): while other
# writes are waiting or were committed together (several threads at once), it waits for a quiet moment,
# as long as the WAL stays under this size (SQLite's own automatic checkpoints wait for 1,000 pages,
# ≈4 MiB). Each checkpoint then copies a page that many commits rewrote (a b-tree's inner pages, the
# threads table) once, and holds the writes back a few times per 8 × 20 turns instead of twice per turn.
WAL_CHECKPOINT_BUSY_BYTES = 4 * 1024 * 1024
# A WAL this many times the running checkpoint's threshold holds the writes back until it ends (96 KiB
# for a single writer: at 200 turns the database, its -shm and such a WAL stay under 2 MiB).
WAL_HOLD_FACTOR = 1.5
# Writes count as concurrent until this many single-write groups in a row followed a shared one.
SHARED_GROUPS_MEMORY = 8


class _Db:
    """Statements run inline on the event loop's thread: SQLite answers in microseconds, and a thread
    hop per statement (as aiosqlite does) costs more than the statement itself. A statement that
    finds the database locked by another process is retried after short sleeps on the loop: a caller
    cancelled while it waits stops at once, with no statement left running on the connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    async def _retry(self, statement: Callable[[], Any]) -> Any:
        """Run `statement` again until the database is no longer locked (it just found it locked)."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        delay = 0.001
        while True:
            # SQLite's own busy handler would sleep the same way, but in a worker thread that a
            # cancelled caller cannot stop: it would take the lock (BEGIN) after the caller is gone.
            await asyncio.sleep(delay)
            try:
                return statement()
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or time.monotonic() > deadline:
                    raise
            delay = min(delay * 2, BUSY_POLL_MAX_SECONDS)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        # Each statement's first attempt is inline (no closure, no coroutine): a put runs a dozen.
        try:
            self.conn.execute(sql, params)
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
        await self._retry(lambda: self.conn.execute(sql, params))

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        try:
            self.conn.executemany(sql, rows)
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
        await self._retry(lambda: self.conn.executemany(sql, rows))

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        try:
            return _fetch_one(self.conn, sql, params)
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
        return await self._retry(lambda: _fetch_one(self.conn, sql, params))

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
        return await self._retry(lambda: self.conn.execute(sql, params).fetchall())


def _fetch_one(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
    # Closing the cursor ends the statement's read snapshot, which would block WAL checkpoints.
    cur = conn.execute(sql, params)
    try:
        return cur.fetchone()
    finally:
        cur.close()


def _busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _connect(target: str, *, read_only: bool = False) -> tuple[sqlite3.Connection, str]:
    """Open and configure a connection, and tell its journal mode; may wait for other processes (run it
    in a worker thread). `target` is a path or a SQLite URI (`file:…`)."""
    # check_same_thread=False: the connection is opened in a worker thread and used on the loop's.
    conn = sqlite3.connect(target, uri=target.startswith("file:"), isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if not read_only:
            # WAL mode is stored in the file: only its first opener switches, and several processes
            # opening a new file at once wait for each other here instead of failing.
            mode = _switch_to_wal(conn, mode)
        if mode == "wal":
            # The saver checkpoints the WAL itself, from a worker thread (see `_after_commit`): an
            # automatic checkpoint would fsync inside a COMMIT on the event loop.
            conn.execute("PRAGMA wal_autocheckpoint = 0")
            # When a write restarts the WAL from its start (after a complete checkpoint), the file is
            # cut to what that write used: its size then tells how much is left to checkpoint.
            conn.execute("PRAGMA journal_size_limit = 0")
        # WAL + NORMAL: a crash of the application never loses a committed checkpoint; only an OS crash
        # or power loss can drop the last transactions. A rollback journal needs FULL for as much.
        conn.execute(f"PRAGMA synchronous = {'NORMAL' if mode == 'wal' else 'FULL'}")
        # A statement that may fail half-way (several rows, an upsert) keeps its pages' old copies in
        # a statement journal until it ends: in memory, not a temporary file created, written page
        # by page and deleted each time.
        conn.execute("PRAGMA temp_store = MEMORY")
        # On the loop, statements must not wait: `_Db` waits for a busy lock itself.
        conn.execute("PRAGMA busy_timeout = 0")
    except BaseException:
        conn.close()
        raise
    return conn, mode


def _switch_to_wal(conn: sqlite3.Connection, mode: str) -> str:
    """Switch to WAL if possible; the journal mode the database ends up in."""
    # Switching needs an exclusive lock and SQLite reports a conflict at once, without its busy
    # handler (two openers could otherwise wait for each other): retry with a backoff.
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while mode != "wal":
        try:
            wanted = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
        else:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if wanted != "wal" and mode != "wal":
                # An in-memory database (`memory`), or a file system without shared memory: SQLite
                # keeps the mode it has, and the store works in it.
                return mode
    return mode


def _read_only_target(target: str, immutable: bool) -> str:
    """The SQLite URI that opens `target` read-only (`immutable` also skips the -shm file, for a
    read-only folder where it cannot be created)."""
    if target.startswith("file:"):
        base, _, query = target.partition("?")
        params = [p for p in query.split("&") if p and not p.startswith(("mode=", "immutable="))]
    else:
        base, params = "file:" + quote(os.path.abspath(target)), []
    params.append("mode=ro")
    if immutable:
        params.append("immutable=1")
    return f"{base}?{'&'.join(params)}"


def _opens_read_only(target: str) -> bool:
    """Whether `target` asks for a read-only database (a `file:` URI with mode=ro or immutable=1)."""
    if not target.startswith("file:"):
        return False
    query = target.partition("?")[2].split("&")
    return "mode=ro" in query or "immutable=1" in query


def _cannot_write(path: str) -> bool:
    """Whether this process may not write the existing database file `path` (or create its WAL files)."""
    file = Path(path)
    if not file.is_file():
        return False
    if not os.access(file, os.W_OK):
        return True
    # WAL mode creates `-wal` and `-shm` files next to the database.
    siblings = [Path(path + "-wal"), Path(path + "-shm")]
    if all(f.exists() and os.access(f, os.W_OK) for f in siblings):
        return False
    return not os.access(file.parent, os.W_OK | os.X_OK)


def _read_only_failure(exc: sqlite3.Error) -> bool:
    """An error that a read-only file or folder gives when the database is opened for writing."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM"))


class _WalCopier:
    """Checkpoints the WAL into the database from worker threads; best effort (a later one catches up).

    PASSIVE: it never waits for readers or writers of other processes (the other modes hold the write
    lock through the copy and its fsync, and wait for readers). Run while this saver's writes are held
    back, it copies the whole WAL, so the next write restarts the WAL from its start.

    On a connection of its own, kept open: opening one for each checkpoint (the file, the -shm mapping,
    the WAL index) cost a third of the checkpoint, which a single writer waits for 4–6 times a turn.
    The connection is only used under `_lock`, so closing the saver (or a cancelled checkpoint whose
    thread still runs) never meets a checkpoint inside it, and the saver's own connections stay the
    event loop's alone.
    """

    def __init__(self, file: str) -> None:
        self.file = file
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._closed = False

    def run(self) -> None:
        """One checkpoint; call in a worker thread."""
        with self._lock:
            if self._closed:
                return
            try:
                if self._conn is None:
                    self._conn = sqlite3.connect(self.file, isolation_level=None, check_same_thread=False)
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.OperationalError as exc:
                if not _busy(exc):  # (busy or locked by another process: done after a later commit)
                    self._drop()  # opened afresh next time

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()


class _Group:
    """Writes sharing one transaction; `committed` resolves (or fails) when it ends."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.committed: asyncio.Future[None] = self.loop.create_future()
        # Its waiters may all have been cancelled: a failure must not be reported as never retrieved.
        self.committed.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.size = 0  # writes that joined it
        self._waiters: list[asyncio.Future[None]] = []

    async def ended(self) -> None:
        """Wait for the transaction's end, and raise its failure. A caller cancelled meanwhile stops
        waiting and the group goes on (as `asyncio.shield` would, with a future less and a pass of the
        event loop less per write: each waiter is woken directly)."""
        if not self.committed.done():
            waiter = self.loop.create_future()
            self._waiters.append(waiter)
            await waiter
        self.committed.result()

    def end(self, exc: BaseException | None) -> None:
        """The transaction committed (None) or was rolled back: settle `committed`, wake the waiters."""
        if not self.committed.done():
            if exc is None:
                self.committed.set_result(None)
            else:
                self.committed.set_exception(exc)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()


class _GroupCommit:
    """Group commit: the puts and put_writes that are ready in the same pass of the event loop (the
    several threads a process serves at once) share one transaction.

    A COMMIT costs more than the statements of a put (WAL frames for every page it dirtied, the
    threads and index pages again and again); one per pass instead of one per write saves most of
    it. The transaction commits in a task that the first write of a group starts: it runs after the
    writes already woken in this pass, which join the group.

    A write that fails or is cancelled after it changed something rolls the whole group back, and the
    group's other writes start again (`GroupRolledBack`, which `_write_thread` retries on a fresh
    cache); one that fails before changing anything leaves the group as it is. Failures are rare: a
    savepoint per write, which would undo one write alone, had SQLite copy every page a write touched
    into its statement journal first (23 k of the 53 k page copies of the bench's 8×20 loop, and the
    cache misses with them: docs/benchmarks.md).
    """

    def __init__(self) -> None:
        self.open: _Group | None = None
        self.pending = 0  # writes waiting for or holding the write lock
        self._committers: set[asyncio.Task[None]] = set()
        self._shared_lately = 0  # groups to come that still count as concurrent (see `concurrent`)

    def start(self, commit: Callable[[_Group], Awaitable[None]]) -> _Group:
        group = self.open = _Group()
        task = asyncio.ensure_future(commit(group))
        self._committers.add(task)
        task.add_done_callback(self._committers.discard)
        return group

    def committed(self, group: _Group) -> None:
        self.open = None
        group.end(None)
        if group.size > 1:
            self._shared_lately = SHARED_GROUPS_MEMORY
        elif self._shared_lately:
            self._shared_lately -= 1

    def concurrent(self) -> bool:
        """Whether several threads have been writing at once lately (groups of more than one write)."""
        return self._shared_lately > 0

    def fail(self, group: _Group, exc: BaseException) -> None:
        """The group's transaction was rolled back: its writes fail with `exc`'s reason."""
        if self.open is group:
            self.open = None
        if not isinstance(exc, Exception):  # a cancellation of the commit itself, at close
            exc = sqlite3.OperationalError(f"the write's transaction was rolled back ({exc!r})")
        group.end(exc)

    async def settled(self) -> None:
        """Wait for the open group's commit (before closing the connection)."""
        while self._committers:
            await asyncio.gather(*self._committers, return_exceptions=True)


class GroupRolledBack(StaleThreadError):
    """Another write of this write's group failed after changing something, and the group's transaction
    was rolled back with it: this write stored nothing and starts again (see `_GroupCommit`)."""

    def __init__(self) -> None:
        super().__init__("another write of its group failed: the group was rolled back")


class _WriteUnit:
    """`SqliteCheckpointer._write_unit`: a class rather than an `asynccontextmanager`, whose generator
    machinery cost more than a put's statements."""

    __slots__ = ("saver", "conn", "group", "changes")

    def __init__(self, saver: SqliteCheckpointer) -> None:
        self.saver = saver
        self.conn = saver._writable()
        self.group: _Group | None = None
        self.changes = 0  # the connection's total changes when the write began

    async def __aenter__(self) -> _Db:
        saver, conn = self.saver, self.conn
        groups = saver._groups
        if not saver._wal_room.is_set():
            await saver._wal_room.wait()
        groups.pending += 1
        try:
            await saver._write_lock.acquire()
        except BaseException:
            groups.pending -= 1
            raise
        try:
            db = _Db(conn)
            group = groups.open
            if group is None:
                await db.execute("BEGIN IMMEDIATE")  # waits (cancellably) while another process writes
                group = groups.start(saver._commit_group)
            self.group = group
            group.size += 1
            self.changes = conn.total_changes
        except BaseException:
            saver._write_lock.release()
            groups.pending -= 1
            raise
        return db

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        saver, conn, group = self.saver, self.conn, self.group
        assert group is not None
        groups = saver._groups
        try:
            if exc_type is not None:
                # Also on cancellation. A write that changed nothing leaves the group's others be;
                # otherwise its changes are undone with theirs, and they start again. (A transaction
                # SQLite rolled back itself, after an I/O error or a full disk, is gone either way.)
                if conn.total_changes != self.changes or not conn.in_transaction:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    groups.fail(group, GroupRolledBack())
                return  # the caller's exception propagates
        finally:
            saver._write_lock.release()
            groups.pending -= 1
        # Durable as before on return: this write's transaction has committed. A caller cancelled
        # meanwhile stops waiting; its write commits with the others (as if cancelled just after).
        await group.ended()


class _Reading:
    """`SqliteCheckpointer._read`: a class rather than an `asynccontextmanager` (see `_WriteUnit`)."""

    __slots__ = ("saver", "locked")

    def __init__(self, saver: SqliteCheckpointer) -> None:
        self.saver = saver
        self.locked = False

    async def __aenter__(self) -> _Db:
        saver = self.saver
        reader = saver._reader
        assert reader is not None, "saver is closed"
        if reader is saver._writer:
            await saver._write_lock.acquire()
            self.locked = True
            try:
                await saver._end_group(saver._groups.open)  # read what is committed, as a reader would
            except BaseException:
                self.locked = False
                saver._write_lock.release()
                raise
        return _Db(reader)

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if self.locked:
            self.locked = False
            self.saver._write_lock.release()


class SqliteCheckpointer(OrecastCheckpointer):
    """LangGraph checkpoint saver on a SQLite file (WAL mode, busy timeout, linear storage)."""

    dialect = "sqlite"
    q = queries
    migrations_package = "sqlite"
    # Small channel values in their checkpoint's document (core.INLINE_KEY), as on PostgreSQL and MySQL.
    # Their rows were 12 inserts a turn into `channel_values` at a place its key spreads over the
    # thread's namespaces: as the thread grew, a subgraph's commits wrote 9 → 16 pages of it a turn
    # (bench/sqlite_pages.py). A document without "vals" (written before) reads its rows as before.
    inline_values = True

    def __init__(self, path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path = path
        self.file = ""  # the database file; "" while the database lives in memory
        self.wal = False
        # Why the store was opened read-only (writes then raise ReadOnlyStoreError); None if writable.
        self.read_only: str | None = None
        self._read_only_uri = ""
        self._writer: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._write_lock = asyncio.Lock()
        self._writes_pending = 0  # writes waiting for or holding `_write_lock`
        self._wal_checkpoint: asyncio.Task[None] | None = None
        self._wal_copier: _WalCopier | None = None
        # Cleared while writes wait for a WAL checkpoint that fell behind (see `_after_commit`).
        self._wal_room = asyncio.Event()
        self._wal_room.set()
        self._wal_hold_bytes = WAL_HOLD_FACTOR * WAL_CHECKPOINT_BYTES  # for the running checkpoint
        # Shared with the shallow copies LangGraph makes (`with_allowlist`): they use the same connection.
        self._groups = _GroupCommit()

    @classmethod
    @asynccontextmanager
    async def from_path(cls, path: str | Path, **kwargs: Any) -> AsyncIterator[SqliteCheckpointer]:
        """Open (creating if needed) the database at `path`, migrate it, and close it on exit.

        `path` may be a SQLite URI (`file:…?mode=ro`). A file this process cannot write is opened
        read-only (`read_only` says why): reads work, writes raise `ReadOnlyStoreError`.
        """
        path = str(path)
        uri = path.startswith("file:")
        if not uri and path != ":memory:" and not Path(path).exists():
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        saver = cls(path, **kwargs)
        saver.loop = asyncio.get_running_loop()
        if _opens_read_only(path):
            reason = "the URL asks for mode=ro" if "mode=ro" in path else "the URL marks it immutable"
            await saver._open(reason)
        elif not uri and _cannot_write(path):
            await saver._open("this process may not write the file or its folder")
        else:
            try:
                await saver._open(None)
            except sqlite3.Error as exc:
                if uri or not _read_only_failure(exc) or not Path(path).is_file():
                    raise
                await saver._open(f"opening it for writing failed: {exc}")
        try:
            yield saver
        finally:
            await saver._groups.settled()
            if saver._wal_checkpoint is not None:
                await saver._wal_checkpoint
            saver._close()

    async def _open(self, read_only: str | None) -> None:
        """Connect (read-only, for the given reason, or read-write) and migrate or check the schema."""
        self._close()
        self.read_only = read_only
        try:
            if read_only is None:
                self._writer, mode = await asyncio.to_thread(_connect, self.path)
            else:
                self._writer, mode = await self._connect_read_only()
            self.file = self._writer.execute("PRAGMA database_list").fetchone()[2]
            self.wal = mode == "wal"
            if self.wal and read_only is None:
                self._wal_copier = _WalCopier(self.file)
            # An in-memory database exists per connection (or per shared cache): reads share the writer's.
            if self.file:
                target = self.path if read_only is None else self._read_only_uri
                self._reader, _ = await asyncio.to_thread(_connect, target, read_only=read_only is not None)
            else:
                self._reader = self._writer
            if read_only is None:
                await self.setup()
            else:
                await self._check_schema()
        except BaseException:
            self._close()
            raise

    async def _connect_read_only(self) -> tuple[sqlite3.Connection, str]:
        last: sqlite3.Error | None = None
        for immutable in (False, True):
            # A WAL database in a read-only folder without its -shm file opens only as immutable.
            self._read_only_uri = _read_only_target(self.path, immutable)
            try:
                return await asyncio.to_thread(_connect, self._read_only_uri, read_only=True)
            except sqlite3.Error as exc:
                if not _read_only_failure(exc):
                    raise
                last = exc
        assert last is not None
        raise last

    async def _check_schema(self) -> None:
        """A read-only store cannot be migrated: it must already have the latest schema."""
        latest = migrations.latest(self.migrations_package)
        try:
            async with self._read() as db:
                row = await db.fetchone(self.q.SELECT_SCHEMA_VERSION)
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            row = None
        current = row[0] if row else 0
        if current < latest:
            raise ReadOnlyStoreError(
                f"the SQLite store {self.path} is read-only ({self.read_only}) and has schema version "
                f"{current}, not {latest}: open it once where it can be written to migrate it"
            )

    def _close(self) -> None:
        if self._wal_copier is not None:
            self._wal_copier.close()
            self._wal_copier = None
        if self._reader is not None and self._reader is not self._writer:
            self._reader.close()
        if self._writer is not None:
            self._writer.close()
        self._writer = self._reader = None

    def _writable(self) -> sqlite3.Connection:
        assert self._writer is not None, "saver is closed"
        if self.read_only is not None:
            raise ReadOnlyStoreError(
                f"the SQLite store {self.path} is open read-only ({self.read_only}): writes are refused"
            )
        return self._writer

    def _write_unit(self, thread_id: str, turn: ThreadTurn) -> _WriteUnit:
        """A put or put_writes: its statements in the transaction of the current group (see
        `_GroupCommit`), returning once that transaction has committed."""
        return _WriteUnit(self)

    async def _commit_group(self, group: _Group) -> None:
        """Commit `group` once the writes ready in this pass of the event loop have joined it."""
        async with self._write_lock:
            try:
                await self._end_group(group)
            except Exception:
                pass  # rolled back: the group's writes raise it (`_GroupCommit.fail`)

    async def _end_group(self, group: _Group | None) -> None:
        """Commit `group` if it is still open; call with `_write_lock` held."""
        groups = self._groups
        if group is None or groups.open is not group:
            return
        conn = self._writer
        try:
            assert conn is not None, "saver closed with a write group open"
            await _Db(conn).execute("COMMIT")  # may wait for readers outside WAL mode
        except BaseException as exc:
            if conn is not None and conn.in_transaction:
                conn.execute("ROLLBACK")
            groups.fail(group, exc)
            raise
        groups.committed(group)
        self._after_commit(busy=groups.concurrent())

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[_Db]:
        """A transaction of its own (maintenance, thread edits, migrations), after the open group's."""
        conn = self._writable()
        if not self._wal_room.is_set():
            await self._wal_room.wait()
        self._writes_pending += 1
        try:
            async with self._write_lock:
                await self._end_group(self._groups.open)
                db = _Db(conn)
                await db.execute("BEGIN IMMEDIATE")  # waits (cancellably) while another process writes
                try:
                    yield db
                    await db.execute("COMMIT")  # may wait for readers outside WAL mode
                except BaseException:
                    # Also on cancellation: a transaction left open would lock out every other writer.
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        finally:
            self._writes_pending -= 1
        self._after_commit()

    def _after_commit(self, *, busy: bool = False) -> None:
        """Start a WAL checkpoint once the WAL has grown (one at a time), at a quiet moment if possible;
        hold the writes back while one that runs falls behind them."""
        if not self.wal:
            return
        try:
            size = os.stat(self.file + "-wal").st_size
        except FileNotFoundError:
            return
        if self._wal_checkpoint and not self._wal_checkpoint.done():
            # Its first copy lets the writes go on; while its fsyncs are slow (a busy disk), a single
            # writer would grow the WAL by hundreds of KiB before the copy ends (2 MB once, when other
            # databases were benchmarked on the machine).
            if size >= self._wal_hold_bytes:
                self._wal_room.clear()
            return
        busy = busy or self._writes_pending > 0 or self._groups.pending > 0
        threshold = WAL_CHECKPOINT_BUSY_BYTES if busy else WAL_CHECKPOINT_BYTES
        if size >= threshold:
            self._wal_hold_bytes = WAL_HOLD_FACTOR * threshold
            self._wal_checkpoint = asyncio.ensure_future(self._checkpoint_wal())

    async def _checkpoint_wal(self) -> None:
        # In a worker thread, so the event loop runs the graphs meanwhile. A first copy runs alongside
        # the writes and pays the bulk of the copying and both fsyncs (the WAL's, then the database's);
        # then a second one runs between two writes of this saver, so the copy catches up with the WAL
        # and the next write restarts the WAL from its start. A checkpoint that only ran alongside the
        # writes would hardly ever find the WAL fully copied (a single writer commits 9 times a turn:
        # in 200 turns, 1 first copy of 346 saw no commit), and the WAL would grow without bound (2.4 MB
        # after 60 turns), making every page lookup slower. The writes held back wait only for what was
        # committed during the first copy. Holding them back through the whole copy, as a single writer
        # once did, made it wait 3.0–3.4 ms a turn of 200 (docs/benchmarks.md).
        try:
            copier = self._wal_copier
            if copier is None:
                return
            await asyncio.to_thread(copier.run)
            async with self._write_lock:
                if self._writer is not None:
                    await self._end_group(self._groups.open)
                    await asyncio.to_thread(copier.run)
        finally:
            self._wal_room.set()

    def _read(self) -> _Reading:
        assert self._reader is not None, "saver is closed"
        return _Reading(self)

    async def _store_items(
        self, db: _Db, thread_id: str, incarnation: str, new: dict[str, str]
    ) -> dict[str, int]:
        """Item numbers of the items with these hashes (hash -> JSON), storing those not stored yet.

        Items new to this process's cache are nearly always new to the thread: they are numbered and
        inserted at once, without first looking their hashes up. Only when one was stored before (by
        another process, or before this process cached the thread) are the numbers read back.
        """
        row = await db.fetchone(self.q.ALLOCATE_ITEMS, (len(new), thread_id, incarnation))
        if row is None:
            raise StaleThreadError(thread_id)
        first = row[0] - len(new)
        numbers = {digest: first + offset for offset, digest in enumerate(new)}
        conn = db.conn
        before = conn.total_changes
        await db.executemany(
            self.q.INSERT_ITEM_IF_NEW,
            [(thread_id, number, digest, new[digest]) for digest, number in numbers.items()],
        )
        if conn.total_changes - before == len(new):
            return numbers
        stored = {
            digest: number
            for number, digest in await db.fetchall(self.q.SELECT_ITEMS_BY_HASH, (thread_id, json.dumps(list(new))))
        }
        if len(stored) != len(new):  # (an insert ignored for a taken number, not for its hash)
            raise sqlite3.IntegrityError(f"thread {thread_id!r}: item numbers {sorted(numbers.values())} are taken")
        return stored

    @staticmethod
    def _ts(value: datetime) -> str:
        # isoformat is several times cheaper than strftime, and writes the same text for UTC
        if value.tzinfo is not UTC:
            value = value.astimezone(UTC)
        return value.isoformat(timespec="microseconds")

    def _json_param(self, text: str) -> str:
        return text

    def _metadata_filter_sql(self, filter: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
        return _json_contains("c.metadata", filter)

    def _thread_search_sql(
        self, metadata: Mapping[str, Any] | None, status: str | None, title: str | None
    ) -> tuple[list[str], list[Any]]:
        clauses, params = _json_contains("metadata", metadata or {})
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        if title:
            clauses.append("instr(lower(COALESCE(json_extract(metadata, '$.title'), '')), lower(?)) > 0")
            params.append(title)
        return clauses, params

    async def astats(self) -> dict[str, Any]:
        out = await super().astats()
        async with self._read() as db:
            try:
                sizes = await db.fetchall(queries.TABLE_BYTES)
            except sqlite3.OperationalError:  # an SQLite built without the dbstat table
                sizes = []
        for table, size in sizes:
            if table in out["tables"]:
                out["tables"][table]["bytes"] = int(size)
        if self.file:
            files = [Path(self.file), Path(self.file + "-wal"), Path(self.file + "-shm")]
            out["bytes"] = sum(f.stat().st_size for f in files if f.exists())
        return out


def _scalar_test(value: Any, type_sql: str, value_sql: str, at: list[Any]) -> tuple[str, list[Any]]:
    """SQL true when the JSON value whose json_type is `type_sql` and SQL value `value_sql` equals the
    scalar `value` as JSON does: same type, numbers compared as numbers. `at` are the parameters of
    `type_sql` and of `value_sql` (the same for both)."""
    if value is None:
        return f"{type_sql} = 'null'", [*at]
    if isinstance(value, bool):
        return f"{type_sql} = ?", [*at, "true" if value else "false"]
    if isinstance(value, int | float):
        return f"{type_sql} IN ('integer', 'real') AND {value_sql} = ?", [*at, *at, value]
    return f"{type_sql} = 'text' AND {value_sql} = ?", [*at, *at, value]


def _json_contains(
    column: str, wanted: Mapping[str, Any], prefix: str = "$"
) -> tuple[list[str], list[Any]]:
    """`column` contains `wanted` as PostgreSQL's `@>` says (see checkpoint/filters.py).

    Keys were checked by `check_metadata_filter`, so no quote reaches the JSON path.
    """
    clauses: list[str] = []
    params: list[Any] = []
    for key, value in wanted.items():
        path = f'{prefix}."{key}"'
        if isinstance(value, Mapping):
            clauses.append(f"json_type({column}, ?) = 'object'")
            params.append(path)
            inner, inner_params = _json_contains(column, value, path)
            clauses += inner
            params += inner_params
        elif isinstance(value, list | tuple):
            clauses.append(f"json_type({column}, ?) = 'array'")
            params.append(path)
            for element in value:
                test, test_params = _scalar_test(element, "e.type", "e.atom", [])
                clauses.append(f"EXISTS (SELECT 1 FROM json_each({column}, ?) AS e WHERE {test})")
                params += [path, *test_params]
        else:
            test, test_params = _scalar_test(
                value, f"json_type({column}, ?)", f"json_extract({column}, ?)", [path]
            )
            clauses.append(test)
            params += test_params
    return clauses, params
