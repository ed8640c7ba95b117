"""The real analyst's thread — a subagent's namespace, deepagents' DeltaChannels, an approval waiting —
exported from SQLite and imported into PostgreSQL: the same history, and it carries on the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orecast.agent import AgentSettings, build_agent, decisions
from orecast.agent.offline import OfflineAnalyst
from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.archive import export_thread, import_archive, read_archive
from tests.agent.conftest import run_turn
from tests.checkpoint.test_import import snapshot


async def history(agent: Any, thread_id: str) -> list[Any]:
    return [snapshot(s) async for s in agent.aget_state_history({"configurable": {"thread_id": thread_id}})]


def audit(calls: list[Any]) -> list[Any]:
    return sorted(((c.call_id, c.tool, c.args, c.result, c.status) for c in calls), key=repr)


@pytest.mark.slow  # three analyst turns with a subagent: ~18 s
async def test_analyst_thread_round_trip(
    tmp_path: Path, clean_postgres_url: str, settings: AgentSettings, thread_id: str
) -> None:
    async with (
        open_checkpointer(f"sqlite:///{tmp_path / 'source.sqlite3'}") as source,
        open_checkpointer(clean_postgres_url) as target,
    ):
        agent = build_agent(source, model=OfflineAnalyst(), settings=settings)
        await run_turn(agent, thread_id, "铁矿石现在多少钱？")
        await run_turn(agent, thread_id, "哪种方法预测铁矿石最好？")  # delegated to the quant subagent
        asked = await run_turn(agent, thread_id, "导出报告")
        assert asked.approvals  # waits for a human

        summary = await export_thread(source, thread_id, tmp_path / "analyst.gz")
        assert any(ns.startswith("tools:") for ns in summary.namespaces)
        await import_archive(target, read_archive(target, tmp_path / "analyst.gz"))
        copy = build_agent(target, model=OfflineAnalyst(), settings=settings)
        assert await history(copy, thread_id) == await history(agent, thread_id)
        # The same audit rows; item numbers are the store's own (the import numbers messages as it
        # stores them, namespace by namespace in checkpoint order).
        assert audit(await target.atool_calls(thread_id)) == audit(await source.atool_calls(thread_id))
        assert (await target.aget_thread(thread_id)).status == "interrupted"

        answers = []
        for graph in (agent, copy):
            turn = await run_turn(graph, thread_id, decisions({"type": "reject", "message": "not now"}))
            state = await graph.aget_state({"configurable": {"thread_id": thread_id}})
            answers.append((turn.text, state.next, len(state.values["messages"])))
        assert answers[0] == answers[1] and "not now" in answers[0][0]
