"""`orecast threads export/import`, `db archive/restore`, `db prune` and `db stats` on real stores."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.archive import archive_name, archive_path
from orecast.checkpoint.urls import parse_url
from orecast.cli.main import app
from tests.checkpoint.conftest import ph, raw_sql, stored_time
from tests.checkpoint.graphs import TOOL_NAME, approval_graph, human, tool_loop
from tests.cli import inprocess

runner = CliRunner()
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


def run(*args: str):
    return runner.invoke(app, list(args))


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def write(url: str, thread_id: str, turns: int) -> None:
    async def go() -> None:
        async with open_checkpointer(url) as saver:
            graph = tool_loop(saver)
            for turn in range(turns):
                await graph.ainvoke({"messages": [human(turn)]}, cfg(thread_id))

    asyncio.run(go())


def audit_calls(url: str, calls: list[tuple[str, str, float]], thread_id: str = "s-1") -> None:
    """Tool calls recorded in the audit as the agent's middleware records them: (tool, status, ms)."""

    async def go() -> None:
        async with open_checkpointer(url) as saver:
            for n, (tool, status, ms) in enumerate(calls):
                audit_id = await saver.abegin_tool_call(thread_id=thread_id, call_id=f"c{n}", tool=tool, args={"n": n})
                await saver.aend_tool_call(audit_id, status=status, duration_ms=ms, error="bad" if status == "error" else None)

    asyncio.run(go())


def history(url: str, thread_id: str) -> list[Any]:
    async def go() -> list[Any]:
        async with open_checkpointer(url) as saver:
            return [
                (s.values, s.next, s.metadata, s.created_at, s.parent_config)
                async for s in tool_loop(saver).aget_state_history(cfg(thread_id))
            ]

    return asyncio.run(go())


def test_export_then_import_elsewhere(store_url: str, tmp_path: Path) -> None:
    write(store_url, "t-1", 3)
    out = tmp_path / "t-1.gz"
    exported = run("threads", "export", "t-1", "--out", str(out), "--database-url", store_url)
    assert exported.exit_code == 0, exported.output
    assert exported.stdout.startswith("exported t-1: 15 checkpoints")
    target = f"sqlite:///{tmp_path / 'other.sqlite3'}"
    imported = run("threads", "import", str(out), "--database-url", target)
    assert imported.exit_code == 0, imported.output
    assert history(target, "t-1") == history(store_url, "t-1")

    again = run("threads", "import", str(out), "--database-url", store_url)
    assert again.exit_code == 1
    assert again.stderr.strip() == (
        "error: thread 't-1' already exists; pass --replace to overwrite it, or --thread-id"
    )
    renamed = run("threads", "import", str(out), "--thread-id", "t-copy", "--database-url", store_url)
    assert renamed.exit_code == 0, renamed.output
    assert len(history(store_url, "t-copy")) == 15
    write(store_url, "t-1", 1)
    replaced = run("threads", "import", str(out), "--replace", "--database-url", store_url)
    assert replaced.exit_code == 0, replaced.output
    assert history(store_url, "t-1") == history(target, "t-1")


def test_export_into_a_folder_names_the_file_as_db_archive_does(sqlite_url: str, tmp_path: Path) -> None:
    """`--out backups/` wrote a file named `backups`, and `--out` an existing folder was an error."""
    write(sqlite_url, "铁矿 🚢/1", 1)
    for out in (f"{tmp_path / 'new'}/", str(tmp_path)):
        exported = run("threads", "export", "铁矿 🚢/1", "--out", out, "--database-url", sqlite_url)
        assert exported.exit_code == 0, exported.output
        path = Path(out) / archive_name("铁矿 🚢/1")
        assert path.is_file()
        assert exported.stdout.rstrip().endswith(f"-> {path} ({path.stat().st_size / 1024:.1f} KiB)")
    target = f"sqlite:///{tmp_path / 'other.sqlite3'}"
    restored = run("db", "restore", str(tmp_path / "new"), "--database-url", target)
    assert restored.exit_code == 0 and restored.stdout == "restored 1 of 1 threads\n", restored.output
    assert history(target, "铁矿 🚢/1") == history(sqlite_url, "铁矿 🚢/1")


