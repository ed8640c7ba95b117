"""Where orecast-postgres's storage at N turns sits, per relation and fork.

    python -m bench.pg_storage [--turns 200] [--runs 1]

The storage phase of `bench.run_bench` (a fresh store, 2 warm-up turns on a thread then deleted, then
`--turns` turns on one thread, `bench_stats()` right after the last), then, on the same store, every
relation of the saver's tables — the table, its indexes, its TOAST table and TOAST index — with the size
of each fork (`pg_relation_size(oid, 'main' | 'fsm' | 'vm')`) and, per table, the average stored size of
its largest column's values (`pg_column_size`) against their text length. Needs ORECAST_TEST_PG_URL.
"""

from __future__ import annotations

import argparse
import asyncio

import psycopg
from psycopg import sql

from bench.stores import open_store
from bench.workload import build_graph, run_turn
from orecast.checkpoint.postgres import queries

MIB = 1024 * 1024
FORKS = ("main", "fsm", "vm")

# The table, its indexes, its TOAST table and the TOAST table's index, each with its forks' sizes.
RELATION_FORKS = """
SELECT r.relname, r.relkind, pg_relation_size(r.oid, 'main'), pg_relation_size(r.oid, 'fsm'),
       pg_relation_size(r.oid, 'vm')
FROM pg_class AS t
JOIN LATERAL (
    SELECT t.oid, t.relname, t.relkind
    UNION ALL SELECT i.indexrelid, c.relname, c.relkind
              FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid WHERE i.indrelid = t.oid
    UNION ALL SELECT c.oid, c.relname, c.relkind FROM pg_class AS c WHERE c.oid = t.reltoastrelid
    UNION ALL SELECT i.indexrelid, c.relname, c.relkind
              FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid WHERE i.indrelid = t.reltoastrelid
) AS r ON true
WHERE t.oid = %s::regclass
"""

# Per table: its rows, and the stored (pg_column_size) and text sizes of its largest column's values.
COLUMNS = {"checkpoints": "checkpoint", "task_writes": "writes", "item_pages": "items", "item_tail": "value"}
COLUMN_SIZES = sql.SQL(
    "SELECT count(*), coalesce(sum(pg_column_size({c})), 0), coalesce(sum(octet_length({c}::text)), 0) FROM {t}"
)


async def breakdown(url: str) -> list[tuple[str, dict[str, int]]]:
    """(relation, its forks' sizes) of every relation of the saver's tables, then (a table's column sizes, {})."""
    out = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for table in queries.TABLES:
            for relation in queries.STORAGE_TABLES.get(table, (table,)):
                cur = await conn.execute(RELATION_FORKS, (relation,))
                for name, kind, *sizes in await cur.fetchall():
                    label = f"{relation} (TOAST)" if kind == "t" else name
                    out.append((label, dict(zip(FORKS, sizes, strict=True))))
        for table, column in COLUMNS.items():
            cur = await conn.execute(COLUMN_SIZES.format(c=sql.Identifier(column), t=sql.Identifier(table)))
            rows, stored, text = await cur.fetchone()
            out.append((f"{table}.{column}: {rows} rows, stored {stored} B, text {text} B", {}))
    return out


async def one_run(turns: int) -> None:
    async with open_store("orecast-postgres") as store:
        saver = store.saver
        graph = build_graph().compile(checkpointer=saver)
        for turn in range(1, 3):
            await run_turn(graph, "warmup", turn)
        await saver.adelete_thread("warmup")
        for turn in range(1, turns + 1):
            await run_turn(graph, "single", turn)
        stats = await store.stats()
        total = stats["storage_bytes"]
        print(f"bench_stats at {turns} turns: {total:,} B = {total / MIB:.3f} MiB; rows {stats['rows']}")
        counted = 0
        for name, forks in await breakdown(saver.url):
            if not forks:
                print(f"  {name}")
                continue
            size = sum(forks.values())
            counted += size
            detail = "  ".join(f"{fork} {forks[fork] // 1024:>4} kB" for fork in FORKS)
            print(f"  {name:<44} {size // 1024:>5} kB   {detail}")
        print(f"  {'all forks of all relations':<44} {counted // 1024:>5} kB ({counted:,} B, now)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--runs", type=int, default=1, help="fresh stores one after the other")
    args = parser.parse_args(argv)
    for _ in range(args.runs):
        asyncio.run(one_run(args.turns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

