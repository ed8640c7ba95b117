"""`orecast db sweep` on real stores: a dry run changes nothing, the default TTL from the environment or
--ttl, --limit, --json, the record `db stats` shows, and bad input as one line and exit code 2."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orecast.checkpoint import open_checkpointer
from orecast.cli.main import app
from orecast.service.db import open_db
from orecast.service.runs.records import RunRepo
from tests.checkpoint.conftest import ph, raw_sql, stored_time
from tests.checkpoint.graphs import human, tool_loop
from tests.cli import inprocess
from tests.cli.test_ops_cli import _count, _signal_when, _start, write

ROOT = Path(__file__).resolve().parents[2]

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, list(args), env=env)


def idle_since(url: str, thread_id: str, days: int) -> None:
    when = stored_time(url, datetime.now(UTC) - timedelta(days=days))
    raw_sql(url, f"UPDATE threads SET updated_at = {ph(url)} WHERE thread_id = {ph(url)}", (when, thread_id))


def threads(url: str) -> list[str]:
    return sorted(r[0] if isinstance(r[0], str) else r[0].decode() for r in raw_sql(url, "SELECT thread_id FROM threads"))


def test_db_sweep(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORECAST_THREAD_TTL", raising=False)
    for name, days in (("a-old", 100), ("b-old", 95), ("c-new", 1)):
        write(store_url, name, 1)
        idle_since(store_url, name, days)

    nothing = run("db", "sweep", "--database-url", store_url, "--json")
    assert nothing.exit_code == 0, nothing.output
    assert json.loads(nothing.output)["expired"] == 0, "no default TTL, no thread of its own: nothing expires"

    dry = run("db", "sweep", "--database-url", store_url, "--dry-run", "--json", env={"ORECAST_THREAD_TTL": "90d"})
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.output)["deleted"] == ["a-old", "b-old"]
    assert threads(store_url) == ["a-old", "b-old", "c-new"]

    one = run("db", "sweep", "--database-url", store_url, "--limit", "1", env={"ORECAST_THREAD_TTL": "90d"})
    assert one.exit_code == 0, one.output
    assert "expired 1 threads: 1 deleted" in one.output and "a-old" in one.output
    assert threads(store_url) == ["b-old", "c-new"]

    pruned = run("db", "sweep", "--database-url", store_url, "--ttl", "30d", "--strategy", "keep_latest", "--json")
    assert pruned.exit_code == 0, pruned.output
    assert json.loads(pruned.output)["pruned"] == ["b-old"]
    assert threads(store_url) == ["b-old", "c-new"]

    stats = run("db", "stats", "--database-url", store_url, "--json")
    assert stats.exit_code == 0, stats.output
    sweep = json.loads(stats.output)["sweep"]
    assert sweep["last_status"] == "ok" and sweep["threads_pruned"] == 1 and sweep["last_success_at"]
    text = run("db", "stats", "--database-url", store_url)
    assert "last sweep" in text.output

    async def status() -> dict:
        from orecast.checkpoint.sweep import sweep_status

        async with open_checkpointer(store_url) as saver:
            return await sweep_status(saver)

    assert asyncio.run(status())["threads_pruned"] == 1


def test_db_sweep_bad_input(sqlite_url: str) -> None:
    for args, env in (
        (["--ttl", "soon"], None),
        (["--strategy", "archive"], None),
        ([], {"ORECAST_THREAD_TTL": "-3d"}),
    ):
        result = run("db", "sweep", "--database-url", sqlite_url, *args, env=env)
        assert result.exit_code == 2, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1, result.output


def test_db_sweep_creates_no_store(tmp_path: Path) -> None:
    """A sweep has nothing to expire where there is no store: it says so instead of creating one."""
    missing = tmp_path / "none.sqlite3"
    for args in (["--dry-run"], ["--ttl", "1d"]):
        result = inprocess.orecast(["db", "sweep", "--database-url", f"sqlite:///{missing}", *args])
        assert result.returncode == 1, result.stdout
        assert result.stderr.startswith("error: no orecast store at ") and len(result.stderr.splitlines()) == 1
        assert not missing.exists()


HOSTILE = "[/oops] \x1b[2J"


def test_sweep_and_stats_print_stored_text_as_text(sqlite_url: str) -> None:
    """A thread id or a recorded sweep error with markup crashed the output (after the sweep was done)."""
    write(sqlite_url, HOSTILE, 1)
    idle_since(sqlite_url, HOSTILE, 100)
    result = inprocess.orecast(["db", "sweep", "--database-url", sqlite_url, "--ttl", "90d"], env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "deleted  [/oops] \\x1b[2J" in result.stdout and "\x1b" not in result.stdout
    raw_sql(sqlite_url, "UPDATE sweep_runs SET status = 'error', error = ?", ("ValueError: [/bad] \x1b[2J",))
    stats = inprocess.orecast(["db", "stats", "--database-url", sqlite_url], env={"COLUMNS": "200"})
    assert stats.returncode == 0, stats.stderr
    assert "error: ValueError: [/bad] \\x1b[2J" in stats.stdout and "\x1b" not in stats.stdout


def test_serve_refuses_bad_ttl_settings_in_one_line(sqlite_url: str) -> None:
    for name, value in (("ORECAST_THREAD_TTL", "soon"), ("ORECAST_SWEEP_INTERVAL", "often"),
                        ("ORECAST_THREAD_TTL_STRATEGY", "archive")):
        result = run("serve", "--database-url", sqlite_url, env={name: value})
        assert result.exit_code == 2, result.output
        assert result.output.strip().splitlines() == [result.output.strip()] and name in result.output


def test_two_sweep_processes_at_once_share_the_threads_without_overlap(store_url: str) -> None:
    """Two `orecast db sweep` processes on one store. Whether they overlap in time depends on the machine
    (on PostgreSQL they do: without the claim's row locks this fails); test_sweep.py's two-connection
    test pins the locking on every run."""
    async def seed() -> None:
        async with open_checkpointer(store_url) as saver:
            graph = tool_loop(saver)
            for n in range(40):
                await graph.ainvoke({"messages": [human(0)]}, {"configurable": {"thread_id": f"t{n:02d}"}})

    asyncio.run(seed())
    raw_sql(store_url, f"UPDATE threads SET updated_at = {ph(store_url)}",
            (stored_time(store_url, datetime.now(UTC) - timedelta(days=10)),))
    command = [sys.executable, "-m", "orecast.cli.main", "db", "sweep", "--database-url", store_url,
               "--ttl", "7d", "--json"]
    env = {"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
    procs = [subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    first, second = (json.loads(out)["deleted"] for out, _err in outputs)
    assert not set(first) & set(second)
    assert sorted(first + second) == [f"t{n:02d}" for n in range(40)]
    assert threads(store_url) == []


def _with_a_service_run(url: str, thread_id: str) -> None:
    """A run of the service on the thread, as `POST /threads/{id}/runs` admits it; the thread idle again."""

    async def go() -> None:
        async with open_checkpointer(url) as saver, open_db(url) as db:
            repo = RunRepo(db, saver.thread_status_statement, saver.thread_lock_statement)
            await repo.admit(run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id="orecast", metadata={},
                             kwargs={}, strategy="enqueue", owner=None)
            await saver.aupdate_thread(thread_id, status="idle")

    asyncio.run(go())


def _service_runs(url: str) -> int:
    return raw_sql(url, "SELECT count(*) FROM service_runs")[0][0]


def test_a_dry_run_keeps_the_service_runs_and_a_sweep_deletes_them_for_any_id(store_url: str) -> None:
    """`db sweep --dry-run` deleted the service's runs of every thread it would expire; on MariaDB the
    real sweep failed with a traceback (collations) on a thread id with an emoji."""
    ids = ["a-old", "铁矿 🚢/β"]
    for thread_id in ids:
        write(store_url, thread_id, 1)
        _with_a_service_run(store_url, thread_id)
        idle_since(store_url, thread_id, 100)
    assert _service_runs(store_url) == 2

    dry = run("db", "sweep", "--dry-run", "--ttl", "90d", "--json", "--database-url", store_url)
    assert dry.exit_code == 0, dry.output
    assert sorted(json.loads(dry.output)["deleted"]) == sorted(ids)
    assert _service_runs(store_url) == 2 and threads(store_url) == sorted(ids)

    swept = run("db", "sweep", "--ttl", "90d", "--json", "--database-url", store_url)
    assert swept.exit_code == 0, swept.output
    assert _service_runs(store_url) == 0 and threads(store_url) == []


def test_threads_delete_and_db_archive_take_the_service_runs_along(store_url: str, tmp_path: Path) -> None:
    """They left the runs (and crons) of the threads they deleted: `GET /threads/{id}/runs` of a thread
    gone, and a cron firing on it; `DELETE /threads/{id}` and `db sweep` always took them along."""
    for thread_id in ("kept", "铁矿 🚢", "old"):
        write(store_url, thread_id, 1)
        _with_a_service_run(store_url, thread_id)
    idle_since(store_url, "old", 100)

    deleted = run("threads", "delete", "铁矿 🚢", "--yes", "--database-url", store_url)
    assert deleted.exit_code == 0, deleted.output
    archived = run("db", "archive", "--idle-for", "90d", "--out", str(tmp_path), "--database-url", store_url)
    assert archived.exit_code == 0, archived.output
    assert threads(store_url) == ["kept"]
    assert raw_sql(store_url, "SELECT thread_id FROM service_runs") == [("kept",)]


def _idle_threads_with_service_runs(url: str, count: int) -> None:
    """`count` idle threads (copies of one conversation), each with a run of the service."""

    async def go() -> None:
        async with open_checkpointer(url) as saver, open_db(url) as db:
            await tool_loop(saver).ainvoke({"messages": [human(0)]}, {"configurable": {"thread_id": "t0000"}})
            repo = RunRepo(db, saver.thread_status_statement, saver.thread_lock_statement)
            for n in range(count):
                thread_id = f"t{n:04d}"
                if n:
                    await saver.acopy_thread("t0000", thread_id)
                await repo.admit(run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id="orecast",
                                 metadata={}, kwargs={}, strategy="enqueue", owner=None)
                await saver.aupdate_thread(thread_id, status="idle")

    asyncio.run(go())
    raw_sql(url, f"UPDATE threads SET updated_at = {ph(url)}",
            (stored_time(url, datetime.now(UTC) - timedelta(days=100)),))


@pytest.mark.slow
@pytest.mark.parametrize(("store_url", "count"), [("sqlite", 300), ("postgres", 100)], indirect=["store_url"])
def test_ctrl_c_mid_sweep_says_how_far_and_leaves_no_runs_of_deleted_threads(store_url: str, count: int) -> None:
    """Ctrl-C exited 130 without a word, and the service runs of the threads it had deleted stayed (they
    were deleted after the whole sweep, in transactions of their own). `count`: enough batches of 20
    threads to be stopped between two."""
    _idle_threads_with_service_runs(store_url, count)
    process = _start("db", "sweep", "--ttl", "90d", "--database-url", store_url)
    err = _signal_when(process, lambda: _count(store_url, "threads") < count, signal.SIGINT)
    assert process.returncode == 130, f"the sweep was not interrupted: {err}"
    line = re.fullmatch(r"interrupted after (\d+) threads expired; run the same command again to expire the rest\n", err)
    assert line, err
    left = _count(store_url, "threads")
    assert count - left == int(line[1]) and left > 0
    orphans = "SELECT count(*) FROM service_runs WHERE thread_id NOT IN (SELECT thread_id FROM threads)"
    assert raw_sql(store_url, orphans) == [(0,)]
    assert _count(store_url, "service_runs") == left

    again = run("db", "sweep", "--ttl", "90d", "--json", "--database-url", store_url)
    assert again.exit_code == 0, again.output
    assert len(json.loads(again.output)["deleted"]) == left
    assert _count(store_url, "threads") == 0 and _count(store_url, "service_runs") == 0


def test_sweep_lines_are_not_wrapped_at_the_terminal_width(sqlite_url: str) -> None:
    """In a pipe (80 columns) the summary was cut in two lines, and so was a long thread id."""
    thread_id = "铁矿石价格预测-" + "长" * 40
    write(sqlite_url, thread_id, 1)
    idle_since(sqlite_url, thread_id, 100)
    result = inprocess.orecast(["db", "sweep", "--ttl", "90d", "--database-url", sqlite_url], env={"COLUMNS": "40"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "default TTL: 90d (delete)",
        f"  deleted  {thread_id}",
        "expired 1 threads: 1 deleted, 0 pruned to their latest checkpoint; 5 checkpoints",
    ]
