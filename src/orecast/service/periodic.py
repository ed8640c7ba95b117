"""A job every replica runs in the background, again and again (the cron firings, the run recovery)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class Periodic:
    """`work` at once, then every `every` seconds until closed; a failure is logged and the loop goes on."""

    def __init__(self, name: str, every: float, work: Callable[[], Awaitable[object]]) -> None:
        self.name = name
        self.every = every
        self.work = work
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=self.name)

    async def _loop(self) -> None:
        while True:
            try:
                await self.work()
            except Exception:
                log.exception("%s failed; next attempt in %.1f s", self.name, self.every)
            # replicas started together drift apart instead of working in step
            await asyncio.sleep(self.every * random.uniform(0.9, 1.1))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
