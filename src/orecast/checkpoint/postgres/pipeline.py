"""The hot statements (a put's, a put_writes', a checkpoint read's), sent with libpq directly, and group
commit.

A turn of the benchmark's agent is ten statements (five puts, four put_writes, one read). Through
psycopg's cursor each cost the client about as much as the saver's own work for it: adapting the named
parameters, converting the query, the prepared-statement bookkeeping, registering the socket with the
event loop for every wait, a pool checkout and return. Here a statement is prepared once per
connection, its parameters are text the saver already has, and its results are read as text.

Group commit: the puts, put_writes and checkpoint reads that are ready in the same pass of the event loop (with eight
threads at once, several threads' writes) go to the server as one pipeline on one connection, in one
implicit transaction (one Sync, so one commit and one WAL flush), and each caller gets its own
statement's result once that transaction has committed. A statement that fails (another process
numbered an item meanwhile, a lock or statement timeout) fails its own write alone: the others were
rolled back with it and run again in the next group.

A thread's writes queue in order (`Chain`): its lock lets the next write in once the previous one's
last statement is queued, not committed, so the next one prepares its statements meanwhile and often
joins the same group. Its statements go to the server after the thread's earlier ones, in the same
group (which runs them in order) or once those committed; if an earlier one fails, the ones prepared
after it fail too (StaleThreadError: they start again from what is stored).
"""

from __future__ import annotations

import asyncio
import re
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection, errors, pq
from psycopg.abc import PQGen
from psycopg.waiting import Ready, Wait

from orecast.checkpoint.cache import ThreadItems
from orecast.checkpoint.core import StaleThreadError, ThreadTurn
from orecast.checkpoint.errors import StoreError, StoreUnavailable
from orecast.checkpoint.postgres.pool import check_connection, first_line
from orecast.checkpoint.queued import Unsettled

TUPLES_OK = pq.ExecStatus.TUPLES_OK
COMMAND_OK = pq.ExecStatus.COMMAND_OK
FATAL_ERROR = pq.ExecStatus.FATAL_ERROR
PIPELINE_SYNC = pq.ExecStatus.PIPELINE_SYNC
# Parameter types as psycopg sends them: text as `unknown` (the server infers it from the statement),
# the rest typed, so that the statements plan as they did through psycopg.
UNKNOWN_OID, BOOL_OID, INT8_OID, TIMESTAMPTZ_OID = 0, 16, 20, 1184
# A write whose group failed for a reason not its own (a deadlock between two groups, prepared statements
# dropped by a DEALLOCATE ALL) runs again at most this often before its error is its caller's.
MAX_ATTEMPTS = 3
# Errors that say nothing about the statement itself: it runs again.
DEADLOCK = "40P01"
NO_SUCH_PREPARED_STATEMENT = "26000"
DUPLICATE_PREPARED_STATEMENT = "42P05"
RETRIED = (DEADLOCK, NO_SUCH_PREPARED_STATEMENT, DUPLICATE_PREPARED_STATEMENT)
# The group committer keeps its connections between groups, and gives them back to the pool when this
# timer runs out (then again each time): a connection goes back to the pool at least this often, where
# its lifetime and drains apply and other operations may have it once the writes stop.
KEEP_SECONDS = 1.0

RV = TypeVar("RV")

_NAMED = re.compile(r"%\((\w+)\)s")


