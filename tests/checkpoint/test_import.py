"""Importing threads written by LangGraph's official savers: same history, and they carry on here.

Real graphs run first on `AsyncSqliteSaver` / `AsyncPostgresSaver`, then their database is imported
into an orecast store and every snapshot is compared with what the official saver answers.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import pickle
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

import aiosqlite
import ormsgpack
import psycopg
import pytest
from langchain_core.messages import AnyMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde import _msgpack as lg_msgpack
from langgraph.checkpoint.serde import jsonplus
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import TASKS
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send
from psycopg.rows import dict_row
from pydantic import BaseModel
from typing_extensions import TypedDict

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.importer import import_threads, open_source
from orecast.checkpoint.importer.decoding import RefusedValue, SafeDecoder
from tests.checkpoint.conftest import dialect_of, raw_sql
from tests.checkpoint.graphs import approval_graph, delta_graph, human, subgraph_parent, tool_loop
from tests.conftest import new_schema_url

GRAPHS = {"loop": tool_loop, "fork": tool_loop, "approve": approval_graph, "sub": subgraph_parent, "delta": delta_graph}


def cfg(thread_id: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, **extra}}


@contextlib.asynccontextmanager
async def official(fmt: str, location: str, serde: Any = None) -> AsyncIterator[Any]:
    """The official async saver of `fmt` on `location` (a file path or a PostgreSQL URL)."""
    if fmt == "langgraph-sqlite":
        async with aiosqlite.connect(location) as conn:
            saver = AsyncSqliteSaver(conn, serde=serde)
            await saver.setup()
            yield saver
    else:
        async with await psycopg.AsyncConnection.connect(
            location, autocommit=True, prepare_threshold=0, row_factory=dict_row
        ) as conn:
            saver = AsyncPostgresSaver(conn, serde=serde)
            await saver.setup()
            yield saver


async def populate(saver: Any) -> None:
    """Every shape a thread takes: a tool loop, a fork, an interrupt, a subgraph, DeltaChannels."""
    loop = tool_loop(saver)
    for turn in range(3):
        await loop.ainvoke({"messages": [human(turn)]}, cfg("loop"))
    for turn in range(2):
        await loop.ainvoke({"messages": [human(turn)]}, cfg("fork"))
    history = [s async for s in loop.aget_state_history(cfg("fork"))]
    first_turn_done = history[len(history) // 2].config
    await loop.ainvoke({"messages": [human(7, "a branch")]}, first_turn_done)
    await approval_graph(saver).ainvoke({"messages": [human(0)]}, cfg("approve"))
    await subgraph_parent(saver).ainvoke({"messages": [human(0)]}, cfg("sub"))
    delta = delta_graph(saver)
    for step in range(5):
        await delta.ainvoke({"messages": [human(step)], "log": [{"input": step}]}, cfg("delta"))


def snapshot(snap: Any) -> tuple[Any, ...]:
    return (
        snap.values,
        snap.next,
        snap.config,
        snap.metadata,
        snap.created_at,
        snap.parent_config,
        tuple((t.id, t.name, t.path, t.error, t.interrupts, t.result) for t in snap.tasks),
        snap.interrupts,
    )


async def history(graph: Any, thread_id: str) -> list[tuple[Any, ...]]:
    return [snapshot(s) async for s in graph.aget_state_history(cfg(thread_id))]


@pytest.fixture(params=["langgraph-sqlite", "langgraph-postgres"])
def source_format(request) -> str:
    return request.param


def official_schema(postgres_url: str) -> str:
    """A PostgreSQL schema of its own for an official saver (its tables are named like ours)."""
    return new_schema_url(postgres_url, "official")


@pytest.fixture
def source_location(source_format: str, tmp_path, request) -> str:
    """The official saver's database: a SQLite file, or a PostgreSQL schema."""
    if source_format == "langgraph-sqlite":
        return str(tmp_path / "official.sqlite3")
    return official_schema(request.getfixturevalue("postgres_url"))


