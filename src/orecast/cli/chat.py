"""`orecast chat`: talk to the iron-ore analyst, one-shot or as a REPL, on a durable thread.

The agent streams: tokens as they are generated, tool calls and results as they happen
(subagent ones prefixed with its name), charts and reports as saved file paths. A sensitive
tool (the report) stops for approve / edit / reject at the terminal. Threads live in the
checkpoint store, so another process with the same `--thread` continues the conversation, and
`--resume` finishes a run that crashed half-way without re-running the tools that completed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import sys
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Annotated, Any

import typer
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
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
from orecast.checkpoint import OrecastCheckpointer, default_database_url, open_checkpointer
from orecast.checkpoint.ids import check_id, new_thread_id
from orecast.checkpoint.store import open_store
from orecast.checkpoint.urls import parse_url
from orecast.cli.common import folder_as_store
from orecast.cli.failures import describe_failure, first_line
from orecast.cli.interrupts import CtrlC, Interrupted, LineReader
from orecast.cli.runs import begin_turn, end_turn
from orecast.cli.terminal import escaped
from orecast.market.engine import stop_on

REPL_COMMANDS: dict[str, str] = {
    "/help": "这些命令 / these commands",
    "/new": "新对话 / start a new thread",
    "/thread": "显示当前线程 / show the current thread id",
    "/retry": "重试上一个问题 / send the last question again",
    "/exit": "退出 / quit (also /quit, Ctrl-D)",
}
REPL_HELP = " · ".join(f"{name} {what}" for name, what in REPL_COMMANDS.items())
TOOL_THREAD_PREFIX = "orecast-tool"


class ToolPool(ThreadPoolExecutor):
    """The chat's tool threads, counting the calls still running: a cancelled turn's may still be
    finishing a statsmodels import or a fit when the chat ends (see `_leave`)."""

    def __init__(self) -> None:
        super().__init__(max_workers=8, thread_name_prefix=TOOL_THREAD_PREFIX)
        self._lock = threading.Lock()
        self.running = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        def counted() -> Any:
            with self._lock:
                self.running += 1
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self.running -= 1

        return super().submit(counted)
CTRL_C_HINT = "Ctrl-C 取消当前回答 / cancels the current answer"


def shown(text: str) -> str:
    """Text a user or a model chose (a thread id, a tool's arguments) as markup that prints it literally."""
    return escape(escaped(text))


def shell_arg(text: str) -> str:
    """A thread id in a command to copy: quoted for the shell when it has spaces or quotes in it."""
    return shown(shlex.quote(text))


@dataclass(slots=True)
class Terminal:
    """Where the chat prints and reads; tokens are written raw so they stream. `ctrl_c` is the chat's
    SIGINT handler, set while the chat runs."""

    console: Console
    debug: bool = False
    at_line_start: bool = True
    reader: LineReader = field(default_factory=lambda: LineReader(sys.stdin))
    ctrl_c: CtrlC = field(default_factory=lambda: CtrlC(None))

    def token(self, text: str) -> None:
        self.console.out(text, end="", highlight=False)
        self.console.file.flush()
        self.at_line_start = text.endswith("\n")

    def line(self, markup: str) -> None:
        if not self.at_line_start:
            self.console.out("")
        self.console.print(markup, highlight=False)
        self.at_line_start = True

    def error(self, message: str) -> None:
        """One line on stderr, after ending any streamed line on stdout."""
        if not self.at_line_start:
            self.console.out("")
            self.at_line_start = True
        self.console.file.flush()
        Console(stderr=True, highlight=False, soft_wrap=True).print(f"[red]error:[/] {shown(message)}")

    async def ask(self, prompt: str) -> str | None:
        """One line from stdin; None at end of input (closed terminal, exhausted pipe)."""
        if not self.at_line_start:
            self.console.out("")
            self.at_line_start = True
        self.console.print(prompt, end="", highlight=False)
        self.console.file.flush()
        return await self.reader.readline()


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _show(term: Terminal, event: ToolCall | ToolResult) -> None:
    who = f"{event.agent} › " if event.agent else ""
    if isinstance(event, ToolCall):
        term.line(f"[dim]{shown(who)}→ {shown(event.name)}({shown(_short(event.args))})[/]")
        return
    if not event.ok:
        first = event.content.strip().splitlines()[0] if event.content.strip() else ""
        term.line(f"[yellow]{shown(who)}✗ {shown(event.name)}: {shown(_short(first))}[/]")
        return
    term.line(f"[dim]{shown(who)}✓ {shown(event.name)}[/]")
    if event.chart_png:
        term.line(f"[green]chart saved / 图表已保存: {shown(event.chart_png)}[/]")
    if event.report:
        term.line(f"[green]report saved / 报告已保存: {shown(event.report)}[/]")


async def _decide(term: Terminal, req: ApprovalRequest) -> Command | None:
    """Ask the human about every pending action; None leaves the run waiting."""
    chosen: list[dict[str, Any]] = []
    for i, action in enumerate(req.actions):
        allowed = req.allowed[i] if i < len(req.allowed) else ["approve", "reject"]
        name, args = action.get("name", "?"), dict(action.get("args", {}))
        term.line(f"[bold magenta]approval needed / 需要批准: {shown(name)}[/]")
        for key, value in args.items():
            term.line(f"  {shown(key)} = {shown(_short(value, 300))}")
        keys = "/".join(d[0] for d in allowed)
        while True:
            answer = await term.ask(f"{' / '.join(allowed)} [{keys}]: ")
            if answer is None:
                return None
            pick = next((d for d in allowed if d.startswith(answer.strip().lower()[:1] or "?")), None)
            if pick:
                break
            term.line(f"[yellow]please answer {keys}[/]")
        if pick == "approve":
            chosen.append({"type": "approve"})
        elif pick == "reject":
            reason = await term.ask("reason / 原因 (optional): ")
            chosen.append({"type": "reject", "message": reason or "rejected at the terminal"})
        else:
            edited = dict(args)
            for key, value in args.items():
                new = await term.ask(f"{key} [{_short(value, 60)}]: ")
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
        command = await _decide(term, waiting)
        if command is None:
            term.line(
                f"[yellow]waiting for approval; continue with: orecast chat --thread {shell_arg(thread_id)} --resume[/]"
            )
            return False
        payload, checkpoint_id = command, None  # approvals continue the new branch's head


async def _resume(agent: CompiledStateGraph, thread_id: str, term: Terminal) -> None:
    approval = await pending_approval(agent, thread_id)
    if approval is not None:
        command = await _decide(term, approval)
        if command is None:
            term.line("[yellow]still waiting for approval[/]")
            return
        await _drive(agent, thread_id, command, term)
    elif await has_unfinished_run(agent, thread_id):
        term.line("[dim]resuming the unfinished run / 继续未完成的运行[/]")
        await _drive(agent, thread_id, None, term)
    else:
        term.line("[dim]nothing to resume: the last run finished / 没有未完成的运行[/]")


async def _turn(
    agent: CompiledStateGraph,
    saver: Any,
    thread_id: str,
    payload: Payload,
    term: Terminal,
    checkpoint_id: str | None = None,
) -> str:
    """Run one turn; Ctrl-C cancels it (its model fits stop at the next fit) and any failure is one
    line. Returns how it ended: `done`, `waiting`, `cancelled` or `failed`; never raises."""
    question = payload if isinstance(payload, str) else None
    stop = threading.Event()

    async def run() -> bool:
        with stop_on(stop):  # copied into the tool threads the turn starts
            return await _drive(agent, thread_id, payload, term, checkpoint_id)

    outcome = "failed"
    try:
        if isinstance(saver, OrecastCheckpointer):
            await begin_turn(saver, thread_id, question)
        task = asyncio.create_task(run())

        def cancel() -> None:
            stop.set()
            task.cancel()

        try:
            with term.ctrl_c.on(cancel):
                finished = await task
            outcome = "done" if finished else "waiting"
        except asyncio.CancelledError:
            if not stop.is_set():
                raise
            outcome = "cancelled"
            term.line("[yellow]已取消 / cancelled — /retry 重试 / to ask again[/]")
    except Exception as exc:  # noqa: BLE001 - the REPL must outlive any failure of one turn
        if term.debug:
            term.console.print_exception()
        term.error(describe_failure(exc))
    if isinstance(saver, OrecastCheckpointer):
        with contextlib.suppress(Exception):  # the store itself may be what failed
            await end_turn(saver, thread_id, "done" if outcome == "waiting" else outcome)
    return outcome


async def _repl(agent: CompiledStateGraph, saver: Any, thread_id: str, term: Terminal) -> None:
    term.line(f"[dim]{REPL_HELP}[/]")
    term.line(f"[dim]{CTRL_C_HINT}[/]")
    last: str | None = None
    while True:
        try:
            text = await term.ctrl_c.interruptible(term.ask("[bold cyan]you ›[/] "))
        except Interrupted:
            if await _confirm_leave(term):
                text = None
            else:
                continue
        if text is None:
            term.line(f"[dim]thread {shown(thread_id)}[/]")
            return
        text = text.strip()
        if not text:
            term.line("[dim]请输入问题 / type a question (/help)[/]")
            continue
        command = text.split()[0].lower() if text.startswith("/") else None
        if command in ("/exit", "/quit") or text in ("exit", "quit"):
            term.line(f"[dim]thread {shown(thread_id)}[/]")
            return
        if command == "/new":
            thread_id, last = new_thread_id(), None
            term.line(f"[bold]thread[/] {shown(thread_id)}")
            continue
        if command == "/thread":
            term.line(f"[bold]thread[/] {shown(thread_id)}")
            continue
        if command == "/help":
            for name, what in REPL_COMMANDS.items():
                term.line(f"  [bold]{name}[/]  {what}")
            term.line(f"  {CTRL_C_HINT}")
            continue
        if command == "/retry":
            if last is None:
                term.line("[yellow]还没有可重试的问题 / nothing to retry yet[/]")
                continue
            text = last
        elif command is not None:
            term.line(f"[yellow]未知命令 / unknown command {shown(command)} — /help[/]")
            continue
        last = text
        if await _turn(agent, saver, thread_id, text, term) == "failed":
            term.line("[dim]输入 /retry 重试 / type /retry to try again[/]")


async def _confirm_leave(term: Terminal) -> bool:
    """Ctrl-C at an idle prompt: leave only when confirmed (a second Ctrl-C also leaves)."""
    term.console.out("")  # the ^C was echoed after the prompt
    try:
        answer = await term.ctrl_c.interruptible(term.ask("退出? / quit? \\[y/N] "))
    except Interrupted:
        return True
    return answer is None or answer.strip().lower() in ("y", "yes", "是")


@contextlib.asynccontextmanager
async def _store(url: str) -> AsyncIterator[tuple[Any, BaseStore]]:
    """The checkpointer and LangGraph's store on the same database (the service's pair, so the
    analyst's /memories/ are the same here and there), or one line (ChatError) when they cannot be
    opened."""
    try:
        parsed = parse_url(url)
    except ValueError as exc:
        raise ChatError(str(exc), 2) from None
    if (why := folder_as_store(parsed)) is not None:
        raise ChatError(why, 2)
    redacted = parsed.redacted()
    async with contextlib.AsyncExitStack() as stack:
        try:
            saver = await stack.enter_async_context(open_checkpointer(url))
            store = await stack.enter_async_context(open_store(url))
        except Exception as exc:  # noqa: BLE001 - psycopg, sqlite3 and OS errors all end here
            raise ChatError(f"cannot open the store {redacted}: {first_line(exc)}") from None
        yield saver, store


class ChatError(Exception):
    """A reason the chat cannot start, shown as one line with an exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


async def _chat(
    message: str | None,
    thread_id: str,
    database_url: str,
    settings: AgentSettings,
    resume: bool,
    term: Terminal,
    pool: ToolPool,
    from_checkpoint: str | None = None,
) -> int:
    """Run the chat; the exit code (0, 1 when the turn failed, 130 when it was cancelled). Tools run
    in `pool`, which must not hold the prompt or the exit (see `_leave`)."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(pool)
    term.ctrl_c = CtrlC(asyncio.current_task())
    try:
        with term.ctrl_c.installed():
            return await _chat_in(message, thread_id, database_url, settings, resume, term,
                                  from_checkpoint)
    except asyncio.CancelledError:
        if term.ctrl_c.ended_chat:  # Ctrl-C outside a turn or prompt (opening the store, --resume)
            raise Interrupted from None
        raise
    finally:
        # asyncio.run waits for its default executor; hand it an idle one and let ours go.
        loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
        pool.shutdown(wait=False, cancel_futures=True)


async def _chat_in(
    message: str | None,
    thread_id: str,
    database_url: str,
    settings: AgentSettings,
    resume: bool,
    term: Terminal,
    from_checkpoint: str | None,
) -> int:
    model = select_model(settings.model)
    mcp = await load_mcp_tools(settings.mcp_config)
    for error in mcp.errors:
        term.line(f"[yellow]{shown(error)}[/]")
    async with _store(database_url) as (saver, store):
        agent = build_agent(saver, model=model, extra_tools=mcp.tools, settings=settings, store=store)
        if resume and await _unknown_thread(saver, thread_id):
            raise ChatError(f"no thread {thread_id!r} to resume (see: orecast threads list)", 2)
        term.line(f"[bold]thread[/] {shown(thread_id)}  [dim]model {shown(resolve_model_spec(settings.model))}[/]")
        if from_checkpoint is not None:
            step = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": from_checkpoint}}
            if await saver.aget_tuple(step) is None:
                raise ValueError(
                    f"no checkpoint {from_checkpoint} in thread {thread_id} (see: orecast threads history)"
                )
            term.line(f"[dim]branching from checkpoint {shown(from_checkpoint)} / 从该步骤分支[/]")
        if resume:
            await _resume(agent, thread_id, term)
        elif from_checkpoint is None and await has_unfinished_run(agent, thread_id):
            term.line(
                "[yellow]this thread has an unfinished run; finish it with --resume "
                "/ 该对话有未完成的运行，可用 --resume 继续[/]"
            )
        if message is not None:
            outcome = await _turn(agent, saver, thread_id, message, term, from_checkpoint)
            term.line(f"[dim]continue with: orecast chat --thread {shell_arg(thread_id)}[/]")
            return {"failed": 1, "cancelled": 130}.get(outcome, 0)
        if not resume:
            await _repl(agent, saver, thread_id, term)
    return 0


async def _unknown_thread(saver: Any, thread_id: str) -> bool:
    if isinstance(saver, OrecastCheckpointer):
        return await saver.aget_thread(thread_id) is None
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    return await saver.aget_tuple(config) is None


def _leave(code: int, pool: ToolPool) -> None:
    """Exit now if a cancelled turn's tool call still runs in `pool`: it holds no store connection and
    nothing it computes is kept, so waiting for it would only delay the user's shell. Only this chat's
    own running calls count: idle workers end once shut down (on a loaded machine not always within
    the 50 ms they were once given), and another chat's threads in the same process (tests run the
    CLI in-process) are not ours to end the process for."""
    if pool.running:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    pool.shutdown(wait=True)
    if code:
        raise typer.Exit(code)


def chat(
    message: Annotated[str | None, typer.Argument(help="Question; omit for an interactive session.")] = None,
    thread: Annotated[str | None, typer.Option("--thread", "-t", help="Continue this thread id.")] = None,
    new: Annotated[bool, typer.Option("--new", help="Start a new thread (the default without --thread).")] = False,
    database_url: Annotated[
        str | None,
        typer.Option("--database-url", help="Checkpoint store URL [default: $ORECAST_DATABASE_URL, "
                     "$CHECKPOINT_DB, else orecast.sqlite3 in the user's data directory]."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="offline | deepseek:MODEL | openai:MODEL "
                                 "[default: $ORECAST_MODEL, else deepseek with a key, else offline]")
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
    term = Terminal(Console(highlight=False, soft_wrap=True), debug=debug)
    if thread and new:
        raise typer.BadParameter("use either --thread or --new, not both")
    if resume and not thread:
        raise typer.BadParameter("--resume needs --thread ID")
    if from_checkpoint and (not thread or message is None or resume):
        raise typer.BadParameter("--from needs --thread ID and a MESSAGE (and no --resume)")
    if message is not None and not message.strip():
        raise typer.BadParameter("the message is empty / 问题为空", param_hint="MESSAGE")
    thread_id = thread or new_thread_id()
    pool = ToolPool()
    try:
        check_id(thread_id, "thread_id")  # one that the store cannot keep fails before the chat starts
        settings = AgentSettings.from_env(model=model)
        code = asyncio.run(_chat(message, thread_id, database_url or default_database_url(),
                                 settings, resume, term, pool, from_checkpoint))
    except (AgentConfigError, ValueError, OSError, ChatError) as exc:
        if debug:
            raise
        Console(stderr=True, soft_wrap=True).print(f"[red]error:[/] {shown(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)}")
        raise typer.Exit(getattr(exc, "code", 2)) from None
    except (KeyboardInterrupt, Interrupted):
        term.line(f"[yellow]interrupted; finish it with: orecast chat --thread {shell_arg(thread_id)} --resume[/]")
        _leave(130, pool)
        raise typer.Exit(130) from None
    _leave(code, pool)


def register(app: typer.Typer) -> None:
    """Add `orecast chat` to the main app."""
    app.command("chat")(chat)
