"""`orecast threads …`: list, read and delete conversations."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import typer
from langchain_core.messages import BaseMessage
from rich.console import Console

from orecast.checkpoint import ToolCallRecord
from orecast.checkpoint.threads import ThreadInfo
from orecast.checkpoint.transcript import checkpoint_messages, thread_messages
from orecast.cli.archive import add_thread_commands
from orecast.cli.common import MAX_COUNT, DatabaseUrl, fail, open_store, service_rows_of_thread
from orecast.cli.runs import run_state
from orecast.cli.terminal import OneLineColumn, escaped, one_line_table, stored

# One line per thread. The whole id however narrow the terminal (it is what `chat --thread` needs): when
# the title would get too little room, the message count, then the time are hidden instead.
LIST_COLUMNS = (
    OneLineColumn("thread", 1024), OneLineColumn("updated", 16, drop=1), OneLineColumn("status", 11),
    OneLineColumn("msgs", 6, "right", drop=2), OneLineColumn("title / last message"),
)
# The checkpoint id whole (it is what `chat --from` takes); source and writes give way first.
HISTORY_COLUMNS = (
    OneLineColumn("time", 19), OneLineColumn("step", 6, "right"), OneLineColumn("source", 6, drop=2),
    OneLineColumn("msgs", 6, "right"), OneLineColumn("writes", 6, "right", drop=1), OneLineColumn("checkpoint", 1024),
)
TOOL_COLUMNS = (
    OneLineColumn("#", 6, "right"), OneLineColumn("tool", 24), OneLineColumn("status", 9),
    OneLineColumn("arguments"), OneLineColumn("result"),
)

threads_app = typer.Typer(help="Conversations / 对话", no_args_is_help=True)


@threads_app.command("list")
def list_threads(
    database_url: DatabaseUrl = None,
    limit: int = typer.Option(20, min=1, max=MAX_COUNT, help="How many, most recently updated first."),
    offset: int = typer.Option(0, min=0, max=MAX_COUNT),
    status: str | None = typer.Option(None, help="idle, busy, interrupted or error"),
    title: str | None = typer.Option(None, help="Text the title contains."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Conversations, most recently updated first."""

    async def run() -> tuple[list[ThreadInfo], int]:
        async with open_store(database_url, read_only=True) as saver:
            try:
                found = await saver.asearch_threads(status=status, title=title, limit=limit, offset=offset)
            except ValueError as exc:
                fail(str(exc), 2)
            return found, await saver.acount_threads(status=status, title=title)

    found, total = asyncio.run(run())
    if as_json:
        rows = [{**t.to_dict(), "state": run_state(t)} for t in found]  # state: crashed, cancelled …
        typer.echo(json.dumps({"total": total, "threads": rows}, ensure_ascii=False))
        return
    rows = [
        [t.thread_id, t.updated_at.strftime("%Y-%m-%d %H:%M"), run_state(t), str(t.message_count), t.title or t.preview]
        for t in found
    ]
    console = Console()
    table, hidden = one_line_table(LIST_COLUMNS, rows, console.width)
    console.print(table)
    if hidden:
        console.print(f"({', '.join(hidden)}: hidden at this width; --json has every field)", highlight=False)
    console.print(f"{len(found)} of {total} threads")


