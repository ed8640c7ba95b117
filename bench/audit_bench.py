"""What the tool-call audit costs: its writes around each call, and the reads behind `orecast audit`.

    ORECAST_TEST_PG_URL=postgresql://… python -m bench.audit_bench [--calls 2000] [--stores sqlite,postgres,mysql]

For each store (a fresh one): `--calls` tool calls recorded as the agent's middleware records them
(`abegin_tool_call` before the call, `aend_tool_call` after it; 20 threads, 8 tools, one call in 20 an
error), timed one by one — the time a tool call waits for its audit. Then the reads on those rows:
`aaudit_summary()` (all tools, p50/p95) and `aaudit_tool_calls(thread_id=…)` for one thread, `--repeat`
times each. Prints a Markdown table (median and p95 in ms). MySQL stores are databases on the server
`tests.mysql_server.ensure()` finds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from bench.ops_bench import store
from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.audit import percentile


def _ms(samples: list[float], fraction: float) -> float:
    return percentile(sorted(samples), fraction) or 0.0


async def measure(kind: str, calls: int, repeat: int, tmp: str) -> dict[str, float | str | int]:
    async with store(kind, tmp) as url, open_checkpointer(url) as saver:
        writes = []
        for n in range(calls):
            started = time.perf_counter()
            audit_id = await saver.abegin_tool_call(
                thread_id=f"t-{n % 20}", call_id=f"call-{n}", tool=f"tool_{n % 8}",
                args={"series": "iron_ore_wb_monthly", "horizon": 6, "n": n},
            )
            await saver.aend_tool_call(
                audit_id, status="error" if n % 20 == 0 else "ok", result='{"value": 101.5}' * 20,
                error="bad input" if n % 20 == 0 else None, duration_ms=float(n % 97),
            )
            writes.append((time.perf_counter() - started) * 1000)
        summary, listing = [], []
        for _ in range(repeat):
            started = time.perf_counter()
            await saver.aaudit_summary()
            summary.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await saver.aaudit_tool_calls(thread_id="t-7")
            listing.append((time.perf_counter() - started) * 1000)
    return {
        "store": kind, "calls": calls,
        "write p50": statistics.median(writes), "write p95": _ms(writes, 0.95),
        "summary p50": statistics.median(summary), "thread list p50": statistics.median(listing),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--stores", default="sqlite,postgres,mysql")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.stores.split(","):
            rows.append(await measure(kind.strip(), args.calls, args.repeat, tmp))
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("| " + " | ".join("---" if c == "store" else "---:" for c in columns) + " |")
    for row in rows:
        print("| " + " | ".join(f"{row[c]:.2f}" if isinstance(row[c], float) else str(row[c]) for c in columns) + " |")


if __name__ == "__main__":
    asyncio.run(main())