def test_bad_archives_are_one_line_and_write_nothing(sqlite_url: str, tmp_path: Path) -> None:
    write(sqlite_url, "t", 1)
    good = tmp_path / "t.gz"
    assert run("threads", "export", "t", "--out", str(good), "--database-url", sqlite_url).exit_code == 0
    lines = gzip.decompress(good.read_bytes()).decode().splitlines()
    newer = tmp_path / "newer.gz"
    newer.write_bytes(gzip.compress("\n".join([json.dumps({**json.loads(lines[0]), "version": 9}), *lines[1:]]).encode()))
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress("\n".join(lines[:-1]).encode()))
    garbage = tmp_path / "garbage.gz"
    garbage.write_bytes(b"\x1f\x8b\x08\x00not really gzip")
    target = f"sqlite:///{tmp_path / 'empty.sqlite3'}"
    for path, message in (
        (newer, "is archive version 9; this orecast reads version 2"),
        (cut, "is cut short"),
        (garbage, "is not a complete orecast thread archive"),
        (tmp_path / "missing.gz", "cannot read"),
    ):
        result = run("threads", "import", str(path), "--thread-id", "new", "--database-url", target)
        assert result.exit_code == 1, result.output
        assert result.stderr.count("\n") == 1 and message in result.stderr and "Traceback" not in result.output
    assert run("threads", "list", "--database-url", target, "--json").stdout.startswith('{"total": 0')
    missing = run("threads", "export", "nope", "--out", str(tmp_path / "x.gz"), "--database-url", sqlite_url)
    assert missing.exit_code == 1 and missing.stderr.strip() == "error: no thread 'nope'"
    assert not (tmp_path / "x.gz").exists()


def test_a_pipe_or_a_device_given_as_an_archive_is_said_for_what_it_is(sqlite_url: str, tmp_path: Path) -> None:
    """A FIFO given to `threads import` (or found by `db restore` in a folder) blocked forever: it was
    opened, which waits for a writer. Neither is opened now: one line, exit code 1."""
    fifo = archive_path(tmp_path, "t")
    os.mkfifo(fifo)
    for args, stderr in (
        (["threads", "import", str(fifo)], f"error: {fifo} is a pipe, not an orecast thread archive\n"),
        (["threads", "import", "/dev/zero"], "error: /dev/zero is a device, not an orecast thread archive\n"),
        (["db", "restore", str(tmp_path)], f"error: {fifo} is a pipe, not an orecast thread archive\n"),
    ):
        process = _start(*args, "--database-url", sqlite_url)
        try:
            _out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail(f"{args} still reading after 60 s")
        assert process.returncode == 1, err
        assert err == stderr


def test_an_archive_edited_into_bad_channel_versions_is_refused(sqlite_url: str, tmp_path: Path) -> None:
    """It was imported, and every later run of the thread failed (`int() argument must be … not 'dict'`)."""
    write(sqlite_url, "t", 1)
    before = history(sqlite_url, "t")
    good = tmp_path / "t.gz"
    assert inprocess.orecast(["threads", "export", "t", "--out", str(good), "--database-url", sqlite_url]).returncode == 0
    records = [json.loads(line) for line in gzip.decompress(good.read_bytes()).decode().splitlines()]
    first = next(r for r in records if r.get("type") == "checkpoint")
    first["checkpoint"]["channel_versions"]["messages"] = {"edited": 1}
    edited = tmp_path / "edited.gz"
    edited.write_bytes(gzip.compress("\n".join(json.dumps(r) for r in records).encode()))
    result = inprocess.orecast(["threads", "import", str(edited), "--thread-id", "t", "--replace",
                                "--database-url", sqlite_url])
    assert result.returncode == 1
    assert result.stderr == f"error: {edited}: checkpoint {first['id']!r} is malformed\n"
    assert history(sqlite_url, "t") == before, "the thread it would have replaced is kept"


