"""A thread's writes queued for the server and not settled yet, for the dialects whose thread lock lets
the next write in once the last one is queued, not committed (`core.ThreadTurn`): PostgreSQL's group
commit (postgres/pipeline.py) and MySQL's group writer (mysql/groups.py).

A write prepared after another one of its thread may refer to what that one stores (the items it
numbered, the list it remembered). So when a queued write is not stored (it failed, matched nothing,
or was cancelled before it was sent), the writes of its thread prepared after it on the same cache
entry fail too, and the entry is marked stale: they start again from what is stored.
"""

from __future__ import annotations

import asyncio
from typing import Any, Generic, Protocol, TypeVar

from orecast.checkpoint.cache import ThreadItems
from orecast.checkpoint.core import StaleThreadError


class Chained(Protocol):
    entry: ThreadItems  # the cache entry the write was prepared with


class Queued(Protocol):
    chain: Chained | None
    done: asyncio.Future[Any]  # its caller's answer


K = TypeVar("K", str, bytes)  # a thread's id, as the dialect keeps it
W = TypeVar("W", bound=Queued)


class Unsettled(Generic[K, W]):
    """Per thread, its writes queued and not settled yet (committed, or failed for good), in the order
    they were queued; and who waits for none to be left (`settled`)."""

    def __init__(self) -> None:
        self.by_thread: dict[K, list[W]] = {}
        self._quiet: dict[K, asyncio.Future[None]] = {}

    def queue(self, thread: K, write: W) -> None:
        self.by_thread.setdefault(thread, []).append(write)

    def of(self, thread: K) -> list[W]:
        """The thread's unsettled writes, oldest first."""
        return self.by_thread.get(thread, [])

    async def settled(self, thread: K) -> None:
        """Return once every write of `thread` queued so far has committed or failed."""
        while thread in self.by_thread:
            quiet = self._quiet.get(thread)
            if quiet is None:
                quiet = self._quiet[thread] = asyncio.get_running_loop().create_future()
            await asyncio.shield(quiet)

    def settle(self, thread: K, write: W, *, stored: bool) -> None:
        """`write` has committed (`stored`) or will never run: if not stored, the thread's writes prepared
        after it on the same cache entry fail at once, and those to come when queued (`chain.entry.stale`)."""
        pending = self.by_thread.get(thread)
        if pending is None or write not in pending or write.chain is None:
            return  # settled already
        at = pending.index(write)
        del pending[at]
        if not stored:
            entry = write.chain.entry
            entry.stale = True
            for later in [w for w in pending[at:] if w.chain is not None and w.chain.entry is entry]:
                if not later.done.done():
                    later.done.set_exception(StaleThreadError(thread.decode() if type(thread) is bytes else thread))
                pending.remove(later)
        if not pending:
            del self.by_thread[thread]
            quiet = self._quiet.pop(thread, None)
            if quiet is not None:
                quiet.set_result(None)
