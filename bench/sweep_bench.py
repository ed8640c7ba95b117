"""What a thread TTL sweep costs: expired threads per second, and the cost of a sweep that finds nothing.

    ORECAST_TEST_PG_URL=postgresql://… python -m bench.sweep_bench [--threads 300] [--turns 3] [--stores sqlite,postgres,mysql]

For each store: `--threads` threads of `--turns` turns of the benchmark's chat workload
(`bench/workload.py`: 5 checkpoints and 4 messages a turn) are written, then as many again with their
own TTL. A sweep with an injected clock first finds nothing (all are fresh), then expires the first
half by the default TTL with `keep_latest` (pruned to their latest checkpoint), then the second half
by their own TTL with `delete`. Prints a Markdown table; wall times on whatever machine runs it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import AsyncIterator
from datetime import timedelta

from bench.stores import fresh_database, fresh_mysql_database, pg_admin_url
from bench.workload import build_graph, run_turn
from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.core import utc_now
from orecast.checkpoint.sweep import TtlPolicy, set_thread_ttl, sweep


@contextlib.asynccontextmanager
async def store(kind: str, tmp: str) -> AsyncIterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{os.path.join(tmp, f'{kind}-{time.monotonic_ns()}.sqlite')}"
    elif kind == "mysql":
        async with fresh_mysql_database() as url:
            yield url
    else:
        async with fresh_database(pg_admin_url()) as url:
            yield url


async def main(threads: int, turns: int, kinds: list[str]) -> None:
    print("| store | threads | checkpoints | sweep finding nothing ms | keep_latest threads/s "
          "| checkpoints pruned | delete threads/s | checkpoints deleted |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory(prefix="orecast-sweep-bench-") as tmp:
        for kind in kinds:
            async with store(kind, tmp) as url, open_checkpointer(url) as saver:
                graph = build_graph().compile(checkpointer=saver)
                for n in range(2 * threads):
                    for turn in range(turns):
                        await run_turn(graph, f"t{n:05d}", turn)
                    if n >= threads:
                        await set_thread_ttl(saver, f"t{n:05d}", timedelta(hours=1), "delete")
                stats = await saver.astats()
                checkpoints = stats["tables"]["checkpoints"]["rows"]
                policy = TtlPolicy(default=timedelta(days=30), strategy="keep_latest")

                start = time.perf_counter()
                nothing = await sweep(saver, policy)
                idle_ms = (time.perf_counter() - start) * 1000
                assert nothing.expired == 0

                start = time.perf_counter()
                own = await sweep(saver, TtlPolicy(), now=utc_now() + timedelta(hours=2))
                delete_s = time.perf_counter() - start
                assert len(own.deleted) == threads

                start = time.perf_counter()
                pruned = await sweep(saver, policy, now=utc_now() + timedelta(days=31))
                prune_s = time.perf_counter() - start
                assert len(pruned.pruned) == threads
                print(f"| {kind} | {2 * threads} | {checkpoints} | {idle_ms:.1f} | {threads / prune_s:.0f} "
                      f"| {pruned.checkpoints_deleted} | {threads / delete_s:.0f} | {own.checkpoints_deleted} |",
                      flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=300, help="threads per strategy")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--stores", default="sqlite,postgres,mysql")
    args = parser.parse_args()
    asyncio.run(main(args.threads, args.turns, args.stores.split(",")))
