"""The 8×20 loop's instructions and simulated cache misses, split between the saver and the rest (LangGraph,
asyncio) under callgrind.

    valgrind --tool=callgrind --cache-sim=yes --LL=2097152,16,64 --D1=65536,8,64 --instr-atstart=no \
        --callgrind-out-file=OUT python -m bench.cg_split SAVER [--pollute KB]
    python -m bench.cg_split --summary OUT [OUT ...]

runs `bench.cg_throughput`'s loop, but steps every coroutine of the saver (`aput`, `aput_writes`,
`aget_tuple`, and the group writers PostgreSQL and MySQL run as tasks of their own) through
`operator.call`: callgrind's inclusive cost of `_operator_call` is then the saver's own (its SQL driver
included), the rest LangGraph's and the event loop's. `--summary` prints both per turn (÷ 160), and the
collector's cost wherever it ran. `--LL` sets the last level to the real per-core L2 (2 MiB here):
callgrind otherwise takes the L3.

`--pollute KB` (with `floor`) makes each `aput` read KB of memory of the thread's own: what a saver that
reads that much per put (as a check of a whole message list does) costs LangGraph's own code in misses.
On this machine (2026-12-06, `orecast-postgres` with 17.9 M instructions and 18.4 k misses a turn):

| run | saver: Ir / L2 misses a turn | rest: Ir / L2 misses a turn |
|---|---:|---:|
| floor | 0.32 M / 0.21 k | 12.09 M / 2.58 k |
| floor --pollute 48 | 0.38 M / 1.47 k | 12.09 M / 4.05 k |
| floor --pollute 160 | 0.48 M / 10.05 k | 12.05 M / 7.89 k |

LangGraph runs the same instructions and misses three times as often once each put reads 160 KB.

The collector's cost counts where it ran (mostly in the rest); a full collection that falls in the loop
(now and then: it depends on the heap) adds ~10 k misses a turn to it: compare runs without one.
"""

from __future__ import annotations

import argparse
import asyncio
import operator
import re
import subprocess
from collections.abc import Coroutine, Generator
from typing import Any

from bench import cg_throughput


class Stepped:
    """Awaits a coroutine step by step through `operator.call`, so callgrind counts each step under it."""

    __slots__ = ("coro",)

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.coro = coro

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, value, exc = self.coro, None, None
        while True:
            try:
                if exc is None:
                    yielded = operator.call(coro.send, value)
                else:
                    yielded, exc = operator.call(coro.throw, exc), None
            except StopIteration as stop:
                return stop.value
            try:
                value = yield yielded
            except BaseException as caught:  # (cancellation too: passed on to the coroutine)
                exc, value = caught, None


def step_through(cls: type, *names: str) -> None:
    for name in names:
        original = getattr(cls, name, None)
        if original is None:
            continue

        async def stepped(self: Any, *args: Any, __original: Any = original, **kwargs: Any) -> Any:
            return await Stepped(__original(self, *args, **kwargs))

        setattr(cls, name, stepped)


def pollute(saver_cls: type, kb: int) -> None:
    buffers: dict[str, bytearray] = {}
    original = saver_cls.aput

    async def aput(self: Any, config: Any, *args: Any, **kwargs: Any) -> Any:
        thread = config["configurable"]["thread_id"]
        buffer = buffers.setdefault(thread, bytearray(kb * 1024))
        buffer.find(b"\x01")  # reads every line of it
        return await original(self, config, *args, **kwargs)

    saver_cls.aput = aput


async def main(name: str, kb: int) -> None:
    from orecast.checkpoint.mysql.groups import GroupWriter
    from orecast.checkpoint.postgres.pipeline import GroupCommit

    step_through(GroupCommit, "_run_groups")
    step_through(GroupWriter, "_next_group")

    def instrument(saver: Any) -> None:
        if kb:
            pollute(type(saver), kb)
        step_through(type(saver), "aput", "aput_writes", "aget_tuple")

    await cg_throughput.main(name, 8, 20, prepare=instrument)


def summary(path: str, turns: int = 160) -> str:
    out = subprocess.run(
        ["callgrind_annotate", "--show=Ir,DLmr,DLmw,ILmr", "--inclusive=yes", "--threshold=100", path],
        capture_output=True, text=True, check=True,
    ).stdout
    parts = {"total": [0] * 4, "saver": [0] * 4, "gc": [0] * 4}
    for line in out.splitlines():
        line = re.sub(r"\(\s*[\d.]+%\)", "", line)
        m = re.match(r"\s*([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)\s+(.*)", line)
        if not m:
            continue
        counts = [0 if x == "." else int(x.replace(",", "")) for x in m.groups()[:4]]
        for part, pattern in (("total", "PROGRAM TOTALS"), ("saver", r":_operator_call \["),
                              ("gc", r":gc_collect_main \[")):
            if re.search(pattern, m.group(5)):
                parts[part] = [a + b for a, b in zip(parts[part], counts, strict=True)]
    total, saver, gcs = parts["total"], parts["saver"], parts["gc"]

    def cell(c: list[int]) -> str:
        return f"{c[0] / turns / 1e6:6.2f} M Ir {sum(c[1:]) / turns / 1e3:6.2f} k misses"

    rest = [t - s for t, s in zip(total, saver, strict=True)]
    return f"{path}: total {cell(total)} | saver {cell(saver)} | rest {cell(rest)} | gc (anywhere) {cell(gcs)}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("saver", nargs="?")
    parser.add_argument("--pollute", type=int, default=0, metavar="KB")
    parser.add_argument("--summary", nargs="+", metavar="OUT")
    args = parser.parse_args()
    if args.summary:
        for path in args.summary:
            print(summary(path))
    else:
        asyncio.run(main(args.saver, args.pollute))
