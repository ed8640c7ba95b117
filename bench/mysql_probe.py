"""The throughput phase (8 threads × 20 turns) on `floor` and `orecast-mysql`, with where the time goes.

    python -m bench.mysql_probe [--rounds 2] [--count]

Per turn of orecast-mysql: the client's CPU, the MariaDB/MySQL server's CPU (the whole `mariadbd` or
`mysqld` process from /proc, so other clients of the server count too) and the CPU of the server
threads that served this run's connections (MariaDB's `information_schema.PROCESSLIST.TID`; threads come
from a cache, so work a thread did for another client during the run counts too). `--count` also counts
the saver's round trips per turn by kind (the first words of each statement; a batch lists its
statements). Run it on a machine as quiet as you can: the server numbers are only as good as that.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import time
from collections import Counter
from typing import Any

from bench.run_bench import throughput
from bench.stores import open_store
from bench.workload import build_graph, run_turn

THREADS, TURNS = 8, 20
TICK = os.sysconf("SC_CLK_TCK")


def server_pid() -> str:
    for name in ("mariadbd", "mysqld"):
        found = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True).stdout.split()
        if found:
            return found[0]
    raise SystemExit("no mariadbd or mysqld process on this machine")


def task_cpu(pid: str) -> dict[str, float]:
    """CPU seconds of each thread of process `pid`."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[tid] = (int(fields[11]) + int(fields[12])) / TICK
    return out


async def our_server_threads(saver: Any) -> list[str]:
    async with saver._read() as db:
        rows = await db.fetchall(
            "SELECT TID FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND TID IS NOT NULL"
        )
    return [str(tid) for (tid,) in rows]


def count_round_trips(counts: Counter[str]) -> None:
    from orecast.checkpoint.mysql import saver as module

    for name in ("execute", "executemany", "fetchone", "fetchall", "batch"):
        original = getattr(module._Db, name, None)
        if original is None:
            continue  # a saver from before batches

        def call(self: Any, sql: Any, *args: Any, _name: str = name, _original: Any = original) -> Any:
            if _name == "batch":
                counts["batch: " + " | ".join(" ".join(s.split()[:2]) for s, _p in sql)] += 1
            else:
                counts[" ".join(sql.split()[:3])] += 1
            return _original(self, sql, *args)

        setattr(module._Db, name, call)


async def one(name: str, pid: str, counts: Counter[str] | None) -> dict[str, Any]:
    async with open_store(name) as store:
        graph = build_graph().compile(checkpointer=store.saver)
        for turn in range(1, 3):
            await run_turn(graph, "warmup", turn)
        gc.collect()
        if counts is not None:
            counts.clear()
        cpu, before = time.process_time(), task_cpu(pid)
        tp = await throughput(graph, THREADS, TURNS, stateless=False)
        after, turns = task_cpu(pid), THREADS * TURNS
        tp["client_ms"] = (time.process_time() - cpu) * 1000 / turns
        tp["server_ms"] = (sum(after.values()) - sum(before.values())) * 1000 / turns
        tp["counts"] = Counter(counts or {})
        if name != "floor":
            ours = await our_server_threads(store.saver)
            tp["ours_ms"] = sum(after.get(t, 0) - before.get(t, 0) for t in ours) * 1000 / turns
        return tp


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--count", action="store_true", help="count round trips per turn by kind")
    args = ap.parse_args()
    pid = server_pid()
    counts: Counter[str] | None = Counter() if args.count else None
    if counts is not None:
        count_round_trips(counts)
    for round_no in range(1, args.rounds + 1):
        floor = await one("floor", pid, None)
        ours = await one("orecast-mysql", pid, counts)
        print(
            f"round {round_no}: floor {floor['turns_per_s']:.0f} turns/s | orecast-mysql "
            f"{ours['turns_per_s']:.0f} turns/s, ratio {ours['turns_per_s'] / floor['turns_per_s']:.2f}, "
            f"client CPU {ours['client_ms']:.1f} ms/turn (floor {floor['client_ms']:.1f}), server CPU "
            f"{ours['server_ms']:.1f} ms/turn, of it this run's connections {ours['ours_ms']:.1f}",
            flush=True,
        )
        if ours["counts"]:
            print(f"  round trips per turn: {ours['counts'].total() / (THREADS * TURNS):.1f}")
            for kind, n in ours["counts"].most_common():
                print(f"  {n / (THREADS * TURNS):5.2f}  {kind}")


if __name__ == "__main__":
    asyncio.run(main())
