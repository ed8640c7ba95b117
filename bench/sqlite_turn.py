"""Where a lone SQLite writer's turn goes, as its thread grows.

    python -m bench.sqlite_turn [--turns 200] [--window 40] [--subgraph]

One thread of the chat workload (`bench.workload.build_graph`, LangGraph's default durability; with
`--subgraph`, the growth phase's `build_subgraph_graph` with `durability="sync"`) on a fresh
orecast-sqlite store, after two warm-up turns. The saver's methods are wrapped with timers, and
each window of turns prints the median turn and, per turn: the time writes waited for the write lock
(held by the WAL checkpoints), the checkpoints started and their time in the worker thread, the
COMMITs, the other statements, and the whole-list checks of the messages (`cache.all_unchanged`).
Timers add a few microseconds per call; compare windows of one run, or runs of two checkouts
(PYTHONPATH=<checkout>/src:<checkout>) run alternately.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import orecast.checkpoint.cache as cache
import orecast.checkpoint.sqlite.saver as sqlite_saver
from bench.stores import open_store
from bench.workload import build_graph, build_subgraph_graph, run_turn

Spent = collections.Counter[str]  # seconds by what, and calls under "<what> #"


def timed_async(spent: Spent, owner: Any, method: str, label: Callable[..., str]) -> None:
    original = getattr(owner, method)

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await original(*args, **kwargs)
        finally:
            key = label(*args)
            spent[key] += time.perf_counter() - start
            spent[key + " #"] += 1

    setattr(owner, method, wrapper)


def instrument(spent: Spent) -> None:
    """Wrap the saver's write lock, WAL checkpoints, statements and checks with timers adding to `spent`."""
    timed_async(spent, sqlite_saver._WriteUnit, "__aenter__", lambda *_: "waiting for the write lock")
    timed_async(spent, sqlite_saver.SqliteCheckpointer, "_checkpoint_wal", lambda *_: "WAL checkpoints")
    for method in ("execute", "executemany", "fetchone", "fetchall"):
        timed_async(
            spent, sqlite_saver._Db, method, lambda _db, sql, *_: "COMMIT" if sql == "COMMIT" else "other SQL"
        )
    check = cache.all_unchanged

    def all_unchanged(*args: Any, **kwargs: Any) -> bool:
        start = time.perf_counter()
        try:
            return check(*args, **kwargs)
        finally:
            spent["whole-list checks"] += time.perf_counter() - start
            spent["whole-list checks #"] += 1

    cache.all_unchanged = all_unchanged


async def main(turns: int, window: int, subgraph: bool) -> None:
    spent: Spent = collections.Counter()
    instrument(spent)
    durability = "sync" if subgraph else None
    async with open_store("orecast-sqlite") as store:
        graph = (build_subgraph_graph() if subgraph else build_graph()).compile(checkpointer=store.saver)
        for turn in range(1, 3):
            await run_turn(graph, "warmup", turn, durability=durability)
        await store.saver.adelete_thread("warmup")
        gc.collect()
        for first in range(1, turns + 1, window):
            spent.clear()
            times = []
            last = min(first + window - 1, turns)
            for turn in range(first, last + 1):
                ms, _ = await run_turn(graph, "single", turn, durability=durability)
                times.append(ms)
            n = last - first + 1
            parts = [
                f"{key} {value * 1000 / n:.2f} ms" if not key.endswith("#") else f"{key[:-2]}: {value / n:.1f} calls"
                for key, value in sorted(spent.items())
            ]
            print(f"turns {first}-{last}: turn {statistics.median(times):.1f} ms; a turn: " + ", ".join(parts))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--window", type=int, default=40)
    parser.add_argument("--subgraph", action="store_true")
    args = parser.parse_args()
    asyncio.run(main(args.turns, args.window, args.subgraph))
