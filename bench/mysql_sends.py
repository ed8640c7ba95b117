"""What the MySQL saver sends per turn of the 8×20 throughput loop, and the time the client spends inside
those sends.

    python -m bench.mysql_sends [--rounds 2]

Runs `bench.cg_throughput`'s warm-ups and then `bench.run_bench`'s throughput phase on orecast-mysql,
with asyncio's socket transport `write` timed (wall clock and this thread's CPU) and each write
classed by its MySQL command byte and size. A write is one `send` system call when the socket takes it
at once (it does here). Wall time far above CPU time inside `send` is time the client was off its
CPU: the server thread the packet woke ran in its place (7 December, load ~3: 4.0 writes a turn,
1.6–2.0 ms of wall against 0.16–0.21 ms of CPU a turn). The driver (asyncmy) sends a query of 8 KiB or
more as two writes, its 5-byte header first: each wakes the server's thread.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from asyncio import selector_events
from collections import Counter
from typing import Any

from bench.cg_throughput import warm_up
from bench.run_bench import throughput
from bench.stores import open_store
from bench.workload import build_graph

THREADS, TURNS = 8, 20
COMMANDS = {0x03: "COM_QUERY", 0x17: "COM_STMT_EXECUTE", 0x16: "COM_STMT_PREPARE", 0x01: "COM_QUIT"}


def _kind(data: bytes) -> str:
    if len(data) <= 5:
        return f"{COMMANDS.get(data[4], hex(data[4])) if len(data) == 5 else '?'} header alone"
    if len(data) >= 8192:
        return "payload of a query of 8 KiB or more (sent after its header)"
    return f"{COMMANDS.get(data[4], hex(data[4]))} in one write, under 8 KiB"


async def one_round() -> str:
    kinds: Counter[str] = Counter()
    spent = [0.0, 0.0]
    original = selector_events._SelectorSocketTransport.write

    def write(self: Any, data: Any) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            original(self, data)
        finally:
            spent[0] += time.perf_counter() - wall
            spent[1] += time.thread_time() - cpu
            kinds[_kind(bytes(data))] += 1

    async with open_store("orecast-mysql") as store:
        graph = build_graph().compile(checkpointer=store.saver)
        await warm_up(graph, THREADS)
        gc.collect()
        selector_events._SelectorSocketTransport.write = write  # type: ignore[method-assign]
        try:
            start, cpu = time.perf_counter(), time.process_time()
            await throughput(graph, THREADS, TURNS, stateless=False)
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        finally:
            selector_events._SelectorSocketTransport.write = original  # type: ignore[method-assign]
    turns = THREADS * TURNS
    lines = [
        f"{turns / wall:.0f} turns/s, client CPU {cpu * 1000 / turns:.2f} ms a turn; "
        f"{kinds.total() / turns:.2f} writes a turn, inside them {spent[0] * 1000 / turns:.3f} ms of wall "
        f"and {spent[1] * 1000 / turns:.3f} ms of CPU a turn"
    ]
    lines += [f"  {n / turns:5.2f}  {kind}" for kind, n in kinds.most_common()]
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    for _ in range(args.rounds):
        print(await one_round(), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
