"""The MariaDB server's CPU for orecast-mysql's work, measured on the server threads that did it.

    python -m bench.mysql_server_cpu read [--n 2000]     # a run's read (READ_LATEST_CHECKPOINT) of a 3-turn thread
    python -m bench.mysql_server_cpu loop [--rounds 1]   # the 8×20 throughput loop, one pooled connection

Which orecast it measures is whichever `orecast` imports (PYTHONPATH=<checkout>/src:<checkout> for A/B
runs of two checkouts). `read`: one connection runs the statement `--n` times on a thread the saver
wrote; the CPU of that connection's server thread (MariaDB's `information_schema.PROCESSLIST.TID`,
`/proc/<mariadbd>/task/<tid>/schedstat`, nanoseconds) per execution, and the client's. `loop`: the
saver opened with `pool_size=1`, so all of a run's server work is on one server thread; that thread's
CPU and the client's (`time.process_time()`) per turn, after a warm-up. CPU time, not wall time: load
from other processes moves it much less than turns/s (caches and frequency still move it a little).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import time
from typing import Any

from bench.run_bench import throughput
from bench.stores import fresh_mysql_database
from bench.workload import build_graph, run_turn
from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.mysql import queries

THREADS, TURNS = 8, 20


def server_pid() -> str:
    for name in ("mariadbd", "mysqld"):
        found = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True).stdout.split()
        if found:
            return found[0]
    raise SystemExit("no mariadbd or mysqld process on this machine")


def thread_ns(pid: str, tid: str) -> int:
    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
        return int(f.read().split()[0])


async def my_tid(db: Any) -> str:
    row = await db.fetchone("SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
    return str(row[0])


async def measure_read(n: int) -> None:
    pid = server_pid()
    async with fresh_mysql_database() as url, open_checkpointer(url, pool_size=1) as saver:
        graph = build_graph().compile(checkpointer=saver)
        for turn in range(1, 4):
            await run_turn(graph, "t", turn)
        async with saver._read() as db:
            tid = await my_tid(db)
            params = ("t", "") * (queries.READ_LATEST_CHECKPOINT.count("%s") // 2)
            rows = await db.fetchall(queries.READ_LATEST_CHECKPOINT, params)
            for _ in range(50):
                await db.fetchall(queries.READ_LATEST_CHECKPOINT, params)
            server, client = thread_ns(pid, tid), time.process_time()
            for _ in range(n):
                await db.fetchall(queries.READ_LATEST_CHECKPOINT, params)
            server, client = thread_ns(pid, tid) - server, time.process_time() - client
    print(
        f"READ_LATEST_CHECKPOINT ({len(rows)} rows): server {server / n / 1000:.0f} µs, "
        f"client {client / n * 1e6:.0f} µs per read ({n} reads, load {os.getloadavg()[0]:.1f})",
        flush=True,
    )


async def measure_loop(rounds: int) -> None:
    pid = server_pid()
    for _ in range(rounds):
        async with fresh_mysql_database() as url, open_checkpointer(url, pool_size=1) as saver:
            graph = build_graph().compile(checkpointer=saver)
            for turn in range(1, 3):
                await run_turn(graph, "warmup", turn)
            async with saver._read() as db:
                tid = await my_tid(db)
            gc.collect()
            server, client = thread_ns(pid, tid), time.process_time()
            tp = await throughput(graph, THREADS, TURNS, stateless=False)
            server, client = thread_ns(pid, tid) - server, time.process_time() - client
            async with saver._read() as db:
                assert await my_tid(db) == tid, "the pool's one connection was replaced"
        turns = THREADS * TURNS
        print(
            f"8×20: server {server / turns / 1e6:.2f} ms, client {client / turns * 1000:.2f} ms CPU per turn, "
            f"{tp['turns_per_s']:.0f} turns/s (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("read", "loop"))
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    asyncio.run(measure_read(args.n) if args.what == "read" else measure_loop(args.rounds))


if __name__ == "__main__":
    main()
