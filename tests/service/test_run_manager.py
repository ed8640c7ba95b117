"""`RunManager` alone, on a repository of the test's own: what a run's watcher and end do when the
database is slow or fails."""

from __future__ import annotations

import asyncio
import time
import types
from typing import Any

import pytest

from orecast.service.runs import manager as manager_module
from orecast.service.runs.manager import RunManager


class FakeClock:
    """`time.monotonic` for the manager: moved on by the test's repository, never by itself."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def test_the_heartbeat_goes_by_the_clock_however_slow_the_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each poll of a run's watcher takes its sleep plus a query: on a loaded machine many times the
    sleep. The watcher counted sleeps, so its beats came far later than `heartbeat_seconds`, past
    `stale_seconds`, and a run queued on the thread expired the live run as a dead one (its claim
    fails runs whose heartbeat is older than that)."""
    clock = FakeClock()
    monkeypatch.setattr(manager_module, "time", types.SimpleNamespace(
        monotonic=clock.monotonic, perf_counter=time.perf_counter,
    ))
    beats: list[float] = []
    polls = 0

    class SlowRepo:
        async def cancel_state(self, run_id: str) -> tuple[str | None, str | None, bool]:
            nonlocal polls
            polls += 1
            clock.now += 0.1  # each poll takes 0.1 s of the clock: a slow query, a busy loop
            return ("interrupt" if polls > 30 else None), "running", False

        async def heartbeat(self, run_id: str, attempt: int) -> bool:
            beats.append(clock.now)
            return True

    manager = RunManager(
        SlowRepo(), saver=None, metrics=None, poll_seconds=0.001, stale_seconds=0.6,  # type: ignore[arg-type]
    )
    assert manager.heartbeat_seconds == pytest.approx(0.2)
    target: asyncio.Task[Any] = asyncio.create_task(asyncio.sleep(60))
    started = clock.now
    await asyncio.wait_for(manager._watch("run", target), 10)
    assert target.cancelling(), "the cancel asked for at the 31st poll reached the run"
    with pytest.raises(asyncio.CancelledError):
        await target
    gaps = [b - a for a, b in zip([started, *beats], beats, strict=False)]
    assert len(beats) >= 10 and max(gaps) <= 0.2 + 0.1 + 1e-9, (beats, gaps)