def test_archive_idle_threads_then_restore(store_url: str, tmp_path: Path) -> None:
    write(store_url, "old", 2)
    write(store_url, "recent", 1)
    before = history(store_url, "old")
    raw_sql(store_url, f"UPDATE threads SET updated_at = {ph(store_url)} WHERE thread_id = 'old'",
            (stored_time(store_url, LONG_AGO),))
    folder = tmp_path / "archive"
    dry = run("db", "archive", "--idle-for", "90d", "--out", str(folder), "--dry-run", "--database-url", store_url, "--json")
    assert dry.exit_code == 0, dry.output
    assert [t["thread_id"] for t in json.loads(dry.stdout)["threads"]] == ["old"]
    assert not folder.exists()
    done = run("db", "archive", "--idle-for", "90d", "--out", str(folder), "--database-url", store_url)
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("archived 1 of 1 idle threads")
    assert [p.name for p in folder.iterdir()] == ["old.orecast-thread.jsonl.gz"]
    listed = json.loads(run("threads", "list", "--database-url", store_url, "--json").stdout)
    assert [t["thread_id"] for t in listed["threads"]] == ["recent"]

    restored = run("db", "restore", str(folder), "--database-url", store_url)
    assert restored.exit_code == 0, restored.output
    assert history(store_url, "old") == before
    twice = run("db", "restore", str(folder), "--database-url", store_url)
    assert twice.exit_code == 0 and twice.stdout == "restored 1 of 1 threads (1 there already)\n", twice.output
    write(store_url, "old", 1)  # used since: no longer the archive's thread
    used = run("db", "restore", str(folder), "--database-url", store_url)
    assert used.exit_code == 1 and "already exists" in used.stderr
    bad = run("db", "archive", "--idle-for", "soon", "--out", str(folder), "--database-url", store_url)
    assert bad.exit_code == 2 and "not a duration" in bad.stderr


def test_archive_never_writes_over_another_threads_archive(sqlite_url: str, tmp_path: Path) -> None:
    """`a/b` and `a_b-<crc32 of a/b>` have the same file name: the second archive replaced the first,
    whose thread was already deleted from the store, and it was lost."""
    twin = "a_b-" + format(zlib.crc32(b"a/b"), "08x")
    for thread_id, turns in (("a/b", 1), (twin, 2)):
        write(sqlite_url, thread_id, turns)
    before = {t: history(sqlite_url, t) for t in ("a/b", twin)}
    raw_sql(sqlite_url, "UPDATE threads SET updated_at = ?", (stored_time(sqlite_url, LONG_AGO),))
    folder = tmp_path / "archive"
    done = inprocess.orecast(["db", "archive", "--idle-for", "90d", "--out", str(folder), "--database-url", sqlite_url])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("archived 2 of 2 idle threads")
    assert len(list(folder.iterdir())) == 2

    restored = inprocess.orecast(["db", "restore", str(folder), "--database-url", sqlite_url])
    assert restored.returncode == 0, restored.stderr
    assert {t: history(sqlite_url, t) for t in ("a/b", twin)} == before

    # Archived again after the restore: each thread's own file is replaced, nothing is added.
    raw_sql(sqlite_url, "UPDATE threads SET updated_at = ?", (stored_time(sqlite_url, LONG_AGO),))
    again = inprocess.orecast(["db", "archive", "--idle-for", "90d", "--out", str(folder), "--database-url", sqlite_url])
    assert again.returncode == 0, again.stderr
    assert len(list(folder.iterdir())) == 2


def test_archive_of_a_new_thread_under_an_archived_ones_id_keeps_both(sqlite_url: str, tmp_path: Path) -> None:
    """A thread archived (so deleted from the store), then a new conversation under the same id (a fixed
    id, as a user's), archived too: its archive replaced the first, and the first conversation was lost."""
    folder = tmp_path / "archive"
    histories = []
    for turns in (1, 2):
        write(sqlite_url, "same-id", turns)
        histories.append(history(sqlite_url, "same-id"))
        raw_sql(sqlite_url, "UPDATE threads SET updated_at = ?", (stored_time(sqlite_url, LONG_AGO),))
        done = inprocess.orecast(["db", "archive", "--idle-for", "90d", "--out", str(folder), "--database-url", sqlite_url])
        assert done.returncode == 0 and done.stdout.startswith("archived 1 of 1"), done.stderr
    files = [folder / "same-id.orecast-thread.jsonl.gz", folder / "same-id-2.orecast-thread.jsonl.gz"]
    assert sorted(folder.iterdir()) == sorted(files)
    for file, expected in zip(files, histories, strict=True):
        imported = inprocess.orecast(["threads", "import", str(file), "--replace", "--database-url", sqlite_url])
        assert imported.returncode == 0, imported.stderr
        assert history(sqlite_url, "same-id") == expected
    # `threads export` into that folder (the store holds the second conversation again) replaces that
    # one's archive, not the first's.
    exported = inprocess.orecast(["threads", "export", "same-id", "--out", str(folder), "--database-url", sqlite_url])
    assert exported.returncode == 0 and f"-> {files[1]} " in exported.stdout, exported.stdout
    assert sorted(folder.iterdir()) == sorted(files)
    first = inprocess.orecast(["threads", "import", str(files[0]), "--replace", "--database-url", sqlite_url])
    assert first.returncode == 0 and history(sqlite_url, "same-id") == histories[0], first.stderr


