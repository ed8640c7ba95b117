"""docs/operations.md's audited `--graph` example: its tool calls are audited in the store serving it."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore

from orecast.checkpoint import open_checkpointer
from orecast.service.graphs import load_graph

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "audited_graph.py"


async def test_served_graph_is_audited(store_url: str) -> None:
    async with open_checkpointer(store_url) as saver, AsyncExitStack() as resources:
        served = (await load_graph("audited", f"{EXAMPLE}:graph", saver, InMemoryStore(), resources)).graph
        config = {"configurable": {"thread_id": "served"}}
        await served.ainvoke({"messages": [HumanMessage("65% Fe")]}, config)
        await served.ainvoke({"messages": [HumanMessage("58% Fe")]}, config)
        rows = list(reversed(await saver.aaudit_tool_calls(thread_id="served")))
    assert [(r.tool, r.args, r.status) for r in rows] == [
        ("lookup_price", {"benchmark": "65% Fe"}, "ok"), ("lookup_price", {"benchmark": "58% Fe"}, "error")]
    assert rows[0].result == "65% Fe: 117.0 US$/dmt" and "no benchmark '58% Fe'" in rows[1].error
    assert all(r.checkpoint_id and r.duration_ms is not None for r in rows)


def test_example_runs_as_documented(tmp_path: Path) -> None:
    import asyncio
    import runpy

    lines = asyncio.run(runpy.run_path(str(EXAMPLE))["main"](f"sqlite:///{tmp_path / 'demo.sqlite3'}"))
    assert [line.rsplit(" ", 2)[0] for line in lines] == ["lookup_price 62% Fe ok", "lookup_price 58% Fe error"]
