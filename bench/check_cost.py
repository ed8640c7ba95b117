"""What the whole-list check costs a message inside a real turn, against the same check run warm.

    python -m bench.check_cost [SAVER] [--turns 60] [--window 10]

Runs the growth workload (`bench.workload.build_subgraph_graph`, `durability="sync"`) on one thread of
SAVER (default orecast-sqlite) and times every `cache.all_unchanged` call of the last WINDOW turns
(wall and thread CPU time, which differ only if the check waited for another thread). Then it runs the
check again on the longest list the thread remembers, 200 times in a row, with nothing in between: the
cost when its data is in the CPU's caches. The ratio of the two says how much of the check inside a turn
is waiting on memory rather than the interpreter.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

import orecast.checkpoint.cache as cache
from bench.stores import OURS, open_store
from bench.workload import build_subgraph_graph, run_turn

THREAD = "check-cost"
Timed = list[tuple[float, float, int]]  # (wall s, thread CPU s, list length) per check


def timing(record: Timed) -> Callable[..., bool]:
    """Time every whole-list check into `record`; the check itself, untimed."""
    check = cache.all_unchanged

    def all_unchanged(objs: list[Any], pristine: cache.Pristine, **kwargs: Any) -> bool:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return check(objs, pristine, **kwargs)
        finally:
            record.append((time.perf_counter() - wall, time.thread_time() - cpu, len(objs)))

    cache.all_unchanged = all_unchanged
    return check


async def main(saver_name: str, turns: int, window: int) -> None:
    record: Timed = []
    check = timing(record)
    async with open_store(saver_name) as store:
        graph = build_subgraph_graph().compile(checkpointer=store.saver)
        for turn in range(1, turns + 1):
            if turn == turns - window + 1:
                record.clear()
            await run_turn(graph, THREAD, turn, durability="sync")
        thread = store.saver.items.peek(THREAD)
    if thread is None:
        raise SystemExit(f"{saver_name} no longer caches the thread's items")
    messages = sum(n for _w, _c, n in record)
    wall = sum(w for w, _c, _n in record)
    cpu = sum(c for _w, c, _n in record)
    print(
        f"{saver_name}, turns {turns - window + 1}-{turns}: {len(record) / window:.1f} checks a turn of "
        f"{messages / len(record):.0f} items on average; {wall / window * 1e3:.2f} ms a turn "
        f"(thread CPU {cpu / window * 1e3:.2f} ms), {wall / messages * 1e9:.0f} ns an item"
    )
    lists = [entry for entry in thread.last_lists.values() if entry[2] is not None]
    objs, _ranges, pristine = max(lists, key=lambda entry: len(entry[0]))
    if not check(objs, pristine, private=False):
        raise SystemExit("the thread's longest list no longer matches its pristine copies")
    runs = []
    for _ in range(200):
        start = time.perf_counter()
        check(objs, pristine, private=False)
        runs.append(time.perf_counter() - start)
    warm = statistics.median(runs) / len(objs)
    print(f"the same check warm, on a list of {len(objs)} items: {warm * 1e9:.0f} ns an item; "
          f"inside the turns: {wall / messages / warm:.1f} times as much")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("saver", nargs="?", default="orecast-sqlite", choices=OURS)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--window", type=int, default=10)
    args = parser.parse_args()
    if not 0 < args.window <= args.turns:
        parser.error("--window must be between 1 and --turns")
    asyncio.run(main(args.saver, args.turns, args.window))
