"""`MysqlCheckpointer`: MySQL 8 or MariaDB >= 10.6 through an asyncmy connection pool."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import random
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import asyncmy
from asyncmy import converters, errors
from asyncmy.constants import CLIENT, FIELD_TYPE
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple

from orecast.checkpoint import migrations
from orecast.checkpoint.base import OrecastCheckpointer
from orecast.checkpoint.cache import ThreadItems
from orecast.checkpoint.core import Db, StaleThreadError, ThreadTurn, put_parameters, utc_now
from orecast.checkpoint.encoding import json_text
from orecast.checkpoint.errors import StoreError, StoreTimeout, StoreUnavailable
from orecast.checkpoint.ids import config_ids
from orecast.checkpoint.mysql import queries
from orecast.checkpoint.mysql.groups import CLIENT_ERRORS, Chain, GroupWriter
from orecast.checkpoint.postgres.timeouts import Timeouts
from orecast.checkpoint.upcast import WRITE_VERSIONS

DEFAULT_PORT = 3306
CONNECT_TIMEOUT_SECONDS = 10
POOL_TIMEOUT_SECONDS = 30.0
MIGRATION_LOCK_SECONDS = 300
# A deadlock rolls the whole transaction back (InnoDB picks a victim); the write is run again.
DEADLOCK_RETRIES = 5
# Query options of a mysql:// URL besides the store's timeouts (which `urls.py` takes out).
CONNECTION_OPTIONS = ("unix_socket",)
# Never ANSI_QUOTES or NO_BACKSLASH_ESCAPES: the driver escapes parameters with backslashes.
SQL_MODE = "STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

# Server error numbers (MySQL's and MariaDB's lists agree on these).
ER_DUP_ENTRY = 1062
ER_LOCK_WAIT_TIMEOUT = 1205
ER_LOCK_DEADLOCK = 1213
ER_STATEMENT_TIMEOUT = 1969  # MariaDB max_statement_time
ER_QUERY_TIMEOUT = 3024  # MySQL max_execution_time
ER_NET_PACKET_TOO_LARGE = 1153
CONNECTION_LOST = {2002, 2003, 2006, 2013, 2055, 1053, 1927}
BEGIN = "BEGIN"
COMMIT = "COMMIT"


class Deadlock(StoreError):
    """InnoDB chose this transaction as a deadlock's victim and rolled it back."""


def _quoted(value: str) -> str:
    """`value` as a MySQL string literal, for a connection in utf8mb4 without NO_BACKSLASH_ESCAPES
    (`SQL_MODE`): inside single quotes only the backslash and the quote need escaping (no utf8mb4
    character contains either byte), and NUL is escaped as well. The driver's own escaping (a
    `str.translate` that also escapes `"`, newlines and Ctrl-Z) took ~15 times as long on the JSON texts
    a write sends, which made it a good part of the client's CPU per turn. Each character is looked for
    before it is replaced: most values hold none of them, and `in` costs less than a `replace` that finds
    nothing (the 8×20 loop's 14,579 values: 12 against 25 µs a turn)."""
    if "\\" in value:
        value = value.replace("\\", "\\\\")
    if "'" in value:
        value = value.replace("'", "\\'")
    if "\0" in value:
        value = value.replace("\0", "\\0")
    return f"'{value}'"


def _text(value: Any) -> Any:
    # VARBINARY columns (the ids) come as bytes; they hold UTF-8 text. Blobs are another field type.
    return value.decode("utf-8") if type(value) is bytes else value


def _utc(value: Any) -> Any:
    parsed = converters.convert_datetime(value)
    return parsed.replace(tzinfo=UTC) if isinstance(parsed, datetime) else parsed


def _b64(blob: bytes | None) -> str | None:
    return base64.b64encode(blob).decode("ascii") if blob is not None else None


def conversions() -> dict[Any, Any]:
    conv = dict(converters.conversions)
    conv[FIELD_TYPE.VAR_STRING] = _text
    conv[FIELD_TYPE.STRING] = _text
    conv[FIELD_TYPE.DATETIME] = _utc
    return conv


