"""`WriteOrder` (core.py): a thread's writes take turns first come, first served, and a write that starts
again goes before every write that came after it."""

from __future__ import annotations

import asyncio
import gc

import pytest

from orecast.checkpoint.core import ThreadTurn, WriteOrder
from tests.checkpoint.checkpoints import put


async def test_turns_go_in_the_order_the_writes_came() -> None:
    order = WriteOrder()
    ran: list[int] = []

    async def write(n: int) -> None:
        async with ThreadTurn(order):
            ran.append(n)
            await asyncio.sleep(0)

    await asyncio.gather(*(write(n) for n in range(5)))
    assert ran == [0, 1, 2, 3, 4]


async def test_a_write_that_starts_again_goes_before_those_that_came_after_it() -> None:
    order = WriteOrder()
    first, second, third = ThreadTurn(order), ThreadTurn(order), ThreadTurn(order)
    await first.acquire()
    first.release()  # let go early (its last statement queued) ...
    await second.acquire()  # ... so the second started; the third waits for it
    ran: list[str] = []

    async def take(turn: ThreadTurn, name: str) -> None:
        await turn.acquire()
        ran.append(name)
        turn.release()

    waiting = asyncio.create_task(take(third, "third"))
    await asyncio.sleep(0)
    retry = asyncio.create_task(take(first, "first again"))  # the first failed: it starts again
    await asyncio.sleep(0)
    second.release()
    await asyncio.gather(waiting, retry)
    assert ran == ["first again", "third"]


async def test_a_cancelled_waiter_passes_its_turn_on() -> None:
    order = WriteOrder()
    holder, cancelled, granted_then_cancelled, last = (ThreadTurn(order) for _ in range(4))
    await holder.acquire()
    gone = asyncio.create_task(cancelled.acquire())
    await asyncio.sleep(0)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    late = asyncio.create_task(granted_then_cancelled.acquire())
    await asyncio.sleep(0)
    holder.release()  # the turn is granted to `late`, which is cancelled before it runs
    late.cancel()
    with pytest.raises(asyncio.CancelledError):
        await late
    await asyncio.wait_for(last.acquire(), 1)
    assert order.locked()
    last.release()
    assert not order.locked()
    # nobody waits any longer: a new write gets its turn at once
    await asyncio.wait_for(ThreadTurn(order).acquire(), 1)


async def test_a_cached_thread_keeps_its_write_order_between_its_writes(saver) -> None:
    # The saver knows a thread's order weakly; while the thread is cached the same order serves each of
    # its writes, rather than a new one (and its weak reference) for every write that finds none.
    await put(saver, "kept", "first")
    gc.collect()
    order = saver._write_orders.get("kept")
    assert order is not None
    await put(saver, "kept", "second")
    gc.collect()
    assert saver._write_orders.get("kept") is order
    del order
    saver.items.drop("kept")  # no longer cached: the order goes once no write holds it
    gc.collect()
    assert saver._write_orders.get("kept") is None
