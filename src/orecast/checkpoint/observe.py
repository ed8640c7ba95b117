"""Watching a saver from outside: how long its LangGraph operations take, and a hook around each SQL
statement, for the service's metrics and traces (see docs/operations.md, "Metrics" and "Tracing").

`checkpoint` imports neither prometheus_client nor opentelemetry: the caller hands in plain callables.
`observe` gives the saver it is given a class of its own, derived from the saver's, whose `aput`,
`aput_writes`, `aget_tuple`, `alist` and connection openers report to the hooks: a saver nobody observes
runs exactly the code it always ran, and a clone (LangGraph's `with_allowlist` copies the saver) is
observed as its original, on its own state.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Callable
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    nullcontext,
)
from typing import Any

from orecast.checkpoint.core import Db, SaverCore

# The LangGraph operations, by the name observers see.
OPERATIONS = {"put": "aput", "put_writes": "aput_writes", "get_tuple": "aget_tuple", "list": "alist"}
# The ways the saver's parts open a connection; every statement it runs goes through one of them.
OPENERS = ("_read", "_write", "_write_unit")

Timing = Callable[[str, float], None]
"""Called with an operation's name and its seconds once it ended (raised or not)."""
Span = Callable[[str], AbstractContextManager[Any]]
"""Entered around one operation (for `list`, around the whole listing, never made current)."""
Statement = Callable[[str, str], AbstractContextManager[Any]]
"""Entered around one SQL statement, with the dialect and the statement's text (never its parameters)."""


def observe(
    saver: SaverCore,
    *,
    timing: Timing | None = None,
    span: Span | None = None,
    statement: Statement | None = None,
) -> None:
    """Report `saver`'s operations to `timing` and `span`, and its statements to `statement`.

    May be called more than once (metrics, then tracing): each call derives from what the previous left.
    """
    base = type(saver)
    overrides: dict[str, Any] = {}
    if timing is not None or span is not None:
        for name, method in OPERATIONS.items():
            wrap = _listing if name == "list" else _operation
            overrides[method] = wrap(getattr(base, method), name, timing, span)
    if statement is not None:
        for opener in OPENERS:
            overrides[opener] = _opener(getattr(base, opener), saver.dialect, statement)
    if overrides:
        # same name: messages and reprs still say which saver it is
        observed = type(base.__name__, (base,), {**overrides, "__qualname__": base.__qualname__})
        saver.__class__ = observed
        # Views of this saver for a graph's state schema (`with_state_schema`), made before: watched too.
        for view, attrs in list(saver.__dict__.get("_state_views", {}).items()):
            view.__class__ = type(observed.__name__, (observed,), {**attrs, "_state_view_of": observed})


def _operation(inner: Callable[..., Any], name: str, timing: Timing | None, span: Span | None) -> Any:
    @functools.wraps(inner)
    async def operation(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            if span is None:
                return await inner(*args, **kwargs)
            with span(name):
                return await inner(*args, **kwargs)
        finally:
            if timing is not None:
                timing(name, time.perf_counter() - started)

    return operation


def _listing(inner: Callable[..., Any], name: str, timing: Timing | None, span: Span | None) -> Any:
    """`alist` is an async generator: the time counted is the time spent inside it (fetching and
    decoding pages), not the caller's between two items; it is reported when the listing ends."""

    @functools.wraps(inner)
    async def listing(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        spent = 0.0
        items = inner(*args, **kwargs)
        try:
            with span(name) if span is not None else nullcontext():
                while True:
                    started = time.perf_counter()
                    try:
                        item = await items.__anext__()
                    except StopAsyncIteration:
                        return
                    finally:
                        spent += time.perf_counter() - started
                    yield item
        finally:
            await items.aclose()
            if timing is not None:
                timing(name, spent)

    return listing


class _ObservedDb:
    """A connection whose statements pass through `statement`; everything else is the connection's
    own (dialects keep per-operation state on it, read and set by their code)."""

    def __init__(self, db: Db, dialect: str, statement: Statement) -> None:
        object.__setattr__(self, "_db", db)
        object.__setattr__(self, "_dialect", dialect)
        object.__setattr__(self, "_statement", statement)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._db, name, value)

    # a dialect's execute may answer something (MySQL: the rows it changed): passed on as it is
    async def execute(self, sql: str, params: Any = ()) -> Any:
        with self._statement(self._dialect, sql):
            return await self._db.execute(sql, params)

    async def executemany(self, sql: str, rows: Any) -> Any:
        with self._statement(self._dialect, sql):
            return await self._db.executemany(sql, rows)

    async def fetchone(self, sql: str, params: Any = ()) -> Any:
        with self._statement(self._dialect, sql):
            return await self._db.fetchone(sql, params)

    async def fetchall(self, sql: str, params: Any = ()) -> Any:
        with self._statement(self._dialect, sql):
            return await self._db.fetchall(sql, params)

    # MySQL on MariaDB runs a read as the EXECUTE of a statement prepared on the connection: observed
    # as the query it runs
    async def fetch_prepared(self, sql: str, params: Any = ()) -> Any:
        with self._statement(self._dialect, sql):
            return await self._db.fetch_prepared(sql, params)

    # MySQL sends a put's statements in one round trip: observed once, as the text it sends
    async def batch(self, statements: Any) -> Any:
        with self._statement(self._dialect, ";\n".join(sql for sql, _params in statements)):
            return await self._db.batch(statements)


def _opener(
    inner: Callable[..., AbstractAsyncContextManager[Db]], dialect: str, statement: Statement
) -> Callable[..., AbstractAsyncContextManager[Any]]:
    @asynccontextmanager
    async def opened(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async with inner(*args, **kwargs) as db:
            # `_write_unit` may open its connection through `_write`: observed once, not twice
            if isinstance(db, _ObservedDb) and db._statement is statement:
                yield db
            else:
                yield _ObservedDb(db, dialect, statement)

    return opened


def pool_usage(saver: SaverCore) -> dict[str, int] | None:
    """The saver's connections now: `in_use`, `idle`, `max` and `waiting` (callers queued for one).

    PostgreSQL and MySQL have a pool; SQLite has one writer connection that writes queue for (its
    reader is shared and never waited for), so its usage is that writer's. None for anything else.
    """
    pool = getattr(saver, "pool", None)
    if pool is not None and hasattr(pool, "get_stats"):  # psycopg_pool
        stats = pool.get_stats()
        size, idle = stats.get("pool_size", 0), stats.get("pool_available", 0)
        return {
            "in_use": size - idle, "idle": idle, "max": stats.get("pool_max", pool.max_size),
            "waiting": stats.get("requests_waiting", 0),
        }
    if pool is not None and hasattr(pool, "freesize"):  # asyncmy
        return {"in_use": pool.size - pool.freesize, "idle": pool.freesize, "max": pool.maxsize, "waiting": 0}
    lock = getattr(saver, "_write_lock", None)
    if lock is not None:  # SQLite's writer
        busy = int(lock.locked())
        return {
            "in_use": busy, "idle": 1 - busy, "max": 1,
            "waiting": max(0, getattr(saver, "_writes_pending", 0) - busy),
        }
    return None
