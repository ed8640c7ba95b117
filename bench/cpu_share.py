"""The saver's CPU share of a turn: `floor` and the savers in ONE process, alternating.

    PYTHONPATH=$PWD/src:$PWD python -m bench.cpu_share [--savers orecast-sqlite] [--reps 5]
        [--threads 8] [--turns 20]

On a shared machine the wall-clock throughput ratio to `floor` moves by ±0.1 from round to round,
since a burst of load decides a 1–2 s round. This runs the throughput phase of `bench.run_bench`
(`--threads` new threads × `--turns` turns under `asyncio.gather`, after a warm-up) for `floor` and
each saver in turn, `--reps` times, in one process, so a burst hits all alike, and reports per saver
the median client CPU per turn (process time: the event loop's and the saver's worker threads') and
`floor`'s CPU over the saver's: the throughput ratio if CPU alone decided it. Wall-clock turns/s
and their ratio to the same repetition's `floor` are printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from typing import Any

from bench.run_bench import measured_throughput
from bench.stores import SAVERS


async def one_run(name: str, threads: int, turns: int) -> dict[str, float]:
    tp = await measured_throughput(name, threads, turns)
    return {"cpu_ms": tp["cpu_ms_per_turn"], "turns_per_s": tp["turns_per_s"]}


async def measure(savers: list[str], reps: int, threads: int, turns: int) -> dict[str, list[dict[str, float]]]:
    names = ["floor", *savers]
    out: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for rep in range(1, reps + 1):
        for name in names:
            result = await one_run(name, threads, turns)
            out[name].append(result)
            print(f"rep {rep} {name}: {result['cpu_ms']:.2f} ms CPU/turn, {result['turns_per_s']:.0f} turns/s",
                  flush=True)
    return out


def report(results: dict[str, list[dict[str, float]]], threads: int, turns: int, reps: int) -> str:
    floor = results["floor"]
    floor_cpu = statistics.median(r["cpu_ms"] for r in floor)
    lines = [
        f"| {reps} × {threads}×{turns} in one process | CPU/turn (median, ms) | floor CPU / saver CPU "
        "| turns/s / floor's, per rep |",
        "|---|---:|---:|---|",
    ]
    for name, runs in results.items():
        cpu = statistics.median(r["cpu_ms"] for r in runs)
        share = "" if name == "floor" else f"{floor_cpu / cpu:.2f}"
        ratios = " / ".join(f"{r['turns_per_s'] / f['turns_per_s']:.2f}" for r, f in zip(runs, floor, strict=True))
        lines.append(f"| {name} | {cpu:.2f} | {share} | {'' if name == 'floor' else ratios} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--savers", default="orecast-sqlite", help="comma-separated savers besides floor")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--turns", type=int, default=20)
    args = ap.parse_args(argv)
    savers = [s for s in args.savers.split(",") if s and s != "floor"]
    unknown = [s for s in savers if s not in SAVERS]
    if unknown:
        ap.error(f"unknown saver(s) {', '.join(unknown)}; choose from {', '.join(SAVERS)}")
    results: Any = asyncio.run(measure(savers, args.reps, args.threads, args.turns))
    print(report(results, args.threads, args.turns, args.reps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
