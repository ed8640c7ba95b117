"""A conversation written by one process is read back and continued by another."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from orecast.checkpoint import open_checkpointer
from tests.checkpoint.graphs import tool_loop

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from orecast.checkpoint import open_checkpointer
    from tests.checkpoint.graphs import approval_graph, human, tool_loop
    from langgraph.types import Command

    CFG = {"configurable": {"thread_id": "restart", "user_id": "u-restart"}}
    HITL = {"configurable": {"thread_id": "restart-hitl"}}

    async def write(url):
        async with open_checkpointer(url) as s:
            g = tool_loop(s)
            for turn in range(5):
                await g.ainvoke({"messages": [human(turn, f"restart question {turn}")]}, CFG)
            await approval_graph(s).ainvoke({"messages": [human(0)]}, HITL)
        return {}

    async def resume(url):
        async with open_checkpointer(url) as s:
            g = tool_loop(s)
            before = (await g.aget_state(CFG)).values["messages"]
            thread = await s.aget_thread("restart")
            await g.ainvoke({"messages": [human(5, "restart question 5")]}, CFG)
            after = (await g.aget_state(CFG)).values["messages"]
            hitl = approval_graph(s)
            pending = [i.value for i in (await hitl.aget_state(HITL)).interrupts]
            await hitl.ainvoke(Command(resume="from process 2"), HITL)
            done = (await hitl.aget_state(HITL)).values["messages"][-1].content
            return {
                "before": [[type(m).__name__, m.id, m.content] for m in before],
                "after_len": len(after),
                "last": after[-1].content,
                "thread": [thread.message_count, thread.metadata.get("user_id"), thread.status],
                "pending": pending,
                "done": done,
            }

    async def main():
        mode, urls = sys.argv[1], sys.argv[2:]
        fn = write if mode == "write" else resume
        out = {url: await fn(url) for url in urls}
        print(json.dumps(out))

    asyncio.run(main())
    """
)


def _run(mode: str, *urls: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, *urls],
        cwd=ROOT,
        env={"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
async def test_restart_reads_and_resumes(tmp_path, clean_postgres_url: str) -> None:
    await _restart_reads_and_resumes(f"sqlite:///{tmp_path / 'restart.db'}", clean_postgres_url)


@pytest.mark.slow
async def test_restart_reads_and_resumes_mysql(clean_mysql_url: str) -> None:
    await _restart_reads_and_resumes(clean_mysql_url)


async def _restart_reads_and_resumes(*urls: str) -> None:
    _run("write", *urls)
    results = _run("resume", *urls)
    for url in urls:
        r = results[url]
        before = r["before"]
        assert len(before) == 20
        assert [m[2] for m in before if m[0] == "HumanMessage"] == [
            f"restart question {t}" for t in range(5)
        ]
        assert [m[0] for m in before[:4]] == [
            "HumanMessage",
            "AIMessage",
            "ToolMessage",
            "AIMessage",
        ]
        assert before[-1][2] == "answer-0005 after 19 messages: price-0005: 101.5 USD/dmt"
        assert r["thread"] == [20, "u-restart", "idle"]
        assert r["after_len"] == 24
        assert r["last"] == "answer-0006 after 23 messages: price-0006: 101.5 USD/dmt"
        assert r["pending"] == [{"question": "approve?", "n": 1}]
        assert r["done"] == "approved: from process 2"
        # And this (third) process sees the continued conversation.
        async with open_checkpointer(url) as s:
            state = await tool_loop(s).aget_state({"configurable": {"thread_id": "restart"}})
            assert [m.id for m in state.values["messages"][:20]] == [m[1] for m in before]
            assert len(state.values["messages"]) == 24
            assert (await s.aget_thread("restart-hitl")).status == "idle"