async def test_imported_threads_answer_as_the_official_saver(
    source_format: str, source_location: str, store_url: str
) -> None:
    async with official(source_format, source_location) as theirs:
        await populate(theirs)
        async with open_source(source_format, source_location) as source, open_checkpointer(store_url) as ours:
            report = await import_threads(source, ours)
            assert report.refused == []
            assert report.threads == 5 and report.checkpoints_skipped == 0
            assert report.checkpoints == len(await raw_checkpoint_ids(source_format, source_location))
            for thread_id, build in GRAPHS.items():
                assert await history(build(ours), thread_id) == await history(build(theirs), thread_id), thread_id
            sub_ours = await subgraph_parent(ours).aget_state(cfg("sub"), subgraphs=True)
            sub_theirs = await subgraph_parent(theirs).aget_state(cfg("sub"), subgraphs=True)
            assert snapshot(sub_ours.tasks[0].state) == snapshot(sub_theirs.tasks[0].state)
            assert (await ours.aget_thread("approve")).status == "interrupted"

            await carry_on_alike(ours, theirs)
            assert (await ours.aget_thread("approve")).status == "idle"


async def raw_checkpoint_ids(fmt: str, location: str) -> list[Any]:
    url = location if fmt == "langgraph-postgres" else f"sqlite:///{location}"
    return raw_sql(url, "SELECT checkpoint_id FROM checkpoints")


# -- values the importer must not execute ---------------------------------------------------------


class Trap:
    """Unpickled, it creates the file `path`: proof that something was unpickled."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


class TrapState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    thing: Any


def trap_graph(checkpointer: Any, marker: str):
    def keep(state: TrapState) -> dict[str, Any]:
        return {"thing": Trap(marker)}

    builder = StateGraph(TrapState)
    builder.add_node("keep", keep)
    builder.add_edge(START, "keep")
    builder.add_edge("keep", END)
    return builder.compile(checkpointer=checkpointer)


def test_decoder_refuses_pickle_without_unpickling(tmp_path) -> None:
    marker = tmp_path / "unpickled"
    with pytest.raises(RefusedValue, match="pickle; orecast never unpickles"):
        SafeDecoder().loads_typed("pickle", pickle.dumps(Trap(str(marker))))
    with pytest.raises(RefusedValue, match="only LangGraph's msgpack"):
        SafeDecoder().loads_typed("json", b"{}")
    assert not marker.exists()


async def test_pickled_threads_are_refused_by_name(
    source_format: str, source_location: str, sqlite_url: str, tmp_path
) -> None:
    marker = tmp_path / "unpickled"
    async with official(source_format, source_location, JsonPlusSerializer(pickle_fallback=True)) as theirs:
        await tool_loop(theirs).ainvoke({"messages": [human(0)]}, cfg("clean"))
        await trap_graph(theirs, str(marker)).ainvoke({"messages": [human(0)]}, cfg("trap"))
        assert not marker.exists()
        async with open_source(source_format, source_location) as source, open_checkpointer(sqlite_url) as ours:
            report = await import_threads(source, ours)
            assert report.threads == 1 and len(report.refused) == 1
            message = report.refused[0]
            assert message.startswith("thread 'trap': checkpoint 1") and "is a pickle" in message, message
            assert await ours.aget_thread("trap") is None
            assert await history(tool_loop(ours), "clean") == await history(tool_loop(theirs), "clean")
    assert not marker.exists()


class Grade(BaseModel):
    ore: str
    fe: float


async def test_foreign_classes_are_kept_as_bytes_and_never_built_on_import(
    source_format: str, source_location: str, sqlite_url: str, tmp_path
) -> None:
    marker = tmp_path / "executed"
    evil = ormsgpack.Ext(
        jsonplus.EXT_CONSTRUCTOR_SINGLE_ARG, ormsgpack.packb(("os", "system", f"touch {marker}"))
    )
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"evil": evil, "grade": Grade(ore="PB fines", fe=61.5), "n": 3}
    checkpoint["channel_versions"] = {"evil": "1", "grade": "1", "n": "1"}
    async with official(source_format, source_location) as theirs:
        await theirs.aput(cfg("crafted", checkpoint_ns=""), checkpoint, {"source": "input", "step": -1}, checkpoint["channel_versions"])
        async with open_source(source_format, source_location) as source, open_checkpointer(sqlite_url) as ours:
            report = await import_threads(source, ours)
            assert (report.threads, report.checkpoints, report.refused) == (1, 1, [])
            assert not marker.exists()
            values = (await ours.aget_tuple(cfg("crafted"))).checkpoint["channel_values"]
            # A row naming a function comes back as its data and is never called.
            assert values["evil"] == f"touch {marker}"
            assert values["n"] == 3
            # A data class of an imported module comes back as itself in LangGraph's default mode
            # (docs/checkpoint.md, "Which types come back as themselves"); in strict mode only once allowed.
            strict = lg_msgpack.STRICT_MSGPACK_ENABLED
            expected = {"ore": "PB fines", "fe": 61.5} if strict else Grade(ore="PB fines", fe=61.5)
            assert values["grade"] == expected
            allowed = ours.with_allowlist([Grade])
            grade = (await allowed.aget_tuple(cfg("crafted"))).checkpoint["channel_values"]["grade"]
            assert grade == Grade(ore="PB fines", fe=61.5)
    assert not marker.exists()


# -- dry run and resume ---------------------------------------------------------------------------


async def test_dry_run_writes_nothing_and_counts_what_it_would(
    source_location: str, source_format: str, sqlite_url: str
) -> None:
    async with official(source_format, source_location) as theirs:
        await populate(theirs)
    async with open_source(source_format, source_location) as source, open_checkpointer(sqlite_url) as ours:
        dry = await import_threads(source, ours, dry_run=True)
        assert await ours.acount_threads() == 0
        assert raw_sql(sqlite_url, "SELECT count(*) FROM checkpoints") == [(0,)]
        real = await import_threads(source, ours)
    assert dry.dry_run and not real.dry_run
    counts = ("threads", "checkpoints", "writes", "checkpoints_skipped", "writes_skipped")
    assert [getattr(dry, c) for c in counts] == [getattr(real, c) for c in counts]
    assert dry.checkpoints > 0 and dry.writes > 0


KILLED_IMPORT = """
import asyncio, os, signal, sys
from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.importer import import_threads, open_source
from orecast.checkpoint.importer.decoding import RefusedValue, SafeDecoder