class Prepared(str):
    """A statement of queries.py, also as a server-side prepared statement: its `%(name)s` parameters
    (or its `%s` ones, in order) become $1, $2, …

    It is the statement's text (a `str`): run with `_Db.fetchone`/`fetchall` like any statement, and seen
    as its text by whoever watches them (observe.py). Its first parameter is the thread's id: a group
    runs its statements in that order (`GroupCommit`)."""

    name: bytes
    sql: bytes
    params: tuple[str, ...] | None  # the names, in the order of $1, $2, …; None: positional
    types: tuple[int, ...]

    @classmethod
    def of(cls, name: str, sql: str, types: Mapping[str, int]) -> Prepared:
        order: list[str] = []

        def number(match: re.Match[str]) -> str:
            if match[1] not in order:
                order.append(match[1])
            return f"${order.index(match[1]) + 1}"

        text = _NAMED.sub(number, sql)
        assert order[0] == "thread_id", order
        return cls._make(sql, name, text, tuple(order), tuple(types.get(p, UNKNOWN_OID) for p in order))

    @classmethod
    def positional(cls, name: str, sql: str, types: Sequence[int]) -> Prepared:
        parts = sql.split("%s")
        assert len(parts) == len(types) + 1 and "%(" not in sql
        text = parts[0] + "".join(f"${i}{part}" for i, part in enumerate(parts[1:], 1))
        return cls._make(sql, name, text, None, tuple(types))

    @classmethod
    def _make(cls, sql: str, name: str, text: str, params: tuple[str, ...] | None, types: tuple[int, ...]) -> Prepared:
        statement = cls(sql)
        statement.name, statement.sql, statement.params, statement.types = name.encode(), text.encode(), params, types
        return statement

    def values(self, params: Mapping[str, Any] | Sequence[Any]) -> list[bytes | None]:
        if self.params is not None:
            assert isinstance(params, Mapping)
            params = [params[name] for name in self.params]
        # (most are text without a NUL: encoded inline)
        return [v.encode() if type(v) is str and "\x00" not in v else _text(v) for v in params]


def _text(value: Any) -> bytes | None:
    """A parameter in PostgreSQL's text format."""
    kind = type(value)
    if kind is str:
        if "\x00" in value:  # libpq would cut the text short at the NUL
            raise psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
        return value.encode()
    if value is None:
        return None
    if kind is bool:
        return b"t" if value else b"f"
    if kind is int:
        return str(value).encode()
    if isinstance(value, datetime):
        return value.isoformat().encode()
    raise TypeError(f"no text form for a parameter of type {kind.__name__}")


@dataclass(eq=False)
class Statement:
    """One execution of a prepared statement, and what came of it."""

    prepared: Prepared
    values: list[bytes | None]
    rows: list[tuple[str | None, ...]] | None = None
    error: psycopg.Error | None = None


def _exchange(pgconn: Any, commands: int) -> PQGen[list[list[Any]]]:
    """Flush what was sent in pipeline mode and read the results of `commands` commands and a Sync."""
    while pgconn.flush():
        ready = yield Wait.RW
        if ready & Ready.R:
            pgconn.consume_input()
    results: list[list[Any]] = []
    current: list[Any] = []
    while True:
        while pgconn.is_busy():
            while not (yield Wait.R):
                continue
            pgconn.consume_input()
        result = pgconn.get_result()
        if result is None:  # the end of one command's results
            results.append(current)
            current = []
        elif result.status == PIPELINE_SYNC:
            assert len(results) == commands, (len(results), commands)
            return results
        else:
            current.append(result)


def _resumed(gen: PQGen[RV], state: Wait) -> PQGen[RV]:
    """`gen`, which has yielded `state`, waited for from there on by another waiter."""
    while True:
        ready = yield state
        try:
            state = gen.send(ready)
        except StopIteration as end:
            return end.value


class PreparedStatements:
    """Which statements each connection has prepared (a connection the pool replaced has none)."""

    def __init__(self) -> None:
        self._by_connection: weakref.WeakKeyDictionary[AsyncConnection, set[bytes]] = weakref.WeakKeyDictionary()

    def of(self, conn: AsyncConnection) -> set[bytes]:
        names = self._by_connection.get(conn)
        if names is None:
            names = self._by_connection[conn] = set()
        return names


