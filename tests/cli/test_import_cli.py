"""`orecast db import` on real databases written by the official savers."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from typer.testing import CliRunner

from orecast.checkpoint import open_checkpointer
from orecast.cli.main import app
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import human, tool_loop
from tests.checkpoint.test_import import (
    GRAPHS,
    history,
    official,
    official_schema,
    populate,
    row_counts,
    trap_graph,
)
from tests.cli import inprocess

runner = CliRunner()


@pytest.fixture
def official_pg_url(postgres_url: str) -> str:
    return official_schema(postgres_url)


def run(*args: str):
    return runner.invoke(app, list(args))


def cfg(thread_id: str) -> dict:
    return {"configurable": {"thread_id": thread_id}}


def write_official(fmt: str, location: str) -> None:
    async def go() -> None:
        async with official(fmt, location) as saver:
            await populate(saver)

    asyncio.run(go())


def import_args(fmt: str, location: str, target: str, *extra: str) -> list[str]:
    return ["db", "import", "--from", location, "--format", fmt, "--database-url", target, *extra]


def test_import_sqlite_into_postgres_then_nothing_left(tmp_path, fresh_postgres_url: str) -> None:
    source = str(tmp_path / "official.sqlite3")
    write_official("langgraph-sqlite", source)
    first = run(*import_args("langgraph-sqlite", source, fresh_postgres_url))
    assert first.exit_code == 0, first.output
    assert "threads      imported 5, already there 0, refused 0" in first.stdout
    assert "bytes        source " in first.stdout
    again = run(*import_args("langgraph-sqlite", source, fresh_postgres_url, "--json"))
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert (report["threads"], report["checkpoints"], report["writes"]) == (0, 0, 0)
    assert report["threads_skipped"] == 5 and report["checkpoints_skipped"] > 0
    assert report["target_bytes_after"] == report["target_bytes_before"] > 0

    async def compare() -> None:
        async with official("langgraph-sqlite", source) as theirs, open_checkpointer(fresh_postgres_url) as ours:
            for thread_id, build in GRAPHS.items():
                assert await history(build(ours), thread_id) == await history(build(theirs), thread_id)

    asyncio.run(compare())


def test_import_postgres_threads_into_sqlite(official_pg_url: str, tmp_path) -> None:
    write_official("langgraph-postgres", official_pg_url)
    target = f"sqlite:///{tmp_path / 'orecast.sqlite3'}"
    out = run(*import_args("langgraph-postgres", official_pg_url, target, "--thread", "loop", "--thread", "sub", "--json"))
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["threads"] == 2 and report["refused"] == [] and report["source_bytes"] > 0
    listed = json.loads(run("threads", "list", "--database-url", target, "--json").stdout)
    assert sorted(t["thread_id"] for t in listed["threads"]) == ["loop", "sub"]
    missing = run(*import_args("langgraph-postgres", official_pg_url, target, "--thread", "nope"))
    assert missing.exit_code == 1 and "error: no thread 'nope' in the source" in missing.stderr


def test_dry_run_writes_nothing(tmp_path) -> None:
    source = str(tmp_path / "official.sqlite3")
    write_official("langgraph-sqlite", source)
    target = f"sqlite:///{tmp_path / 'orecast.sqlite3'}"
    out = run(*import_args("langgraph-sqlite", source, target, "--dry-run"))
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("dry run: ") and "threads      would import 5" in out.stdout
    assert not (tmp_path / "orecast.sqlite3").exists(), "a dry run creates no store"
    assert run("db", "migrate", "--database-url", target).exit_code == 0
    again = run(*import_args("langgraph-sqlite", source, target, "--dry-run"))
    assert again.exit_code == 0 and "threads      would import 5" in again.stdout
    assert raw_sql(target, "SELECT count(*) FROM threads") == [(0,)]
    assert raw_sql(target, "SELECT count(*) FROM checkpoints") == [(0,)]


def test_dry_run_creates_no_store_on_any_database(new_store_url: str, tmp_path) -> None:
    """The dry run created and migrated the target store, though it promises to write nothing."""
    store_url = new_store_url
    source = str(tmp_path / "official.sqlite3")
    write_official("langgraph-sqlite", source)
    out = inprocess.orecast(import_args("langgraph-sqlite", source, store_url, "--dry-run"))
    assert out.returncode == 0, out.stderr
    assert f"-> {store_url.split(':')[0]} " in out.stdout and "threads      would import 5" in out.stdout
    listed = inprocess.orecast(["threads", "list", "--database-url", store_url])
    assert listed.returncode == 1 and listed.stderr.startswith("error: no orecast store at ")


def test_pickled_thread_is_refused_in_one_line(tmp_path) -> None:
    source = str(tmp_path / "official.sqlite3")
    marker = tmp_path / "unpickled"

    async def go() -> None:
        async with official("langgraph-sqlite", source, JsonPlusSerializer(pickle_fallback=True)) as saver:
            await tool_loop(saver).ainvoke({"messages": [human(0)]}, cfg("clean"))
            await trap_graph(saver, str(marker)).ainvoke({"messages": [human(0)]}, cfg("trap"))

    asyncio.run(go())
    target = f"sqlite:///{tmp_path / 'orecast.sqlite3'}"
    out = run(*import_args("langgraph-sqlite", source, target))
    assert out.exit_code == 1
    assert "threads      imported 1, already there 0, refused 1" in out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: thread 'trap': checkpoint ")
    assert "is a pickle; orecast never unpickles" in lines[0]
    assert not marker.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "langgraph-mysql"], "unknown format 'langgraph-mysql'"),
        (["--from", "{target}"], "must be another database"),
        (["--from", "{missing}"], "no such SQLite file"),
        (["--from", "{ours}"], "is not a langgraph-checkpoint-sqlite database"),
        (["--format", "langgraph-postgres"], "needs a postgresql:// URL"),
    ],
)
def test_bad_input_is_one_line(args: list[str], message: str, tmp_path) -> None:
    ours = str(tmp_path / "ours.sqlite3")
    asyncio.run(_open_and_close(f"sqlite:///{ours}"))
    names = {"target": str(tmp_path / "target.sqlite3"), "missing": str(tmp_path / "nope.db"), "ours": ours}
    options = {"--from": str(tmp_path / "official.sqlite3"), "--format": "langgraph-sqlite"}
    Path(options["--from"]).touch()
    options.update(dict(zip(args[::2], [a.format(**names) for a in args[1::2]], strict=True)))
    out = run("db", "import", *[x for kv in options.items() for x in kv], "--database-url", f"sqlite:///{names['target']}")
    assert out.exit_code == 2, out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], out.stderr


def test_a_folder_or_a_device_as_the_source_is_said_for_what_it_is(tmp_path) -> None:
    """All three were "no such SQLite file": the folder names the SQLite file it holds (the one to give)."""
    folder, empty = tmp_path / "langgraph", tmp_path / "empty"
    folder.mkdir()
    empty.mkdir()
    write_official("langgraph-sqlite", str(folder / "checkpoints.sqlite"))
    (folder / "notes.txt").write_text("not a database")
    target = f"sqlite:///{tmp_path / 'target.sqlite3'}"
    for source, line in (
        (str(folder), f"error: {folder} is a folder, not a SQLite file: name one of the SQLite files in it: "
                      f"{folder / 'checkpoints.sqlite'}"),
        (f"sqlite:///{empty}", f"error: {empty} is a folder, not a SQLite file: name the file the official "
                               "SqliteSaver wrote (it holds no SQLite file)"),
        ("/dev/zero", "error: /dev/zero is a device, pipe or socket, not a SQLite file"),
    ):
        result = inprocess.orecast(import_args("langgraph-sqlite", source, target))
        assert (result.returncode, result.stderr) == (2, line + "\n")
    assert not (tmp_path / "target.sqlite3").exists()


async def _open_and_close(url: str) -> None:
    async with open_checkpointer(url):
        pass


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_kill_9_or_ctrl_c_mid_import_then_run_again(tmp_path, sig: signal.Signals) -> None:
    """Ctrl-C exited 130 without a word; it now says how far the import got and how to finish it."""
    source = str(tmp_path / "official.sqlite3")

    async def go() -> None:
        async with official("langgraph-sqlite", source) as saver:
            graph = tool_loop(saver)
            for thread in range(6):
                for turn in range(6):
                    await graph.ainvoke({"messages": [human(turn)]}, cfg(f"t{thread:02d}"))

    asyncio.run(go())
    total = raw_sql(f"sqlite:///{source}", "SELECT count(*) FROM checkpoints")[0][0]
    target = f"sqlite:///{tmp_path / 'orecast.sqlite3'}"
    command = [sys.executable, "-m", "orecast.cli.main", *import_args("langgraph-sqlite", source, target)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and process.poll() is None:
        try:
            stored = raw_sql(target, "SELECT count(*) FROM checkpoints")[0][0]
        except Exception:  # the store is still being created
            stored = 0
        if stored >= 10:
            process.send_signal(sig)
            break
        time.sleep(0.02)
    _out, err = process.communicate(timeout=60)
    if sig == signal.SIGKILL:
        assert process.returncode == -signal.SIGKILL, "the import finished before it could be killed"
    else:
        assert process.returncode == 130, f"the import was not interrupted: {err}"
        assert re.fullmatch(
            r"interrupted after \d+ of \d+ checkpoints; run the same command again to import the rest\n", err
        ), err
    stored = raw_sql(target, "SELECT count(*) FROM checkpoints")[0][0]
    assert 0 < stored < total

    again = run(*import_args("langgraph-sqlite", source, target, "--json"))
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert report["checkpoints_skipped"] == stored
    assert report["checkpoints"] + report["checkpoints_skipped"] == total

    clean = f"sqlite:///{tmp_path / 'clean.sqlite3'}"
    assert run(*import_args("langgraph-sqlite", source, clean)).exit_code == 0
    assert row_counts(target) == row_counts(clean)
