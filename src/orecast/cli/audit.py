"""`orecast audit …`: the tool calls the agent made, timed, with their outcome and who decided.

Reads the `tool_call_audit` table (see `checkpoint/audit.py`); the agent writes it as each call runs.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import typer
from rich.console import Console
from rich.table import Table

from orecast.checkpoint.audit import AUDIT_STATUSES, ToolCallAudit, ToolSummary, check_status
from orecast.cli.common import MAX_COUNT, DatabaseUrl, fail, open_store
from orecast.cli.durations import parse_duration
from orecast.cli.terminal import OneLineColumn, one_line_table, stored

audit_app = typer.Typer(help="The tool-call audit / 工具调用审计", no_args_is_help=True)

# One line per call; on a narrow terminal `try`, then the thread, then the start time are hidden.
CALL_COLUMNS = (
    OneLineColumn("started UTC", 14, drop=1), OneLineColumn("thread", 36, drop=2), OneLineColumn("tool", 24),
    OneLineColumn("status", 9), OneLineColumn("try", 3, "right", drop=3), OneLineColumn("ms", 10, "right"),
    OneLineColumn("arguments"), OneLineColumn("result / error"),
)
SINCE_HELP = "Only calls started within this long before now (e.g. 24h, 7d, 1d12h)."


def _since(text: str | None) -> datetime | None:
    try:
        return datetime.now(UTC) - parse_duration(text) if text else None
    except ValueError as exc:
        fail(str(exc), 2)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


@audit_app.command("tools")
def audit_tools(
    thread_id: str | None = typer.Option(None, "--thread", help="Only this conversation's calls."),
    tool: str | None = typer.Option(None, "--tool", help="Only calls of this tool."),
    status: str | None = typer.Option(
        None, "--status", help=f"Only calls with this status: {', '.join(AUDIT_STATUSES)}."
    ),
    since: str | None = typer.Option(None, "--since", help=SINCE_HELP),
    limit: int = typer.Option(50, "--limit", min=1, max=MAX_COUNT, help="At most this many calls, newest first."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Tool calls, newest first: when, how long, status, arguments, result or error."""
    if status is not None:
        try:
            check_status(status)
        except ValueError as exc:
            fail(str(exc), 2)
    cutoff = _since(since)

    async def run() -> list[ToolCallAudit]:
        async with open_store(database_url, read_only=True) as saver:
            return await saver.aaudit_tool_calls(
                thread_id=thread_id, tool=tool, status=status, since=cutoff, limit=limit
            )

    calls = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps([c.to_dict() for c in calls], ensure_ascii=False))
        return
    console = Console()
    if not calls:
        console.print("no tool calls")
        return
    rows = [
        [
            call.started_at.astimezone(UTC).strftime("%m-%d %H:%M:%S"),
            call.thread_id + (f" ({call.checkpoint_ns})" if call.checkpoint_ns else ""),
            call.tool,
            call.status,
            str(call.attempt),
            _ms(call.duration_ms),
            json.dumps(call.args, ensure_ascii=False),
            call.error if call.error is not None else call.result,
        ]
        for call in calls
    ]
    # Long cells are cut (`--json` has everything).
    table, hidden = one_line_table(CALL_COLUMNS, rows, console.width)
    console.print(table)
    if hidden:
        console.print(f"({', '.join(hidden)}: hidden at this width; --json has every field)", highlight=False)
    console.print(f"{len(calls)} tool calls")


@audit_app.command("summary")
def audit_summary(
    since: str | None = typer.Option(None, "--since", help=SINCE_HELP),
    top: int = typer.Option(50, "--top", min=1, max=MAX_COUNT, help="How many tools, most called first."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Per tool: calls, errors, error rate, still running, p50 and p95 duration (ms)."""
    cutoff = _since(since)

    async def run() -> list[ToolSummary]:
        async with open_store(database_url, read_only=True) as saver:
            return await saver.aaudit_summary(since=cutoff, top=top)

    tools = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps([t.to_dict() for t in tools], ensure_ascii=False))
        return
    console = Console()
    if not tools:
        console.print("no tool calls")
        return
    table = Table("tool", "calls", "errors", "error rate", "running", "p50 ms", "p95 ms", title="tools")
    for t in tools:
        table.add_row(
            stored(t.tool), f"{t.calls:,}", f"{t.errors:,}", f"{t.error_rate:.1%}", f"{t.pending:,}",
            _ms(t.p50_ms), _ms(t.p95_ms),
        )
    console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit")
