"""A run's event log in this process: appended by the executor, read (and replayed) by any number of streams."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from orecast.service.encode import dumps


class RunEvents:
    """Events numbered from `first_id + 1`; a reader resumes after any `Last-Event-ID` it has seen.
    (`first_id` is 0 but for a run taken over from a dead process: its numbers go on after the events
    its earlier attempts wrote to the database.)

    An event's data is kept as the graph streamed it and encoded to JSON once, when first read, or
    at once while a reader follows the log: a run nobody streams (`runs.wait`, most background runs)
    pays for no encoding of its events. The graph's values are not copied, as LangGraph does not copy
    them for its own background checkpoint writes: a reducer that changes its state in place would
    change an event not yet encoded too."""

    def __init__(
        self, run_id: str = "", ended: deque[tuple[float, str]] | None = None, first_id: int = 0
    ) -> None:
        self.run_id = run_id
        self.first_id = first_id
        self.events: list[tuple[str, Any]] = []
        self._encoded: list[bytes] = []  # the JSON of the first len(_encoded) events' data
        self._readers = 0
        self.done = False
        self.finished_at: float | None = None
        self._changed = asyncio.Condition()
        self._ended = ended

    async def put(self, event: str, data: Any) -> None:
        async with self._changed:
            self.events.append((event, data))
            if self._readers:
                self._encode(len(self.events))
            self._changed.notify_all()

    async def close(self) -> None:
        async with self._changed:
            self.done = True
            self.finished_at = time.monotonic()
            if self._ended is not None:
                self._ended.append((self.finished_at, self.run_id))
            self._changed.notify_all()

    def _encode(self, stop: int) -> None:
        for _, data in self.events[len(self._encoded):stop]:
            self._encoded.append(dumps(data))

    def encoded(self, start: int = 0) -> list[tuple[str, bytes]]:
        """(event, JSON of its data) of the events from index `start` on."""
        self._encode(len(self.events))
        return [(self.events[n][0], self._encoded[n]) for n in range(start, len(self.events))]

    async def follow(self, after: int = 0) -> AsyncIterator[tuple[int, str, bytes]]:
        """(id, event, JSON of its data) after event number `after`, until the run ends."""
        seen = max(after - self.first_id, 0)
        self._readers += 1
        try:
            while True:
                async with self._changed:
                    while seen >= len(self.events) and not self.done:
                        await self._changed.wait()
                    batch = self.encoded(seen)
                    finished = self.done
                for event, data in batch:
                    seen += 1
                    yield self.first_id + seen, event, data
                if finished and seen >= len(self.events):
                    return
        finally:
            self._readers -= 1


class Broker:
    """run id → its events; finished logs are kept `keep_seconds` for late joiners."""

    def __init__(self, keep_seconds: float = 600.0) -> None:
        self.keep_seconds = keep_seconds
        self._runs: dict[str, RunEvents] = {}
        # (end time, run id) in the order runs end: forgetting looks only at the oldest ones
        self._ended: deque[tuple[float, str]] = deque()

    def open(self, run_id: str, first_id: int = 0) -> RunEvents:
        events = self._runs[run_id] = RunEvents(run_id, self._ended, first_id)
        return events

    def get(self, run_id: str) -> RunEvents | None:
        return self._runs.get(run_id)

    def forget_old(self) -> list[str]:
        """Drop the logs that ended more than `keep_seconds` ago; their run ids."""
        now, gone = time.monotonic(), []
        while self._ended and now - self._ended[0][0] > self.keep_seconds:
            _, run_id = self._ended.popleft()
            events = self._runs.get(run_id)
            if events is not None and events.done:
                del self._runs[run_id]
                gone.append(run_id)
        return gone
