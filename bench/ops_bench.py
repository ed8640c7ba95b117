"""What the operations commands cost on a long conversation: export, import, prune.

    ORECAST_TEST_PG_URL=postgresql://… python -m bench.ops_bench [--turns 200] [--pairs mysql:postgres,…]

One thread of `--turns` turns of the benchmark's chat workload (`bench/workload.py`: 4 messages, ~3.8 KB
of text per turn, 5 checkpoints per turn) is written to a fresh store of each pair's first dialect. For
each: the archive's size next to the store's payload for that thread, the export time, the import time
into a fresh store of the pair's second dialect (and that the imported history is identical), then
`aprune(keep_last=10)` as a dry run and for real, with the payload bytes it frees. Prints a Markdown
table. MySQL stores are databases on the server `tests.mysql_server.ensure()` finds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from bench.stores import fresh_database, fresh_mysql_database, pg_admin_url
from bench.workload import build_graph, run_turn
from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.archive import export_thread, import_archive, read_archive

THREAD = "long"
PAIRS = "sqlite:postgres,postgres:sqlite,mysql:postgres,sqlite:mysql"


@contextlib.asynccontextmanager
async def store(kind: str, tmp: str) -> AsyncIterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{os.path.join(tmp, f'{kind}-{time.monotonic_ns()}.sqlite')}"
        return
    if kind == "mysql":
        async with fresh_mysql_database() as url:
            yield url
        return
    async with fresh_database(pg_admin_url()) as url:
        yield url


async def history(saver, thread_id: str) -> list:
    graph = build_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread_id}}
    return [(s.values, s.next, s.metadata, s.created_at) async for s in graph.aget_state_history(config)]


async def main(turns: int, pairs: list[tuple[str, str]]) -> None:
    print("| store | checkpoints | thread payload MiB | archive MiB | export s | import into | import s "
          "| same history | prune dry-run s | prune s | freed MiB |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory(prefix="orecast-ops-bench-") as tmp:
        for kind, other in pairs:
            async with store(kind, tmp) as url, store(other, tmp) as other_url:
                async with open_checkpointer(url) as saver, open_checkpointer(other_url) as target:
                    graph = build_graph().compile(checkpointer=saver)
                    for turn in range(turns):
                        await run_turn(graph, THREAD, turn)
                    payload = (await saver.bench_stats())["payload_bytes"]
                    path = Path(tmp) / f"{kind}.gz"
                    start = time.perf_counter()
                    summary = await export_thread(saver, THREAD, path)
                    export_s = time.perf_counter() - start
                    start = time.perf_counter()
                    await import_archive(target, read_archive(target, path))
                    import_s = time.perf_counter() - start
                    same = await history(saver, THREAD) == await history(target, THREAD)
                    start = time.perf_counter()
                    [dry] = await saver.aprune([THREAD], keep_last=10, dry_run=True)
                    dry_s = time.perf_counter() - start
                    start = time.perf_counter()
                    [done] = await saver.aprune([THREAD], keep_last=10)
                    prune_s = time.perf_counter() - start
                    assert dry.bytes_freed == done.bytes_freed
                    print(
                        f"| {kind} | {summary.checkpoints} | {payload / 2**20:.2f} | {summary.bytes / 2**20:.2f} "
                        f"| {export_s:.2f} | {other} | {import_s:.2f} | {'yes' if same else 'NO'} "
                        f"| {dry_s:.2f} | {prune_s:.2f} | {done.bytes_freed / 2**20:.2f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--pairs", default=PAIRS, help=f"source:target dialects, comma-separated (default {PAIRS})")
    args = parser.parse_args()
    pairs = [tuple(p.split(":")) for p in args.pairs.split(",")]
    if any(len(p) != 2 or not set(p) <= {"sqlite", "postgres", "mysql"} for p in pairs):
        parser.error("--pairs takes source:target pairs of sqlite, postgres, mysql")
    asyncio.run(main(args.turns, pairs))
