"""The MariaDB server's CPU for orecast-mysql's work, measured on the server threads that did it.

    python -m bench.mysql_server_cpu read [--n 2000]     # a run's read (READ_LATEST_CHECKPOINT) of a 3-turn thread
    python -m bench.mysql_server_cpu loop [--rounds 1] [--threads 8 --turns 20]   # the throughput loop, one pooled connection
    python -m bench.mysql_server_cpu replay [--turns 30] [--rounds 3] [--by-statement]   # a thread's turns, replayed

Which orecast it measures is whichever `orecast` imports (PYTHONPATH=<checkout>/src:<checkout> for A/B
runs of two checkouts). `read`: one connection runs the statement `--n` times on a thread the saver
wrote; the CPU of that connection's server thread (MariaDB's `information_schema.PROCESSLIST.TID`,
`/proc/<mariadbd>/task/<tid>/schedstat`, nanoseconds) per execution, and the client's. `loop`: the
saver opened with `pool_size=1`, so all of a run's server work is on one server thread; that thread's
CPU and the client's (`time.process_time()`) per turn, after a warm-up. CPU time, not wall time: load
from other processes moves it much less than turns/s (caches and frequency still move it a little).
With 8 threads, how the writes fall into groups (one transaction each) depends on timing, which load
moves; `--threads 1` runs the same statements every time. `replay`: one thread's turns (after a
warm-up turn) run once through the saver on one connection, every statement's text recorded as sent
(parameters in; a read through the driver's prepared statement as its text and arguments), then sent
again as recorded, statement by statement on one connection, to fresh databases `--rounds` times: the
server thread's CPU per turn for exactly the same statements each time, and almost no client work
beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import time
from typing import Any

from bench.mysql_probe import server_pid
from bench.run_bench import throughput
from bench.stores import fresh_mysql_database
from bench.workload import build_graph, run_turn
from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.mysql import queries

THREADS, TURNS = 8, 20


def thread_ns(pid: str, tid: str) -> int:
    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
        return int(f.read().split()[0])


async def my_tid(db: Any) -> str:
    row = await db.fetchone("SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
    return str(row[0])


async def measure_read(n: int) -> None:
    pid = server_pid()
    async with fresh_mysql_database() as url, open_checkpointer(url, pool_size=1) as saver:
        graph = build_graph().compile(checkpointer=saver)
        for turn in range(1, 4):
            await run_turn(graph, "t", turn)
        async with saver._read() as db:
            tid = await my_tid(db)
            params = ("t", "") * (queries.READ_LATEST_CHECKPOINT.count("%s") // 2)
            rows = await db.fetchall(queries.READ_LATEST_CHECKPOINT, params)
            for _ in range(50):
                await db.fetchall(queries.READ_LATEST_CHECKPOINT, params)
            server, client = thread_ns(pid, tid), time.process_time()
            for _ in range(n):
                await db.fetchall(queries.READ_LATEST_CHECKPOINT, params)
            server, client = thread_ns(pid, tid) - server, time.process_time() - client
    print(
        f"READ_LATEST_CHECKPOINT ({len(rows)} rows): server {server / n / 1000:.0f} µs, "
        f"client {client / n * 1e6:.0f} µs per read ({n} reads, load {os.getloadavg()[0]:.1f})",
        flush=True,
    )


async def measure_loop(rounds: int, threads: int, turns_each: int) -> None:
    pid = server_pid()
    for _ in range(rounds):
        async with fresh_mysql_database() as url, open_checkpointer(url, pool_size=1) as saver:
            graph = build_graph().compile(checkpointer=saver)
            for turn in range(1, 3):
                await run_turn(graph, "warmup", turn)
            async with saver._read() as db:
                tid = await my_tid(db)
            gc.collect()
            server, client = thread_ns(pid, tid), time.process_time()
            tp = await throughput(graph, threads, turns_each, stateless=False)
            server, client = thread_ns(pid, tid) - server, time.process_time() - client
            async with saver._read() as db:
                assert await my_tid(db) == tid, "the pool's one connection was replaced"
        turns = threads * turns_each
        print(
            f"{threads}×{turns_each}: server {server / turns / 1e6:.2f} ms, client {client / turns * 1000:.2f} ms CPU per turn, "
            f"{tp['turns_per_s']:.0f} turns/s (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )


class _RecordingCursor:
    def __init__(self, cursor: Any, sent: list[Any]) -> None:
        self._cursor, self._sent = cursor, sent

    async def __aenter__(self) -> _RecordingCursor:
        await self._cursor.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._cursor.__aexit__(*exc)

    async def execute(self, query: str, args: Any = None) -> Any:
        self._sent.append(self._cursor.mogrify(query, args))
        return await self._cursor.execute(query, args)

    async def executemany(self, query: str, args: Any) -> Any:
        self._sent.extend(self._cursor.mogrify(query, a) for a in args)
        return await self._cursor.executemany(query, args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


class _RecordingStatement:
    """A driver's prepared statement (binary protocol) whose executions are recorded as (text, args)."""

    def __init__(self, statement: Any, text: str, sent: list[Any]) -> None:
        self._statement, self._text, self._sent = statement, text, sent

    async def execute(self, args: Any = ()) -> Any:
        self._sent.append((self._text, tuple(args)))
        return await self._statement.execute(args)


