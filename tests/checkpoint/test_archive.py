"""Thread archives: export → import across dialects gives back the identical history, and the thread
carries on; a bad archive is refused before anything is written."""

from __future__ import annotations

import contextlib
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.archive import ArchiveError, export_thread, import_archive, read_archive
from tests.checkpoint.graphs import human, subgraph_parent, tool_loop
from tests.checkpoint.test_import import GRAPHS, carry_on_alike, cfg, history, populate, snapshot

# Each dialect once as a source and once as a target, never the same on both sides: a dialect's own
# round trip is the `saver` tests below (and `tests/cli/test_ops_cli.py` imports every dialect into SQLite).
PAIRS = [("sqlite", "postgres"), ("postgres", "sqlite"), ("sqlite", "mysql"), ("mysql", "postgres")]


def empty_store(request: pytest.FixtureRequest, stores: contextlib.ExitStack, dialect: str, name: str) -> str:
    """The URL of a clean store of `dialect` (migrated, no rows: tests/store_pool.py)."""
    if dialect == "sqlite":
        return request.getfixturevalue("_sqlite_template").copy_to(request.getfixturevalue("tmp_path") / f"{name}.sqlite3")
    pool = request.getfixturevalue("_mysql_pool" if dialect == "mysql" else "_pg_schemas")
    return stores.enter_context(pool.lend())


@pytest.fixture(params=PAIRS, ids=["-".join(p) for p in PAIRS])
def source_and_target(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    source, target = request.param
    with contextlib.ExitStack() as stores:
        yield empty_store(request, stores, source, "source"), empty_store(request, stores, target, "target")


async def test_round_trip_gives_identical_history_and_the_thread_carries_on(
    source_and_target: tuple[str, str], tmp_path: Path
) -> None:
    store_url, target_url = source_and_target
    async with open_checkpointer(store_url) as source, open_checkpointer(target_url) as target:
        await populate(source)
        await source.aupdate_thread("loop", title="铁矿石 outlook", metadata={"user_id": "u1"})
        for thread_id, build in GRAPHS.items():
            path = tmp_path / f"{thread_id}.jsonl.gz"
            exported = await export_thread(source, thread_id, path)
            archive = read_archive(target, path)
            assert archive.summary.counts() == exported.counts()
            await import_archive(target, archive)
            assert await history(build(target), thread_id) == await history(build(source), thread_id), thread_id
            a, b = await source.aget_thread(thread_id), await target.aget_thread(thread_id)
            assert (a.metadata, a.status, a.message_count, a.preview, a.checkpoint_count) == (
                b.metadata, b.status, b.message_count, b.preview, b.checkpoint_count
            ), thread_id
            assert await source.atool_calls(thread_id) == await target.atool_calls(thread_id)
        assert exported.namespaces == [""]
        sub = await export_thread(source, "sub", tmp_path / "sub.gz")
        assert len(sub.namespaces) == 2  # the subgraph's namespace travels too
        assert (await target.aget_thread("loop")).title == "铁矿石 outlook"
        assert (await target.aget_thread("approve")).status == "interrupted"
        sub_a = await subgraph_parent(source).aget_state(cfg("sub"), subgraphs=True)
        sub_b = await subgraph_parent(target).aget_state(cfg("sub"), subgraphs=True)
        assert snapshot(sub_a.tasks[0].state) == snapshot(sub_b.tasks[0].state)

        await carry_on_alike(source, target)
        assert (await target.aget_thread("approve")).status == "idle"


async def test_archive_is_linear_and_imports_under_a_new_id(saver, tmp_path: Path) -> None:
    loop = tool_loop(saver)
    for turn in range(20):
        await loop.ainvoke({"messages": [human(turn)]}, cfg("long"))
    summary = await export_thread(saver, "long", tmp_path / "long.gz")
    assert summary.items == 80  # each of the 80 messages once, not once per checkpoint
    with gzip.open(tmp_path / "long.gz", "rt") as f:
        header = json.loads(f.readline())
    assert header["format"] == "orecast-thread" and header["version"] == 2 and header["thread_id"] == "long"
    await import_archive(saver, read_archive(saver, tmp_path / "long.gz"), thread_id="long-copy")
    renamed = [s[0] async for s in _values(saver, "long-copy")]
    assert renamed == [s[0] async for s in _values(saver, "long")]


async def _values(saver: Any, thread_id: str):
    async for snap in tool_loop(saver).aget_state_history(cfg(thread_id)):
        yield snap.values, snap.next, snap.created_at


async def test_existing_thread_is_refused_unless_replaced(saver, tmp_path: Path) -> None:
    loop = tool_loop(saver)
    await loop.ainvoke({"messages": [human(0)]}, cfg("a"))
    await export_thread(saver, "a", tmp_path / "a.gz")
    await loop.ainvoke({"messages": [human(1)]}, cfg("a"))
    before = await history(loop, "a")
    archive = read_archive(saver, tmp_path / "a.gz")
    with pytest.raises(ArchiveError, match="already exists"):
        await import_archive(saver, archive)
    assert await history(loop, "a") == before
    await import_archive(saver, archive, replace=True)
    after = await history(loop, "a")
    assert len(after) < len(before) and after == before[-len(after):]
    assert [t.thread_id for t in await saver.asearch_threads(limit=10)] == ["a"]  # no staging thread left


def _rewrite(path: Path, out: Path, change) -> None:
    with gzip.open(path, "rt") as f:
        lines = [json.loads(line) for line in f]
    lines = change(lines)
    with gzip.open(out, "wt") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda lines: lines[:-3], "cut short"),
        (lambda lines: [{**lines[0], "version": 3}, *lines[1:]], "archive version 3"),
        (lambda lines: [{**lines[0], "format": "other"}, *lines[1:]], "not an orecast thread archive"),
        (lambda lines: [lines[0], *[ln for ln in lines[1:] if ln.get("type") != "item"]], "corrupt|do not add up"),
        (lambda lines: [ln if ln.get("type") != "item" else {**ln, "value": {"$t": "nope"}} for ln in lines], "corrupt"),
    ],
)
async def test_bad_archive_is_refused_and_nothing_written(saver, tmp_path: Path, change, message: str) -> None:
    await tool_loop(saver).ainvoke({"messages": [human(0)]}, cfg("x"))
    await export_thread(saver, "x", tmp_path / "x.gz")
    _rewrite(tmp_path / "x.gz", tmp_path / "bad.gz", change)
    with pytest.raises(ArchiveError, match=message):
        await import_archive(saver, read_archive(saver, tmp_path / "bad.gz"), thread_id="y")
    assert await saver.aget_thread("y") is None


def test_not_gzip_or_truncated_bytes_are_archive_errors(saver, tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("hello")
    with pytest.raises(ArchiveError, match="not a complete"):
        read_archive(saver, tmp_path / "plain.txt")
    data = gzip.compress(b'{"format": "orecast-thread", "version": 1, "thread_id": "t"}\n' * 50)
    (tmp_path / "cut.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ArchiveError):
        read_archive(saver, tmp_path / "cut.gz")
    with pytest.raises(ArchiveError, match="cannot read"):
        read_archive(saver, tmp_path / "missing.gz")
