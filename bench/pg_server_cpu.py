"""Client and server CPU per turn of the 8×20 throughput loop on orecast-postgres, and how its writes group.

    python -m bench.pg_server_cpu [THREADS TURNS]

runs `bench.run_bench`'s throughput phase (THREADS threads × TURNS turns, default 8 × 40) after the same
warm-ups as `bench.cg_throughput`, and prints per turn: wall time, this process's CPU, the CPU of the
store's server backends (utime + stime of every backend connected to the store's database, from
/proc/<pid>/stat: the server must run on this machine), the groups `GroupCommit` sent, and the writes
that found their thread's previous write still holding its turn (`core.ThreadTurn`: until its last
statement is queued). The /proc counters tick every 10 ms: run enough turns for ≈ 1 s of
server CPU, and alternate old and new code.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

import psycopg

from bench.cg_throughput import warm_up
from bench.run_bench import throughput
from bench.stores import open_store
from bench.wall_split import count_groups
from bench.workload import build_graph

TICKS = os.sysconf("SC_CLK_TCK")


def backend_cpu(pid: int) -> float:
    """Seconds of CPU of one process (0 once it has exited)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


async def backends(admin: psycopg.AsyncConnection) -> list[int]:
    cur = await admin.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    return [row[0] for row in await cur.fetchall()]


async def main(threads: int, turns: int) -> None:
    async with open_store("orecast-postgres") as store:
        saver: Any = store.saver
        graph = build_graph().compile(checkpointer=saver)
        await warm_up(graph, threads)

        counts = count_groups(saver)
        async with await psycopg.AsyncConnection.connect(saver.url, autocommit=True) as admin:
            before = {pid: backend_cpu(pid) for pid in await backends(admin)}
            cpu, wall = time.process_time(), time.perf_counter()
            await throughput(graph, threads, turns, stateless=False)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            server = sum(backend_cpu(pid) - before.get(pid, 0.0) for pid in await backends(admin))
        n = threads * turns
        print(
            f"wall {wall / n * 1e3:.2f} ms/turn  client CPU {cpu / n * 1e3:.2f} ms/turn  "
            f"server CPU {server / n * 1e3:.2f} ms/turn  groups {counts['groups'] / n:.2f}/turn  "
            f"writes behind their thread's previous one {counts['behind']} of {counts['writes']}"
        )


if __name__ == "__main__":
    threads, turns = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (8, 40)
    asyncio.run(main(threads, turns))