def _code(exc: BaseException) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def _first_line(exc: BaseException) -> str:
    args = getattr(exc, "args", ())
    text = str(args[1] if len(args) > 1 else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def store_error(exc: BaseException, timeouts: Timeouts) -> StoreError | None:
    """Our error for a driver error that is the database's doing, or None to let it through."""
    code = _code(exc)
    if code == ER_LOCK_WAIT_TIMEOUT:
        return StoreTimeout(
            f"database lock timeout: a row stayed locked by another session for over {timeouts.lock:g} s"
        )
    if code in (ER_STATEMENT_TIMEOUT, ER_QUERY_TIMEOUT):
        return StoreTimeout(f"database statement timeout: a statement ran over {timeouts.statement:g} s")
    if code == ER_NET_PACKET_TOO_LARGE:
        return StoreError(
            "a value is larger than the server's max_allowed_packet (raise it on the server); nothing was stored"
        )
    if code == ER_LOCK_DEADLOCK:
        return Deadlock(f"database deadlock: {_first_line(exc)}")
    if code in CONNECTION_LOST or isinstance(exc, errors.InterfaceError | ConnectionError):
        return StoreUnavailable(f"database unavailable: {_first_line(exc)}")
    return None


class _Db:
    """One connection; `execute` tells the rows a statement matched (the connections say FOUND_ROWS)."""

    def __init__(self, conn: Any, transaction: bool) -> None:
        self.conn = conn
        self.pooled = conn  # the pool's connection (`conn` may be a wrapper around it: bench.mysql_server_cpu)
        self.in_transaction = transaction  # the connection's BEGIN was sent by `_transaction`
        self.began = False  # a batch sent BEGIN and its COMMIT has not answered yet
        self.unread = False  # a batch whose answers were not all read (a cancelled call)
        # Items numbered by the saver, stored by the batch of the put or put_writes that refers to them
        # (`_store_items`): [[hash, JSON text], …] numbered from `first_item` on.
        self.new_items: list[list[str]] = []
        self.first_item = 0
        self.incarnation = ""  # the thread's incarnation the items were numbered for
        # A put's or put_writes' connection (`_write_unit`), whose batch stores the items it numbered.
        # Any other write (migrate-state's, say) stores its items at once (`_store_items`).
        self.defer_items = False
        # `_first_write`'s: its first statement locks the thread's row and reads its next item number,
        # even for a thread the process has cached (`_touch_thread`).
        self.locks_thread = False
        # A put's or put_writes' place in its thread's queue (`_GroupedDb`); None for other operations.
        self.chain: Chain | None = None
        self.last_rows: list[tuple[Any, ...]] = []  # the rows of a batch's last statement
        self.completed: list[int] = []  # the answers of a batch read so far (those before an error)
        self.prepared: set[str] | None = None  # the statements prepared on this connection (MariaDB)
        # The driver's prepared statements of this connection's session, by name (MariaDB, `fetch_prepared`)
        self.statements: dict[str, Any] | None = None
        self.compound = False  # a group of writes is one compound statement (MariaDB)
        self.failed_write: int | None = None  # see `group`

    async def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> int:
        async with self.conn.cursor() as cur:
            await cur.execute(sql, params or None)
            return cur.rowcount

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self.conn.cursor() as cur:
            await cur.executemany(sql, rows)

    async def fetchone(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> tuple[Any, ...] | None:
        async with self.conn.cursor() as cur:
            await cur.execute(sql, params or None)
            return await cur.fetchone()

    async def fetchall(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
        async with self.conn.cursor() as cur:
            await cur.execute(sql, params or None)
            return list(await cur.fetchall())

    async def fetch_prepared(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """`fetchall`, through the connection's server-side prepared statement where `sql` is one of
        `queries.PREPARED_READS` (MariaDB), prepared first if new (a round trip once per connection).

        The driver's binary protocol (COM_STMT_EXECUTE), not a text `EXECUTE … USING <literals>`: the
        parameters go as they are (nothing escaped, nothing for the server to parse) and the column
        definitions are parsed once per statement, not once per read. A read cost 86–102 µs of client
        CPU through the text EXECUTE, 27–46 µs so (2,000 reads each, alternating), and the 8×20 loop
        0.16 M client instructions a turn less (docs/benchmarks.md; the server's instructions did not
        move measurably). Its columns are ids, JSON text, integers and a blob,
        which the binary protocol returns as the text protocol does (no DATETIME: the driver would not
        apply `conversions()` to it)."""
        statements = self.statements
        prep = queries.PREPARED_READS.get(sql) if statements is not None else None
        if statements is None or prep is None:
            return await self.fetchall(sql, params)
        name, text = prep
        statement = statements.get(name)
        if statement is None:
            statement = statements[name] = await self.conn.prepare(text)
        result = await statement.execute(params)
        return list(result.rows or ())

    async def batch(self, statements: Sequence[tuple[str, Mapping[str, Any] | Sequence[Any] | None]]) -> list[int]:
        """Run `statements` in one round trip (one multi-statement packet, parameters escaped, see
        `_render`); the rows each matched. The server stops at the first error: the statements after it
        do not run, and a transaction the batch began stays open for `_finish` to roll back."""
        parts: list[str] = []
        own: list[bool] = []  # per part: whether it is one of `statements` (not a PREPARE it added)
        new_names: list[str] = []
        self._render(statements, parts, own, new_names, {})
        self.began = self.began or statements[0][0] == BEGIN
        self.completed = counts = []
        cur = self.conn.cursor()
        self.unread = True
        answered = 0
        try:
            rows = await cur.execute(";\n".join(parts))
            while True:
                if own[answered]:
                    counts.append(rows)
                answered += 1
                if not await cur.nextset():
                    break
                rows = cur.rowcount
        except BaseException as exc:
            self._failed(exc, new_names)
            raise
        self.last_rows = list(await cur.fetchall())
        self.unread = False
        if statements[-1][0] == COMMIT:
            self.began = False
        return counts

    async def group(self, writes: Sequence[list[tuple[str, Any]]]) -> list[int]:
        """Run several writes' statements in one transaction and one round trip (`groups.py`); for each
        write, the rows its first statement matched (on MariaDB 1 for each when none matched 0 rows: only
        whether a write matched is used). On a server error, `failed_write` is the index of
        the write whose statement failed (None: no single one), and the transaction is left open for
        `_finish` to roll back."""
        self.failed_write = None
        if len(writes) == 1 and len(writes[0]) == 1:
            return (await self.batch(writes[0]))[:1]  # one statement: atomic by itself
        if not self.compound:
            return await self._group_statements(writes)
        # MariaDB: one compound statement. Its statements send no answers of their own (a batch of
        # statements sends one per statement, each waking the client).
        new_names: list[str] = []
        sql = self._compound(writes, new_names)
        self.began = True
        cur = self.conn.cursor()
        self.unread = True
        try:
            await cur.execute(sql)
            if cur.description is None:  # no result set: every write matched rows
                row = (1,) * len(writes)
            else:
                row = await cur.fetchone()
                while await cur.nextset():
                    pass
        except BaseException as exc:
            self._failed(exc, new_names)
            code = _code(exc)
            if isinstance(exc, errors.Error) and code is not None and code < CLIENT_ERRORS:
                # Which write failed: the transaction is still open (`_finish` rolls it back).
                try:
                    failed = await self.fetchone(queries.SELECT_FAILED_WRITE)
                except errors.Error:
                    failed = None  # (then no single write is blamed: all get the error)
                self.failed_write = int(failed[0]) if failed and failed[0] is not None else None
            raise
        self.unread = False
        self.began = False
        return [int(n) for n in row]

    def _compound(self, writes: Sequence[list[tuple[str, Any]]], new_names: list[str]) -> str:
        """The compound statement of a group (MariaDB); the statements it prepares are added to `new_names`."""
        parts = ["START TRANSACTION"]
        own: list[bool] = []
        answers = []
        for index, statements in enumerate(writes):
            parts.append(f"SET @orecast_write = {index}")
            answer = f"@orecast_matched_{index}"
            answers.append(answer)
            escaped: dict[int, Any] = {}  # a write's statements share their parameters: escaped once
            first, params = statements[0]
            put = first == queries.RECORD_PUT_IN_THREAD
            self._render([(queries.RECORD_PUT_IN_GROUP, params)] if put else statements[:1], parts, own, new_names, escaped)
            if len(statements) > 1 and statements[1][0] == queries.REMEMBER_MATCHED:
                # One SET, not two: each statement of a compound one costs the server a parse of its own.
                # (Not `SET @orecast_ok = ROW_COUNT(), {answer} = ROW_COUNT()`: the second reads 0.)
                parts.append(f"SET {answer} = (@orecast_ok := ROW_COUNT())")
                if put and params["root"]:
                    inner: list[str] = []
                    self._render([(queries.END_INTERRUPTION, params)], inner, own, new_names, escaped)
                    parts.extend(inner[:-1])  # (a PREPARE of it runs before the IF, unconditionally)
                    parts.append(queries.IF_INTERRUPTED.format(statement=inner[-1]))
                rest = statements[2:]
            else:
                parts.append(f"SET {answer} = ROW_COUNT()")
                rest = statements[1:]
            self._render(rest, parts, own, new_names, escaped)
        parts.append(COMMIT)
        # The answers only when a write matched nothing (a stale thread, rare): a SELECT in a compound
        # statement is sent as soon as it ran, and the statement's own end in a packet after it, so the
        # client woke twice per group (and parsed a result set) to learn that every write matched.
        least = f"LEAST({', '.join(answers)})" if len(answers) > 1 else answers[0]
        parts.append(f"IF {least} = 0 THEN\n    SELECT {', '.join(answers)};\nEND IF")
        return "BEGIN NOT ATOMIC\n" + ";\n".join(parts) + ";\nEND"

    async def _group_statements(self, writes: Sequence[list[tuple[str, Any]]]) -> list[int]:
        # MySQL: the writes' statements in one multi-statement batch, inside BEGIN … COMMIT.
        statements: list[tuple[str, Any]] = [(BEGIN, None)]
        starts = []
        for write in writes:
            starts.append(len(statements))
            statements.extend(write)
        statements.append((COMMIT, None))
        try:
            counts = await self.batch(statements)
        except errors.Error as exc:
            code = _code(exc)
            failed_at = len(self.completed)
            if code is not None and code < CLIENT_ERRORS and failed_at < len(statements) - 1:
                self.failed_write = max((i for i, start in enumerate(starts) if start <= failed_at), default=None)
            raise
        return [counts[start] for start in starts]

    def _literal(self, value: Any) -> str:
        """`value` as an SQL literal (see `_escaped`)."""
        kind = type(value)
        if kind is str:
            return _quoted(value)
        if kind is int:
            return str(value)
        if value is None:
            return "NULL"
        if kind is datetime and value.tzinfo is None:
            return f"'{value.isoformat(' ')}'"
        return self.conn.literal(value)

    def _escaped(self, params: Mapping[str, Any]) -> dict[str, str]:
        """Each parameter as an SQL literal: strings, ints, NULL and naive datetimes (the saver's UTC
        timestamps) without the driver's type dispatch (ints and datetimes as it writes them), a string
        holding nothing to escape (most do, see `_quoted`) quoted inline. A group's ~70 parameters took
        20 µs through a call of `_literal` each, 14 µs so (the 8×20 loop's recorded groups)."""
        values: dict[str, str] = {}
        for key, value in params.items():
            kind = type(value)
            if kind is str:
                if "\\" in value or "'" in value or "\0" in value:
                    values[key] = _quoted(value)
                else:
                    values[key] = f"'{value}'"
            elif kind is int:
                values[key] = str(value)
            elif value is None:
                values[key] = "NULL"
            else:
                values[key] = self._literal(value)
        return values

    def _render(
        self,
        statements: Sequence[tuple[str, Any]],
        parts: list[str],
        own: list[bool],
        new_names: list[str],
        escaped: dict[int, Any],
    ) -> None:
        """Append the SQL text of `statements` to `parts`, parameters escaped; the batch statements of
        `queries.PREPARED` as EXECUTE of the connection's prepared statement (prepared first if new).
        `escaped`: the statements' parameters as literals, by the id of their dict (a write's statements
        share one)."""
        prepared = self.prepared
        for statement, params in statements:
            prep = queries.PREPARED.get(statement) if prepared is not None else None
            if prep is not None:
                name, text, execute, in_order = prep
                if name not in prepared:
                    parts.append(f"PREPARE {name} FROM {self._literal(text)}")
                    own.append(False)
                    prepared.add(name)
                    new_names.append(name)
                values = escaped.get(id(params))
                if values is None:
                    values = escaped[id(params)] = self._escaped(params)
                parts.append(f"{execute} {', '.join(in_order(values))}")
                own.append(True)
                continue
            if params:
                if id(params) not in escaped:
                    if isinstance(params, Mapping):
                        escaped[id(params)] = self._escaped(params)
                    else:
                        escaped[id(params)] = tuple(self._literal(value) for value in params)
                statement = statement % escaped[id(params)]
            parts.append(statement)
            own.append(True)

    def _failed(self, exc: BaseException, new_names: list[str]) -> None:
        if self.prepared is not None:
            # Some may not have been prepared (a PREPARE after the error): prepared again next time.
            self.prepared.difference_update(new_names)
        if isinstance(exc, errors.Error):
            # An error packet from the server ends the batch cleanly; any other failure leaves answers
            # unread on the connection, which is then closed.
            code = _code(exc)
            self.unread = code is None or code >= CLIENT_ERRORS


class _GroupedDb(_Db):
    """A put or put_writes of a thread the process knows: its batch joins the thread's queue and the next
    group of writes (`groups.py`), which runs it in a transaction shared with other threads' writes. A
    statement it runs on its own (a read before the batch) takes a pooled connection for that
    statement, once the thread's queued writes have settled."""

    def __init__(self, groups: GroupWriter, connection: Callable[[], Any], thread_id: str, chain: Chain) -> None:
        super().__init__(None, transaction=False)
        self.groups = groups
        self.connection = connection
        self.thread_id = thread_id
        self.chain = chain

    async def _own_connection(self) -> Any:
        """A pooled connection for one statement, once the thread's queued writes have settled."""
        await self.groups.settled(self.thread_id)
        return self.connection()

    async def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> int:
        async with await self._own_connection() as db:
            return await db.execute(sql, params)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with await self._own_connection() as db:
            await db.executemany(sql, rows)

    async def fetchone(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> tuple[Any, ...] | None:
        async with await self._own_connection() as db:
            return await db.fetchone(sql, params)

    async def fetchall(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
        async with await self._own_connection() as db:
            return await db.fetchall(sql, params)

    async def batch(self, statements: Sequence[tuple[str, Mapping[str, Any] | Sequence[Any] | None]]) -> list[int]:
        return await self.groups.write(self.thread_id, list(statements), self.chain)


def connect_kwargs(url: str) -> dict[str, Any]:
    """asyncmy's connection arguments for `mysql://user:password@host:port/database?unix_socket=…`."""
    parts = urlsplit(url)
    database = unquote(parts.path.lstrip("/"))
    if not database or "/" in database:
        raise ValueError("a MySQL URL names one database: mysql://user:password@host:3306/database")
    kwargs: dict[str, Any] = {
        "host": parts.hostname or "127.0.0.1",
        "port": parts.port or DEFAULT_PORT,
        "user": unquote(parts.username) if parts.username else "root",
        "password": unquote(parts.password) if parts.password else "",
        "database": database,
    }
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in CONNECTION_OPTIONS:
            raise ValueError(
                f"unknown option {key!r} in the MySQL URL; known: "
                f"{', '.join(CONNECTION_OPTIONS + ('statement_timeout', 'lock_timeout'))}"
            )
        kwargs[key] = value
    return kwargs


async def stored_schema_version(url: str) -> int | None:
    """The schema version of the store at `url`, None when it has none; creates and migrates nothing."""
    try:
        conn = await asyncmy.connect(**connect_kwargs(url), autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    except (errors.Error, OSError) as exc:
        raise StoreUnavailable(f"database unavailable: {_first_line(exc)}") from None
    try:
        async with conn.cursor() as cur:
            await cur.execute(queries.HAS_MIGRATIONS)
            if (await cur.fetchone())[0] == 0:
                return None
            await cur.execute(queries.SELECT_SCHEMA_VERSION)
            return int((await cur.fetchone())[0])
    finally:
        conn.close()


def session_settings(server_version: str, timeouts: Timeouts) -> str:
    """The SET run on each new connection: strict mode, READ COMMITTED, the timeouts, no notes.

    Notes (`CREATE TABLE IF NOT EXISTS` finding the table, at every start) would make the driver ask
    for them in a round trip of its own and log each as a warning; real warnings still count."""
    mariadb = "mariadb" in server_version.lower()
    major_minor = tuple(int(p) for p in server_version.split("-")[0].split(".")[:2])
    # MariaDB calls it tx_isolation before 11.1; MySQL 8 only knows transaction_isolation.
    isolation = "tx_isolation" if mariadb and major_minor < (11, 1) else "transaction_isolation"
    lock = max(1, round(timeouts.lock)) if timeouts.lock else 365 * 24 * 3600
    if mariadb:
        statement = f"max_statement_time = {timeouts.statement:g}"
    else:  # milliseconds, SELECT statements only
        statement = f"max_execution_time = {round(timeouts.statement * 1000)}"
    return (
        f"SET SESSION sql_mode = '{SQL_MODE}', SESSION {isolation} = 'READ-COMMITTED', "
        f"SESSION innodb_lock_wait_timeout = {lock}, SESSION {statement}, SESSION time_zone = '+00:00', "
        "SESSION sql_notes = 0"
    )


class _Operation:
    """One operation on a pooled connection (a read, a group of writes; `MysqlCheckpointer._transaction`
    wraps its own in one), with the database's failures turned into StoreErrors and the connection given
    back as `_finish` says: a plain class, not a generator-based context manager (each read and each group
    enters one; those cost a generator, its frames and two more objects)."""

    __slots__ = ("_saver", "_transaction", "_db")

    def __init__(self, saver: MysqlCheckpointer, *, transaction: bool = False) -> None:
        self._saver = saver
        self._transaction = transaction  # the caller sends BEGIN (`MysqlCheckpointer._transaction`)

    async def __aenter__(self) -> _Db:
        self._db = await self._saver._acquire(self._transaction)
        return self._db

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        saver = self._saver
        try:
            if isinstance(exc, errors.Error | OSError):
                error = store_error(exc, saver.timeouts)
                if error is not None:
                    raise error from exc
        finally:
            await saver._finish(self._db, exc is not None, isinstance(exc, asyncio.CancelledError))


class _Grouped:
    """A put or put_writes of a thread the process knows (`MysqlCheckpointer._write_unit`): its batch
    joins a group (`_GroupedDb`), so it holds no connection and nothing is left to do on leaving."""

    __slots__ = ("_db",)

    def __init__(self, db: _GroupedDb) -> None:
        self._db = db

    async def __aenter__(self) -> _GroupedDb:
        return self._db

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        return None


class MysqlCheckpointer(OrecastCheckpointer):
    """LangGraph checkpoint saver on MySQL 8 or MariaDB (JSON values, pooled connections, linear storage)."""

    dialect = "mysql"
    # MySQL 8 stores JSON in a binary form that sorts object keys (shorter first), as JSONB does.
    keeps_key_order = True
    # Small channel values in their checkpoint's document (core.INLINE_KEY, migration 008).
    inline_values = True
    q = queries
    migrations_package = "mysql"

    def __init__(self, pool: Any, server_version: str, timeouts: Timeouts | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pool = pool
        # Threads whose next write looks new items up by hash first (see `_run_batch`).
        self._hash_conflicts: set[str] = set()
        # Threads with a write in its last attempt: every write of theirs locks the row (`_write_thread`).
        self._last_attempts: Counter[str] = Counter()
        self.server_version = server_version
        self.timeouts = timeouts or Timeouts()
        self._groups = GroupWriter(self._read)
        # MariaDB takes EXECUTE's parameters as literals (MySQL 8 only as user variables) and runs
        # compound statements outside stored programs (BEGIN NOT ATOMIC … END; MySQL 8 does not).
        self._mariadb = "mariadb" in server_version.lower()
        self._prepared: dict[int, tuple[int, set[str], dict[str, Any]]] = {}
        # The tasks of `_detached`, held until they end (the event loop keeps only a weak reference).
        self._background: set[asyncio.Future[Any]] = set()

    @classmethod
    @asynccontextmanager
    async def from_url(
        cls, url: str, *, pool_size: int = 10, timeouts: Timeouts | None = None, **kwargs: Any
    ) -> AsyncIterator[MysqlCheckpointer]:
        """Open a pool on `url`, migrate the schema, and close the pool on exit."""
        timeouts = timeouts or Timeouts()
        options = {
            **connect_kwargs(url),
            "charset": "utf8mb4",
            "autocommit": True,
            "conv": conversions(),
            # MULTI_STATEMENTS: a put is one packet of statements (`_Db.batch`); parameters stay escaped by the
            # driver, never pasted into SQL.
            "client_flag": CLIENT.FOUND_ROWS | CLIENT.MULTI_STATEMENTS,
            "connect_timeout": CONNECT_TIMEOUT_SECONDS,
            # The server's max_allowed_packet decides how big a value may be, not the client's default.
            "max_allowed_packet": 1 << 30,
        }
        # One direct connection first: a wrong URL fails at once with the server's own message.
        try:
            probe = await asyncmy.connect(**options)
        except (errors.Error, OSError) as exc:
            raise StoreUnavailable(f"database unavailable: {_first_line(exc)}") from None
        try:
            async with probe.cursor() as cur:
                await cur.execute(queries.SERVER_VERSION)
                (server_version,) = await cur.fetchone()
        finally:
            probe.close()
        pool = await asyncmy.create_pool(
            minsize=1,
            maxsize=pool_size,
            pool_recycle=3600,
            init_command=session_settings(server_version, timeouts),
            **options,
        )
        saver = cls(pool, server_version, timeouts, **kwargs)
        saver.loop = asyncio.get_running_loop()
        try:
            await saver.setup()
            yield saver
        finally:
            pool.close()
            await pool.wait_closed()

    async def _acquire(self, transaction: bool) -> _Db:
        """A pooled connection for one operation (StoreTimeout or StoreUnavailable when there is none)."""
        try:
            if self.pool.freesize:
                # A free connection is taken without waiting: no wait_for (in Python 3.11 it wraps the
                # acquisition in a task of its own, an extra pass of the event loop per operation).
                conn = await self.pool.acquire()
            else:
                conn = await asyncio.wait_for(self.pool.acquire(), POOL_TIMEOUT_SECONDS)
        except TimeoutError:
            raise StoreTimeout(
                f"no free database connection after {POOL_TIMEOUT_SECONDS:g} s "
                f"(all {self.pool.maxsize} of the pool in use)"
            ) from None
        except (errors.Error, OSError) as exc:
            raise StoreUnavailable(f"database unavailable: {_first_line(exc)}") from None
        db = _Db(conn, transaction)
        if self._mariadb:
            db.prepared, db.statements = self._prepared_on(conn)
            db.compound = True
        return db

    async def _finish(self, db: _Db, failed: bool, cancelled: bool) -> None:
        """Give `db`'s connection back to the pool: after a cut-off batch, killed on the server (`_stop`);
        after a failed transaction, rolled back (`_abandon`)."""
        conn = db.pooled
        try:
            if db.unread:
                await self._stop(conn)
            elif failed and (db.in_transaction or db.began):
                await self._abandon(conn, cancelled)
        finally:  # a cancellation raised by those still gives the connection back
            await self.pool.release(conn)

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[_Db]:
        """A connection for one operation in a transaction of its own (a thread's first write, maintenance):
        `_Operation` with BEGIN and COMMIT around it."""
        async with _Operation(self, transaction=True) as db:
            await db.execute(BEGIN)
            yield db
            await db.execute(COMMIT)

    def _prepared_on(self, conn: Any) -> tuple[set[str], dict[str, Any]]:
        """The statements prepared on `conn`'s session (a reconnected connection has a new session): the
        names of those PREPAREd in SQL, and the driver's prepared statements by name."""
        session = conn.thread_id()
        known = self._prepared.get(id(conn))
        if known is None or known[0] != session:
            if len(self._prepared) > 4 * self.pool.maxsize:
                self._prepared.clear()
            known = self._prepared[id(conn)] = (session, set(), {})
        return known[1], known[2]

    async def _stop(self, conn: Any) -> None:
        """End a connection whose batch was cut off (a cancelled call) before all its answers came.

        The server would run the rest of the batch, COMMIT included, whatever the client does; so the
        connection is killed from another one first, which stops a statement that waits (on a lock, say)
        and rolls back a transaction not yet committed.
        """
        server_id = conn.thread_id()
        conn.close()
        await self._kill(server_id)

    async def _kill(self, server_id: int) -> None:
        """Kill a session from another connection; a caller cancelled meanwhile gets its cancellation
        at once, and the kill goes on by itself."""

        async def kill() -> None:
            async with self.pool.acquire() as other, other.cursor() as cur:
                await cur.execute(queries.KILL_CONNECTION, (server_id,))

        with contextlib.suppress(Exception):  # gone already (unknown thread), or no connection to spare
            await asyncio.shield(self._detached(asyncio.wait_for(kill(), 5)))

    def _detached(self, work: Awaitable[Any]) -> asyncio.Future[Any]:
        """`work` in a task of its own, which a cancellation of its caller does not stop. Its failure is
        retrieved here: a caller cancelled meanwhile is not there to see it, and asyncio logged it as an
        error ("Task exception was never retrieved")."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._retrieved)
        return task

    def _retrieved(self, task: asyncio.Future[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled():
            task.exception()

    async def _abandon(self, conn: Any, cancelled: bool) -> None:
        """Roll back a failed transaction.

        A call `cancelled` mid-statement leaves a connection the driver has closed (its stream was cut).
        The server does not notice while the statement runs: it went on with it (a wait for a lock, up
        to the lock timeout) and kept the transaction's locks meanwhile, so that the thread's next
        writes waited for it. Its session is killed instead, as `_stop` does (not that of a connection
        closed by a failure: the server is likely gone, and a kill would wait to connect).

        A caller cancelled during the rollback gets its cancellation; the connection, its rollback
        unfinished, is closed (the server rolls back when it sees it go), never given back to the pool
        as it is."""
        if not conn.connected:
            if cancelled:
                await self._kill(conn.thread_id())
            return
        try:
            await asyncio.shield(self._detached(asyncio.wait_for(conn.rollback(), 5)))
        except asyncio.CancelledError:
            conn.close()
            raise
        except Exception:  # the server gone, or a rollback past 5 s
            conn.close()

    def _write(self) -> AbstractAsyncContextManager[_Db]:
        return self._transaction()

    def _read(self) -> AbstractAsyncContextManager[_Db]:
        return _Operation(self)

    async def _write_thread(self, thread_id: str, work: Callable[[Db, ThreadItems], Awaitable[None]]) -> None:
        last_attempt = False
        try:
            for attempt in range(1, DEADLOCK_RETRIES + 1):
                try:
                    return await super()._write_thread(thread_id, work)
                except Deadlock:
                    if attempt == DEADLOCK_RETRIES:
                        raise
                    await asyncio.sleep(0.005 * attempt)
                except StaleThreadError:
                    # Its retry failed too. A retry numbers the thread's new items from what the process
                    # learnt last, and goes with a group (no lock on the thread's row) when an earlier
                    # write of the thread made it known again meanwhile: another process writing the same
                    # thread may number items first once more (or have stored one of its items:
                    # `_run_batch`). Once more, as a first write (`_first_write`): it locks the row, learns
                    # the next number and (items being stored) looks hashes up before numbering, so neither
                    # can happen. Marked in `_last_attempts`, not `_hash_conflicts`, which a write of the
                    # thread ahead of this one in its order clears when it ends, before this one has its
                    # turn back.
                    if last_attempt:
                        raise
                    last_attempt = True
                    self._last_attempts[thread_id] += 1
        finally:
            if last_attempt:
                self._last_attempts[thread_id] -= 1
                if not self._last_attempts[thread_id]:
                    del self._last_attempts[thread_id]

    async def setup(self) -> None:
        """Apply the numbered migrations under a named lock: DDL commits at once in MySQL, so the lock,
        not a transaction, keeps two processes from migrating one database together."""
        async with self._read() as db:
            got = await db.fetchone(queries.LOCK_MIGRATIONS, (MIGRATION_LOCK_SECONDS,))
            if not got or got[0] != 1:
                raise StoreTimeout(f"another process held the migration lock for over {MIGRATION_LOCK_SECONDS} s")
            try:
                await db.execute(queries.CREATE_MIGRATIONS)
                row = await db.fetchone(queries.SELECT_SCHEMA_VERSION)
                current = row[0] if row else 0
                for version, script in migrations.pending(self.migrations_package, current):
                    for statement in migrations.statements(script):
                        await db.execute(statement)
                    await db.execute(queries.INSERT_MIGRATION, (version, self._ts(utc_now())))
            finally:
                await db.fetchone(queries.UNLOCK_MIGRATIONS)

    # -- a write in one round trip -----------------------------------------------------------------

    def _write_unit(self, thread_id: str, turn: ThreadTurn) -> AbstractAsyncContextManager[_Db]:
        # A thread this process has seen, with its next item number: no transaction of its own, since
        # its put (or put_writes) is one batch (`_store_put`, `_store_writes`) that joins a group of
        # writes sent in one transaction (`groups.py`). Otherwise the write runs in a transaction of its
        # own whose first statement locks the thread's row.
        thread = self.items.peek(thread_id)
        if (
            thread is not None
            and thread.next_item > 0
            and thread_id not in self._hash_conflicts
            and thread_id not in self._last_attempts
        ):
            db = _GroupedDb(self._groups, self._read, thread_id, Chain(thread, turn))
            db.defer_items = True
            return _Grouped(db)
        return self._first_write(thread_id)

    async def _writes_settled(self, thread_id: str) -> None:
        await self._groups.settled(thread_id)

    @asynccontextmanager
    async def _first_write(self, thread_id: str) -> AsyncIterator[_Db]:
        # It reads the thread's row and items: after what the thread's queued writes store.
        await self._writes_settled(thread_id)
        async with self._transaction() as db:
            db.defer_items = db.locks_thread = True
            yield db
        self._hash_conflicts.discard(thread_id)

    async def _touch_thread(self, db: Db, thread_id: str) -> ThreadItems:
        cached = self.items.peek(thread_id)
        if cached is not None and not db.locks_thread:  # type: ignore[attr-defined]
            return cached
        now = self._ts(utc_now())
        # `db` may be an observer's wrapper (observe.py) around our `_Db`: used through its methods.
        await db.batch(  # type: ignore[attr-defined]
            [
                (queries.INSERT_THREAD, (thread_id, random.randbytes(8).hex(), now, now)),
                (queries.SELECT_INCARNATION_AND_NEXT_ITEM, (thread_id,)),
            ]
        )
        # The INSERT locked the row until this transaction ends: its next item number stays ours.
        ((incarnation, next_item),) = db.last_rows  # type: ignore[attr-defined]
        if next_item > 1:
            # Items stored before this process (re)learnt the thread (another process's, or migrate-state's
            # upcast values, when a stale write starts again): this write finds its items by hash first.
            self._hash_conflicts.add(thread_id)
        thread = self.items.get(thread_id, incarnation)
        thread.next_item = max(thread.next_item, next_item)
        return thread

    async def _store_items(self, db: _Db, thread_id: str, incarnation: str, new: dict[str, str]) -> dict[str, int]:
        # Numbered here, stored by the batch of the put or put_writes that refers to them. Numbers
        # another process took meanwhile fail that batch's first statement (`next_item <= first_item`),
        # and the write starts again from the thread's row.
        if not db.defer_items:
            # No batch follows (migrate-state rewriting a thread under the incarnation it just set, with
            # a private item cache): numbered by the thread's row and stored now.
            return await self._store_items_now(db, thread_id, incarnation, new)
        thread = self.items.peek(thread_id)
        if thread is None or thread.incarnation != incarnation or not thread.next_item:
            raise StaleThreadError(thread_id)
        found: dict[str, int] = {}
        if thread_id in self._hash_conflicts or not thread.knows_every_hash():
            # An item of this thread stored before this process saw it (e.g. a message the graph brought
            # back from an older checkpoint, or of the branch a fork starts from): look the hashes up first.
            for number, digest in await db.fetchall(queries.SELECT_ITEMS_BY_HASH, (thread_id, json.dumps(list(new)))):
                found[digest] = number
        if not db.new_items:
            db.first_item, db.incarnation = thread.next_item, incarnation
        for digest, text in new.items():
            if digest not in found:
                found[digest] = thread.next_item
                db.new_items.append([digest, text])
                thread.next_item += 1
        return found

    async def _store_items_now(
        self, db: _Db, thread_id: str, incarnation: str, new: dict[str, str]
    ) -> dict[str, int]:
        found: dict[str, int] = {}
        for number, digest in await db.fetchall(queries.SELECT_ITEMS_BY_HASH, (thread_id, json.dumps(list(new)))):
            found[digest] = number
        fresh = [d for d in new if d not in found]
        if fresh:
            matched, _ = await db.batch(
                [(queries.ALLOCATE_ITEMS, (len(fresh), thread_id, incarnation)), (queries.SELECT_LAST_INSERT_ID, None)]
            )
            if not matched:
                raise StaleThreadError(thread_id)
            first = int(db.last_rows[0][0]) - len(fresh)
            rows = []
            for offset, digest in enumerate(fresh):
                found[digest] = first + offset
                rows.append((thread_id, first + offset, digest, new[digest]))
            await db.executemany(queries.INSERT_ITEM, rows)
        return found

    def _deferred_items(self, db: _Db) -> dict[str, Any]:
        count = len(db.new_items)
        params = {"first_item": db.first_item, "next_item": db.first_item + count if count else 0}
        if count == 1:
            params["item_hash"], params["item_value"] = db.new_items[0]
        else:
            params["items"] = json_text(db.new_items) if count else "[]"
        return params

    @staticmethod
    def _items_statement(params: dict[str, Any]) -> tuple[str, Any]:
        return (queries.STORE_ITEM if "item_hash" in params else queries.STORE_ITEMS, params)

    async def _run_batch(
        self, db: _Db, thread_id: str, statements: list[tuple[str, Any]], *, checked: bool
    ) -> list[int]:
        """The write's statements in one round trip: in its own transaction, or in its group's.
        `checked`: the first statement checks the thread's row, and nothing is stored if it matched none."""
        if db.chain is not None:
            db.chain.checked = checked
        try:
            counts = await db.batch(statements)
        except errors.IntegrityError as exc:
            if _code(exc) != ER_DUP_ENTRY or not db.new_items:
                raise
            # A new item's hash was stored before this process saw it: start again, looking hashes up.
            self._hash_conflicts.add(thread_id)
            raise StaleThreadError(thread_id) from None
        finally:
            db.new_items = []
        return counts

    async def _store_put(
        self, db: _Db, value_rows: list[tuple[Any, ...]], checkpoint_row: Sequence[Any], record: Sequence[Any]
    ) -> bool:
        params = {**put_parameters(checkpoint_row, record), **self._deferred_items(db), "after": 0}
        thread_id = params["thread_id"]
        statements: list[tuple[str, Any]] = [
            (queries.RECORD_PUT_IN_THREAD, params),
            (queries.REMEMBER_MATCHED, None),
        ]
        if params["next_item"]:
            statements.append(self._items_statement(params))
        if value_rows:
            params["rows"] = json_text(
                [[channel, version, kind, value, _b64(blob)] for _t, _ns, channel, version, kind, value, blob in value_rows]
            )
            statements.append((queries.STORE_CHANNEL_VALUES, params))
        statements.append((queries.STORE_CHECKPOINT, params))
        counts = await self._run_batch(db, thread_id, statements, checked=True)
        return counts[0] > 0

    async def _store_writes(
        self,
        db: _Db,
        thread_id: str,
        rows: list[tuple[Any, ...]],
        special: bool,
        interrupted: bool,
        *,
        incarnation: str,
        last: bool,
    ) -> None:
        _t, ns, checkpoint_id, task_id, _idx, _ch, task_path, *_rest = rows[0]
        params = {
            "thread_id": thread_id,
            "ns": ns,
            "checkpoint_id": checkpoint_id,
            "task_id": task_id,
            "task_path": task_path,
            "rows": json_text(
                [
                    [idx, channel, kind, value, _b64(blob)]
                    for _t, _ns, _c, _task, idx, channel, _path, kind, value, blob in rows
                ]
            ),
            "interrupted": 1 if interrupted else 0,
            "incarnation": incarnation,
            "after": 0,  # (see `groups.py`)
            **self._deferred_items(db),
        }
        noted = await self._noted_write_version(db, thread_id, ns, checkpoint_id, task_id)
        if noted is not None:
            params["checkpoint_version"], params["noted_checkpoint"] = noted
        # Writes that refer to items by the cache's numbers are stored only if the thread is still the
        # incarnation the cache knew (another process may have deleted and re-created it).
        refers = any(self._ranges_of(kind, value) for *_row, kind, value, _blob in rows)
        params["checked"] = 1 if params["next_item"] or noted is not None or refers else 0
        store = (queries.STORE_SPECIAL_WRITES if special else queries.STORE_WRITES, params)
        if params["checked"]:
            statements = [(queries.RECORD_WRITES_IN_THREAD, params), (queries.REMEMBER_MATCHED, None)]
            if params["next_item"]:
                statements.append(self._items_statement(params))
            statements.append(store)
            if noted is not None:
                statements.append((queries.NOTE_WRITE_VERSION, params))
            counts = await self._run_batch(db, thread_id, statements, checked=True)
            if counts[0] == 0:
                raise StaleThreadError(thread_id)
        elif interrupted:
            await self._run_batch(
                db, thread_id, [store, (queries.SET_THREAD_STATUS, ("interrupted", thread_id))], checked=False
            )
        else:
            await self._run_batch(db, thread_id, [store], checked=False)  # one statement: atomic by itself

    async def _noted_write_version(
        self, db: _Db, thread_id: str, ns: str, checkpoint_id: str, task_id: str
    ) -> tuple[int, str] | None:
        """(the checkpoint's version, its document naming this task's version) when this saver's state
        schema is not the checkpoint's: stored by the writes' batch, so both commit or neither, and
        behind the thread's row (a migration of the thread meanwhile makes the write start again)."""
        if self.state_schema is None:
            return None
        thread = self.items.peek(thread_id)
        if thread is not None and self._write_version_known(thread, ns, checkpoint_id):
            return None
        row = await db.fetchone(queries.SELECT_STATE_VERSION, (thread_id, ns, checkpoint_id))
        if row is None or int(row[0]) == self.schema_version:
            return None  # not stored yet: the graph writing for it stores it, at its own version
        document = self.plain_codec.loads(row[1])
        versions = document.setdefault(WRITE_VERSIONS, {})
        if versions.get(task_id) == self.schema_version:
            return None
        versions[task_id] = self.schema_version
        return int(row[0]), self.plain_codec.dumps(document)

    async def _note_write_version(
        self, db: Db, thread: ThreadItems, thread_id: str, ns: str, checkpoint_id: str, task_id: str
    ) -> None:
        # Noted by the writes' own batch (`_store_writes`).
        pass

    # -- a run's read in one round trip ----------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        # The checkpoint and its pending writes in one statement (`READ_CHECKPOINT`); its small values
        # are in its document, and `_tuples` looks up the others (few checkpoints have any).
        thread_id, checkpoint_ns, checkpoint_id = config_ids(config)
        async with self._read() as db:
            if checkpoint_id:
                rows = await db.fetch_prepared(queries.READ_CHECKPOINT, (thread_id, checkpoint_ns, checkpoint_id))
            else:
                rows = await db.fetch_prepared(queries.READ_LATEST_CHECKPOINT, (thread_id, checkpoint_ns) * 2)
            if not rows:
                return None
            cid, parent_id, *head = rows[0][:7]
            row = (thread_id, checkpoint_ns, cid, parent_id, *head)
            # in the order they were made: task path, task id, index
            writes = sorted((r[7:] for r in rows if r[8] is not None), key=lambda w: w[:3])
            pending = {(thread_id, checkpoint_ns, cid): [(w[1], *w[3:]) for w in writes]}
            tuples = await self._tuples(db, [row], resumed=True, writes=pending)
        return tuples[0]

    # -- what a dialect provides -------------------------------------------------------------------

    @staticmethod
    def _ts(value: datetime) -> datetime:
        # DATETIME has no time zone: the store keeps UTC (and reads it back as UTC, see `_utc`).
        return value.astimezone(UTC).replace(tzinfo=None)

    def _json_param(self, text: str) -> str:
        return text

    def _metadata_filter_sql(self, filter: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
        return json_contains("c.metadata", filter)

    def _thread_search_sql(
        self, metadata: Mapping[str, Any] | None, status: str | None, title: str | None
    ) -> tuple[list[str], list[Any]]:
        clauses, params = json_contains("metadata", metadata or {})
        if status is not None:
            clauses.append("status = %s")
            params.append(status)
        if title:
            # Compared as bytes after lowering: the connection's collation would also fold accents.
            clauses.append(
                "LOCATE(CAST(LOWER(%s) AS BINARY), CAST(LOWER(COALESCE("
                "JSON_UNQUOTE(JSON_EXTRACT(metadata, '$.title')), '')) AS BINARY)) > 0"
            )
            params.append(title)
        return clauses, params

    async def astats(self) -> dict[str, Any]:
        out = await super().astats()
        out["server"] = self.server_version
        async with self._read() as db:
            # InnoDB's sizes are statistics, refreshed by ANALYZE (a sample of pages: cheap).
            await db.fetchall(f"ANALYZE TABLE {', '.join(queries.TABLES)}")
            sizes = {name: int(size or 0) for name, size in await db.fetchall(queries.TABLE_BYTES)}
        total = 0
        for table in queries.TABLES:
            out["tables"][table]["bytes"] = sizes.get(table, 0)
            total += sizes.get(table, 0)
        out["bytes"] = total
        return out


def _scalar_test(value: Any, json_sql: str, at: list[Any]) -> tuple[str, list[Any]]:
    """SQL true when the JSON value `json_sql` (with parameters `at`, used each time it appears) equals
    the scalar `value` as JSON does: same type, numbers as numbers, strings byte for byte."""
    json_type = f"JSON_TYPE({json_sql})"
    text = f"JSON_UNQUOTE({json_sql})"
    if value is None:
        return f"{json_type} = 'NULL'", [*at]
    if isinstance(value, bool):
        return f"{json_type} = 'BOOLEAN' AND {text} = %s", [*at, *at, "true" if value else "false"]
    if isinstance(value, int | float):
        return (
            f"{json_type} IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL') "
            f"AND CAST({text} AS DECIMAL(65, 30)) = CAST(%s AS DECIMAL(65, 30))",
            [*at, *at, value],
        )
    return f"{json_type} = 'STRING' AND CAST({text} AS BINARY) = CAST(%s AS BINARY)", [*at, *at, value]


def json_contains(column: str, wanted: Mapping[str, Any], prefix: str = "$") -> tuple[list[str], list[Any]]:
    """`column` contains `wanted` as PostgreSQL's `@>` says (see checkpoint/filters.py).

    Not MySQL's JSON_CONTAINS: it takes a scalar as contained in an array holding it, at any depth.
    Keys were checked by `check_metadata_filter`; paths are parameters all the same.
    """
    clauses: list[str] = []
    params: list[Any] = []
    for key, value in wanted.items():
        path = f'{prefix}."{key}"'
        at = f"JSON_EXTRACT({column}, %s)"
        if isinstance(value, Mapping):
            clauses.append(f"JSON_TYPE({at}) = 'OBJECT'")
            params.append(path)
            inner, inner_params = json_contains(column, value, path)
            clauses += inner
            params += inner_params
        elif isinstance(value, list | tuple):
            clauses.append(f"JSON_TYPE({at}) = 'ARRAY'")
            params.append(path)
            for element in value:
                test, test_params = _scalar_test(element, "e.v", [])
                clauses.append(
                    f"EXISTS (SELECT 1 FROM JSON_TABLE({at}, '$[*]' COLUMNS (v JSON PATH '$')) AS e "
                    f"WHERE {test})"
                )
                params += [path, *test_params]
        else:
            test, test_params = _scalar_test(value, at, [path])
            clauses.append(test)
            params += test_params
    return clauses, params
