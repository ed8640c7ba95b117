"""`make bench`: the same chat workload through the official LangGraph savers and through ours.

    python -m bench.run_bench [--turns 200] [--savers official-sqlite,official-postgres,orecast-sqlite,orecast-postgres,
                                           community-mysql,orecast-mysql,floor]
                              [--quick] [--json-out F] [--markdown-out docs/benchmarks.md] [--check]
    python -m bench.run_bench --throughput-only [--rounds 3] [--savers orecast-sqlite,floor]

Per saver, on a fresh store (see `bench/stores.py`), with the workload of `bench/workload.py`:

1. warm-up: 2 turns on a throwaway thread, which is then deleted;
2. one thread × `--turns` turns, every turn timed; latency at turn k = median of the 5 turns around k, inside the run
   (turn 1: turns 1-5; turn 200: turns 196-200);
3. storage after the last turn (and at 10/50/100 turns on the way);
4. reads on that thread: `aget_state` (median), `aget_state_history(limit=10)` (median) and the full
   `aget_state_history` (5 checkpoints per turn: 1,000 snapshots at 200 turns);
5. throughput: `--threads` new threads × `--tp-turns` turns each under `asyncio.gather`; then `--rounds`
   rounds of every saver in turn on fresh stores, whose median ratio to `floor`'s same round is the
   throughput ratio the targets judge;
6. growth (`floor` and ours): the chat agent as a subgraph, `durability="sync"`, `--growth-turns` turns, the
   saver's own time per turn (turn − `floor`'s turn) at the end over the start, each turn's own time the
   median of `--growth-rounds` passes on fresh stores.

`--throughput-only` runs phase 5 alone (after the warm-up), `--rounds` times over every saver, each
round on fresh stores, and prints each saver's turns/s, its ratio to `floor`'s in the same round and
the client CPU per turn (`time.process_time()`: this process, including SQLite's work; not the
PostgreSQL server's).

Two references: `floor`, a checkpointer that keeps the objects themselves (LangGraph's own cost with a
checkpointer, which no saver can beat), and the graph without a checkpointer (the client carries the
history).
Our savers are checked against the targets of issue 2 (defined for the full run: 200 turns, 8 × 20).
`--markdown-out FILE` replaces the part of FILE between the `<!-- bench:begin -->` and
`<!-- bench:end -->` markers (or writes a new file); `--check` exits 1 if one of our savers misses one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib.metadata as md
import json
import os
import platform
import re
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bench.stores import OURS, SAVERS, mysql_available, open_store, pg_admin_url
from bench.workload import build_graph, build_subgraph_graph, run_turn

MIB = 1024 * 1024
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    limit: float
    higher_is_better: bool = False

    def met(self, value: float | None) -> bool | None:
        if value is None:
            return None
        return value >= self.limit if self.higher_is_better else value <= self.limit


TARGETS = (
    Target("storage_mib", "storage ≤ 2 MiB", 2.0),
    Target("latency_ratio", "turn N ≤ 1.3 × turn 1", 1.3),
    Target("get_state_ms", "`aget_state` ≤ 15 ms", 15.0),
    Target("history10_ms", "`aget_state_history(limit=10)` ≤ 30 ms", 30.0),
    Target("history_all_s", "full history ≤ 1.5 s", 1.5),
    Target("throughput", "throughput ≥ 100 turns/s", 100.0, higher_is_better=True),
    Target("throughput_ratio", "throughput ≥ 0.5 × floor's", 0.5, higher_is_better=True),
    Target("growth", "own time per turn, last 10 turns ≤ 1.3 × first 10 (growth phase)", 1.3),
)


def log(saver: str, message: str) -> None:
    print(f"[{saver:<17}] {message}", flush=True)


def window_median(series: list[float], k: int, width: int = 5) -> float:
    """The median of the `width` turns at turn k, kept inside the run (turn 1: turns 1-5; the last
    turn: the last five), so both ends of the latency ratio rest on the same number of turns."""
    lo = min(max(1, k - width // 2), max(1, len(series) - width + 1))
    return statistics.median(series[lo - 1 : lo - 1 + width])


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def timed_median(repeats: int, make: Any) -> tuple[float, Any]:
    """Median wall time (ms) of `await make()` over `repeats` calls, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = await make()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


