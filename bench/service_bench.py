"""The service benchmark of issue 7: the official SDK against `orecast serve` in its own process.

    python -m bench.service_bench [--database sqlite|postgres|both] [--threads 8] [--turns 10] [--stream-samples 10]
                                  [--aegra PYTHON]

Per database, on a fresh store:
1. `orecast serve` (one worker) serving the offline analyst and `bench/service_echo.py`;
2. `--threads` SDK clients in parallel, each `--turns` `runs.wait` turns of the echo graph on its own thread:
   turns/s, p50/p95 turn latency, and server CPU per turn (utime+stime of the server process, /proc);
3. first streamed token of the offline analyst: `runs.stream(stream_mode="messages-tuple")` on a new
   thread, time from the request to the first AIMessageChunk (p50 of `--stream-samples`);
4. the floor: the same echo turns in-process on our saver (no HTTP, no run engine), CPU per turn.

With `--aegra PYTHON` (a Python ≥ 3.12 with `aegra-api` installed), Aegra serves the same echo graph
on a fresh PostgreSQL database and gets the same turns (step 2; it has no offline analyst to stream).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from langgraph_sdk import get_client

from orecast.checkpoint import open_checkpointer

ROOT = Path(__file__).resolve().parents[1]
ECHO = "echo"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _say(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def _wait_up(url: str, proc: subprocess.Popen[bytes]) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(600):
            if proc.poll() is not None:
                raise RuntimeError("orecast serve exited")
            try:
                if (await http.get(f"{url}/info")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError("orecast serve did not start")


async def _turns(url: str, threads: int, turns: int) -> tuple[float, list[float]]:
    client = get_client(url=url)
    ids = [(await client.threads.create())["thread_id"] for _ in range(threads)]
    await client.runs.wait(ids[0], ECHO, input=_say("warm-up"))
    latencies: list[float] = []

    async def talk(thread_id: str) -> None:
        for n in range(turns):
            start = time.perf_counter()
            await client.runs.wait(thread_id, ECHO, input=_say(f"turn {n}"))
            latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    await asyncio.gather(*(talk(t) for t in ids))
    return time.perf_counter() - start, latencies


async def _first_tokens(url: str, samples: int) -> list[float]:
    client = get_client(url=url)
    found = []
    for _ in range(samples):
        thread_id = (await client.threads.create())["thread_id"]
        start = time.perf_counter()
        first = None
        async for part in client.runs.stream(
            thread_id, "orecast", input=_say("铁矿石现在多少钱？"), stream_mode="messages-tuple"
        ):
            if first is None and part.event == "messages" and part.data[0].get("type") == "AIMessageChunk":
                first = time.perf_counter() - start
        if first is not None:
            found.append(first)
    return found


async def _floor(url: str, threads: int, turns: int) -> float:
    from bench.service_echo import builder

    async with open_checkpointer(url) as saver:
        graph = builder.compile(checkpointer=saver)
        ids = [str(uuid.uuid4()) for _ in range(threads)]

        async def talk(thread_id: str) -> None:
            for n in range(turns):
                await graph.ainvoke(_say(f"turn {n}"), {"configurable": {"thread_id": thread_id}})

        await talk(str(uuid.uuid4()))
        cpu = time.process_time()
        await asyncio.gather(*(talk(t) for t in ids))
        return (time.process_time() - cpu) / (threads * turns)


def _database(kind: str, folder: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:///{folder / 'bench.sqlite3'}"
    import psycopg
    from tests.pg_server import ensure, with_search_path

    server = os.environ.get("ORECAST_TEST_PG_URL") or ensure()
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return with_search_path(server, schema)


async def _serve_and_measure(
    command: list[str], env: dict[str, str], cwd: str, base: str, args: argparse.Namespace
) -> tuple[float, list[float], float, list[float]]:
    """Start a server, run the turns (and the analyst's first tokens if `args.stream_samples`), stop it:
    (elapsed, latencies, server CPU seconds per turn, first-token latencies)."""
    proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    try:
        await _wait_up(base, proc)
        cpu = _cpu_seconds(proc.pid)
        elapsed, latencies = await _turns(base, args.threads, args.turns)
        server_cpu = (_cpu_seconds(proc.pid) - cpu) / (args.threads * args.turns)
        first = await _first_tokens(base, args.stream_samples) if args.stream_samples else []
    finally:
        proc.terminate()
        proc.wait(30)
    return elapsed, latencies, server_cpu, first


def _summary(elapsed: float, latencies: list[float], server_cpu: float, first: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    return {
        "turns_per_s": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p95_ms": ordered[int(0.95 * (len(ordered) - 1))] * 1000,
        "server_cpu_ms": server_cpu * 1000,
        "floor_cpu_ms": float("nan"),
        "first_token_p50_ms": statistics.median(first) * 1000 if first else float("nan"),
    }


async def bench(kind: str, args: argparse.Namespace) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        url = _database(kind, Path(tmp))
        port = _free_port()
        env = {**os.environ, "ORECAST_MODEL": "offline", "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
               "ORECAST_CHARTS_DIR": tmp, "ORECAST_REPORTS_DIR": tmp}
        env.pop("ORECAST_API_KEYS", None)
        command = [sys.executable, "-m", "orecast.cli.main", "serve", "--port", str(port), "--database-url", url,
                   "--graph", f"{ECHO}=bench.service_echo:graph"]
        measured = await _serve_and_measure(command, env, tmp, f"http://127.0.0.1:{port}", args)
        floor = await _floor(url, args.threads, args.turns)
    return {**_summary(*measured), "floor_cpu_ms": floor * 1000}


async def bench_aegra(python: str, args: argparse.Namespace) -> dict[str, float]:
    """Aegra (its defaults, less its info-level logs) on a database of its own on the same server."""
    import psycopg
    from tests.pg_server import ensure

    server = os.environ.get("ORECAST_TEST_PG_URL") or ensure()
    name = f"bench_aegra_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "aegra.json"
            config.write_text(json.dumps({"graphs": {ECHO: f"{ROOT / 'bench' / 'service_echo.py'}:graph"}}))
            port = _free_port()
            info = psycopg.conninfo.conninfo_to_dict(server)
            env = {
                **os.environ, "AEGRA_CONFIG": str(config), "HOST": "127.0.0.1", "PORT": str(port),
                "LOG_LEVEL": "WARNING", "POSTGRES_DB": name, "POSTGRES_USER": str(info.get("user", "postgres")),
                "POSTGRES_PASSWORD": str(info.get("password", "")), "POSTGRES_HOST": str(info.get("host", "127.0.0.1")),
                "POSTGRES_PORT": str(info.get("port", 5432)),
            }
            for own in ("PYTHONPATH", "DATABASE_URL", "VIRTUAL_ENV"):
                env.pop(own, None)
            measured = await _serve_and_measure(
                [python, "-m", "aegra_api.main"], env, tmp, f"http://127.0.0.1:{port}",
                argparse.Namespace(**{**vars(args), "stream_samples": 0}),
            )
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return _summary(*measured)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--stream-samples", type=int, default=10)
    parser.add_argument("--aegra", metavar="PYTHON", help="a Python with aegra-api: measure Aegra too")
    args = parser.parse_args()
    kinds = ["sqlite", "postgres"] if args.database == "both" else [args.database]
    print("| database | turns/s | p50 turn | p95 turn | server CPU / turn | in-process CPU / turn | first token p50 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = [(kind, lambda kind=kind: bench(kind, args)) for kind in kinds]
    if args.aegra:
        rows.append(("aegra (postgres)", lambda: bench_aegra(args.aegra, args)))
    for name, run in rows:
        r = asyncio.run(run())
        print(
            f"| {name} | {r['turns_per_s']:.1f} | {r['p50_ms']:.0f} ms | {r['p95_ms']:.0f} ms | "
            f"{r['server_cpu_ms']:.1f} ms | {r['floor_cpu_ms']:.1f} ms | {r['first_token_p50_ms']:.0f} ms |",
            flush=True,
        )


if __name__ == "__main__":
    main()
