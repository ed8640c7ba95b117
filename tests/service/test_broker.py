"""A run's event log: followers resume after an event id, and finished logs are forgotten in time."""

from __future__ import annotations

import asyncio

from orecast.service.runs.broker import Broker
from orecast.service.sse import format_event


async def test_followers_resume_after_an_id_and_end_with_the_run() -> None:
    broker = Broker(keep_seconds=0.0)
    events = broker.open("r1")
    seen: list[tuple[int, str]] = []

    async def follow(after: int) -> None:
        async for event_id, name, _ in events.follow(after):
            seen.append((event_id, name))

    reader = asyncio.create_task(follow(1))
    for name in ("metadata", "values", "updates"):
        await events.put(name, {})
    await events.close()
    await asyncio.wait_for(reader, 5)
    assert seen == [(2, "values"), (3, "updates")]
    assert [e async for e in events.follow(3)] == [], "nothing after the last id of a finished run"
    broker.open("r2")
    assert broker.forget_old() == ["r1"], "finished logs older than keep_seconds go; running ones stay"
    assert broker.get("r1") is None and broker.get("r2") is not None and broker.forget_old() == []


def test_sse_framing() -> None:
    assert format_event("values", {"a": "铁"}, "7") == 'event: values\ndata: {"a":"铁"}\nid: 7\n\n'.encode()
    assert format_event("end", None) == b"event: end\ndata: null\n\n"
