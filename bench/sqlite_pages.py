"""Which b-trees' pages a lone SQLite writer's commits write, as its thread grows.

    python -m bench.sqlite_pages [--turns 60] [--window 10] [--subgraph]

The workload of `bench.sqlite_turn` (one thread on a fresh orecast-sqlite store, after two warm-up
turns; `--subgraph`: the growth phase's tool loop in a subgraph, `durability="sync"`). After each
`COMMIT` of the saver it reads the WAL file's frames of that transaction (their page numbers) and maps
each page to its table or index with the `dbstat` virtual table, on a connection of its own. Each
window of turns prints the commits a turn, the WAL pages a commit, and the pages a turn by b-tree
(`(free)`: pages on the freelist or just taken from it, which `dbstat` does not list). Frames only,
no timing: the WAL reads and `dbstat` scans make the run slow, not wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sqlite3
import struct
from typing import Any

import orecast.checkpoint.sqlite.saver as sqlite_saver
from bench.stores import open_store
from bench.workload import build_graph, build_subgraph_graph, run_turn

WAL_HEADER = 32
FRAME_HEADER = 24


def last_transaction_pages(wal: str) -> list[int]:
    """Page numbers of the WAL's last committed transaction (frames of the WAL's current salt only)."""
    with open(wal, "rb") as f:
        data = f.read()
    if len(data) < WAL_HEADER:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    frames: list[tuple[int, bool]] = []
    offset = WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(data):
        page, size_after = struct.unpack(">II", data[offset : offset + 8])
        if data[offset + 8 : offset + 16] != salts:
            break  # an older WAL generation's frame, past the current one's end
        frames.append((page, size_after != 0))
        offset += FRAME_HEADER + page_size
    commits = [i for i, (_, is_commit) in enumerate(frames) if is_commit]
    if not commits:
        return []
    start = commits[-2] + 1 if len(commits) > 1 else 0
    return [page for page, _ in frames[start : commits[-1] + 1]]


def page_owners(conn: sqlite3.Connection) -> dict[int, str]:
    owners = {
        pageno: name + (" (inner)" if kind == "internal" else " (overflow)" if kind == "overflow" else "")
        for name, pageno, kind in conn.execute("SELECT name, pageno, pagetype FROM dbstat")
    }
    owners.setdefault(1, "sqlite_schema")
    return owners


async def main(turns: int, window: int, subgraph: bool) -> None:
    counts: collections.Counter[str] = collections.Counter()
    state: dict[str, Any] = {"file": None, "probe": None, "sql": collections.Counter()}
    original = sqlite_saver._Db.execute

    async def execute(db: Any, sql: str, params: Any = ()) -> None:
        await original(db, sql, params)
        if sql != "COMMIT" or state["file"] is None:
            return
        pages = last_transaction_pages(state["file"] + "-wal")
        owners = page_owners(state["probe"])
        counts["commits"] += 1
        counts["pages"] += len(pages)
        for page in pages:
            counts["b-tree " + owners.get(page, "(free)")] += 1

    sqlite_saver._Db.execute = execute  # type: ignore[method-assign]
    durability = "sync" if subgraph else None
    async with open_store("orecast-sqlite") as store:
        saver: Any = store.saver
        graph = (build_subgraph_graph() if subgraph else build_graph()).compile(checkpointer=saver)
        for turn in range(1, 3):
            await run_turn(graph, "warmup", turn, durability=durability)
        await saver.adelete_thread("warmup")
        state["probe"] = sqlite3.connect(saver.file, isolation_level=None)
        state["file"] = saver.file
        try:
            for first in range(1, turns + 1, window):
                counts.clear()
                last = min(first + window - 1, turns)
                for turn in range(first, last + 1):
                    await run_turn(graph, "single", turn, durability=durability)
                n = last - first + 1
                commits = counts["commits"] or 1
                trees = sorted(
                    ((key[7:], value) for key, value in counts.items() if key.startswith("b-tree ")),
                    key=lambda kv: -kv[1],
                )
                print(
                    f"turns {first}-{last}: {counts['commits'] / n:.1f} commits a turn, "
                    f"{counts['pages'] / commits:.2f} pages a commit, {counts['pages'] / n:.1f} a turn: "
                    + ", ".join(f"{name} {value / n:.2f}" for name, value in trees)
                )
        finally:
            state["file"] = None
            state["probe"].close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--subgraph", action="store_true")
    args = parser.parse_args()
    asyncio.run(main(args.turns, args.window, args.subgraph))
