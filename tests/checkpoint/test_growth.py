"""Growth per day (`store_growth`) on real stores, with the clock injected."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from orecast.checkpoint.growth import store_growth
from tests.checkpoint.graphs import human, tool_loop


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def test_growth_counts_todays_checkpoints_turns_and_bytes(saver: Any) -> None:
    graph = tool_loop(saver)
    for turn in range(3):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("g-1"))
    await graph.ainvoke({"messages": [human(9)]}, cfg("g-2"))
    now = datetime.now(UTC)
    async with saver._read() as db:
        checkpoints = int((await db.fetchone("SELECT COUNT(*) FROM checkpoints"))[0])
        payload = int((await db.fetchone(saver.q.PAYLOAD_BYTES))[0])

    days = await store_growth(saver, now=now)
    assert len(days) == 14 and days[-1].day == now.date()
    assert [d.day for d in days] == sorted(d.day for d in days)
    today = days[-1]
    assert today.checkpoints == checkpoints and today.turns == 4
    # the day's checkpoint documents and writes: some, and never more than everything stored
    assert 0 < today.bytes <= payload
    assert all(d.checkpoints == d.turns == d.bytes == 0 for d in days[:-1])

    # three days later the same work sits three days back; the day before, it is not there yet
    later = await store_growth(saver, now=now + timedelta(days=3), days=7)
    assert [d.checkpoints for d in later] == [0, 0, 0, checkpoints, 0, 0, 0]
    before = await store_growth(saver, now=now - timedelta(days=1))
    assert sum(d.checkpoints for d in before) == 0
    assert later[3].to_dict() == {"day": now.date().isoformat(), "checkpoints": checkpoints, "turns": 4, "bytes": today.bytes}


async def test_growth_rejects_an_empty_window(saver: Any) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        await store_growth(saver, now=datetime.now(UTC), days=0)
