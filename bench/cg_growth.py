"""Instructions of a window of the growth phase's turns, for callgrind A/B runs that load cannot move.

    valgrind --tool=callgrind --instr-atstart=no python -m bench.cg_growth SAVER [TURNS FIRST LAST]

runs `bench.run_bench`'s growth workload (the subgraph tool loop, `durability="sync"`, one thread) on
one saver for TURNS turns (default 60) and switches callgrind's instrumentation on for turns FIRST..LAST
only (default 1..10); valgrind's closing "Collected" count is then those turns' instructions. Run it for
`floor` and a saver, for turns 1–10 and 51–60: the saver's own instructions per turn are its count minus
`floor`'s, and their growth is the late window's over the early one's.
"""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys

from bench.stores import open_store
from bench.workload import build_subgraph_graph, run_turn


def callgrind(*args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(os.getpid())], check=True, stdout=subprocess.DEVNULL)


async def main(name: str, turns: int, first: int, last: int) -> None:
    async with open_store(name) as store:
        graph = build_subgraph_graph().compile(checkpointer=store.saver)
        await run_turn(graph, "warmup", 1, durability="sync")
        gc.collect()
        for turn in range(1, turns + 1):
            if turn == first:
                callgrind("-i", "on")
            await run_turn(graph, "growth", turn, durability="sync")
            if turn == last:
                callgrind("-i", "off")


if __name__ == "__main__":
    saver, *rest = sys.argv[1:]
    turns, first, last = (int(a) for a in rest) if rest else (60, 1, 10)
    asyncio.run(main(saver, turns, first, last))
