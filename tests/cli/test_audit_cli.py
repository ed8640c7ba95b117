"""`orecast audit tools` and `orecast audit summary` on real stores: filters, --json, tables, bad input."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from orecast.checkpoint import open_checkpointer
from orecast.cli.main import app
from tests.cli import inprocess

runner = CliRunner()
HOSTILE = "[/oops] \x1b[2J\x1b]0;pwned\x07\x9b31m"


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "250"})


def seed(url: str) -> None:
    """Calls as the agent's middleware records them: two threads, three tools, every kind of outcome."""

    async def go() -> None:
        async with open_checkpointer(url) as saver:
            async def call(thread: str, call_id: str, tool: str, status: str, ms: float, **extra: Any) -> None:
                started = extra.pop("started_at", None)
                audit_id = await saver.abegin_tool_call(
                    thread_id=thread, call_id=call_id, tool=tool, args=extra.pop("args", {"series": "iron"}),
                    started_at=started,
                )
                await saver.aend_tool_call(audit_id, status=status, duration_ms=ms, **extra)

            await call("t-1", "c1", "latest_price", "ok", 10.0, result='{"value": 101.5}',
                       started_at=datetime.now(UTC) - timedelta(days=3))
            await call("t-1", "c2", "latest_price", "ok", 30.0, result='{"value": 99}')
            await call("t-1", "c3", "forecast_price", "error", 50.0, error="unknown series")
            await call("t-2", "c1", "latest_price", "cancelled", 5.0, error="cancelled")
            await saver.arecord_tool_call(thread_id="t-2", call_id="c2", tool="export_report",
                                          args={"title": HOSTILE}, status="rejected", error=f"not now {HOSTILE}")

    asyncio.run(go())


def test_tools_lists_filters_and_json(store_url: str) -> None:
    seed(store_url)
    listed = run("audit", "tools", "--json", "--database-url", store_url)
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    assert [(r["thread_id"], r["call_id"], r["status"]) for r in rows] == [
        ("t-2", "c2", "rejected"), ("t-2", "c1", "cancelled"), ("t-1", "c3", "error"),
        ("t-1", "c2", "ok"), ("t-1", "c1", "ok")]
    assert set(rows[0]) >= {"checkpoint_ns", "checkpoint_id", "run_id", "args", "result", "error", "started_at",
                            "ended_at", "duration_ms", "attempt"}

    def ids(*args: str) -> list[tuple[str, str]]:
        out = run("audit", "tools", "--json", *args, "--database-url", store_url)
        assert out.exit_code == 0, out.output
        return [(r["thread_id"], r["call_id"]) for r in json.loads(out.stdout)]

    assert ids("--thread", "t-1") == [("t-1", "c3"), ("t-1", "c2"), ("t-1", "c1")]
    assert ids("--tool", "latest_price", "--status", "ok") == [("t-1", "c2"), ("t-1", "c1")]
    assert ids("--since", "1d", "--tool", "latest_price") == [("t-2", "c1"), ("t-1", "c2")]
    assert ids("--limit", "2") == [("t-2", "c2"), ("t-2", "c1")]

    table = run("audit", "tools", "--database-url", store_url)
    assert table.exit_code == 0, table.output
    assert "forecast_price" in table.stdout and "unknown series" in table.stdout and "5 tool calls" in table.stdout
    # Stored text is printed, never interpreted: no markup error, no escape reaching the terminal.
    assert "[/oops]" in table.stdout and "\\x1b" in table.stdout
    assert "\x1b" not in table.stdout and "\x9b" not in table.stdout and "\x07" not in table.stdout
    empty = run("audit", "tools", "--thread", "nobody", "--database-url", store_url)
    assert empty.exit_code == 0 and "no tool calls" in empty.stdout


