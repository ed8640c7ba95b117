"""Concurrent threads, several savers on one store, re-entrancy, concurrent migrations."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.migrations import latest, pending
from tests.checkpoint.conftest import dialect_of, raw_sql
from tests.checkpoint.graphs import human, tool_loop

ROOT = Path(__file__).resolve().parents[2]


def applied_once(url: str) -> list[tuple[int, int]]:
    """Every migration of the URL's dialect, recorded exactly once (numbers may skip: a dialect's
    migration takes the number of its step on every dialect)."""
    dialect = {"sqlite": "sqlite", "postgresql": "postgres", "mysql": "mysql"}[dialect_of(url)]
    return [(version, 1) for version, _script in pending(dialect, 0)]


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def _converse(graph: Any, thread_id: str, turns: int) -> None:
    for turn in range(turns):
        await graph.ainvoke({"messages": [human(turn, f"{thread_id} says {turn}")]}, cfg(thread_id))


async def _expected(thread_id: str, turns: int) -> list[Any]:
    reference = tool_loop(InMemorySaver())
    await _converse(reference, thread_id, turns)
    return (await reference.aget_state(cfg(thread_id))).values["messages"]


async def test_eight_threads_concurrently_on_one_saver(saver) -> None:
    graph = tool_loop(saver)
    threads = [f"c-{n}" for n in range(8)]
    await asyncio.gather(*(_converse(graph, t, 5) for t in threads))
    for t in threads:
        state = await graph.aget_state(cfg(t))
        assert state.values["messages"] == await _expected(t, 5)
        info = await saver.aget_thread(t)
        assert info.message_count == 20 and info.checkpoint_count == 25
    assert await saver.acount_threads() == 8


async def test_two_savers_on_one_sqlite_file(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    async with open_checkpointer(url) as a, open_checkpointer(url) as b:
        ga, gb = tool_loop(a), tool_loop(b)
        await asyncio.gather(
            *(_converse(ga, f"a-{n}", 4) for n in range(3)),
            *(_converse(gb, f"b-{n}", 4) for n in range(3)),
        )
        # Each saver reads what the other wrote.
        for n in range(3):
            assert (await ga.aget_state(cfg(f"b-{n}"))).values["messages"] == await _expected(
                f"b-{n}", 4
            )
            assert (await gb.aget_state(cfg(f"a-{n}"))).values["messages"] == await _expected(
                f"a-{n}", 4
            )
        assert await a.acount_threads() == 6


async def test_two_savers_on_one_postgres_schema(fresh_postgres_url: str) -> None:
    async with (
        open_checkpointer(fresh_postgres_url, pool_size=3) as a,
        open_checkpointer(fresh_postgres_url, pool_size=3) as b,
    ):
        ga, gb = tool_loop(a), tool_loop(b)
        await asyncio.gather(
            *(_converse(ga, f"a-{n}", 4) for n in range(3)),
            *(_converse(gb, f"b-{n}", 4) for n in range(3)),
        )
        for n in range(3):
            assert (await ga.aget_state(cfg(f"b-{n}"))).values["messages"] == await _expected(
                f"b-{n}", 4
            )
        assert await b.acount_threads() == 6


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from orecast.checkpoint import open_checkpointer
    from tests.checkpoint.graphs import human, tool_loop

    async def main(url, prefix):
        async with open_checkpointer(url) as s:
            g = tool_loop(s)
            async def talk(t):
                for turn in range(4):
                    await g.ainvoke({"messages": [human(turn, f"{t} says {turn}")]},
                                    {"configurable": {"thread_id": t}})
            await asyncio.gather(*(talk(f"{prefix}-{n}") for n in range(3)))

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


def _spawn(url: str, prefix: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, url, prefix],
        cwd=ROOT,
        env={"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
async def test_two_processes_write_concurrently(new_store_url: str) -> None:
    """Two processes open a fresh store at once (racing migrations) and write different threads."""
    store_url = new_store_url
    procs = [_spawn(store_url, "p1"), _spawn(store_url, "p2")]
    for proc in procs:
        _out, err = await asyncio.to_thread(proc.communicate, timeout=120)
        assert proc.returncode == 0, err
        assert "database is locked" not in err
    async with open_checkpointer(store_url) as s:
        graph = tool_loop(s)
        for prefix in ("p1", "p2"):
            for n in range(3):
                t = f"{prefix}-{n}"
                assert (await graph.aget_state(cfg(t))).values["messages"] == await _expected(t, 4)
        assert await s.acount_threads() == 6
    assert raw_sql(
        store_url, "SELECT version, count(*) FROM orecast_migrations GROUP BY version ORDER BY version"
    ) == applied_once(store_url)


async def test_writes_from_a_cache_another_process_made_stale_go_to_the_thread_as_it_is(store_url: str) -> None:
    """A put_writes that refers to items by the numbers its process's cache knew, after another process
    deleted the thread and started it anew (its items under those numbers are other messages)."""
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    async with open_checkpointer(store_url) as first, open_checkpointer(store_url) as second:
        await first.aput(config, a_checkpoint_of("m1", "m2"), {"source": "input", "step": -1}, {"messages": "1"})
        await second.adelete_thread("t")
        head = await second.aput(config, a_checkpoint_of("x1", "x2"), {"source": "input", "step": -1}, {"messages": "1"})
        # the history as the first process knows it: no new item, references to its cache's numbers
        await first.aput_writes(head, [("messages", [HumanMessage("m1", id="m1"), HumanMessage("m2", id="m2")])], "t1")
        (write,) = (await second.aget_tuple(head)).pending_writes
        assert [m.content for m in write[2]] == ["m1", "m2"]


def a_checkpoint_of(*texts: str) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [HumanMessage(text, id=text) for text in texts]}
    cp["channel_versions"] = {"messages": "1"}
    return cp


async def test_saver_usable_inside_alist(saver) -> None:
    graph = tool_loop(saver)
    await _converse(graph, "outer", 3)

    async def walk() -> int:
        seen = 0
        async for tup in saver.alist(cfg("outer")):
            # Reads and writes while the iteration is open must not deadlock.
            again = await saver.aget_tuple(tup.config)
            assert again.checkpoint["id"] == tup.checkpoint["id"]
            await saver.aput_writes(tup.config, [("note", seen)], f"task-{seen}")
            await saver.aupdate_thread("outer", metadata={"walked": seen})
            seen += 1
        return seen

    assert await asyncio.wait_for(walk(), timeout=30) == 15
    assert (await saver.aget_thread("outer")).metadata["walked"] == 14


async def test_sqlite_memory_usable_inside_alist() -> None:
    async with open_checkpointer("sqlite:///:memory:") as s:
        graph = tool_loop(s)
        await _converse(graph, "m", 2)

        async def walk() -> int:
            n = 0
            async for tup in s.alist(cfg("m")):
                await s.aget_tuple(tup.config)
                await graph.ainvoke({"messages": [human(100 + n)]}, cfg(f"other-{n}"))
                n += 1
            return n

        assert await asyncio.wait_for(walk(), timeout=30) == 10


async def test_concurrent_migrations_postgres(fresh_postgres_url: str) -> None:
    async def open_once(n: int) -> int:
        async with open_checkpointer(fresh_postgres_url, pool_size=2) as s:
            await tool_loop(s).ainvoke({"messages": [human(n)]}, cfg(f"mig-{n}"))
            return (await s.astats())["schema_version"]

    assert await asyncio.gather(*(open_once(n) for n in range(4))) == [latest("postgres")] * 4
    assert raw_sql(
        fresh_postgres_url,
        "SELECT version, count(*) FROM orecast_migrations GROUP BY version ORDER BY version",
    ) == applied_once(fresh_postgres_url)


async def test_concurrent_migrations_sqlite(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'mig.db'}"

    async def open_once(n: int) -> int:
        async with open_checkpointer(url) as s:
            await tool_loop(s).ainvoke({"messages": [human(n)]}, cfg(f"mig-{n}"))
            return (await s.astats())["schema_version"]

    assert await asyncio.gather(*(open_once(n) for n in range(4))) == [latest("sqlite")] * 4
    assert raw_sql(
        url, "SELECT version, count(*) FROM orecast_migrations GROUP BY version ORDER BY version"
    ) == applied_once(url)
    async with open_checkpointer(url) as s:
        assert await s.acount_threads() == 4


OPENER = textwrap.dedent(
    """
    import asyncio, sys, time
    from orecast.checkpoint import open_checkpointer

    async def main(folder, rounds):
        print("ready", flush=True)  # LangGraph imported: the test hands every process one start time
        start = float(sys.stdin.readline())
        failures = []
        for r in range(rounds):
            # Every process opens the same fresh file at the same instant.
            await asyncio.sleep(max(0.0, start + r * 0.25 - time.time()))
            try:
                async with open_checkpointer(f"sqlite:///{folder}/fresh-{r}.db") as s:
                    await s.acount_threads()
            except Exception as exc:
                failures.append(f"round {r}: {type(exc).__name__}: {exc}")
        print("\\n".join(failures))
        sys.exit(1 if failures else 0)

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    """
)


@pytest.mark.slow
async def test_processes_open_fresh_sqlite_file_at_once(tmp_path) -> None:
    """N processes opening (creating, switching to WAL, migrating) one new file simultaneously."""
    import time

    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(tmp_path), "8"],
            cwd=ROOT,
            env={"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    # Once every process has imported LangGraph (a fixed 4 s wait was too long on a quiet machine and
    # could be too short on a loaded one, and then the processes did not open the files at once).
    readies = await asyncio.gather(*(asyncio.to_thread(proc.stdout.readline) for proc in procs))  # type: ignore[union-attr]
    assert readies == ["ready\n"] * 4, [proc.communicate()[1][-500:] for proc in procs]
    start = time.time() + 0.5
    for proc in procs:
        proc.stdin.write(f"{start}\n")  # type: ignore[union-attr]  # a pipe
        proc.stdin.flush()  # type: ignore[union-attr]  # (communicate() closes it)
    failures = []
    for proc in procs:
        out, err = await asyncio.to_thread(proc.communicate, timeout=120)
        if proc.returncode != 0:
            failures.append(out.strip() or err[-500:])
    assert not failures, failures
    for r in range(8):
        url = f"sqlite:///{tmp_path / f'fresh-{r}.db'}"
        assert raw_sql(
            url, "SELECT version, count(*) FROM orecast_migrations GROUP BY version ORDER BY version"
        ) == applied_once(url)


async def test_two_savers_write_one_thread_at_once(store_url: str) -> None:
    """Two processes (replicas) running turns on the same thread at once: each numbers the thread's new
    items from what it last saw, the other's writes make those numbers stale, and a write starts again.
    On MySQL a write whose retry met the other's writes again failed with StaleThreadError (3–7 of 30
    turns), so the run lost its turn."""
    async with open_checkpointer(store_url) as a, open_checkpointer(store_url) as b:
        ga, gb = tool_loop(a), tool_loop(b)

        async def talk(graph: Any, who: str) -> None:
            for turn in range(12):
                await graph.ainvoke({"messages": [human(turn, f"{who} says {turn}")]}, cfg("shared"))

        await asyncio.gather(talk(ga, "a"), talk(gb, "b"))
        history = [s async for s in ga.aget_state_history(cfg("shared"))]  # each checkpoint loads
        info = await b.aget_thread("shared")
        assert info.checkpoint_count == len(history)
        # the thread's row follows the newest checkpoint, whichever run stored it last
        head = history[0]
        assert info.head_checkpoint_id == head.config["configurable"]["checkpoint_id"]
        assert info.message_count == len(head.values["messages"])


class _TurnAfterRowCopy:
    """A connection of `copy_thread` that lets another process's turn run once the thread's row is
    copied and before its checkpoints and items are (as it happens when a run writes meanwhile)."""

    def __init__(self, db: Any, copy_row_sql: str, turn: Any) -> None:
        self._db, self._copy_row_sql, self._turn = db, copy_row_sql, turn
        self.started: asyncio.Task[Any] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    async def execute(self, sql: str, params: Any = ()) -> Any:
        done = await self._db.execute(sql, params)
        if sql == self._copy_row_sql and self.started is None:
            self.started = asyncio.create_task(self._turn())
            await asyncio.sleep(0.5)  # the turn commits now, unless the copy holds it back
        return done


# (SQLite runs one write transaction at a time: a copy there is one moment of its thread by construction.)
@pytest.mark.parametrize("store_url", ["postgres", "mysql"], indirect=True)
async def test_a_copy_taken_while_the_thread_is_written_is_one_moment_of_it(store_url: str) -> None:
    """`copy_thread` while another process runs a turn on the source: the copy's statements each read
    what was committed when they ran (READ COMMITTED), so it got the thread's row from before the turn
    and its items from after; its next item number then fell behind its items, and the copy's own
    turns failed on a duplicate item number."""
    async with open_checkpointer(store_url) as copier, open_checkpointer(store_url) as writer:
        graph = tool_loop(writer)
        await _converse(graph, "source", 1)
        interleaved: list[_TurnAfterRowCopy] = []
        opened = copier._write

        @asynccontextmanager
        async def write() -> AsyncIterator[Any]:
            async with opened() as db:
                turn = lambda: graph.ainvoke({"messages": [human(1, "meanwhile")]}, cfg("source"))  # noqa: E731
                interleaved.append(_TurnAfterRowCopy(db, copier.q.COPY_THREAD_ROW, turn))
                yield interleaved[-1]

        copier._write = write
        await copier.acopy_thread("source", "copy")
        copier._write = opened
        await interleaved[0].started
        for turn in range(2, 5):
            await graph.ainvoke({"messages": [human(turn, f"copy says {turn}")]}, cfg("copy"))
        state = await graph.aget_state(cfg("copy"))
        history = [s async for s in graph.aget_state_history(cfg("copy"))]
        info = await writer.aget_thread("copy")
        assert (info.message_count, info.checkpoint_count) == (len(state.values["messages"]), len(history))


class _WriteAfterFirstStatement:
    """A read's connection that lets another process store a write once the read's first statement ran."""

    def __init__(self, db: Any, write: Any) -> None:
        self._db, self._write = db, write

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    async def _then(self, answer: Any) -> Any:
        if self._write is not None:
            write, self._write = self._write, None
            await write()
        return answer

    async def fetchone(self, sql: str, params: Any = ()) -> Any:
        return await self._then(await self._db.fetchone(sql, params))

    async def fetchall(self, sql: str, params: Any = ()) -> Any:
        return await self._then(await self._db.fetchall(sql, params))


@pytest.mark.parametrize("read", ["get_tuple", "list"])
async def test_a_read_while_another_process_writes_new_items(store_url: str, read: str) -> None:
    """The statements of one read each read what is committed when they run: another process's write
    for the checkpoint, with a new message, committed between the read's first statement (the thread's
    item count) and the one reading the writes, made the read fail with CorruptRowError ("item range
    [5, 5] is not within the thread's items 1..4"), though nothing was corrupt."""
    async with open_checkpointer(store_url) as reader, open_checkpointer(store_url) as writer:
        await _converse(tool_loop(writer), "t", 1)
        head = await writer.aget_tuple(cfg("t"))
        late = HumanMessage("written meanwhile", id="late")
        opened = reader._read
        pending = [lambda: writer.aput_writes(head.config, [("messages", [late])], "late-task")]

        @asynccontextmanager
        async def read_with_a_write() -> AsyncIterator[Any]:
            async with opened() as db:
                yield _WriteAfterFirstStatement(db, pending.pop() if pending else None)

        reader._read = read_with_a_write
        if read == "get_tuple":
            got = await reader.aget_tuple(head.config)
        else:
            got = [t async for t in reader.alist(cfg("t"), limit=1)][0]
        assert not pending  # the write went in between
        assert got.config == head.config
        assert [w[2] for w in got.pending_writes if w[0] == "late-task"] in ([], [[late]])