async def main(source_path, target, kill_at):
    async with open_source("langgraph-sqlite", source_path) as source, open_checkpointer(target) as saver:
        put_writes, calls = saver.aput_writes, 0
        async def dying(*args, **kwargs):
            nonlocal calls
            calls += 1
            if calls == kill_at:  # its checkpoint is stored, these writes are not
                os.kill(os.getpid(), signal.SIGKILL)
            return await put_writes(*args, **kwargs)
        saver.aput_writes = dying
        await import_threads(source, saver)

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


TABLES = ("threads", "checkpoints", "channel_values", "items", "writes")


def row_counts(url: str) -> dict[str, int]:
    return {table: raw_sql(url, f"SELECT count(*) FROM {table}")[0][0] for table in TABLES}


@pytest.mark.slow
async def test_killed_import_resumes_without_duplicates(store_url: str, tmp_path) -> None:
    source_path = str(tmp_path / "official.sqlite3")
    async with official("langgraph-sqlite", source_path) as theirs:
        await populate(theirs)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_IMPORT, source_path, store_url, "40"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    partial = row_counts(store_url)
    assert 0 < partial["checkpoints"]

    clean_url = f"sqlite:///{tmp_path / 'clean.sqlite3'}"
    async with open_source("langgraph-sqlite", source_path) as source:
        async with open_checkpointer(store_url) as ours:
            resumed = await import_threads(source, ours)
        async with open_checkpointer(clean_url) as clean:
            whole = await import_threads(source, clean)
    assert resumed.checkpoints_skipped == partial["checkpoints"]
    assert resumed.checkpoints + resumed.checkpoints_skipped == whole.checkpoints
    assert resumed.writes + resumed.writes_skipped == whole.writes
    # PostgreSQL and MySQL keep small channel values in their checkpoint's row: no value rows to compare.
    skipped = {"channel_values"} if dialect_of(store_url) != "sqlite" else set()
    assert {t: n for t, n in row_counts(store_url).items() if t not in skipped} == {
        t: n for t, n in row_counts(clean_url).items() if t not in skipped
    }
    async with official("langgraph-sqlite", source_path) as theirs, open_checkpointer(store_url) as ours:
        for thread_id, build in GRAPHS.items():
            assert await history(build(ours), thread_id) == await history(build(theirs), thread_id), thread_id
    async with open_checkpointer(store_url) as ours, open_checkpointer(clean_url) as clean:
        for thread_id in GRAPHS:
            a, b = await ours.aget_thread(thread_id), await clean.aget_thread(thread_id)
            counters = ("status", "message_count", "checkpoint_count", "preview", "head_checkpoint_id")
            assert [getattr(a, c) for c in counters] == [getattr(b, c) for c in counters], thread_id


