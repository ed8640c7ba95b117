"""Two `orecast serve` processes on one database, 100 runs submitted to the first: how many each
process executed, and how long all took (docs/service.md, "Runs at once").

    python -m bench.shared_queue postgresql://user@host/db   # an empty database (or schema)

Each run's graph sleeps 0.5 s and records the PID of the process that executed it in its thread's
values. With one queue for all processes the idle second process takes the runs the first queues.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from typing import TypedDict

import httpx
from langgraph.graph import START, StateGraph

RUNS = 100
SLEEP = 0.5


class State(TypedDict, total=False):
    pid: int


async def sleep_and_record(state: State) -> State:
    await asyncio.sleep(SLEEP)
    return {"pid": os.getpid()}


builder = StateGraph(State)
builder.add_node("sleep", sleep_and_record)
builder.add_edge(START, "sleep")
graph = builder.compile()


def serve(db_url: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "orecast.cli.main",
            "serve",
            "--port",
            str(port),
            "--database-url",
            db_url,
            "--no-analyst",
            "--graph=pid=bench.shared_queue:graph",
        ],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{url}/ok").status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"orecast serve on port {port} did not start")


def main(db_url: str) -> None:
    first, first_url = serve(db_url)  # migrates the database first
    second, _ = serve(db_url)
    try:
        with httpx.Client(base_url=first_url, timeout=120) as http:
            threads = [http.post("/threads", json={}).json()["thread_id"] for _ in range(RUNS)]
            started = time.perf_counter()
            runs = [
                http.post(f"/threads/{t}/runs", json={"assistant_id": "pid", "input": {}}).json()
                for t in threads
            ]
            for t, run in zip(threads, runs, strict=True):
                http.get(f"/threads/{t}/runs/{run['run_id']}/join")
            took = time.perf_counter() - started
            pids = Counter(
                http.get(f"/threads/{t}/state").json()["values"].get("pid") for t in threads
            )
        names = {first.pid: "first (submitted to)", second.pid: "second"}
        for pid, count in pids.most_common():
            print(f"{names.get(pid, pid)}: {count} runs")
        print(f"{RUNS} runs of {SLEEP} s, 10 slots a process: {took:.1f} s")
    finally:
        for proc in (first, second):
            proc.terminate()
            proc.wait(30)


if __name__ == "__main__":
    main(sys.argv[1])