@pytest.mark.parametrize("duration", ["99999999999d", "1000000d", "100000000000000s"])
def test_a_duration_too_long_is_a_usage_error(sqlite_url: str, tmp_path: Path, duration: str) -> None:
    """An OverflowError traceback before: too long for timedelta, or reaching back before the year 1."""
    write(sqlite_url, "t", 1)
    for args in (
        ["db", "archive", "--idle-for", duration, "--out", str(tmp_path / "a"), "--dry-run"],
        ["db", "prune", "--older-than", duration, "--dry-run"],
        ["db", "sweep", "--ttl", duration, "--dry-run"],
        ["audit", "tools", "--since", duration],
    ):
        result = inprocess.orecast([*args, "--database-url", sqlite_url])
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr == f"error: {duration!r} is longer than 365000d (about 1000 years)\n", args
    kept = inprocess.orecast(["db", "archive", "--idle-for", "365000d", "--out", str(tmp_path / "a"), "--dry-run",
                              "--database-url", sqlite_url])
    assert kept.returncode == 0, kept.stderr


def test_prune_dry_run_then_prune(store_url: str) -> None:
    write(store_url, "p", 4)

    async def interrupt() -> None:
        async with open_checkpointer(store_url) as saver:
            await approval_graph(saver).ainvoke({"messages": [human(0)]}, cfg("q"))

    asyncio.run(interrupt())
    dry = run("db", "prune", "--keep-last", "2", "--dry-run", "--json", "--database-url", store_url)
    assert dry.exit_code == 0, dry.output
    report = json.loads(dry.stdout)
    assert report["dry_run"] and report["threads"] == 2
    assert report["totals"]["checkpoints_deleted"] == 20 - 2 and report["totals"]["bytes_freed"] > 0
    assert len(history(store_url, "p")) == 20
    done = run("db", "prune", "--keep-last", "2", "--thread", "p", "--database-url", store_url)
    assert done.exit_code == 0, done.output
    assert "deleted 18 checkpoints" in done.stdout
    assert len(history(store_url, "p")) == 2
    latest = run("db", "prune", "--keep-latest", "--older-than", "1d", "--json", "--database-url", store_url)
    assert json.loads(latest.stdout)["totals"]["checkpoints_deleted"] == 0  # nothing is a day old
    for args, message in (
        (["--keep-latest", "--keep-last", "3"], "exclude each other"),
        ([], "say what to delete"),
        (["--older-than", "yesterday"], "not a duration"),
    ):
        result = run("db", "prune", *args, "--database-url", store_url)
        assert result.exit_code == 2 and message in result.stderr, result.output
    missing = run("db", "prune", "--keep-latest", "--thread", "nope", "--database-url", store_url)
    assert missing.exit_code == 1 and missing.stderr.strip() == "error: no thread 'nope'"


