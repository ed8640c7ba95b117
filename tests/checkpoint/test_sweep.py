"""Thread TTL and the sweep: expiry by an injected clock for both strategies, a thread's own TTL, busy
threads left alone, the record of each sweep, and two sweepers at once never processing one thread."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.core import utc_now
from orecast.checkpoint.sweep import TtlPolicy, set_thread_ttl, sweep, sweep_status, thread_ttl
from tests.checkpoint.conftest import dialect_of, raw_sql
from tests.checkpoint.graphs import human, tool_loop

DAY = timedelta(days=1)


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def talk(saver: Any, thread_id: str, turns: int = 2) -> Any:
    graph = tool_loop(saver)
    for turn in range(turns):
        await graph.ainvoke({"messages": [human(turn)]}, cfg(thread_id))
    return graph


async def checkpoints(saver: Any, thread_id: str) -> int:
    return len([t async for t in saver.alist(cfg(thread_id))])


async def test_default_ttl_deletes_idle_threads_only_once_they_expire(saver, store_url: str) -> None:
    await talk(saver, "old")
    await talk(saver, "new")
    policy = TtlPolicy(default=timedelta(days=90))
    # Nothing is 90 days idle yet.
    assert (await sweep(saver, policy)).expired == 0
    # 91 days on, both are: "new" talks again first, and stays.
    later = utc_now() + timedelta(days=91)
    assert (await sweep(saver, policy, now=later, dry_run=True)).deleted == ["old", "new"]
    assert await saver.aget_thread("old") is not None, "a dry run changes nothing"
    await saver.aupdate_thread("new", metadata={"title": "still in use"})
    raw_sql(store_url, "UPDATE threads SET updated_at = {} WHERE thread_id = 'new'".format(
        "?" if dialect_of(store_url) == "sqlite" else "%s"), (saver._ts(later - DAY),))
    result = await sweep(saver, policy, now=later)
    assert result.deleted == ["old"] and result.pruned == []
    assert result.checkpoints_deleted > 0
    assert await saver.aget_thread("old") is None
    assert await checkpoints(saver, "old") == 0
    for table in ("checkpoints", "channel_values", "writes", "items"):
        if dialect_of(store_url) == "postgresql" and table == "items":
            table = "item_tail"
        assert raw_sql(store_url, f"SELECT COUNT(*) FROM {table} WHERE thread_id = 'old'")[0][0] == 0, table
    assert await saver.aget_thread("new") is not None
    status = await sweep_status(saver)
    assert status["last_status"] == "ok" and status["threads_deleted"] == 1
    assert status["threads_pruned"] == 0 and status["last_error"] is None
    assert status["last_success_at"] is not None and status["last_run_at"] <= status["last_success_at"]


async def test_no_default_means_only_threads_with_their_own_ttl_expire(saver) -> None:
    await talk(saver, "forever")
    await talk(saver, "short")
    assert await sweep_status(saver) == {
        "last_run_at": None, "last_finished_at": None, "last_status": None, "threads_deleted": None,
        "threads_pruned": None, "checkpoints_deleted": None, "last_error": None, "last_success_at": None,
    }
    assert await set_thread_ttl(saver, "short", timedelta(minutes=30))
    assert not await set_thread_ttl(saver, "nobody", timedelta(minutes=30))
    info = await thread_ttl(saver, "short")
    assert info is not None and info["strategy"] == "delete" and info["ttl_minutes"] == 30
    assert await thread_ttl(saver, "forever") is None
    assert (await sweep(saver, TtlPolicy(), now=utc_now() + timedelta(minutes=29))).expired == 0
    result = await sweep(saver, TtlPolicy(), now=utc_now() + timedelta(minutes=31))
    assert result.deleted == ["short"]
    assert (await sweep(saver, TtlPolicy(), now=utc_now() + 1000 * DAY)).expired == 0
    assert await saver.aget_thread("forever") is not None


async def test_own_ttl_overrides_the_default_both_ways(saver) -> None:
    for name in ("default", "longer", "shorter"):
        await talk(saver, name, turns=1)
    await set_thread_ttl(saver, "longer", 30 * DAY)
    await set_thread_ttl(saver, "shorter", timedelta(hours=1), "keep_latest")
    policy = TtlPolicy(default=7 * DAY)
    assert (await thread_ttl(saver, "default", policy))["ttl_minutes"] == 7 * 24 * 60
    result = await sweep(saver, policy, now=utc_now() + 2 * timedelta(hours=1))
    assert (result.deleted, result.pruned) == ([], ["shorter"])
    result = await sweep(saver, policy, now=utc_now() + 8 * DAY)
    assert result.deleted == ["default"]
    assert await saver.aget_thread("longer") is not None
    await set_thread_ttl(saver, "longer", None)  # back to the default
    assert (await sweep(saver, policy, now=utc_now() + 8 * DAY)).deleted == ["longer"]


async def test_keep_latest_prunes_once_per_idle_spell_and_the_thread_goes_on(saver) -> None:
    graph = await talk(saver, "k", turns=3)
    before = await checkpoints(saver, "k")
    head = (await graph.aget_state(cfg("k"))).values
    policy = TtlPolicy(default=timedelta(days=30), strategy="keep_latest")
    later = utc_now() + timedelta(days=31)
    dry = await sweep(saver, policy, now=later, dry_run=True)
    assert dry.pruned == ["k"] and dry.checkpoints_deleted == before - 1
    assert await checkpoints(saver, "k") == before
    result = await sweep(saver, policy, now=later)
    assert result.pruned == ["k"] and result.deleted == [] and result.checkpoints_deleted == before - 1
    assert await checkpoints(saver, "k") == 1
    assert (await graph.aget_state(cfg("k"))).values == head
    # Still idle: not pruned again.
    assert (await sweep(saver, policy, now=later + DAY)).expired == 0
    status = await sweep_status(saver)
    assert (status["threads_pruned"], status["threads_deleted"]) == (0, 0)
    # New activity, idle again past the TTL: pruned again.
    await graph.ainvoke({"messages": [human(9)]}, cfg("k"))
    assert (await sweep(saver, policy, now=utc_now() + timedelta(days=31))).pruned == ["k"]
    assert await checkpoints(saver, "k") == 1
    assert len((await graph.aget_state(cfg("k"))).values["messages"]) > len(head["messages"])


async def test_a_busy_thread_is_never_swept(saver, store_url: str) -> None:
    for name in ("busy", "idle", "waiting"):
        await talk(saver, name, turns=1)
    statement, params = saver.thread_status_statement("busy", "busy", touch=False)
    raw_sql(store_url, statement if dialect_of(store_url) == "sqlite" else statement.replace("?", "%s"), params)
    await saver.aupdate_thread("waiting", status="interrupted")
    result = await sweep(saver, TtlPolicy(default=DAY), now=utc_now() + 2 * DAY)
    assert sorted(result.deleted) == ["idle", "waiting"]
    assert await saver.aget_thread("busy") is not None
    await saver.aupdate_thread("busy", status="idle")
    assert (await sweep(saver, TtlPolicy(default=DAY), now=utc_now() + 2 * DAY)).deleted == ["busy"]


async def test_limit_stops_the_sweep_and_the_next_one_goes_on(saver) -> None:
    for n in range(5):
        await talk(saver, f"t{n}", turns=1)
    policy, later = TtlPolicy(default=DAY), utc_now() + 2 * DAY
    assert len((await sweep(saver, policy, now=later, limit=3)).deleted) == 3
    assert len((await sweep(saver, policy, now=later, limit=3)).deleted) == 2
    with pytest.raises(ValueError):
        await sweep(saver, policy, limit=0)
    with pytest.raises(ValueError):
        TtlPolicy(default=DAY, strategy="archive")


async def test_a_failed_sweep_is_recorded(saver, store_url: str) -> None:
    await talk(saver, "x", turns=1)
    raw_sql(store_url, "UPDATE threads SET ttl_seconds = 60, ttl_strategy = 'keep_latest' WHERE thread_id = 'x'")
    # A corrupt row makes the prune stop: the sweep says so, and the next success clears it.
    raw_sql(store_url, "UPDATE threads SET next_item = 1 WHERE thread_id = 'x'")
    raw_sql(store_url, "DELETE FROM " + ("item_tail" if dialect_of(store_url) == "postgresql" else "items"))
    with pytest.raises(Exception):  # noqa: B017 - whatever the corrupt row raises, it is recorded
        await sweep(saver, TtlPolicy(), now=utc_now() + DAY)
    status = await sweep_status(saver)
    assert status["last_status"] == "error" and status["last_error"]
    assert status["last_success_at"] is None


@pytest.mark.parametrize("strategy", ["delete", "keep_latest"])
async def test_two_sweepers_at_once_never_process_one_thread_twice(store_url: str, strategy: str) -> None:
    # (On SQLite the single writer makes the two take turns; the outcome must be the same.)
    async with open_checkpointer(store_url) as seed:
        for n in range(30):
            await talk(seed, f"t{n:02d}", turns=1)
    policy, later = TtlPolicy(default=DAY, strategy=strategy), utc_now() + 2 * DAY
    async with open_checkpointer(store_url) as one, open_checkpointer(store_url) as two:
        # Both start at the same oldest thread: without the row locks both would take it.
        first, second = await asyncio.gather(sweep(one, policy, now=later), sweep(two, policy, now=later))
    done_first = first.deleted + first.pruned
    done_second = second.deleted + second.pruned
    assert not set(done_first) & set(done_second)
    assert sorted(done_first + done_second) == [f"t{n:02d}" for n in range(30)]
    if dialect_of(store_url) == "postgresql":
        # PostgreSQL locks only the rows a claim returns; InnoDB may lock every row it read before
        # sorting, so on MySQL the other sweeper can find all of them taken (and skips them, unblocked).
        assert done_first and done_second, "both sweepers took part"
    rows = raw_sql(store_url, "SELECT SUM(threads_deleted + threads_pruned), COUNT(*) FROM sweep_runs WHERE status = 'ok'")
    assert (int(rows[0][0]), rows[0][1]) == (30, 2)


async def test_an_archive_keeps_the_threads_own_ttl(saver, tmp_path) -> None:
    from orecast.checkpoint.archive import export_thread, import_archive, read_archive

    await talk(saver, "kept", turns=1)
    await set_thread_ttl(saver, "kept", timedelta(hours=6), "keep_latest")
    await talk(saver, "plain", turns=1)
    for name in ("kept", "plain"):
        await export_thread(saver, name, tmp_path / f"{name}.gz")
        await import_archive(saver, read_archive(saver, tmp_path / f"{name}.gz"), thread_id=f"{name}-copy")
        await import_archive(saver, read_archive(saver, tmp_path / f"{name}.gz"), thread_id=name, replace=True)
    for name in ("kept-copy", "kept"):
        info = await thread_ttl(saver, name)
        assert info is not None and (info["strategy"], info["ttl_minutes"]) == ("keep_latest", 360), name
    assert await thread_ttl(saver, "plain-copy") is None and await thread_ttl(saver, "plain") is None
