"""Instructions of the 8×20 throughput loop, for callgrind A/B runs that load cannot move.

    valgrind --tool=callgrind --instr-atstart=no python -m bench.cg_throughput SAVER [THREADS TURNS]

runs `bench.run_bench`'s throughput phase (THREADS threads × TURNS turns of the chat workload, default
8 × 20) on one saver after two warm-ups (one thread, then every thread two turns, so each code path has
run and every cache is filled) and switches callgrind's instrumentation on around the loop only;
valgrind's closing "Collected" count divided by THREADS × TURNS is the instructions per turn. Run it for
`floor` and a saver: the saver's own instructions per turn are the difference.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Callable
from typing import Any

from bench.cg_growth import callgrind
from bench.run_bench import throughput
from bench.stores import open_store
from bench.workload import build_graph, run_turn


async def warm_up(graph: Any, threads: int) -> None:
    """Two turns on one thread, then two on each of `threads` threads at once (other thread ids than
    the measured loop's), so each code path has run and every cache and pool is filled."""
    for turn in range(1, 3):
        await run_turn(graph, "warmup", turn)

    async def warm(thread: int) -> None:
        for turn in range(1, 3):
            await run_turn(graph, f"warm-{thread}", turn)

    await asyncio.gather(*(warm(i) for i in range(threads)))


async def main(name: str, threads: int, turns: int, prepare: Callable[[Any], None] | None = None) -> None:
    """The measured loop; `prepare(saver)` runs on the opened saver first (`bench.cg_split` instruments it)."""
    async with open_store(name) as store:
        if prepare is not None:
            prepare(store.saver)
        graph = build_graph().compile(checkpointer=store.saver)
        await warm_up(graph, threads)
        gc.collect()
        callgrind("-i", "on")
        await throughput(graph, threads, turns, stateless=False)
        callgrind("-i", "off")


if __name__ == "__main__":
    saver, *rest = sys.argv[1:]
    threads, turns = (int(a) for a in rest) if rest else (8, 20)
    asyncio.run(main(saver, threads, turns))