def test_summary_per_tool(store_url: str) -> None:
    seed(store_url)
    result = run("audit", "summary", "--json", "--database-url", store_url)
    assert result.exit_code == 0, result.output
    summary = {s["tool"]: s for s in json.loads(result.stdout)}
    assert summary["latest_price"] == {"tool": "latest_price", "calls": 3, "errors": 0, "pending": 0,
                                       "p50_ms": 10.0, "p95_ms": 28.0, "error_rate": 0.0}
    assert summary["forecast_price"]["error_rate"] == 1.0 and summary["forecast_price"]["p95_ms"] == 50.0
    assert summary["export_report"]["p50_ms"] is None  # a rejected call never ran: no duration
    recent = json.loads(run("audit", "summary", "--json", "--since", "1d", "--database-url", store_url).stdout)
    assert {s["tool"]: s["calls"] for s in recent} == {"latest_price": 2, "forecast_price": 1, "export_report": 1}
    table = run("audit", "summary", "--database-url", store_url)
    assert table.exit_code == 0 and "p95 ms" in table.stdout and "100.0%" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tools", "--status", "pending"], "unknown tool-call status 'pending'"),
        (["tools", "--since", "yesterday"], "not a duration"),
        (["summary", "--since", "0d"], "not a positive duration"),
    ],
)
def test_bad_input_is_one_line(sqlite_url: str, args: list[str], message: str) -> None:
    result = run("audit", *args, "--database-url", sqlite_url)
    assert result.exit_code == 2 and message in result.stderr and result.stderr.count("\n") == 1, result.output


def test_missing_store_is_one_line(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'none.sqlite3'}"
    result = run("audit", "summary", "--database-url", url)
    assert result.exit_code == 1 and result.stderr.startswith("error: ") and "Traceback" not in result.output
    assert not (tmp_path / "none.sqlite3").exists()  # a read-only command creates nothing


def test_the_tool_tables_fit_an_80_column_terminal(sqlite_url: str) -> None:
    """At 80 columns `audit tools` cut every tool name to four letters (`fore…`) and `threads tools`
    wrapped a call over several lines; now a call is one line, its tool in full, within 80 cells."""
    chat = inprocess.orecast(["chat", "未来3个月铁矿石价格预测", "--model", "offline", "--new",
                              "--database-url", sqlite_url])
    assert chat.returncode == 0, chat.stderr
    thread_id = chat.stdout.split("orecast chat --thread ")[-1].split()[0]
    asyncio.run(_record_a_long_chinese_call(sqlite_url, thread_id))
    calls = json.loads(run("audit", "tools", "--json", "--database-url", sqlite_url).stdout)
    assert {c["tool"] for c in calls} >= {"forecast_price", "export_report"}

    def lines(*args: str) -> list[str]:
        result = runner.invoke(app, [*args, "--database-url", sqlite_url], env={"COLUMNS": "80"})
        assert result.exit_code == 0, result.output
        assert all(cell_len(line) <= 80 for line in result.stdout.splitlines()), result.stdout
        return result.stdout.splitlines()

    audit = lines("audit", "tools")
    for call in calls:
        assert sum(call["tool"] in line and call["status"] in line for line in audit) == sum(
            c["tool"] == call["tool"] and c["status"] == call["status"] for c in calls), "\n".join(audit)
    assert "(started UTC, thread, try: hidden at this width; --json has every field)" in audit
    assert audit[1].split() == ["tool", "status", "ms", "arguments", "result", "/", "error"]

    listed = lines("threads", "tools", thread_id)
    in_messages = json.loads(run("threads", "tools", thread_id, "--json", "--database-url", sqlite_url).stdout)
    rows = [line for line in listed if any(f" {c['tool']} " in line for c in in_messages)]
    assert len(rows) == len(in_messages) > 0, "\n".join(listed)
    assert listed[-1] == f"{len(in_messages)} tool call{'' if len(in_messages) == 1 else 's'}"


async def _record_a_long_chinese_call(url: str, thread_id: str) -> None:
    async with open_checkpointer(url) as saver:
        await saver.arecord_tool_call(
            thread_id=thread_id, call_id="long", tool="export_report", status="ok",
            args={"title": "铁矿石价格预测报告 🚢 " * 8}, result="已导出：" + "港口库存、钢厂利润、到港量 " * 10,
        )
