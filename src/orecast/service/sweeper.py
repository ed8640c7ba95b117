"""The service's background sweep of expired threads (`checkpoint/sweep.py`), kept on `app.state.sweeper`.

Every replica runs one; their claims skip each other's threads, so running several is safe and only
spreads the work. A deleted thread's runs, their events and its crons go with it, as `DELETE /threads/{id}`
takes them, in the very transaction that deletes it: a sweep cut short (a crash, a shutdown) leaves none
behind. A failed sweep is logged and recorded; the loop goes on at the next interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from datetime import datetime, timedelta

from orecast.checkpoint import OrecastCheckpointer
from orecast.checkpoint.sweep import SweepResult, TtlPolicy, sweep
from orecast.service.metrics import ServiceMetrics
from orecast.service.runs.queries import DELETE_THREAD_SERVICE_ROWS

log = logging.getLogger(__name__)
LIMIT_PER_RUN = 10_000  # a backlog is worked off over several intervals, not in one long sweep


class Sweeper:
    def __init__(
        self,
        saver: OrecastCheckpointer,
        metrics: ServiceMetrics,
        policy: TtlPolicy,
        every: timedelta | None,
    ) -> None:
        self.saver = saver
        self.metrics = metrics
        self.policy = policy
        self.every = every
        self._task: asyncio.Task[None] | None = None

    async def run_once(self, *, now: datetime | None = None, limit: int | None = LIMIT_PER_RUN) -> SweepResult:
        """One sweep as of `now` (default: the clock)."""
        result = await sweep(self.saver, self.policy, now=now, limit=limit, also=DELETE_THREAD_SERVICE_ROWS)
        self.metrics.sweep_done(result)
        return result

    def start(self) -> None:
        if self.every is not None and self._task is None:
            self._task = asyncio.create_task(self._loop(), name="orecast-sweeper")

    async def _loop(self) -> None:
        assert self.every is not None
        seconds = self.every.total_seconds()
        while True:
            # Replicas started together drift apart instead of sweeping in step.
            await asyncio.sleep(seconds * random.uniform(0.9, 1.1))
            try:
                result = await self.run_once()
            except Exception:
                log.exception("thread sweep failed; next attempt in %s", self.every)
            else:
                if result.expired:
                    log.info("thread sweep: %d deleted, %d pruned", len(result.deleted), len(result.pruned))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
