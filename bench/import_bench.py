"""How fast `orecast db import` copies threads from the official savers, and what the copies weigh.

    ORECAST_TEST_PG_URL=postgresql://… python -m bench.import_bench [--threads 10] [--turns 20]

Each official saver (`AsyncSqliteSaver`, `AsyncPostgresSaver`) gets `--threads` threads × `--turns` turns
of the benchmark's chat workload (`bench/workload.py`, 4 messages per turn); then each database is
imported into a fresh orecast SQLite and PostgreSQL store, timed, and imported a second time (everything
already there: the cost of a resume that has nothing left to do). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import AsyncIterator

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from bench.stores import fresh_database, pg_admin_url
from bench.workload import build_graph, run_turn
from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.importer import import_threads, open_source


@contextlib.asynccontextmanager
async def official_database(fmt: str, tmp: str, threads: int, turns: int) -> AsyncIterator[str]:
    """The location of an official saver's database holding the workload."""
    if fmt == "langgraph-sqlite":
        location = os.path.join(tmp, "official.sqlite")
        opened = AsyncSqliteSaver.from_conn_string(location)
        async with opened as saver:
            await _write(saver, threads, turns)
        yield location
        return
    async with fresh_database(pg_admin_url()) as location:
        async with AsyncPostgresSaver.from_conn_string(location) as saver:
            await saver.setup()
            await _write(saver, threads, turns)
        yield location


async def _write(saver, threads: int, turns: int) -> None:
    graph = build_graph().compile(checkpointer=saver)
    for t in range(threads):
        for turn in range(turns):
            await run_turn(graph, f"thread-{t}", turn)


@contextlib.asynccontextmanager
async def orecast_store(kind: str, tmp: str) -> AsyncIterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{os.path.join(tmp, f'orecast-{time.monotonic_ns()}.sqlite')}"
        return
    async with fresh_database(pg_admin_url()) as url:
        yield url


async def main(threads: int, turns: int) -> None:
    print("| from | into | checkpoints | writes | import s | checkpoints/s | re-run s | official MiB | orecast MiB |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory(prefix="orecast-import-bench-") as tmp:
        for fmt in ("langgraph-sqlite", "langgraph-postgres"):
            async with official_database(fmt, tmp, threads, turns) as location:
                for kind in ("sqlite", "postgres"):
                    async with orecast_store(kind, tmp) as url, open_source(fmt, location) as source:
                        async with open_checkpointer(url) as saver:
                            start = time.perf_counter()
                            report = await import_threads(source, saver)
                            took = time.perf_counter() - start
                            start = time.perf_counter()
                            await import_threads(source, saver)
                            again = time.perf_counter() - start
                    added = (report.target_bytes_after - report.target_bytes_before) / 2**20
                    print(
                        f"| {fmt} | {kind} | {report.checkpoints} | {report.writes} | {took:.1f} "
                        f"| {report.checkpoints / took:.0f} | {again:.1f} "
                        f"| {report.source_bytes / 2**20:.2f} | {added:.2f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=10)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.threads, args.turns))
