"""`thread_status_statement`: the statement another component runs, in its own transaction on the
store's database, to set a thread's status (the service marks a thread busy when it admits a run)."""

from __future__ import annotations

import pytest

from tests.checkpoint.conftest import dialect_of, raw_sql


async def test_the_statement_sets_the_status_the_store_reports(saver, store_url: str) -> None:
    await saver.aupdate_thread("t-status", metadata={"k": "v"}, status="idle")
    before = await saver.aget_thread("t-status")
    for status, touch in (("busy", False), ("interrupted", True)):
        sql, params = saver.thread_status_statement("t-status", status, touch=touch)
        if dialect_of(store_url) != "sqlite":
            sql = sql.replace("?", "%s")  # `?` placeholders: the caller adapts them, as the service does
        raw_sql(store_url, sql, params)
        after = await saver.aget_thread("t-status")
        assert after.status == status and after.metadata == {"k": "v"}
        assert (after.updated_at > before.updated_at) is touch, "only `touch` moves updated_at"
        before = after
    with pytest.raises(ValueError):
        saver.thread_status_statement("t-status", "sleepy")


async def test_the_statement_under_a_condition_of_the_caller(saver, store_url: str) -> None:
    await saver.aupdate_thread("t-when", metadata={}, status="idle")
    mark = "?" if dialect_of(store_url) == "sqlite" else "%s"
    for allowed, expected in ((False, "idle"), (True, "busy")):
        sql, params = saver.thread_status_statement("t-when", "busy", when="1 = 1" if allowed else "1 = 0")
        raw_sql(store_url, sql.replace("?", mark), params)
        assert (await saver.aget_thread("t-when")).status == expected


async def test_the_condition_that_a_thread_is_as_read(saver, store_url: str) -> None:
    await saver.aupdate_thread("t-same", metadata={"b": 1, "a": [1, "x"]}, status="idle")
    info = await saver.aget_thread("t-same")
    if dialect_of(store_url) == "mysql":
        # MySQL and MariaDB compare JSON differently: no condition, so a run server reads the thread
        assert saver.same_thread_condition("t-same", info.metadata) is None
        return
    mark = "?" if dialect_of(store_url) == "sqlite" else "%s"

    def holds(metadata: dict) -> bool:
        sql, params = saver.same_thread_condition("t-same", metadata)
        return bool(raw_sql(store_url, f"SELECT {sql}".replace("?", mark), params)[0][0])

    assert holds(info.metadata)
    await saver.aupdate_thread("t-same", metadata={"c": True})
    assert not holds(info.metadata), "changed metadata"
    assert holds((await saver.aget_thread("t-same")).metadata)
    await saver.adelete_thread("t-same")
    assert not holds(info.metadata), "a deleted thread"
