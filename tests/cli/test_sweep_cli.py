"""`orecast db sweep` on real stores: a dry run changes nothing, the default TTL from the environment or
--ttl, --limit, --json, the record `db stats` shows, and bad input as one line and exit code 2."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest
from typer.testing import CliRunner

from orecast.checkpoint import open_checkpointer
from orecast.cli.main import app
from tests.checkpoint.conftest import ph, raw_sql, stored_time
from tests.cli.test_ops_cli import write

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


def test_serve_refuses_bad_ttl_settings_in_one_line(sqlite_url: str) -> None:
    for name, value in (("ORECAST_THREAD_TTL", "soon"), ("ORECAST_SWEEP_INTERVAL", "often"),
                        ("ORECAST_THREAD_TTL_STRATEGY", "archive")):
        result = run("serve", "--database-url", sqlite_url, env={name: value})
        assert result.exit_code == 2, result.output
        assert result.output.strip().splitlines() == [result.output.strip()] and name in result.output
