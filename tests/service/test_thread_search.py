"""`threads.search` / `threads.count` through the official SDK: `values` filtered before the page is cut,
and every `sort_by` the SDK allows (`ThreadSortBy`), on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, get_args

import pytest
from langgraph_sdk.schema import ThreadSortBy

from tests.service.conftest import ECHO, say


def ids(threads: list[dict[str, Any]]) -> list[str]:
    return [t["thread_id"] for t in threads]


def ranked_id(rank: int) -> str:
    """A UUID whose place among the test's ids is `rank` (its first hex digit), the rest random."""
    return str(uuid.UUID(f"{rank:x}{uuid.uuid4().hex[1:]}"))


async def test_values_are_matched_before_the_page_is_cut(client) -> None:
    """Matches that lie beyond the first page of candidates are found: paging through them with
    limit/offset returns each once, in order; count counts them all."""
    suite = uuid.uuid4().hex
    pattern = [True, False, False, True, False, True, False, False, True, True, False]
    made = []
    for match in pattern:
        tid = (await client.threads.create(metadata={"suite": suite, "graph_id": ECHO}))["thread_id"]
        await client.threads.update_state(tid, {"delay": 7 if match else 1, "ask": False}, as_node="echo")
        made.append(tid)
    await client.threads.create(metadata={"suite": suite, "graph_id": ECHO})  # no state at all: never a match
    newest_first = [t for t, match in zip(made, pattern, strict=True) if match][::-1]

    wanted = {"delay": 7}
    pages = []
    for offset in range(0, len(newest_first) + 2, 2):
        page = await client.threads.search(metadata={"suite": suite}, values=wanted, limit=2, offset=offset)
        assert all(t["values"]["delay"] == 7 for t in page)
        pages.append(ids(page))
    assert [t for page in pages for t in page] == newest_first
    assert [len(page) for page in pages] == [2, 2, 1, 0]
    assert await client.threads.count(metadata={"suite": suite}, values=wanted) == len(newest_first)
    assert await client.threads.count(metadata={"suite": suite}, values={"delay": 7, "ask": False}) == 5
    assert await client.threads.count(metadata={"suite": suite}, values={"delay": 7, "ask": True}) == 0
    assert await client.threads.count(metadata={"suite": suite}, values={"nothing": None}) == 0
    assert await client.threads.count(metadata={"suite": suite}) == len(pattern) + 1

    oldest = await client.threads.search(
        metadata={"suite": suite}, values=wanted, sort_by="created_at", sort_order="asc", limit=3, offset=1
    )
    assert ids(oldest) == newest_first[::-1][1:4]
    by_id = await client.threads.search(values=wanted, ids=made, limit=2, offset=1)
    assert ids(by_id) == newest_first[::-1][1:3]


async def test_every_sort_by_of_the_sdk_orders_the_threads(client) -> None:
    """`sort_by` each of `ThreadSortBy` (status, state_updated_at too), asc and desc, with offset: the
    order is that of the field in the answers (ties broken by thread id), and the set-up makes the
    orders of the fields differ, so each is checked against its own column."""
    suite = uuid.uuid4().hex
    tids = [
        (await client.threads.create(thread_id=ranked_id(rank), metadata={"suite": suite, "graph_id": ECHO}))["thread_id"]
        for rank in (3, 0, 4, 1, 2)
    ]
    for i in (2, 0, 3):  # the state changes in another order than the threads were made; 1 and 4 have none yet
        await client.threads.update_state(tids[i], {"delay": 1}, as_node="echo")
    await client.runs.wait(tids[1], ECHO, input=say("wait", ask=True))  # interrupted
    with pytest.raises(Exception, match="TypeError"):  # the graph fails: the thread's status is error
        await client.runs.wait(tids[4], ECHO, input=say("fail", delay="not a number"))
    for i in (3, 1, 4, 0, 2):  # metadata last: updated_at in yet another order
        await client.threads.update(tids[i], metadata={"touched": i})

    found = await client.threads.search(metadata={"suite": suite}, limit=10)
    assert {t["status"] for t in found} == {"idle", "interrupted", "error"}

    def key(field: str):
        def of(thread: dict[str, Any]) -> tuple[Any, str]:
            value = thread[field]
            return (value if field in ("status", "thread_id") else datetime.fromisoformat(value)), thread["thread_id"]
        return of

    orders = {}
    for field in get_args(ThreadSortBy):
        expected = ids(sorted(found, key=key(field)))
        orders[field] = expected
        for order, want in (("asc", expected), ("desc", expected[::-1])):
            got = await client.threads.search(metadata={"suite": suite}, sort_by=field, sort_order=order, limit=10)
            assert ids(got) == want, (field, order)
            page = await client.threads.search(
                metadata={"suite": suite}, sort_by=field, sort_order=order, limit=2, offset=2
            )
            assert ids(page) == want[2:4], (field, order)
            matching = await client.threads.search(
                metadata={"suite": suite}, values={"delay": 1}, sort_by=field, sort_order=order, limit=1, offset=1
            )
            updated = [t for t in want if t in (tids[0], tids[2], tids[3])]
            assert ids(matching) == updated[1:2], (field, order)
    assert set(orders) == {"thread_id", "status", "created_at", "updated_at", "state_updated_at"}
    assert len({tuple(o) for f, o in orders.items() if f != "status"}) == 4, orders
    assert orders["created_at"] == tids
    assert orders["thread_id"] == [tids[i] for i in (1, 3, 4, 0, 2)]
    assert orders["updated_at"] == [tids[i] for i in (3, 1, 4, 0, 2)]
    assert orders["state_updated_at"] == [tids[i] for i in (2, 0, 3, 1, 4)]
    assert orders["status"][0] == tids[4] and orders["status"][-1] == tids[1]  # error … idle … interrupted
