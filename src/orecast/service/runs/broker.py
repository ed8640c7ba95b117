"""A run's event log in this process: appended by the executor, read (and replayed) by any number of streams."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any


class RunEvents:
    """Events numbered from 1; a reader resumes after any `Last-Event-ID` it has seen."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self.done = False
        self.finished_at: float | None = None
        self._changed = asyncio.Condition()

    async def put(self, event: str, data: Any) -> None:
        async with self._changed:
            self.events.append((event, data))
            self._changed.notify_all()

    async def close(self) -> None:
        async with self._changed:
            self.done = True
            self.finished_at = time.monotonic()
            self._changed.notify_all()

    async def follow(self, after: int = 0) -> AsyncIterator[tuple[int, str, Any]]:
        """(id, event, data) after event number `after`, until the run ends."""
        seen = after
        while True:
            async with self._changed:
                while seen >= len(self.events) and not self.done:
                    await self._changed.wait()
                batch = self.events[seen:]
                finished = self.done
            for event, data in batch:
                seen += 1
                yield seen, event, data
            if finished and seen >= len(self.events):
                return


class Broker:
    """run id → its events; finished logs are kept `keep_seconds` for late joiners."""

    def __init__(self, keep_seconds: float = 600.0) -> None:
        self.keep_seconds = keep_seconds
        self._runs: dict[str, RunEvents] = {}

    def open(self, run_id: str) -> RunEvents:
        self._forget_old()
        events = self._runs[run_id] = RunEvents()
        return events

    def get(self, run_id: str) -> RunEvents | None:
        return self._runs.get(run_id)

    def _forget_old(self) -> None:
        now = time.monotonic()
        for run_id, events in list(self._runs.items()):
            if events.finished_at is not None and now - events.finished_at > self.keep_seconds:
                del self._runs[run_id]
