"""Child process for the crash-resume test: the real agent on a SQLite file, with a counting tool.

`latest_price` is replaced (same name, see `build_agent(extra_tools=…)`) by a wrapper that logs
each start and finish to a file and, when ORECAST_TEST_SLOW names a series, sleeps on it, so the
parent can kill this process while one tool call has finished and the other is still running.
Usage: python -m tests.agent.crash_runner DB_URL THREAD LOG (ask QUESTION | resume)
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from langchain_core.tools import StructuredTool
from rich.console import Console

from orecast.agent import AgentSettings, build_agent
from orecast.agent.tools import dumps, latest_price
from orecast.checkpoint import open_checkpointer
from orecast.cli.chat import Terminal, _drive, _resume


def counting_tool(log: Path) -> StructuredTool:
    def logged_latest_price(series: str) -> str:
        with log.open("a") as f:
            f.write(f"start {series}\n")
        if os.environ.get("ORECAST_TEST_SLOW") == series:
            time.sleep(120)
        out = dumps(latest_price(series))
        with log.open("a") as f:
            f.write(f"done {series}\n")
        return out

    return StructuredTool.from_function(
        logged_latest_price, name="latest_price", description=latest_price.__doc__ or ""
    )


async def main(url: str, thread: str, log: Path, mode: str, question: str | None) -> None:
    settings = AgentSettings(model="offline", charts_dir=log.parent / "c", reports_dir=log.parent / "r")
    async with open_checkpointer(url) as saver:
        agent = build_agent(saver, extra_tools=[counting_tool(log)], settings=settings)
        term = Terminal(Console(highlight=False, soft_wrap=True))
        if mode == "ask":
            assert question
            await _drive(agent, thread, question, term)
        else:
            await _resume(agent, thread, term)


if __name__ == "__main__":
    url, thread, log, mode = sys.argv[1:5]
    asyncio.run(main(url, thread, Path(log), mode, sys.argv[5] if len(sys.argv) > 5 else None))
