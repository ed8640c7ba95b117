"""`orecast chat`: talk to the iron-ore analyst, one-shot or as a REPL, on a durable thread.

The agent streams: tokens as they are generated, tool calls and results as they happen
(subagent ones prefixed with its name), charts and reports as saved file paths. A sensitive
tool (the report) stops for approve / edit / reject at the terminal. Threads live in the
checkpoint store, so another process with the same `--thread` continues the conversation, and
`--resume` finishes a run that crashed half-way without re-running the tools that completed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from rich.console import Console
from rich.markup import escape

from orecast.agent import (
    AgentConfigError,
    AgentSettings,
    ApprovalRequest,
    Token,
    ToolCall,
    ToolResult,
    build_agent,
    decisions,
    has_unfinished_run,
    load_mcp_tools,
    pending_approval,
    resolve_model_spec,
    select_model,
    stream_turn,
)
from orecast.agent.events import Payload
from orecast.checkpoint import default_database_url, open_checkpointer

REPL_HELP = "/new 新对话 new thread · /thread 显示线程 show thread · /exit 退出 quit"


@dataclass(slots=True)
class Terminal:
    """Where the chat prints and reads; tokens are written raw so they stream."""

    console: Console
    at_line_start: bool = True

    def token(self, text: str) -> None:
        self.console.out(text, end="", highlight=False)
        self.console.file.flush()
        self.at_line_start = text.endswith("\n")

    def line(self, markup: str) -> None:
        if not self.at_line_start:
            self.console.out("")
        self.console.print(markup, highlight=False)
        self.at_line_start = True

    def ask(self, prompt: str) -> str | None:
        """One line from stdin; None at end of input (closed terminal, exhausted pipe)."""
        if not self.at_line_start:
            self.console.out("")
            self.at_line_start = True
        self.console.print(prompt, end="", highlight=False)
        self.console.file.flush()
        line = sys.stdin.readline()
        if not line:
            return None
        return line.rstrip("\n")


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _show(term: Terminal, event: ToolCall | ToolResult) -> None:
    who = f"{event.agent} › " if event.agent else ""
    if isinstance(event, ToolCall):
        term.line(f"[dim]{escape(who)}→ {escape(event.name)}({escape(_short(event.args))})[/]")
        return
    if not event.ok:
        first = event.content.strip().splitlines()[0] if event.content.strip() else ""
        term.line(f"[yellow]{escape(who)}✗ {escape(event.name)}: {escape(_short(first))}[/]")
        return
    term.line(f"[dim]{escape(who)}✓ {escape(event.name)}[/]")
    if event.chart_png:
        term.line(f"[green]chart saved / 图表已保存: {escape(event.chart_png)}[/]")
    if event.report:
        term.line(f"[green]report saved / 报告已保存: {escape(event.report)}[/]")


def _decide(term: Terminal, req: ApprovalRequest) -> Command | None:
    """Ask the human about every pending action; None leaves the run waiting."""
    chosen: list[dict[str, Any]] = []
    for i, action in enumerate(req.actions):
        allowed = req.allowed[i] if i < len(req.allowed) else ["approve", "reject"]
        name, args = action.get("name", "?"), dict(action.get("args", {}))
        term.line(f"[bold magenta]approval needed / 需要批准: {escape(name)}[/]")
        for key, value in args.items():
            term.line(f"  {escape(key)} = {escape(_short(value, 300))}")
        keys = "/".join(d[0] for d in allowed)
        while True:
            answer = term.ask(f"{' / '.join(allowed)} [{keys}]: ")
            if answer is None:
                return None
            pick = next((d for d in allowed if d.startswith(answer.strip().lower()[:1] or "?")), None)
            if pick:
                break
            term.line(f"[yellow]please answer {keys}[/]")
        if pick == "approve":
            chosen.append({"type": "approve"})
        elif pick == "reject":
            reason = term.ask("reason / 原因 (optional): ")
            chosen.append({"type": "reject", "message": reason or "rejected at the terminal"})
        else:
            edited = dict(args)
            for key, value in args.items():
                new = term.ask(f"{key} [{_short(value, 60)}]: ")
                if new is None:
                    return None
                if new.strip():
                    edited[key] = new.strip()
            chosen.append({"type": "edit", "edited_action": {"name": name, "args": edited}})
    return decisions(*chosen)


async def _drive(
    agent: CompiledStateGraph,
    thread_id: str,
    payload: Payload,
    term: Terminal,
    checkpoint_id: str | None = None,
) -> bool:
    """Run a turn to its end (from `checkpoint_id` if given), asking for approvals on the way;
    False if left waiting."""
    while True:
        waiting: ApprovalRequest | None = None
        async for event in stream_turn(agent, thread_id, payload, checkpoint_id=checkpoint_id):
            if isinstance(event, Token):
                term.token(event.text)
            elif isinstance(event, ApprovalRequest):
                waiting = event
            else:
                _show(term, event)
        if waiting is None:
            if not term.at_line_start:
                term.token("\n")
            return True
        command = _decide(term, waiting)
        if command is None:
            term.line(
                f"[yellow]waiting for approval; continue with: orecast chat --thread {thread_id} --resume[/]"
            )
            return False
        payload, checkpoint_id = command, None  # approvals continue the new branch's head


async def _resume(agent: CompiledStateGraph, thread_id: str, term: Terminal) -> None:
    approval = await pending_approval(agent, thread_id)
    if approval is not None:
        command = _decide(term, approval)
        if command is None:
            term.line("[yellow]still waiting for approval[/]")
            return
        await _drive(agent, thread_id, command, term)
    elif await has_unfinished_run(agent, thread_id):
        term.line("[dim]resuming the unfinished run / 继续未完成的运行[/]")
        await _drive(agent, thread_id, None, term)
    else:
        term.line("[dim]nothing to resume: the last run finished / 没有未完成的运行[/]")


async def _repl(agent: CompiledStateGraph, thread_id: str, term: Terminal) -> None:
    term.line(f"[dim]{REPL_HELP}[/]")
    while True:
        text = term.ask("[bold cyan]you ›[/] ")
        if text is None or text.strip() in ("/exit", "/quit", "exit", "quit"):
            term.line(f"[dim]thread {thread_id}[/]")
            return
        if not text.strip():
            continue
        if text.strip() == "/new":
            thread_id = str(uuid.uuid4())
            term.line(f"[bold]thread[/] {thread_id}")
            continue
        if text.strip() == "/thread":
            term.line(f"[bold]thread[/] {thread_id}")
            continue
        if text.strip() == "/help":
            term.line(f"[dim]{REPL_HELP}[/]")
            continue
        try:
            await _drive(agent, thread_id, text, term)
        except KeyboardInterrupt:
            term.line(f"[yellow]interrupted; finish it with: orecast chat --thread {thread_id} --resume[/]")


async def _chat(
    message: str | None,
    thread_id: str,
    database_url: str,
    settings: AgentSettings,
    resume: bool,
    term: Terminal,
    from_checkpoint: str | None = None,
) -> None:
    model = select_model(settings.model)
    mcp = await load_mcp_tools(settings.mcp_config)
    for error in mcp.errors:
        term.line(f"[yellow]{escape(error)}[/]")
    async with open_checkpointer(database_url) as saver:
        agent = build_agent(saver, model=model, extra_tools=mcp.tools, settings=settings)
        term.line(f"[bold]thread[/] {thread_id}  [dim]model {escape(resolve_model_spec(settings.model))}[/]")
        if from_checkpoint is not None:
            step = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": from_checkpoint}}
            if await saver.aget_tuple(step) is None:
                raise ValueError(
                    f"no checkpoint {from_checkpoint} in thread {thread_id} (see: orecast threads history)"
                )
            term.line(f"[dim]branching from checkpoint {from_checkpoint} / 从该步骤分支[/]")
        if resume:
            await _resume(agent, thread_id, term)
        elif from_checkpoint is None and await has_unfinished_run(agent, thread_id):
            term.line(
                "[yellow]this thread has an unfinished run; finish it with --resume "
                "/ 该对话有未完成的运行，可用 --resume 继续[/]"
            )
        if message is not None:
            await _drive(agent, thread_id, message, term, from_checkpoint)
            term.line(f"[dim]continue with: orecast chat --thread {thread_id}[/]")
        elif not resume:
            await _repl(agent, thread_id, term)


def chat(
    message: Annotated[str | None, typer.Argument(help="Question; omit for an interactive session.")] = None,
    thread: Annotated[str | None, typer.Option("--thread", "-t", help="Continue this thread id.")] = None,
    new: Annotated[bool, typer.Option("--new", help="Start a new thread (the default without --thread).")] = False,
    database_url: Annotated[
        str | None,
        typer.Option("--database-url", help="Checkpoint store URL [default: default_database_url()]."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="offline | deepseek:MODEL | openai:MODEL")
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Finish the thread's interrupted or crashed run.")
    ] = False,
    from_checkpoint: Annotated[
        str | None,
        typer.Option("--from", help="Branch: answer MESSAGE from this earlier checkpoint of --thread "
                     "(ids: orecast threads history THREAD)."),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    """Chat with the iron-ore analyst / 与铁矿石分析师对话.

    Example: orecast chat "铁矿石未来6个月走势？" --thread demo
    """
    term = Terminal(Console(highlight=False, soft_wrap=True))
    if thread and new:
        raise typer.BadParameter("use either --thread or --new, not both")
    if resume and not thread:
        raise typer.BadParameter("--resume needs --thread ID")
    if from_checkpoint and (not thread or message is None or resume):
        raise typer.BadParameter("--from needs --thread ID and a MESSAGE (and no --resume)")
    thread_id = thread or str(uuid.uuid4())
    try:
        settings = AgentSettings.from_env(model=model)
        asyncio.run(_chat(message, thread_id, database_url or default_database_url(), settings,
                          resume, term, from_checkpoint))
    except (AgentConfigError, ValueError, OSError) as exc:
        if debug:
            raise
        Console(stderr=True).print(f"[red]error:[/] {escape(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        term.line(f"[yellow]interrupted; finish it with: orecast chat --thread {thread_id} --resume[/]")
        raise typer.Exit(130) from None


def register(app: typer.Typer) -> None:
    """Add `orecast chat` to the main app."""
    app.command("chat")(chat)