def test_stats(store_url: str) -> None:
    write(store_url, "s-1", 3)
    write(store_url, "s-2", 1)
    raw_sql(store_url, f"UPDATE threads SET updated_at = {ph(store_url)} WHERE thread_id = 's-2'",
            (stored_time(store_url, LONG_AGO),))
    result = run("db", "stats", "--json", "--database-url", store_url)
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["threads"] == 2 and stats["messages"] == 16
    assert stats["active_threads"] == {"24h": 1, "7d": 1}
    assert stats["turns"] == {"24h": 4, "7d": 4, "total": 4}
    assert stats["tools"] == [] and stats["recent_failures"] == []  # the graph has no audited tool calls
    audit_calls(store_url, [(TOOL_NAME, "ok", 10.0), (TOOL_NAME, "ok", 30.0), (TOOL_NAME, "error", 20.0)])
    stats = json.loads(run("db", "stats", "--json", "--database-url", store_url).stdout)
    assert stats["tools"] == [{"tool": TOOL_NAME, "calls": 3, "errors": 1, "pending": 0, "p50_ms": 20.0,
                               "p95_ms": 29.0, "error_rate": 0.3333}]
    (failure,) = stats["recent_failures"]
    assert (failure["tool"], failure["status"], failure["error"], failure["thread_id"]) == (TOOL_NAME, "error", "bad", "s-1")
    assert stats["tables"]["items"]["rows"] == 16 and stats["tables"]["checkpoints"]["bytes"] > 0
    today = stats["growth"][-1]
    assert len(stats["growth"]) == 14 and today["day"] == datetime.now(UTC).date().isoformat()
    assert today["checkpoints"] == stats["tables"]["checkpoints"]["rows"] and today["turns"] == 4
    table = run("db", "stats", "--database-url", store_url)
    assert table.exit_code == 0 and TOOL_NAME in table.stdout and "active threads" in table.stdout
    assert "growth" in table.stdout and today["day"] in table.stdout
    assert "p95 ms" in table.stdout and "recent failed tool calls" in table.stdout


# -- Ctrl-C and kill -9 in the middle of a long command: a real process, a real signal -------------------


