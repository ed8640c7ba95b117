"""The saver's writes leave no reference cycles behind.

Garbage in a cycle is freed only by the cyclic collector, not when its last reference goes: a write's
group, its future, its task and the statements it holds (the JSON text of the messages, kilobytes a
turn) stayed in memory until a collection found them, and every collection of the young generation
walked them again meanwhile.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.checkpoint.test_item_pages import _chat


@contextmanager
def cyclic_garbage() -> Iterator[list[Any]]:
    """Collects nothing inside the block; then yields into the list what only the cycle collector
    would have freed (kept by `gc.DEBUG_SAVEALL` so it can be looked at)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    found: list[Any] = []
    try:
        yield found
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found.extend(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


def _ours(objects: list[Any]) -> list[str]:
    names = {f"{type(o).__module__}.{type(o).__qualname__}" for o in objects}
    return sorted(name for name in names if name.startswith("orecast."))


async def test_concurrent_turns_leave_no_cycles(saver: Any) -> None:
    """Turns of several threads at once (MySQL's and PostgreSQL's writes then share groups)."""
    threads = [f"cycles-{i}" for i in range(4)]
    await asyncio.gather(*(_chat(saver, t, 1) for t in threads))  # the threads' first writes, and warm caches
    with cyclic_garbage() as garbage:
        results = await asyncio.gather(*(_chat(saver, t, 2, start=1) for t in threads))
    assert all(len(messages) == 12 for messages in results)
    assert _ours(garbage) == []