async def run_statements(
    conn: AsyncConnection,
    prepared: PreparedStatements,
    statements: Sequence[Statement],
    wait: Callable[[PQGen[list[list[Any]]]], Awaitable[list[list[Any]]]] | None = None,
) -> None:
    """Run `statements` in one round trip, in one implicit transaction (or in the connection's open one).

    Each statement gets its rows, or its error if it failed; those after a failure get neither (they did
    not run, and what ran before it was rolled back with the transaction). Raises only what leaves the
    connection unusable (a psycopg OperationalError). `wait` waits for the socket (default: psycopg's
    `conn.wait`, which cancels the statements at the server when its caller is cancelled).
    """
    pgconn = conn.pgconn
    known = prepared.of(conn)
    # The statements not prepared on this connection yet, first: their results come first.
    preparing = {s.prepared.name: s.prepared for s in statements if s.prepared.name not in known}
    pgconn.enter_pipeline_mode()
    try:
        for p in preparing.values():
            pgconn.send_prepare(p.name, p.sql, p.types)
        for statement in statements:
            pgconn.send_query_prepared(statement.prepared.name, statement.values)
        pgconn.pipeline_sync()
        results = await (wait or conn.wait)(_exchange(pgconn, len(preparing) + len(statements)))
    finally:
        if pgconn.pipeline_status:
            try:
                pgconn.exit_pipeline_mode()
            except psycopg.OperationalError:
                pass  # results left unread (the wait failed): the pool discards the connection
    for name, outcome in zip(preparing, results, strict=False):
        if outcome and outcome[0].status == COMMAND_OK:
            known.add(name)
        elif outcome and outcome[0].status == FATAL_ERROR:
            error = errors.error_from_result(outcome[0], encoding="utf-8")
            if error.sqlstate == DUPLICATE_PREPARED_STATEMENT:
                known.add(name)  # prepared before this process lost track of it: usable next time
            for statement in statements:
                statement.error = error
            return
    for statement, outcome in zip(statements, results[len(preparing) :], strict=True):
        if not outcome:
            continue
        result = outcome[0]
        if result.status == TUPLES_OK:
            statement.rows = [
                tuple(None if (v := result.get_value(r, c)) is None else v.decode() for c in range(result.nfields))
                for r in range(result.ntuples)
            ]
        elif result.status == COMMAND_OK:
            statement.rows = []
        elif result.status == FATAL_ERROR:
            statement.error = errors.error_from_result(result, encoding="utf-8")
            if statement.error.sqlstate == NO_SUCH_PREPARED_STATEMENT:
                known.clear()  # deallocated behind this process's back (a DEALLOCATE ALL): prepare again


class _Kept:
    """A connection the group committer holds, its socket watched by the event loop for as long as it is
    held: an exchange waits for a wakeup. psycopg's `conn.wait` registers and unregisters the socket (two
    system calls), arms a timer and makes a future at every wait, and the pool checks a connection with
    two reads of its socket at every checkout."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn
        self.watched = False
        self.gone = False  # given back to the pool
        self._loop = asyncio.get_running_loop()
        self._fileno = conn.pgconn.socket
        # The exchange waiting for the socket, and its outcome.
        self._gen: PQGen[Any] | None = None
        self._done: asyncio.Future[Any] | None = None

    def watch(self) -> None:
        self._loop.add_reader(self._fileno, self._readable)
        self.watched = True

    def unwatch(self) -> None:
        if self.watched:
            self._loop.remove_reader(self._fileno)
            self.watched = False

    def _readable(self) -> None:
        gen, done = self._gen, self._done
        if gen is None or done is None:
            # Between exchanges: the server's goodbye, say. Checked before the next group uses the
            # connection (`GroupCommit._take`), and meanwhile a socket at its end wakes no one.
            self.unwatch()
            return
        if done.done():  # (cancelled)
            return
        # Read here, not in the waiting task a pass later: by then the loop would have seen the unread
        # socket again, and called this once more with no exchange waiting.
        try:
            state = gen.send(Ready.R)
        except StopIteration as end:
            done.set_result(end.value)
        except Exception as exc:
            done.set_exception(exc)
        else:
            if state != Wait.R:
                done.set_exception(psycopg.InternalError(f"bad poll status while reading: {state}"))

    async def wait(self, gen: PQGen[RV]) -> RV:
        """What `conn.wait(gen)` returns, for a `gen` that only reads once it has flushed (`_exchange`).

        Cancelled, it leaves the connection busy with results unread (the pool closes it when it comes
        back), where psycopg's would cancel the statements at the server: nothing cancels the group
        runner but the event loop's end."""
        try:
            state = next(gen)
        except StopIteration as end:
            return end.value
        if state != Wait.R:
            # A send waiting for room in the socket's buffer (rare): psycopg's wait, which registers the
            # socket itself.
            self.unwatch()
            return await self.conn.wait(_resumed(gen, state))
        if not self.watched:
            self.watch()
        self._gen, self._done = gen, self._loop.create_future()
        try:
            return await self._done
        finally:
            self._gen = self._done = None


