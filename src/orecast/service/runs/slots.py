"""`RunSlots`: how many runs one process executes at once (`ServiceSettings.jobs_per_worker`, as
LangGraph's Agent Server's `N_JOBS_PER_WORKER`); the others wait for a slot, oldest first.

Without it a batch of 2,000 runs executed 2,000 graphs at once in one process: memory, the database's
connections and every run's latency went with them. Each process counts only its own slots, so N
processes on one database execute at most N × the limit, each at most its own; a process with free slots
takes the runs another one queued (runs/share.py).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable

DEFAULT_JOBS_PER_WORKER = 10  # LangGraph's default N_JOBS_PER_WORKER


class RunSlots:
    """`limit` slots; a run waits for one in the order of its key (created_at, run_id): a run queued
    earlier starts earlier, whatever the order its task asks in. `changed(executing, waiting)` is told of
    every change (the metrics' gauges)."""

    def __init__(self, limit: int, changed: Callable[[int, int], None] | None = None) -> None:
        if limit < 1:
            raise ValueError(f"a process executes at least one run at once, not {limit}")
        self.limit = limit
        self.executing = 0
        self.waiting = 0
        self._queue: list[tuple[tuple[str, str], int, asyncio.Future[None]]] = []
        # the futures still waiting: one left (or cancelled with its task) stays in the heap until it
        # comes up, but not here
        self._waiters: set[asyncio.Future[None]] = set()
        self._order = itertools.count()  # a tie-break that never compares two futures
        self._changed = changed
        self._report()

    def try_take(self) -> bool:
        """A slot now, if one is free and no run waits for one (those go first)."""
        if self.executing < self.limit and self.waiting == 0:
            self.executing += 1
            self._report()
            return True
        return False

    def wait(self, key: tuple[str, str]) -> asyncio.Future[None]:
        """A future done once a slot is the caller's. A caller that stops waiting calls `leave` with it."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.try_take():
            future.set_result(None)
            return future
        heapq.heappush(self._queue, (key, next(self._order), future))
        self._waiters.add(future)
        self.waiting += 1
        self._report()
        return future

    def leave(self, future: asyncio.Future[None]) -> None:
        """The caller of `wait` stops waiting: its place in the queue goes, or the slot it was just given.
        (A task cancelled while it waits finds its future cancelled already: asyncio cancels the future
        a task awaits.)"""
        if future in self._waiters:
            self._waiters.discard(future)
            future.cancel()
            self.waiting -= 1
            self._report()
        elif future.done() and not future.cancelled():
            self.give_back()

    def give_back(self) -> None:
        """A run's slot is free: the oldest waiting run's now, else free."""
        while self._queue:
            _, _, future = heapq.heappop(self._queue)
            if future not in self._waiters:  # it left
                continue
            self._waiters.discard(future)
            self.waiting -= 1
            if future.cancelled():  # its task was cancelled, and has not yet left
                continue
            future.set_result(None)
            self._report()
            return
        self.executing -= 1
        self._report()

    def _report(self) -> None:
        if self._changed is not None:
            self._changed(self.executing, self.waiting)
