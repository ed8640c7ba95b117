"""What `orecast chat` records about a turn on the thread's row: its title and how the turn ended.

The checkpointer keeps the thread's status for approvals (`interrupted`); a turn that is killed,
crashes or is cancelled leaves no trace there. So the chat marks the thread `busy` with its process
id before a turn and `idle` (or `error`, with why) after it; `threads list` then tells a turn still
running from one whose process died (`crashed`) without guessing from timestamps.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from orecast.checkpoint import OrecastCheckpointer
from orecast.checkpoint.threads import ThreadInfo

RUN_KEY = "orecast_run"  # in the thread's metadata; a name LangGraph's own metadata never uses
TITLE_CHARS = 80


def title_of(question: str) -> str:
    """A thread's default title: its first question on one line, cut to TITLE_CHARS."""
    text = " ".join(question.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


async def begin_turn(saver: OrecastCheckpointer, thread_id: str, question: str | None) -> None:
    """Mark the thread busy by this process; a thread without a title takes the question as one."""
    info = await saver.aget_thread(thread_id)
    title = title_of(question) if question and (info is None or not info.title) else None
    run = {"pid": os.getpid(), "host": socket.gethostname(), "outcome": "running"}
    await saver.aupdate_thread(thread_id, title=title, status="busy", metadata={RUN_KEY: run})


async def end_turn(saver: OrecastCheckpointer, thread_id: str, outcome: str) -> None:
    """Record how the turn ended: `done`, `cancelled` or `failed` (a turn waiting for approval
    keeps the `interrupted` status the checkpointer gave it)."""
    info = await saver.aget_thread(thread_id)
    if info is None:
        return
    status = "idle" if outcome == "done" else "error"
    if info.status == "interrupted" and outcome == "done":
        status = "interrupted"
    await saver.aupdate_thread(thread_id, status=status, metadata={RUN_KEY: {"outcome": outcome}})


def run_state(info: ThreadInfo) -> str:
    """The status to show: the stored one, `crashed` for a busy turn whose process is gone, and
    `cancelled` / `failed` for a turn that ended so."""
    run: Any = info.metadata.get(RUN_KEY)
    run = run if isinstance(run, dict) else {}
    if info.status == "busy" and run.get("host") == socket.gethostname():
        if not _alive(run.get("pid")):
            return "crashed"
    if info.status == "error" and run.get("outcome") in ("cancelled", "failed"):
        return str(run["outcome"])
    return info.status


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True
