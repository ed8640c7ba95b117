"""A job every replica runs in the background, again and again (the cron firings, the run recovery,
the thread sweep)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class Periodic:
    """`work` at once (or after `first_after` seconds), then every `every` seconds until closed; a
    failure is logged and the loop goes on."""

    def __init__(
        self, name: str, every: float, work: Callable[[], Awaitable[object]], *, first_after: float = 0.0
    ) -> None:
        self.name = name
        self.every = every
        self.work = work
        self.first_after = first_after
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=self.name)

    async def _loop(self) -> None:
        if self.first_after > 0:
            await _drifting_sleep(self.first_after)
        while True:
            try:
                await self.work()
            except Exception:
                log.exception("%s failed; next attempt in %.1f s", self.name, self.every)
            await _drifting_sleep(self.every)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


async def _drifting_sleep(seconds: float) -> None:
    """About `seconds`: replicas started together drift apart instead of working in step."""
    await asyncio.sleep(seconds * random.uniform(0.9, 1.1))