async def throughput(graph: Any, threads: int, turns: int, stateless: bool) -> dict[str, Any]:
    latencies: list[float] = []

    async def worker(i: int) -> None:
        history: list[Any] | None = [] if stateless else None
        for turn in range(1, turns + 1):
            ms, history = await run_turn(graph, f"tp-{i}", turn, history)
            latencies.append(ms)

    start = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(threads)))
    elapsed = time.perf_counter() - start
    return {"threads": threads, "turns_per_thread": turns, "elapsed_s": elapsed,
            "turns_per_s": threads * turns / elapsed,
            "p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95)}


async def bench_baseline(args: argparse.Namespace) -> dict[str, Any]:
    """The graph without a checkpointer: what the workload itself costs."""
    graph = build_graph().compile()
    history: list[Any] | None = []
    for turn in range(1, 3):  # warm-up
        _, history = await run_turn(graph, "warmup", turn, history)
    wall, history = [], []
    for turn in range(1, args.turns + 1):
        ms, history = await run_turn(graph, "single", turn, history)
        wall.append(ms)
    tp = await throughput(graph, args.threads, args.tp_turns, stateless=True)
    out = {"wall_ms": wall, "turn_1_ms": window_median(wall, 1),
           "turn_n_ms": window_median(wall, args.turns), "throughput": tp,
           "latency_ratio_wide": statistics.median(wall[-15:]) / statistics.median(wall[5:15] or wall)}
    log("no-checkpointer", f"{args.turns} turns: turn 1 {out['turn_1_ms']:.1f} ms, turn {args.turns} "
        f"{out['turn_n_ms']:.1f} ms; {args.threads}×{args.tp_turns}: {tp['turns_per_s']:.0f} turns/s")
    return out


async def bench_saver(name: str, args: argparse.Namespace) -> dict[str, Any]:
    few_repeats = name.startswith("official")  # their history reads take seconds
    t_start = time.perf_counter()
    async with open_store(name) as store:
        saver = store.saver
        graph = build_graph().compile(checkpointer=saver)
        out: dict[str, Any] = {"saver_class": f"{type(saver).__module__}.{type(saver).__qualname__}",
                               "facts": store.facts}
        log(name, f"open: {out['saver_class']} {store.facts}")

        for turn in range(1, 3):
            await run_turn(graph, "warmup", turn)
        await saver.adelete_thread("warmup")
        gc.collect()

        wall: list[float] = []
        samples: dict[int, dict[str, Any]] = {}
        sample_at = {k for k in (10, 50, 100) if k < args.turns} | {args.turns}
        start = time.perf_counter()
        for turn in range(1, args.turns + 1):
            ms, _ = await run_turn(graph, "single", turn)
            wall.append(ms)
            if turn in sample_at:
                samples[turn] = await store.stats()
        n = args.turns
        size = samples[n]["storage_bytes"]
        out.update(wall_ms=wall, turn_1_ms=window_median(wall, 1), turn_n_ms=window_median(wall, n),
                   storage=samples, storage_bytes=size, storage_mib=size / MIB if size is not None else None)
        out["latency_ratio"] = out["turn_n_ms"] / out["turn_1_ms"]
        # Turns 1-3 alone are noisy (and pay first-turn costs): the same ratio over wider windows.
        early, late = wall[5:15] or wall, wall[-15:]
        out["latency_ratio_wide"] = statistics.median(late) / statistics.median(early)
        log(name, f"{n} turns in {time.perf_counter() - start:.1f} s: turn 1 {out['turn_1_ms']:.1f} ms, "
            f"turn {n} {out['turn_n_ms']:.1f} ms ({out['latency_ratio']:.2f}×)")
        payload = samples[n].get("payload_bytes")
        if size is not None:
            log(name, f"storage @{n} turns: {size / MIB:.2f} MiB"
                + (f" (payload {payload / MIB:.2f} MiB)" if payload else "") + f", rows {samples[n]['rows']}")

        gc.collect()
        config = {"configurable": {"thread_id": "single"}}
        out["get_state_ms"], snapshot = await timed_median(args.state_repeats,
                                                           lambda: graph.aget_state(config))
        out["messages"] = len(snapshot.values["messages"])
        log(name, f"aget_state: median {out['get_state_ms']:.1f} ms ({out['messages']} messages, "
            f"{args.state_repeats} calls)")
        if out["messages"] != 4 * n:
            log(name, f"WARNING: the thread should hold {4 * n} messages")

        async def history(limit: int | None) -> int:
            return sum([1 async for _ in graph.aget_state_history(config, limit=limit)])

        repeats = max(1, args.state_repeats // 4) if few_repeats else args.state_repeats
        out["history10_ms"], _ = await timed_median(repeats, lambda: history(10))
        log(name, f"aget_state_history(limit=10): median {out['history10_ms']:.1f} ms ({repeats} calls)")
        gc.collect()
        repeats = 1 if few_repeats else args.history_repeats
        ms, out["snapshots"] = await timed_median(repeats, lambda: history(None))
        out["history_all_s"] = ms / 1000
        if out["snapshots"] != 5 * n:
            log(name, f"WARNING: the thread should have {5 * n} checkpoints")
        log(name, f"aget_state_history(): {out['snapshots']} snapshots in {out['history_all_s']:.2f} s "
            f"(median of {repeats})")
        gc.collect()

        out["throughput"] = await throughput(graph, args.threads, args.tp_turns, stateless=False)
        tp = out["throughput"]
        log(name, f"throughput {args.threads}×{args.tp_turns}: {tp['turns_per_s']:.1f} turns/s "
            f"(p50 {tp['p50_ms']:.0f} ms, p95 {tp['p95_ms']:.0f} ms)")
        out["elapsed_s"] = time.perf_counter() - t_start
    return out


async def measured_throughput(name: str, threads: int, turns: int) -> dict[str, Any]:
    """The throughput phase on a fresh store of saver `name`, after a warm-up: `throughput`'s figures
    plus `cpu_ms_per_turn`, the process's CPU per turn (the event loop's and the saver's threads')."""
    async with open_store(name) as store:
        graph = build_graph().compile(checkpointer=store.saver)
        for turn in range(1, 3):
            await run_turn(graph, "warmup", turn)
        gc.collect()
        cpu = time.process_time()
        tp = await throughput(graph, threads, turns, stateless=False)
        tp["cpu_ms_per_turn"] = (time.process_time() - cpu) * 1000 / (threads * turns)
    return tp


async def bench_throughput_only(args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    """Only the throughput phase, `args.rounds` rounds of every saver in turn, so load hits all alike."""
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in args.saver_list}
    for round_no in range(1, args.rounds + 1):
        for name in args.saver_list:
            tp = await measured_throughput(name, args.threads, args.tp_turns)
            rounds[name].append(tp)
            log(name, f"round {round_no}: {tp['turns_per_s']:.1f} turns/s, "
                f"client CPU {tp['cpu_ms_per_turn']:.1f} ms/turn")
    if "floor" in rounds:
        for results in rounds.values():
            for tp, floor in zip(results, rounds["floor"], strict=True):
                tp["ratio"] = tp["turns_per_s"] / floor["turns_per_s"]
    return rounds


def throughput_table(rounds: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> str:
    lines = [f"| {args.threads}×{args.tp_turns}, {args.rounds} rounds | turns/s | / floor's, same round "
             "| client CPU per turn (ms) |", "|---|---:|---:|---:|"]
    for name, results in rounds.items():
        cells = [" / ".join(f"{tp[key]:.{digits}f}" for tp in results) if key in results[0] else "n/a"
                 for key, digits in (("turns_per_s", 0), ("ratio", 2), ("cpu_ms_per_turn", 1))]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


GROWTH_SAVERS = ("floor", "orecast-sqlite", "orecast-postgres", "orecast-mysql")


async def bench_growth(args: argparse.Namespace) -> dict[str, Any]:
    """The saver's own time per turn as a thread grows, on the subgraph workload with durability="sync".

    Turn k runs on every saver (`floor` and ours) before turn k+1 runs on any, so a burst of load on this
    shared machine hits the same turn everywhere; a saver's own time at turn k is its turn time minus
    `floor`'s. The pass is repeated `--growth-rounds` times on fresh stores and the own time at turn k is
    the median over the passes: one pass of the same code gave 1.09× in one run and 1.57× in the next
    (bursts of this VM lasting a few turns). The growth is the median of the last 10 turns' own times
    over the median of turns 1-10 (of the last and first third with fewer than 30 turns).
    """
    names = [n for n in GROWTH_SAVERS if n == "floor" or n in args.saver_list]
    passes: list[dict[str, list[float]]] = []
    for _ in range(args.growth_rounds):
        passes.append(await _growth_pass(names, args.growth_turns))
    window = min(10, max(1, args.growth_turns // 3))
    out: dict[str, Any] = {"turns": args.growth_turns, "window": window, "rounds": args.growth_rounds,
                           "wall_ms": passes, "savers": {}}
    for name in names:
        per_pass = [
            p[name] if name == "floor" else [w - f for w, f in zip(p[name], p["floor"], strict=True)]
            for p in passes
        ]
        series = [statistics.median(turn) for turn in zip(*per_pass, strict=True)]
        early, late = statistics.median(series[:window]), statistics.median(series[-window:])
        out["savers"][name] = {
            "early_ms": early, "late_ms": late, "growth": late / early if early > 0 else None,
            "growth_per_round": [statistics.median(s[-window:]) / statistics.median(s[:window]) for s in per_pass],
        }
        what = "turn time" if name == "floor" else "own time (turn − floor)"
        rounds = " / ".join(f"{g:.2f}" for g in out["savers"][name]["growth_per_round"])
        log(name, f"subgraph, {args.growth_turns} turns, durability=sync, median of {args.growth_rounds} passes: "
            f"{what} {early:.1f} → {late:.1f} ms ({late / early:.2f}×; each pass {rounds})")
    return out


async def _growth_pass(names: list[str], turns: int) -> dict[str, list[float]]:
    """One pass of the growth phase on fresh stores: each saver's wall time per turn (ms)."""
    async with contextlib.AsyncExitStack() as stack:
        graphs = {}
        for name in names:
            store = await stack.enter_async_context(open_store(name))
            graphs[name] = build_subgraph_graph().compile(checkpointer=store.saver)
        for graph in graphs.values():  # warm-up
            await run_turn(graph, "warmup", 1, durability="sync")
        gc.collect()
        wall: dict[str, list[float]] = {name: [] for name in names}
        for turn in range(1, turns + 1):
            for name, graph in graphs.items():
                ms, _ = await run_turn(graph, "growth", turn, durability="sync")
                wall[name].append(ms)
    return wall


def check(result: dict[str, Any]) -> dict[str, bool | None]:
    values = {**result, "throughput": result["throughput"]["turns_per_s"]}
    return {t.key: t.met(values.get(t.key)) for t in TARGETS}


# -- report ------------------------------------------------------------------------------------------


def _mark(text: str, ok: bool | None) -> str:
    return text if ok is None else (f"{text} ✅" if ok else f"**{text} ❌**")


def table(run: dict[str, Any]) -> str:
    """Metrics as rows, savers as columns; our savers' cells are marked against the targets."""
    args, n = run["args"], run["args"]["turns"]
    names = list(run["savers"])
    base = run.get("baseline")
    snapshots = max((r["snapshots"] for r in run["savers"].values()), default=0)
    ms, ratio = (lambda v: f"{v:.1f}"), (lambda v: f"{v:.2f}×")
    mib = lambda v: f"{v:.2f} MiB" if v < 10 else f"{v:.0f} MiB"  # noqa: E731
    # (label, target, result key, format, the no-checkpointer value)
    spec = [
        (f"storage @{n} turns", "≤ 2 MiB", "storage_mib", mib, None),
        ("turn 1 (ms)", "", "turn_1_ms", ms, base and base["turn_1_ms"]),
        (f"turn {n} (ms)", "", "turn_n_ms", ms, base and base["turn_n_ms"]),
        (f"turn {n} / turn 1", "≤ 1.3", "latency_ratio", ratio,
         base and base["turn_n_ms"] / base["turn_1_ms"]),
        (f"same, turns {max(1, n - 14)}–{n} / turns 6–15 (info)", "", "latency_ratio_wide", ratio,
         base and base["latency_ratio_wide"]),
        ("`aget_state` (ms)", "≤ 15", "get_state_ms", ms, None),
        ("`aget_state_history(limit=10)` (ms)", "≤ 30", "history10_ms", ms, None),
        (f"full history, {snapshots} snapshots (s)", "≤ 1.5", "history_all_s", lambda v: f"{v:.2f}", None),
        (f"throughput {args['threads']}×{args['tp_turns']} (turns/s)", "≥ 100", "throughput", ms,
         base and base["throughput"]["turns_per_s"]),
        (f"throughput / floor's, median of {args.get('rounds', 1)} interleaved rounds", "≥ 0.5", "throughput_ratio",
         lambda v: f"{v:.2f}", None),
    ]
    header = ["", "target (ours)", *names] + (["no checkpointer"] if base else [])
    lines = ["| " + " | ".join(header) + " |", "|---|---|" + "---:|" * (len(header) - 2)]
    for label, target, key, fmt, base_value in spec:
        cells = [label, target]
        for name in names:
            r = run["savers"][name]
            value = r["throughput"]["turns_per_s"] if key == "throughput" else r.get(key)
            ok = run["checks"][name].get(key) if name in OURS else None
            cells.append("n/a" if value is None else _mark(fmt(value), ok))
        if base:
            cells.append("—" if base_value is None else fmt(base_value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


GROWTH_LIMIT = next(t.limit for t in TARGETS if t.key == "growth")


def growth_table(growth: dict[str, Any]) -> str:
    n, w = growth["turns"], growth["window"]
    names = list(growth["savers"])
    passes = growth.get("rounds", 1)
    lines = [f"| subgraph tool loop, `durability=\"sync\"`, {n} turns, median of {passes} passes | target (ours) | "
             + " | ".join(names) + " |",
             "|---|---|" + "---:|" * len(names)]
    for label, key, fmt in ((f"turns 1–{w} (ms)", "early_ms", "{:.1f}"), (f"turns {n - w + 1}–{n} (ms)", "late_ms", "{:.1f}"),
                            ("growth", "growth", "{:.2f}×")):
        cells = [label, f"≤ {GROWTH_LIMIT}" if key == "growth" else ""]
        for name in names:
            value = growth["savers"][name][key]
            text = "n/a" if value is None else fmt.format(value)
            if key == "growth" and name in OURS and value is not None:
                text = _mark(text, value <= GROWTH_LIMIT)
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown_block(run: dict[str, Any]) -> str:
    args, info = run["args"], run["info"]
    facts = {k: v for r in run["savers"].values() for k, v in r["facts"].items()}
    env = [f"{info['cpus']} CPUs ({info['machine']})", f"load average {info['load_average'][0]} at start",
           f"Python {info['python']}", *(f"{k} {v}" for k, v in facts.items())]
    lines = [
        BEGIN,
        f"Generated by `{info['command']}` on {info['date']}: {', '.join(env)}.",
        "",
        table(run),
        "",
        f"{args['turns']} turns on one thread, then the reads, then {args['threads']} threads × "
        f"{args['tp_turns']} turns; the whole run took {run['elapsed_s']:.0f} s. The official savers' full "
        "history is timed once and `limit=10` 5 times (each takes seconds); ours are medians of "
        f"{args['history_repeats']} and {args['state_repeats']}. Packages: "
        + ", ".join(f"{k} {v}" for k, v in info["packages"].items()) + ".",
    ]
    if run.get("growth"):
        lines += [
            "",
            growth_table(run["growth"]),
            "",
            "`floor`: its turn time. Ours: the saver's own time per turn, i.e. the turn's time minus "
            "`floor`'s for the same turn (the savers take turns, so load hits both), median of 10 turns.",
        ]
    lines.append(END)
    return "\n".join(lines)


def write_markdown(path: str, block: str) -> None:
    text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    if BEGIN in text and END in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    else:
        text = (text or "# Checkpoint saver benchmark\n") + "\n" + block + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# -- main --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--savers", default=",".join(SAVERS), help="comma-separated, from: " + ", ".join(SAVERS))
    ap.add_argument("--turns", type=int, help="turns on the single thread (default 200; --quick 30)")
    ap.add_argument("--threads", type=int, help="threads in the throughput phase (default 8; --quick 2)")
    ap.add_argument("--tp-turns", type=int, help="turns per throughput thread (default 20; --quick 5)")
    ap.add_argument("--state-repeats", type=int, help="calls of aget_state and history(limit=10) (default 20)")
    ap.add_argument("--history-repeats", type=int, help="full-history repeats for our savers (default 3)")
    ap.add_argument("--growth-turns", type=int,
                    help="turns of the subgraph growth phase, 0 to skip it (default 60; --quick 10)")
    ap.add_argument("--growth-rounds", type=int,
                    help="passes of the growth phase, each on fresh stores (default 3; --quick 1)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 30 turns, 2×5, few repeats")
    ap.add_argument("--no-baseline", action="store_true", help="skip the no-checkpointer reference")
    ap.add_argument("--json-out", help="write everything (incl. per-turn times) to this JSON file")
    ap.add_argument("--markdown-out", help="put the results table into this Markdown file")
    ap.add_argument("--check", action="store_true", help="exit 1 if one of our savers misses a target")
    ap.add_argument("--throughput-only", action="store_true",
                    help="run only the throughput phase (see --rounds) and print its table")
    ap.add_argument("--growth-only", action="store_true",
                    help="run only the growth phase (`floor` and the chosen savers of ours) and print its table")
    ap.add_argument("--rounds", type=int,
                    help="rounds of the interleaved throughput phase, whose median ratio to floor's the full "
                    "run reports, and of --throughput-only (default 3; --quick 1)")
    args = ap.parse_args(argv)
    quick = {"turns": 30, "threads": 2, "tp_turns": 5, "state_repeats": 5, "history_repeats": 1,
             "growth_turns": 10, "growth_rounds": 1, "rounds": 1}
    full = {"turns": 200, "threads": 8, "tp_turns": 20, "state_repeats": 20, "history_repeats": 3,
            "growth_turns": 60, "growth_rounds": 3, "rounds": 3}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.saver_list = [s.strip() for s in args.savers.split(",") if s.strip()]
    if args.savers == ",".join(SAVERS) and not mysql_available():
        # The default run measures every backend this machine has; an explicit --savers insists.
        print("no MySQL/MariaDB server here: the *-mysql savers are left out", file=sys.stderr)
        args.saver_list = [s for s in args.saver_list if not s.endswith("-mysql")]
    for name in args.saver_list:
        if name not in SAVERS:
            ap.error(f"unknown saver {name!r}; choose from {', '.join(SAVERS)}")
    if args.growth_only and (not args.growth_turns or not set(args.saver_list) & set(GROWTH_SAVERS[1:])):
        ap.error("--growth-only needs --growth-turns > 0 and one of " + ", ".join(GROWTH_SAVERS[1:]))
    return args


async def run(args: argparse.Namespace) -> dict[str, Any]:
    start = time.perf_counter()
    packages = ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite",
                "langgraph-checkpoint-postgres", "langgraph-checkpoint-mysql", "langchain-core", "psycopg",
                "aiosqlite", "asyncmy")
    result: dict[str, Any] = {
        "args": {k: getattr(args, k) for k in ("turns", "threads", "tp_turns", "state_repeats",
                                                "history_repeats", "growth_turns", "growth_rounds", "rounds", "quick")},
        "info": {"command": "python -m bench.run_bench " + " ".join(sys.argv[1:]),
                 "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "cpus": os.cpu_count(),
                 "machine": platform.machine(), "python": platform.python_version(),
                 "load_average": [round(x, 1) for x in os.getloadavg()],
                 "packages": {p: md.version(p) for p in packages}},
        "savers": {}, "checks": {},
    }
    if not args.no_baseline:
        result["baseline"] = await bench_baseline(args)
    for name in args.saver_list:
        result["savers"][name] = r = await bench_saver(name, args)
        log(name, f"done in {r['elapsed_s']:.0f} s")
    if args.growth_turns and any(name in GROWTH_SAVERS[1:] for name in args.saver_list):
        result["growth"] = await bench_growth(args)
        for name, g in result["growth"]["savers"].items():
            if name in result["savers"]:
                result["savers"][name]["growth"] = g["growth"]
    if "floor" in result["savers"]:
        # The ratio is what this shared machine lets us compare, when its load moves both alike: each
        # saver's phase above ran minutes after floor's, so the ratio comes from rounds of every saver
        # in turn (as --throughput-only), the median of each saver's ratios to floor's same round.
        result["throughput_rounds"] = rounds = await bench_throughput_only(args)
        for name, r in result["savers"].items():
            r["throughput_ratio"] = statistics.median(tp["ratio"] for tp in rounds[name])
    for name, r in result["savers"].items():
        result["checks"][name] = check(r)
    result["elapsed_s"] = time.perf_counter() - start
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if any(name.endswith("-postgres") for name in args.saver_list):
        pg_admin_url()  # fail before the long phases, not in the middle
    if args.throughput_only or args.growth_only:
        if args.throughput_only:
            phase = asyncio.run(bench_throughput_only(args))
            text = throughput_table(phase, args)
        else:
            phase = asyncio.run(bench_growth(args))
            text = growth_table(phase)
        print()
        print(text)
        if args.json_out:
            with open(args.json_out, "w") as f:
                json.dump(phase, f, indent=1)
        return 0
    run_result = asyncio.run(run(args))
    print()
    print(table(run_result))
    if run_result.get("growth"):
        print()
        print(growth_table(run_result["growth"]))
    missed = [f"{name}: {t.label}" for name, checks in run_result["checks"].items() if name in OURS
              for t in TARGETS if checks.get(t.key) is False]
    scope = " (targets are defined for the full run; this was --quick)" if args.quick else ""
    print(f"\nTargets missed{scope}: " + ("; ".join(missed) if missed else "none"))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(run_result, f, indent=1, default=str)
    if args.markdown_out:
        write_markdown(args.markdown_out, markdown_block(run_result))
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
