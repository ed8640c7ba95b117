"""The background loop every replica runs (`periodic.py`): the cron firings and the run recovery work at
once, the thread sweep (`sweeper.py`, which had a loop of its own) one interval after start-up; a
failure is logged and the loop goes on."""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import timedelta

import pytest
from prometheus_client import CollectorRegistry

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.sweep import TtlPolicy, sweep_status
from orecast.service.metrics import ServiceMetrics
from orecast.service.periodic import Periodic
from orecast.service.sweeper import Sweeper


async def calls_made(calls: list[float], count: int, seconds: float = 10) -> None:
    """Until `count` calls were made: a loaded machine delays them (a fixed 0.4 s wait saw one of two)."""
    deadline = time.monotonic() + seconds
    while len(calls) < count:
        assert time.monotonic() < deadline, f"{len(calls)} calls of {count} in {seconds} s"
        await asyncio.sleep(0.02)


async def test_work_at_once_then_every_interval_and_a_failure_does_not_stop_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[float] = []

    async def work() -> None:
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise RuntimeError("first call fails")

    started = time.monotonic()
    periodic = Periodic("test-periodic", 0.2, work)
    with caplog.at_level(logging.ERROR, logger="orecast.service.periodic"):
        periodic.start()
        await calls_made(calls, 3)  # on after its failure
        await periodic.close()
    assert calls[0] - started < 0.2, "at once, not an interval later"
    assert all(later - earlier >= 0.18 for earlier, later in zip(calls, calls[1:], strict=False)), "every interval"
    assert "test-periodic failed" in caplog.text and "first call fails" in caplog.text


async def test_first_after_waits_before_the_first_work() -> None:
    calls: list[float] = []

    async def work() -> None:
        calls.append(time.monotonic())

    started = time.monotonic()
    periodic = Periodic("test-later", 0.2, work, first_after=0.4)
    periodic.start()
    await asyncio.sleep(0.3)
    assert calls == [], "nothing before first_after (less 10 % of drift)"
    await calls_made(calls, 2)
    await periodic.close()
    assert calls[0] - started >= 0.36
    assert calls[1] - calls[0] >= 0.18, "then every interval"


async def test_the_sweeper_sweeps_one_interval_after_its_start_then_every_interval(tmp_path) -> None:
    """On a real store: no sweep at start-up, the first about one interval later, more after it."""
    async with open_checkpointer(f"sqlite:///{tmp_path / 'sweep.sqlite3'}") as saver:
        sweeper = Sweeper(saver, ServiceMetrics(CollectorRegistry(), saver), TtlPolicy(None, "delete"),
                          timedelta(seconds=0.5))
        sweeper.start()
        try:
            await asyncio.sleep(0.3)
            assert (await sweep_status(saver))["last_run_at"] is None, "not at start-up"
            deadline = time.monotonic() + 10
            while (first := (await sweep_status(saver))["last_success_at"]) is None:
                assert time.monotonic() < deadline, "no sweep within 10 s"
                await asyncio.sleep(0.05)
            deadline = time.monotonic() + 10
            while (await sweep_status(saver))["last_success_at"] == first:
                assert time.monotonic() < deadline, "no second sweep within 10 s"
                await asyncio.sleep(0.05)
        finally:
            await sweeper.close()
