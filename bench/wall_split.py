"""Where the event loop's wall time goes in the 8×20 throughput loop: running, waiting to run, idle.

    python -m bench.wall_split SAVER [--rounds 3] [--floor]

Each round opens SAVER on a fresh store, runs `bench.cg_throughput`'s warm-ups, then `bench.run_bench`'s
throughput phase, and prints per turn the loop thread's wall time split by the kernel's scheduler
statistics (`/proc/self/task/<tid>/schedstat`): **run** (on a CPU), **runqueue** (runnable, but another
task had the CPU: on two cores, often the database server's thread the loop's own send just woke) and
**idle** (the rest: every graph thread waited for the database); then the whole process's CPU
(`time.process_time`, the executor threads' too) and, for the MySQL savers, the CPU of the whole
`mariadbd` process over the loop (`/proc/<pid>/stat`, its background threads included; other clients of
the same server count too). `--floor` runs `floor` before each round and prints the ratio of turns/s.
For orecast-postgres and orecast-mysql it also counts the groups of writes sent a turn, and the writes
that found their thread's previous write still holding its turn (`core.ThreadTurn`: until its batch or
last statement is queued): counts that load moves much less than time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import threading
import time
from typing import Any

from bench.cg_throughput import warm_up
from bench.run_bench import throughput
from bench.stores import open_store
from bench.workload import build_graph

THREADS, TURNS = 8, 20


def _schedstat() -> tuple[int, int]:
    with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f:
        run, wait, _slices = (int(x) for x in f.read().split())
    return run, wait


def _process_cpu(pid: str) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def count_groups(saver: Any) -> dict[str, int]:
    """Counters of the groups the saver sends and of its writes, from now on (0 where it groups none)."""
    counts = {"groups": 0, "grouped": 0, "writes": 0, "behind": 0}
    groups = getattr(saver, "_groups", None)
    if groups is None:
        return counts
    write_thread = saver._write_thread

    async def counted_write(thread_id: str, work: Any) -> None:
        counts["writes"] += 1
        counts["behind"] += saver._write_order(thread_id).locked()
        await write_thread(thread_id, work)

    saver._write_thread = counted_write
    if hasattr(groups, "_run_group"):  # PostgreSQL (postgres/pipeline.py)
        run_group = groups._run_group

        async def counted_group(group: list[Any], kept: Any) -> Any:
            counts["groups"] += 1
            counts["grouped"] += len(group)
            return await run_group(group, kept)

        groups._run_group = counted_group
    else:  # MySQL (mysql/groups.py)
        send = groups._send

        async def counted_send(group: Any) -> Any:
            counts["groups"] += 1
            counts["grouped"] += len(group.members)
            return await send(group)

        groups._send = counted_send
    return counts


async def one_round(name: str) -> dict[str, float]:
    server = None
    if name.endswith("-mysql"):
        from bench.mysql_probe import server_pid

        server = server_pid()
    async with open_store(name) as store:
        graph = build_graph().compile(checkpointer=store.saver)
        await warm_up(graph, THREADS)
        counts = count_groups(store.saver)
        gc.collect()
        server_before = _process_cpu(server) if server else 0.0
        (run0, wait0), cpu0, start = _schedstat(), time.process_time(), time.perf_counter()
        await throughput(graph, THREADS, TURNS, stateless=False)
        elapsed = time.perf_counter() - start
        (run1, wait1), cpu1 = _schedstat(), time.process_time()
        server_cpu = _process_cpu(server) - server_before if server else 0.0
    n = THREADS * TURNS
    run, wait = (run1 - run0) / 1e6 / n, (wait1 - wait0) / 1e6 / n
    wall = elapsed * 1e3 / n
    return {"turns_per_s": n / elapsed, "wall": wall, "run": run, "runqueue": wait, "idle": wall - run - wait,
            "cpu": (cpu1 - cpu0) * 1e3 / n, "server": server_cpu * 1e3 / n, **counts}


async def main(name: str, rounds: int, with_floor: bool) -> None:
    for _ in range(rounds):
        floor = await one_round("floor") if with_floor else None
        r = await one_round(name)
        ratio = f", {r['turns_per_s'] / floor['turns_per_s']:.2f} of floor's {floor['turns_per_s']:.0f}" if floor else ""
        server = f", mariadbd {r['server']:.2f}" if name.endswith("-mysql") else ""
        grouped = (
            f"; groups {r['groups'] / (THREADS * TURNS):.2f} a turn ({r['grouped'] / r['groups']:.1f} statements "
            f"or batches each), {r['behind']} of {r['writes']} writes behind their thread's last"
            if r["groups"]
            else ""
        )
        print(
            f"{name}: {r['turns_per_s']:.0f} turns/s{ratio}; wall {r['wall']:.2f} = run {r['run']:.2f} + runqueue "
            f"{r['runqueue']:.2f} + idle {r['idle']:.2f} ms a turn; CPU: client {r['cpu']:.2f}{server} ms a turn "
            f"(load {os.getloadavg()[0]:.1f}){grouped}",
            flush=True,
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("saver")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--floor", action="store_true", help="run floor before each round and print the ratio")
    args = ap.parse_args()
    asyncio.run(main(args.saver, args.rounds, args.floor))
