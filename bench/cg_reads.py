"""Instructions of the reads of a long thread, for callgrind A/B runs that load cannot move.

    valgrind --tool=callgrind --instr-atstart=no python -m bench.cg_reads SAVER {state,history10,history} [TURNS]

writes TURNS turns (default 60) of the chat workload on one thread, reads it once each way (so every
cache is as a real reader's), then switches callgrind's instrumentation on around 5 `aget_state`, 5
`aget_state_history(limit=10)` or 1 full `aget_state_history`; valgrind's closing "Collected" count is
the client's instructions for them.
"""

from __future__ import annotations

import asyncio
import gc
import sys

from bench.cg_growth import callgrind
from bench.stores import open_store
from bench.workload import build_graph, run_turn


async def main(name: str, what: str, turns: int) -> None:
    async with open_store(name) as store:
        graph = build_graph().compile(checkpointer=store.saver)
        for turn in range(1, turns + 1):
            await run_turn(graph, "t", turn)
        config = {"configurable": {"thread_id": "t"}}

        async def history(limit: int | None) -> int:
            return sum([1 async for _ in graph.aget_state_history(config, limit=limit)])

        read, times = {
            "state": (lambda: graph.aget_state(config), 5),
            "history10": (lambda: history(10), 5),
            "history": (lambda: history(None), 1),
        }[what]
        await read()
        gc.collect()
        callgrind("-i", "on")
        for _ in range(times):
            await read()
        callgrind("-i", "off")


if __name__ == "__main__":
    saver, what, *rest = sys.argv[1:]
    asyncio.run(main(saver, what, int(rest[0]) if rest else 60))
