"""The service's background sweep of expired threads (`checkpoint/sweep.py`), kept on `app.state.sweeper`.

Every replica runs one; their claims skip each other's threads, so running several is safe and only
spreads the work. A deleted thread's runs, their events and its crons go with it, as `DELETE /threads/{id}`
takes them, in the very transaction that deletes it: a sweep cut short (a crash, a shutdown) leaves none
behind. A failed sweep is logged and recorded; the loop (`periodic.py`) goes on at the next interval.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from orecast.checkpoint import OrecastCheckpointer
from orecast.checkpoint.sweep import SweepResult, TtlPolicy, sweep
from orecast.service.metrics import ServiceMetrics
from orecast.service.periodic import Periodic
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
        self._periodic: Periodic | None = None

    async def run_once(self, *, now: datetime | None = None, limit: int | None = LIMIT_PER_RUN) -> SweepResult:
        """One sweep as of `now` (default: the clock)."""
        result = await sweep(self.saver, self.policy, now=now, limit=limit, also=DELETE_THREAD_SERVICE_ROWS)
        self.metrics.sweep_done(result)
        return result

    async def _sweep(self) -> None:
        result = await self.run_once()
        if result.expired:
            log.info("thread sweep: %d deleted, %d pruned", len(result.deleted), len(result.pruned))

    def start(self) -> None:
        if self.every is not None and self._periodic is None:
            seconds = self.every.total_seconds()
            # the first sweep one interval after start-up, not at once: a start is busy enough
            self._periodic = Periodic("orecast-sweeper", seconds, self._sweep, first_after=seconds)
            self._periodic.start()

    async def close(self) -> None:
        if self._periodic is not None:
            await self._periodic.close()
            self._periodic = None
