"""Thread TTL through the Agent Server API: `ttl` on create and update (langgraph-sdk), `?include=ttl`,
the service's background sweep deleting an expired thread with its runs, a busy thread left alone, and
the sweep's metrics — on a real service (uvicorn) on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime, timedelta

import httpx
import pytest
from langgraph_sdk.errors import NotFoundError
from prometheus_client.parser import text_string_to_metric_families

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.sweep import TtlPolicy, sweep
from tests.checkpoint.conftest import ph, raw_sql, stored_time
from tests.service.conftest import ECHO, Server, say, settings_for

SWEEP_EVERY = "1s"


@pytest.fixture(scope="module")
def ttl_server(db_url: str) -> Iterator[Server]:
    running = Server.start(settings_for(db_url, sweep_interval=SWEEP_EVERY))
    yield running
    running.stop()


def metrics(server: Server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def within(seconds: float, done: Callable[[], Awaitable[bool]]) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await done():
            return True
        await asyncio.sleep(0.2)
    return False


async def gone_within(client, thread_id: str, seconds: float) -> bool:
    async def gone() -> bool:
        try:
            await client.threads.get(thread_id)
        except NotFoundError:
            return True
        return False

    return await within(seconds, gone)


async def test_a_thread_created_with_a_ttl_is_swept_with_its_runs(ttl_server: Server, db_url: str) -> None:
    client = ttl_server.client()
    lasting = await client.threads.create(metadata={"keep": True})
    # 0.03 minutes: about two seconds idle, then the next background sweep (every second) takes it.
    short = await client.threads.create(ttl={"strategy": "delete", "ttl": 0.03})
    tid = short["thread_id"]
    # Busy while it is read below (a run that lasts until the test stops it): the sweeps leave a busy
    # thread alone, so the reads do not race with them however slow the machine (a run that ended
    # first left the reads two seconds).
    run = await client.runs.create(tid, ECHO, input=say("hello", delay=60))
    shown = await client.threads.get(tid, include=["ttl"])
    assert shown["ttl"]["strategy"] == "delete" and shown["ttl"]["ttl_minutes"] == pytest.approx(2 / 60)
    assert datetime.fromisoformat(shown["ttl"]["expires_at"]) > datetime.fromisoformat(shown["updated_at"])
    assert "ttl" not in await client.threads.get(lasting["thread_id"], include=["ttl"]), "no TTL applies"
    assert "ttl" not in await client.threads.get(tid), "only with ?include=ttl"
    await client.runs.cancel(tid, run["run_id"], wait=True)

    assert await gone_within(client, tid, 15), "the background sweep deleted the expired thread"

    # The sweep deletes the thread, then its runs: a moment may lie between the two.
    async def no_runs() -> bool:
        return raw_sql(db_url, f"SELECT COUNT(*) FROM service_runs WHERE thread_id = '{tid}'")[0][0] == 0

    assert await within(15, no_runs), "its runs went with it"
    assert (await client.threads.get(lasting["thread_id"]))["metadata"] == {"keep": True}
    seen = metrics(ttl_server)
    assert seen[("orecast_sweep_threads_expired_total", (("strategy", "delete"),))] >= 1
    assert seen[("orecast_sweep_last_success_timestamp_seconds", ())] > time.time() - 60


async def test_ttl_set_by_update_and_a_busy_thread_waits(ttl_server: Server, db_url: str) -> None:
    """A busy thread is not swept, however long ago its TTL ran out. Its run lasts until the test
    stops it: a run of a few seconds, with a fixed sleep to check the thread during it, ended first on
    a loaded machine (the thread was idle, not busy, when looked at)."""
    client = ttl_server.client()
    thread = await client.threads.create()
    tid = thread["thread_id"]
    run = await client.runs.create(tid, ECHO, input=say("slow", delay=60))
    updated = await client.threads.update(tid, metadata={"t": 1}, ttl={"ttl": 0.02, "strategy": "delete"})
    assert updated["metadata"]["t"] == 1
    expires = datetime.fromisoformat((await client.threads.get(tid, include=["ttl"]))["ttl"]["expires_at"])
    async with open_checkpointer(db_url) as saver:  # a sweep as of a day after it expired
        later = await sweep(saver, TtlPolicy(), now=expires + timedelta(days=1), dry_run=True)
    assert tid not in later.deleted

    # and the service's own sweeps, once one began (a second) after it expired, left it alone
    async def swept_since_it_expired() -> bool:
        after = stored_time(db_url, expires + timedelta(seconds=1))
        return raw_sql(
            db_url, f"SELECT COUNT(*) FROM sweep_runs WHERE status = 'ok' AND started_at > {ph(db_url)}", (after,)
        )[0][0] > 0

    assert await within(15, swept_since_it_expired)
    assert (await client.threads.get(tid))["status"] == "busy"
    await client.runs.cancel(tid, run["run_id"], wait=True)
    assert await gone_within(client, tid, 15)


async def test_bad_ttl_is_a_422_and_changes_nothing(ttl_server: Server) -> None:
    client = ttl_server.client()
    thread = await client.threads.create(metadata={"a": 1})
    for ttl in ({"ttl": 0}, {"ttl": 5, "strategy": "archive"}, {"strategy": "delete"}):
        res = httpx.patch(f"{ttl_server.url}/threads/{thread['thread_id']}", json={"metadata": {"a": 2}, "ttl": ttl})
        assert res.status_code == 422, ttl
    assert (await client.threads.get(thread["thread_id"]))["metadata"] == {"a": 1}