async def test_postgres_format_3_pending_sends_are_read_as_the_official_saver_reads_them(
    official_pg_url_for_v3: str, sqlite_url: str
) -> None:
    """Before format 4 a checkpoint's pending `Send`s were its parent's writes; the official saver
    moves them into the `__pregel_tasks` channel when it reads such a checkpoint, and so does the import."""
    parent, child = empty_checkpoint(), empty_checkpoint()
    parent["v"] = child["v"] = 3
    child["id"] = str(uuid.UUID(int=uuid.UUID(parent["id"]).int + 1))
    parent["channel_values"] = child["channel_values"] = {"topic": "ore"}
    parent["channel_versions"] = child["channel_versions"] = {"topic": "00000000000000000000000000000001.0.5"}
    async with official("langgraph-postgres", official_pg_url_for_v3) as theirs:
        parent_config = await theirs.aput(cfg("v3", checkpoint_ns=""), parent, {"step": 0}, parent["channel_versions"])
        await theirs.aput_writes(parent_config, [(TASKS, Send("fetch", {"n": 1})), (TASKS, Send("fetch", {"n": 2}))], "task-1")
        await theirs.aput(parent_config, child, {"step": 1}, {})
        expected = await theirs.aget_tuple(cfg("v3"))
        assert expected.checkpoint["channel_values"][TASKS] == [Send("fetch", {"n": 1}), Send("fetch", {"n": 2})]
        async with open_source("langgraph-postgres", official_pg_url_for_v3) as source, open_checkpointer(sqlite_url) as ours:
            report = await import_threads(source, ours)
            assert (report.checkpoints, report.writes, report.refused) == (2, 2, [])
            got = await ours.aget_tuple(cfg("v3"))
    assert got.checkpoint["channel_values"] == expected.checkpoint["channel_values"]
    assert got.checkpoint["channel_versions"] == expected.checkpoint["channel_versions"]
    assert got.parent_config == expected.parent_config


@pytest.fixture
def official_pg_url_for_v3(postgres_url: str) -> str:
    return official_schema(postgres_url)


async def carry_on_alike(first, second) -> None:
    """Both savers carry on the same way: resume the interrupts, fork from an old checkpoint, add a
    turn; every graph's state is then equal on both."""
    for saver in (first, second):
        await approval_graph(saver).ainvoke(Command(resume="yes"), cfg("approve"))
        await subgraph_parent(saver).ainvoke(Command(resume="fine"), cfg("sub"))
        loop = tool_loop(saver)
        oldest_answer = [s async for s in loop.aget_state_history(cfg("loop"))][-6].config
        await loop.ainvoke({"messages": [human(9, "from the past")]}, oldest_answer)
        await delta_graph(saver).ainvoke({"messages": [human(5)], "log": []}, cfg("delta"))
    for thread_id, build in GRAPHS.items():
        a, b = await build(first).aget_state(cfg(thread_id)), await build(second).aget_state(cfg(thread_id))
        assert (a.values, a.next) == (b.values, b.next), thread_id