def _start(*args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "orecast.cli.main", *args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _signal_when(process: subprocess.Popen[str], ready: Callable[[], bool], sig: signal.Signals) -> str:
    """Send `sig` once `ready()`; the command's stderr."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if ready():
                process.send_signal(sig)
                break
        except Exception:  # the store or folder is still being created
            pass
        time.sleep(0.01)
    _out, err = process.communicate(timeout=60)
    return err


def _count(url: str, table: str) -> int:
    return raw_sql(url, f"SELECT count(*) FROM {table}")[0][0]


def _archived(store_url: str, folder: Path, threads: int, turns: int) -> dict[str, list[Any]]:
    """`threads` idle threads of `turns` turns archived into `folder`; their histories."""
    ids = [f"t{n:02d}" for n in range(threads)]
    for thread_id in ids:
        write(store_url, thread_id, turns)
    before = {thread_id: history(store_url, thread_id) for thread_id in ids}
    raw_sql(store_url, f"UPDATE threads SET updated_at = {ph(store_url)}", (stored_time(store_url, LONG_AGO),))
    done = run("db", "archive", "--idle-for", "90d", "--out", str(folder), "--database-url", store_url)
    assert done.exit_code == 0, done.output
    return before


@pytest.mark.slow
@pytest.mark.parametrize("store_url", ["sqlite", "postgres"], indirect=True)
def test_ctrl_c_mid_restore_says_how_far_and_running_it_again_finishes(store_url: str, tmp_path: Path) -> None:
    """Ctrl-C once exited 130 without a word, and running the same restore again refused every thread
    restored before it ("already exists")."""
    folder = tmp_path / "archive"
    before = _archived(store_url, folder, threads=12, turns=8)
    process = _start("db", "restore", str(folder), "--database-url", store_url)
    err = _signal_when(process, lambda: _count(store_url, "threads") >= 2, signal.SIGINT)
    assert process.returncode == 130, f"the restore was not interrupted: {err}"
    line = re.fullmatch(r"interrupted after (\d+) of 12 threads; run the same command again to restore the rest\n", err)
    assert line, err
    # what it was restoring when stopped is gone again: only whole threads are left
    assert _count(store_url, "threads") == int(line[1])

    again = run("db", "restore", str(folder), "--database-url", store_url)
    assert again.exit_code == 0, again.output
    assert again.stdout == f"restored 12 of 12 threads ({line[1]} there already)\n"
    assert {thread_id: history(store_url, thread_id) for thread_id in before} == before


@pytest.mark.slow
@pytest.mark.parametrize("store_url", ["sqlite", "postgres"], indirect=True)
def test_two_restores_of_one_archive_at_once_take_turns(store_url: str, tmp_path: Path) -> None:
    """Both wrote the same thread, each over the other's rows: both said they restored it, or one failed
    with "corrupt stored row" reading the other's half-written rows (and a stopped one deleted it)."""
    folder = tmp_path / "archive"
    before = _archived(store_url, folder, threads=1, turns=60)
    processes = [_start("db", "restore", str(folder), "--database-url", store_url, "--json") for _ in range(2)]
    outputs = [process.communicate(timeout=300) for process in processes]
    for process, (_out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
        waiting = f"waiting for another restore or archive of {parse_url(store_url).redacted()} to finish…\n"
        assert err in ("", waiting), err
    # the one that waited found the thread there already
    assert sorted(json.loads(out)[0]["already"] for out, _err in outputs) == [False, True]
    assert history(store_url, "t00") == before["t00"]
    assert [row[0] for row in raw_sql(store_url, "SELECT thread_id FROM threads")] == ["t00"]


@pytest.mark.slow
def test_two_archives_into_one_folder_at_once_take_turns(sqlite_url: str, tmp_path: Path) -> None:
    """Both wrote the same `.part` files: threads kept with "CRC check failed" or "No such file", exit 1
    (and a garbled file could be renamed over the checked one of a thread already deleted)."""
    ids = [f"t{n:02d}" for n in range(6)]
    for thread_id in ids:
        write(sqlite_url, thread_id, 12)
    before = {thread_id: history(sqlite_url, thread_id) for thread_id in ids}
    raw_sql(sqlite_url, "UPDATE threads SET updated_at = ?", (stored_time(sqlite_url, LONG_AGO),))
    folder = tmp_path / "archive"
    command = ("db", "archive", "--idle-for", "90d", "--out", str(folder), "--database-url", sqlite_url, "--json")
    processes = [_start(*command) for _ in range(2)]
    outputs = [process.communicate(timeout=300) for process in processes]
    for process, (_out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
    archived = sorted(row["thread_id"] for out, _err in outputs for row in json.loads(out)["threads"])
    assert archived == ids and _count(sqlite_url, "threads") == 0
    assert run("db", "restore", str(folder), "--database-url", sqlite_url).exit_code == 0
    assert {thread_id: history(sqlite_url, thread_id) for thread_id in ids} == before


@pytest.mark.slow
def test_ctrl_c_mid_archive_says_how_far_and_running_it_again_finishes(sqlite_url: str, tmp_path: Path) -> None:
    ids = [f"t{n:02d}" for n in range(12)]
    for thread_id in ids:
        write(sqlite_url, thread_id, 8)
    raw_sql(sqlite_url, "UPDATE threads SET updated_at = ?", (stored_time(sqlite_url, LONG_AGO),))
    folder = tmp_path / "archive"
    process = _start("db", "archive", "--idle-for", "90d", "--out", str(folder), "--database-url", sqlite_url)
    err = _signal_when(process, lambda: len(list(folder.glob("*.gz"))) >= 2, signal.SIGINT)
    assert process.returncode == 130, f"the archive was not interrupted: {err}"
    line = re.fullmatch(r"interrupted after (\d+) of 12 threads; run the same command again to archive the rest\n", err)
    assert line, err
    # every thread is still in the store or in a complete file (or both: stopped before its delete)
    left = {row[0] for row in raw_sql(sqlite_url, "SELECT thread_id FROM threads")}
    files = {p.name.split(".")[0] for p in folder.iterdir()}
    assert left | files == set(ids) and len(files) >= int(line[1])
    assert all(p.name.endswith(".orecast-thread.jsonl.gz") for p in folder.iterdir())

    again = run("db", "archive", "--idle-for", "90d", "--out", str(folder), "--database-url", sqlite_url)
    assert again.exit_code == 0, again.output
    assert _count(sqlite_url, "threads") == 0 and len(list(folder.iterdir())) == 12


@pytest.mark.slow
@pytest.mark.parametrize("store_url", ["sqlite", "mysql"], indirect=True)
def test_kill_9_mid_restore_then_running_it_again_replaces_the_partial_thread(store_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "archive"
    before = _archived(store_url, folder, threads=1, turns=60)
    process = _start("db", "restore", str(folder), "--database-url", store_url)
    _signal_when(process, lambda: _count(store_url, "checkpoints") >= 20, signal.SIGKILL)
    assert process.returncode == -signal.SIGKILL, "the restore finished before it could be killed"
    assert 0 < _count(store_url, "checkpoints") < 60 * 4

    again = run("db", "restore", str(folder), "--database-url", store_url)
    assert again.exit_code == 0, again.output
    assert again.stdout == "restored 1 of 1 threads\n"
    assert history(store_url, "t00") == before["t00"]
    assert [row[0] for row in raw_sql(store_url, "SELECT thread_id FROM threads")] == ["t00"]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_ctrl_c_or_kill_9_mid_thread_import_then_running_it_again_finishes(
    sig: signal.Signals, sqlite_url: str, tmp_path: Path
) -> None:
    """Ctrl-C exited 130 without a word; after a kill -9 the half-written thread made the second run
    refuse ("already exists; pass --replace")."""
    source = f"sqlite:///{tmp_path / 'source.sqlite3'}"
    write(source, "big", 60)
    file = tmp_path / "big.orecast-thread.jsonl.gz"
    assert run("threads", "export", "big", "--out", str(file), "--database-url", source).exit_code == 0
    assert run("db", "migrate", "--database-url", sqlite_url).exit_code == 0
    process = _start("threads", "import", str(file), "--database-url", sqlite_url)
    err = _signal_when(process, lambda: _count(sqlite_url, "checkpoints") >= 20, sig)
    if sig == signal.SIGINT:
        assert process.returncode == 130, f"the import was not interrupted: {err}"
        expected = r"interrupted after \d+ of \d+ checkpoints; nothing was imported; run the same command again\n"
        assert re.fullmatch(expected, err), err
        assert _count(sqlite_url, "threads") == 0 and _count(sqlite_url, "checkpoints") == 0
    else:
        assert process.returncode == -signal.SIGKILL, "the import finished before it could be killed"
        assert 0 < _count(sqlite_url, "checkpoints") < _count(source, "checkpoints")

    again = run("threads", "import", str(file), "--database-url", sqlite_url)
    assert again.exit_code == 0, again.output
    assert history(sqlite_url, "big") == history(source, "big")
    assert [row[0] for row in raw_sql(sqlite_url, "SELECT thread_id FROM threads")] == ["big"]


def test_restore_refuses_an_empty_thread_the_service_made_under_that_id(sqlite_url: str, tmp_path: Path) -> None:
    """A thread without checkpoints (POST /threads) is not a restore cut short: it is not written over."""
    write(sqlite_url, "t", 1)
    assert run("threads", "export", "t", "--out", f"{tmp_path}/", "--database-url", sqlite_url).exit_code == 0
    assert run("threads", "delete", "t", "--yes", "--database-url", sqlite_url).exit_code == 0

    async def create_empty() -> None:
        async with open_checkpointer(sqlite_url) as saver:
            await saver.aupdate_thread("t", metadata={"owner": "alice"}, status="idle")

    asyncio.run(create_empty())
    refused = run("db", "restore", str(tmp_path), "--database-url", sqlite_url)
    assert refused.exit_code == 1 and "thread 't' already exists" in refused.stderr, refused.output
    assert raw_sql(sqlite_url, "SELECT count(*) FROM checkpoints") == [(0,)]


def test_an_archive_of_one_endless_line_is_refused_in_one_line(sqlite_url: str, tmp_path: Path) -> None:
    """A gzip bomb (a few MB unpacking to gigabytes of one line) was read whole: all the memory, then a
    MemoryError traceback. Here 65 Mi characters, past the longest line read."""
    bomb = tmp_path / f"bomb{archive_path(tmp_path, 'x').name[1:]}"
    with gzip.open(bomb, "wb", compresslevel=1) as file:
        for _ in range(65):
            file.write(b"a" * 2**20)
    for args in (["threads", "import", str(bomb)], ["db", "restore", str(tmp_path)]):
        result = inprocess.orecast([*args, "--database-url", sqlite_url])
        assert result.returncode == 1, result.stderr
        assert result.stderr == (f"error: {bomb}: line 1 is longer than 64 Mi characters: not an orecast "
                                 "thread archive\n")
