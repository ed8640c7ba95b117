"""User and system CPU per turn of the 8×20 throughput loop, and (with strace) its system calls.

    python -m bench.cpu_split SAVER [--rounds 3]
    strace -f -o /tmp/trace python -m bench.cpu_split SAVER --rounds 1 --mark /tmp/loop.mark
    python -m bench.cpu_split --count /tmp/trace /tmp/loop.mark

Each round opens SAVER on a fresh store, runs `bench.cg_throughput`'s warm-ups, then `bench.run_bench`'s
throughput phase, and prints per turn: turns/s, user and system CPU of this process
(`resource.getrusage`: SQLite's work is in it, a database server's is not) and context switches.
`--mark PATH` creates PATH just before the loop and deletes it just after; `--count TRACE PATH` then
counts the system calls of an `strace -f` output between those two events, by name. Run old and new
code alternately (PYTHONPATH=<checkout>/src:<checkout>): system CPU moves less with the machine's load
than turns/s, and call counts not at all.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import re
import resource
import time
from pathlib import Path

from bench.cg_throughput import warm_up
from bench.run_bench import throughput
from bench.stores import open_store
from bench.workload import build_graph

THREADS, TURNS = 8, 20


async def one_round(name: str, mark: Path | None) -> str:
    async with open_store(name) as store:
        graph = build_graph().compile(checkpointer=store.saver)
        await warm_up(graph, THREADS)
        gc.collect()
        if mark is not None:
            mark.touch()
        before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        await throughput(graph, THREADS, TURNS, stateless=False)
        after, elapsed = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - start
        if mark is not None:
            mark.unlink()
    n = THREADS * TURNS
    return (
        f"{name}: {n / elapsed:.0f} turns/s, user {(after.ru_utime - before.ru_utime) * 1000 / n:.2f} ms, "
        f"system {(after.ru_stime - before.ru_stime) * 1000 / n:.2f} ms a turn; context switches a turn: "
        f"{(after.ru_nvcsw - before.ru_nvcsw) / n:.1f} voluntary, {(after.ru_nivcsw - before.ru_nivcsw) / n:.1f} not"
    )


def count_calls(trace: Path, mark: Path) -> collections.Counter[str]:
    """System calls by name in an `strace -f` output, from the marker's creation to its deletion."""
    calls: collections.Counter[str] = collections.Counter()
    inside = False
    for line in trace.read_text(errors="replace").splitlines():
        if str(mark) in line:  # its creation (`touch` tries utimensat first) and its unlink
            if "openat(" in line:
                inside = True
            elif "unlink" in line:
                inside = False
            continue
        # "PID  name(args…" or "PID  <... name resumed>": a resumed call was counted when it started
        found = re.match(r"\d+\s+([a-z0-9_]+)\(", line)
        if inside and found:
            calls[found.group(1)] += 1
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("saver", nargs="?")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mark", type=Path)
    parser.add_argument("--count", nargs=2, type=Path, metavar=("TRACE", "MARK"))
    args = parser.parse_args()
    if args.count:
        calls = count_calls(*args.count)
        for name, count in calls.most_common(15):
            print(f"{count:8d}  {count / (THREADS * TURNS):8.1f} a turn  {name}")
        return
    if not args.saver:
        parser.error("name a saver (see bench/stores.py), or --count TRACE MARK")
    for _ in range(args.rounds):
        print(asyncio.run(one_round(args.saver, args.mark)))


if __name__ == "__main__":
    main()