def _message_dict(message: BaseMessage) -> dict[str, Any]:
    data: dict[str, Any] = {"type": message.type, "id": message.id, "content": message.content}
    if getattr(message, "tool_calls", None):
        data["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c["id"]} for c in message.tool_calls]
    if getattr(message, "tool_call_id", None):
        data["tool_call_id"] = message.tool_call_id
        data["name"] = message.name
    return data


@threads_app.command("show")
def show_thread(
    thread_id: str = typer.Argument(..., help="The conversation's thread id."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """A conversation's messages, in order."""

    async def run() -> tuple[ThreadInfo | None, list[BaseMessage] | None]:
        async with open_store(database_url, read_only=True) as saver:
            return await saver.aget_thread(thread_id), await thread_messages(saver, thread_id)

    info, messages = asyncio.run(run())
    if info is None or messages is None:
        fail(f"no thread {thread_id!r}")
    if as_json:
        payload = {"thread": info.to_dict(), "messages": [_message_dict(m) for m in messages]}
        typer.echo(json.dumps(payload, ensure_ascii=False, default=str))
        return
    console = Console()
    console.print(
        stored(info.title or info.thread_id, "bold")
        + stored(f"  ({run_state(info)}, {len(messages)} messages)"),
        highlight=False,
    )
    for message in messages:
        data = _message_dict(message)
        text = data["content"] if isinstance(data["content"], str) else json.dumps(data["content"], ensure_ascii=False)
        console.print(stored(message.type, "bold cyan") + ": " + stored(text), highlight=False)
        for call in data.get("tool_calls", []):
            line = f"  → {call['name']}({json.dumps(call['args'], ensure_ascii=False)})"
            console.print(stored(line), highlight=False)


@threads_app.command("history")
def thread_history(
    thread_id: str = typer.Argument(..., help="The conversation's thread id."),
    database_url: DatabaseUrl = None,
    limit: int = typer.Option(20, min=1, max=MAX_COUNT, help="How many checkpoints, newest first."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The conversation's checkpoints (its steps), newest first: any of them can be resumed or forked."""

    async def run() -> tuple[ThreadInfo | None, list[dict[str, Any]]]:
        async with open_store(database_url, read_only=True) as saver:
            info = await saver.aget_thread(thread_id)
            steps = []
            config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
            async for tup in saver.alist(config, limit=limit):
                # deepagents keeps `messages` in a DeltaChannel: rebuilt at each step, not read from its values.
                messages = await checkpoint_messages(saver, tup)
                steps.append(
                    {
                        "checkpoint_id": tup.checkpoint["id"],
                        "ts": tup.checkpoint["ts"],
                        "step": tup.metadata.get("step"),
                        "source": tup.metadata.get("source"),
                        "messages": len(messages),
                        "pending_writes": len(tup.pending_writes or []),
                        "parent_checkpoint_id": (tup.parent_config or {}).get("configurable", {}).get(
                            "checkpoint_id"
                        ),
                    }
                )
            return info, steps

    info, steps = asyncio.run(run())
    if info is None:
        fail(f"no thread {thread_id!r}")
    if as_json:
        typer.echo(json.dumps(steps, ensure_ascii=False))
        return
    rows = [
        [str(step["ts"])[:19].replace("T", " "), str(step["step"]), str(step["source"]), str(step["messages"]),
         str(step["pending_writes"]), str(step["checkpoint_id"])]
        for step in steps
    ]
    console = Console()
    table, hidden = one_line_table(HISTORY_COLUMNS, rows, console.width)
    console.print(table)
    if hidden:
        console.print(f"({', '.join(hidden)}: hidden at this width; --json has every field)", highlight=False)
    console.print(f"{len(steps)} of {info.checkpoint_count} checkpoints (root namespace shown)")


@threads_app.command("tools")
def thread_tools(
    thread_id: str = typer.Argument(..., help="The conversation's thread id."),
    database_url: DatabaseUrl = None,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The tool calls in a conversation's messages, with arguments and results (timed: `audit tools --thread`)."""

    async def run() -> tuple[ThreadInfo | None, list[ToolCallRecord]]:
        async with open_store(database_url, read_only=True) as saver:
            return await saver.aget_thread(thread_id), await saver.atool_calls(thread_id)

    info, calls = asyncio.run(run())
    if info is None:
        fail(f"no thread {thread_id!r}")
    if as_json:
        typer.echo(json.dumps([c.to_dict() for c in calls], ensure_ascii=False, default=str))
        return
    rows = [
        [
            str(call.item_no),
            call.tool,
            call.status,
            json.dumps(call.args, ensure_ascii=False),
            call.result if isinstance(call.result, str) else json.dumps(call.result, ensure_ascii=False),
        ]
        for call in calls
    ]
    console = Console()
    # One line per call, cut to the terminal's width: `--json` has every argument and result in full.
    table, _hidden = one_line_table(TOOL_COLUMNS, rows, console.width)
    console.print(table)
    console.print(f"{len(calls)} tool call{'' if len(calls) == 1 else 's'}")


@threads_app.command("delete")
def delete_thread(
    thread_id: str = typer.Argument(..., help="The conversation's thread id."),
    database_url: DatabaseUrl = None,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a conversation with all its checkpoints (asks first unless --yes)."""

    def confirmed(info: ThreadInfo) -> bool:
        label = f"{thread_id} ({info.title})" if info.title else thread_id
        question = f"delete {label}, {info.message_count} messages? / 确认删除?"
        # No terminal to ask (a script, a closed stdin): refuse rather than delete or hang.
        try:
            return typer.confirm(question, default=False)
        except typer.Abort:
            return False

    async def delete() -> None:
        # One opening of the store: its warnings (e.g. read-only) are printed once.
        async with open_store(database_url, read_only=True) as saver:
            info = await saver.aget_thread(thread_id)
            if info is None:
                fail(f"no thread {thread_id!r}")
            if not yes and not confirmed(info):
                fail("not deleted (pass --yes to delete without asking)")
            await saver.adelete_thread(thread_id, also=await service_rows_of_thread(database_url, saver))

    asyncio.run(delete())
    typer.echo(escaped(f"deleted {thread_id}"))


@threads_app.command("rename")
def rename_thread(
    thread_id: str = typer.Argument(..., help="The conversation's thread id."),
    title: str = typer.Argument(..., help="The new title."),
    database_url: DatabaseUrl = None,
) -> None:
    """Give a conversation a new title (a new conversation is titled by its first question)."""
    title = " ".join(title.split())
    if not title:
        fail("the title is empty", 2)

    async def run() -> bool:
        async with open_store(database_url, read_only=True) as saver:
            if await saver.aget_thread(thread_id) is None:
                return False
            await saver.aupdate_thread(thread_id, title=title)
            return True

    if not asyncio.run(run()):
        fail(f"no thread {thread_id!r}")
    typer.echo(escaped(f"renamed {thread_id}: {title}"))


add_thread_commands(threads_app)


def register(app: typer.Typer) -> None:
    app.add_typer(threads_app, name="threads")