@dataclass(eq=False, slots=True)
class Chain:
    """One write of a thread (a put or a put_writes) as its statements join the thread's queue."""

    thread: bytes  # the thread's id, as its statements' first parameter
    # The cache entry the write is prepared with: marked stale if a write prepared before it fails
    entry: ThreadItems
    turn: ThreadTurn  # the thread's lock, as this write holds it
    # The next statement is the write's last: once it is queued, the thread's next write may start
    last: bool = False


@dataclass(eq=False)
class _Write:
    statement: Statement
    done: asyncio.Future[list[tuple[str | None, ...]]]
    attempts: int = 0
    # Set while the write's group is at the server: it settles before its caller may go on.
    group: asyncio.Future[None] | None = None
    chain: Chain | None = None


@dataclass(eq=False)
class GroupCommit:
    """Runs the writes ready in the same pass of the event loop as one group (see the module's doc)."""

    checkout: Callable[[], Awaitable[AsyncConnection]]
    give_back: Callable[[AsyncConnection], Awaitable[None]]
    prepared: PreparedStatements
    # Groups at the server at once, each on a connection of its own: with one, the writes queue behind
    # the one backend that runs them all.
    max_groups: int = 2
    _waiting: list[_Write] = field(default_factory=list)
    _groups: int = 0  # runners started (each takes what is waiting when its first step runs)
    _collecting: bool = False  # a runner was started and has not taken its group yet
    _kept: list[_Kept] = field(default_factory=list)  # held between groups (`KEEP_SECONDS`)
    _release: asyncio.TimerHandle | None = None
    _releasing: set[asyncio.Task[None]] = field(default_factory=set)
    _closed: bool = False
    # Per thread, its writes' statements queued and not settled yet.
    _queued: Unsettled[bytes, _Write] = field(default_factory=Unsettled)

    async def run(
        self, prepared: Prepared, values: list[bytes | None], chain: Chain | None = None
    ) -> list[tuple[str | None, ...]]:
        """The rows of a statement, run with the group of its event-loop pass, once that committed.

        `chain`: the thread's write it belongs to, whose queue it joins (see the module's doc).
        """
        loop = asyncio.get_running_loop()
        write = _Write(Statement(prepared, values), loop.create_future())
        if chain is not None:
            if chain.entry.stale:  # prepared after a write that failed: it may refer to what it stored
                raise StaleThreadError(chain.thread.decode())
            write.chain = chain
            self._queued.queue(chain.thread, write)
        self._waiting.append(write)
        if not self._collecting and self._groups < self.max_groups:
            # Its first step runs in the loop's next pass: the writes woken in this one join the group.
            self._collecting = True
            self._groups += 1
            loop.create_task(self._run_groups())
        if chain is not None and chain.last:
            chain.turn.release()
        try:
            return await write.done
        except asyncio.CancelledError:
            if write.group is not None:
                # At the server: settled (committed or not) before its caller goes on (the caller
                # forgets the thread's cache, which the write may or may not have stored).
                await _settled(write.group)
            else:  # not sent: it never runs
                if write in self._waiting:
                    self._waiting.remove(write)
                self._settle(write, stored=False)
            raise

    async def settled(self, thread: bytes) -> None:
        """Return once every statement of `thread` queued so far has committed or failed."""
        await self._queued.settled(thread)

    def _ready(self) -> list[_Write]:
        """Take the waiting statements that may go to the server now: all but those of a thread whose
        earlier statements are at the server in another group (they wait for its end)."""
        group: list[_Write] = []
        held: list[_Write] = []
        for write in self._waiting:
            if write.done.done():  # cancelled while waiting: never sent
                self._settle(write, stored=False)
                continue
            chain = write.chain
            if chain is not None:
                before = self._queued.of(chain.thread)
                if before[0] is not write and any(
                    earlier.group is not None or earlier not in group
                    for earlier in before[: before.index(write)]
                ):
                    held.append(write)
                    continue
            group.append(write)
        self._waiting = held
        return group

    def _settle(self, write: _Write, *, stored: bool) -> None:
        """`write` has committed (`stored`) or will never run (see queued.py)."""
        if write.chain is not None:
            self._queued.settle(write.chain.thread, write, stored=stored)

    async def close(self) -> None:
        """Give the kept connections back (before the pool closes); those of runners still running go back
        when they end."""
        self._closed = True
        self._release_kept()
        await asyncio.gather(*self._releasing)

    async def _run_groups(self) -> None:
        kept: _Kept | None = None
        try:
            while True:
                self._collecting = False
                group = self._ready()
                if not group:
                    break
                kept = await self._run_group(group, kept)
        except BaseException:
            self._groups -= 1
            if kept is not None:
                await self._give_back(kept)  # (cancelled at the server: busy, so the pool closes it)
            raise
        self._groups -= 1
        if kept is not None:
            self._kept.append(kept)
            if self._closed:
                self._release_kept()
            elif self._release is None:
                self._release = asyncio.get_running_loop().call_later(KEEP_SECONDS, self._release_kept)

    async def _take(self) -> _Kept:
        """A kept connection, else one from the pool; StoreError if there is none to be had."""
        while self._kept:
            kept = self._kept.pop()
            if not kept.watched:  # the server said something between groups: the pool's check
                try:
                    await check_connection(kept.conn)
                except psycopg.OperationalError:
                    await self._give_back(kept)
                    continue
                kept.watch()
            return kept
        kept = _Kept(await self.checkout())
        kept.watch()
        return kept

    async def _give_back(self, kept: _Kept) -> None:
        if not kept.gone:
            kept.gone = True
            kept.unwatch()
            await self.give_back(kept.conn)

    def _release_kept(self) -> None:
        if self._release is not None:
            self._release.cancel()
            self._release = None
        if not self._kept:
            return
        kept, self._kept = self._kept, []

        async def give_back() -> None:
            for k in kept:
                await self._give_back(k)

        task = asyncio.get_running_loop().create_task(give_back())
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def _run_group(self, group: list[_Write], kept: _Kept | None) -> _Kept | None:
        """Run one group; the connection to run the next one on, if it is still good."""
        # One order for every process's groups: the threads' rows are locked in the same order.
        group.sort(key=lambda write: write.statement.values[0] or b"")
        settled = asyncio.get_running_loop().create_future()
        for write in group:
            write.group = settled
            write.attempts += 1
            write.statement.rows = write.statement.error = None
        try:
            kept, failure = await self._send(group, kept)
        except BaseException as exc:
            for write in group:
                if not write.done.done():
                    write.done.set_exception(StoreUnavailable(f"database unavailable: {first_line(exc)}"))
                self._settle(write, stored=False)
            raise
        finally:
            settled.set_result(None)
            for write in group:
                write.group = None
        # One failed statement rolled back the whole group: the others run again with the next one.
        rolled_back = any(write.statement.error is not None for write in group)
        again = []
        for write in group:
            statement = write.statement
            if write.done.done():  # cancelled while its group was at the server (or failed as stale)
                self._settle(write, stored=failure is None and not rolled_back)
            elif failure is not None:
                write.done.set_exception(type(failure)(str(failure)))
                self._settle(write, stored=False)
            elif statement.error is not None and not (
                statement.error.sqlstate in RETRIED and write.attempts < MAX_ATTEMPTS
            ):
                write.done.set_exception(statement.error)
                self._settle(write, stored=False)
            elif statement.rows is not None and not rolled_back:
                write.done.set_result(statement.rows)
                self._settle(write, stored=True)
            else:
                again.append(write)
        self._waiting[:0] = again
        return kept

    async def _send(self, group: list[_Write], kept: _Kept | None) -> tuple[_Kept | None, StoreError | None]:
        """Run the group's statements (on `kept`, else on another connection); the connection afterwards,
        and a StoreError for all of them if there was no working connection for it."""
        statements = [write.statement for write in group]
        for attempt in (1, 2):
            if kept is None:
                try:
                    kept = await self._take()
                except StoreError as exc:
                    return None, exc
            try:
                await run_statements(kept.conn, self.prepared, statements, kept.wait)
                return kept, None
            except psycopg.OperationalError as exc:
                broken, kept = kept, None
                await self._give_back(broken)  # the pool closes it
                if not broken.conn.broken or attempt == 2:
                    return None, StoreUnavailable(f"database unavailable: {first_line(exc)}")
                # A connection that died since it was taken (a killed backend): the group once more on
                # a fresh one. A group whose commit was lost with it runs again: a put of a checkpoint
                # replaces it, and items it numbered meet their own rows (the retry of a stale thread).
        raise AssertionError("unreachable")


async def _settled(group: asyncio.Future[None]) -> None:
    while not group.done():
        try:
            await asyncio.shield(group)
        except asyncio.CancelledError:
            continue
