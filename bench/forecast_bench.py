"""`make bench`, part 2: how long an `auto` forecast and a chat answer with a forecast take.

    python -m bench.forecast_bench [--series iron_ore_wb_monthly] [--horizon 6] [--markdown-out docs/benchmarks.md]

Each measurement runs in a fresh Python process (so nothing is cached in memory), with its own
empty cache directory (`XDG_CACHE_HOME`), in this order:

1. cold: `forecast(series, horizon)` with no stored fits (every candidate backtested);
2. warm: the same call in a new process, fits read from the disk cache;
3. one more month: the series plus one new value (what `orecast data update` brings): only the
   newest origins are fitted;
4. the CLI: `orecast forecast SERIES --horizon H` wall time, warm (process start and imports included);
5. chat: the offline analyst answers "铁矿石未来6个月走势？" (a forecast with `auto`), warm, in-process
   from the question to the last token (`stream_turn` on an in-memory checkpointer).

Times are wall-clock; CPU seconds of the process are shown too, because the benchmark machine is
shared and wall time there includes waiting for a core. Goals (issue 9): warm ≤ 1 s, cold ≤ 5 s,
chat answer ≤ 3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

BEGIN, END = "<!-- forecast-bench:begin -->", "<!-- forecast-bench:end -->"
GOALS = {"warm": 1.0, "cold": 5.0, "chat": 3.0}

_FORECAST = """
import json, sys, time
t0 = time.perf_counter()
import pandas as pd
from orecast.market import forecast, load_series
imported = time.perf_counter() - t0
series, horizon, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
data = load_series(series)
if extra:  # one more period, 1 % above the last: the shape of a data update
    nxt = data.index[-1] + (data.index[-1] - data.index[-2])
    data = pd.concat([data, pd.Series([data.iloc[-1] * 1.01], index=[nxt])]).rename(series)
    data.attrs = load_series(series).attrs
c0, w0 = time.process_time(), time.perf_counter()
fc = forecast(data, horizon)
print(json.dumps({"seconds": time.perf_counter() - w0, "cpu": time.process_time() - c0,
                  "import": imported, "method": fc.method}))
"""

_CHAT = """
import asyncio, json, time
from orecast.agent import AgentSettings, Token, build_agent, select_model, stream_turn
from orecast.checkpoint import open_checkpointer

async def main():
    async with open_checkpointer("memory://") as saver:
        agent = build_agent(saver, model=select_model("offline"), settings=AgentSettings(model="offline"))
        c0, w0 = time.process_time(), time.perf_counter()
        text = []
        async for event in stream_turn(agent, "bench", "铁矿石未来6个月走势？"):
            if isinstance(event, Token):
                text.append(event.text)
        print(json.dumps({"seconds": time.perf_counter() - w0, "cpu": time.process_time() - c0,
                          "chars": len("".join(text))}))

asyncio.run(main())
"""


def _run(code: str, args: list[str], env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                         text=True, timeout=900, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cli(args: list[str], env: dict[str, str]) -> dict:
    w0 = time.perf_counter()
    before = os.times()
    subprocess.run([sys.executable, "-m", "orecast.cli.main", *args], env=env, capture_output=True,
                   text=True, timeout=900, check=True)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"seconds": time.perf_counter() - w0, "cpu": cpu}


def measure(series: str, horizon: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache"),
               "XDG_DATA_HOME": str(Path(tmp) / "data"), "ORECAST_CHARTS_DIR": str(Path(tmp) / "charts")}
        env.pop("DEEPSEEK_API_KEY", None)
        env.pop("ORECAST_MODEL", None)
        rows = {
            "cold": _run(_FORECAST, [series, str(horizon), "0"], env),
            "warm": _run(_FORECAST, [series, str(horizon), "0"], env),
            "one more month": _run(_FORECAST, [series, str(horizon), "1"], env),
            "cli warm": _cli(["forecast", series, "--horizon", str(horizon)], env),
            "chat": _run(_CHAT, [], env),
        }
    return {"series": series, "horizon": horizon, "rows": rows,
            "machine": f"{platform.node()} · {os.cpu_count()} CPUs · load {os.getloadavg()[0]:.1f}",
            "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}


def markdown(result: dict) -> str:
    goals = {"cold": GOALS["cold"], "warm": GOALS["warm"], "chat": GOALS["chat"]}
    lines = [
        f"`{result['series']}`, horizon {result['horizon']}, `auto`; {result['when']}, "
        f"{result['machine']} (1-minute load average at the end of the run).",
        "",
        "| measurement | wall s | CPU s | goal | met (wall) |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for name, row in result["rows"].items():
        goal = goals.get(name)
        met = "" if goal is None else ("yes" if row["seconds"] <= goal else "no")
        lines.append(f"| {name} | {row['seconds']:.2f} | {row['cpu']:.2f} | "
                     f"{'' if goal is None else f'≤ {goal:g}'} | {met} |")
    return "\n".join(lines)


def write_markdown(path: Path, body: str) -> None:
    block = f"{BEGIN}\n{body}\n{END}"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in text and END in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n## Forecast and chat latency\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--series", default="iron_ore_wb_monthly")
    ap.add_argument("--horizon", type=int, default=6)
    ap.add_argument("--json-out", help="write the measurements to this JSON file")
    ap.add_argument("--markdown-out", help="put the table into this Markdown file")
    args = ap.parse_args(argv)
    result = measure(args.series, args.horizon)
    print(markdown(result))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2), encoding="utf-8")
    if args.markdown_out:
        write_markdown(Path(args.markdown_out), markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