class _RecordingConnection:
    def __init__(self, conn: Any, sent: list[Any]) -> None:
        self._conn, self._sent = conn, sent

    def cursor(self, *args: Any) -> _RecordingCursor:
        return _RecordingCursor(self._conn.cursor(*args), self._sent)

    async def prepare(self, text: str) -> _RecordingStatement:
        return _RecordingStatement(await self._conn.prepare(text), text, self._sent)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


async def measure_replay(turns: int, rounds: int, by_statement: bool) -> None:
    from orecast.checkpoint.mysql import saver as module

    pid = server_pid()
    sent: list[Any] = []  # SQL text, or (text, args) of a driver's prepared statement
    init = module._Db.__init__

    def recording_init(self: Any, conn: Any, *args: Any, **kwargs: Any) -> None:
        init(self, _RecordingConnection(conn, sent) if conn is not None else conn, *args, **kwargs)
        self.pooled = conn  # the pool takes back only the connection it gave (it waits for it otherwise)

    async with fresh_mysql_database() as url, open_checkpointer(url, pool_size=1) as saver:
        graph = build_graph().compile(checkpointer=saver)
        module._Db.__init__ = recording_init  # type: ignore[method-assign]
        try:
            await run_turn(graph, "t", 1)
            start = len(sent)
            for turn in range(2, turns + 2):
                await run_turn(graph, "t", turn)
        finally:
            module._Db.__init__ = init  # type: ignore[method-assign]
    kinds: dict[str, int] = {}
    for _ in range(rounds):
        async with fresh_mysql_database() as url:
            async with open_checkpointer(url, pool_size=1) as saver, saver._read() as db:
                tid = await my_tid(db)
                cur = db.conn.cursor()
                server = 0
                statements: dict[str, Any] = {}  # the binary-protocol statements, prepared before they are timed
                for text in {sql[0] for sql in sent if type(sql) is tuple}:
                    statements[text] = await db.conn.prepare(text)
                for n, sql in enumerate(sent):
                    before = thread_ns(pid, tid) if n >= start else 0
                    if type(sql) is tuple:
                        await statements[sql[0]].execute(sql[1])
                    else:
                        await cur.execute(sql)
                        await cur.fetchall()
                        while await cur.nextset():
                            await cur.fetchall()
                    if n >= start:
                        spent = thread_ns(pid, tid) - before
                        server += spent
                        kinds[_kind(sql)] = kinds.get(_kind(sql), 0) + spent
        print(
            f"replay of {turns} turns ({len(sent) - start} statements sent): server {server / turns / 1e6:.2f} ms "
            f"CPU per turn (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    if by_statement:
        for kind, spent in sorted(kinds.items(), key=lambda k: -k[1]):
            count = sum(1 for sql in sent[start:] if _kind(sql) == kind)
            print(
                f"  {spent / rounds / turns / 1e6:5.2f} ms per turn, {count / turns:4.1f} a turn, "
                f"{spent / rounds / count / 1e3:4.0f} µs each: {kind}"
            )


def _kind(sql: Any) -> str:
    """A statement's kind: the prepared statements a compound statement executes, else its first words."""
    if type(sql) is tuple:  # a driver's prepared statement (binary protocol)
        return "binary: " + " ".join(sql[0].split()[:3])[:50]
    names = re.findall(r"EXECUTE (\w+)", sql)
    if names:
        return " + ".join(name.removeprefix("orecast_") for name in names)
    return " ".join(sql.split()[:3])[:60]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("read", "loop", "replay"))
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--by-statement", action="store_true", help="replay: the server's CPU per kind of statement")
    ap.add_argument("--threads", type=int, default=THREADS)
    ap.add_argument("--turns", type=int, default=None)
    args = ap.parse_args()
    if args.what == "read":
        asyncio.run(measure_read(args.n))
    elif args.what == "loop":
        asyncio.run(measure_loop(args.rounds, args.threads, args.turns or TURNS))
    else:
        asyncio.run(measure_replay(args.turns or 30, args.rounds, args.by_statement))


if __name__ == "__main__":
    main()
