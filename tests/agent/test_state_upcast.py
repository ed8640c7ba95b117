"""The analyst's state version 2: a thread the version-1 analyst wrote loads, exports and migrates.

Version 1 kept an exported report in `reports` as its path; version 2 keeps a record. The old thread is
written through the real analyst graph with the saver at state version 1 (real offline turns, and the
reports as version 1 recorded them), then read and continued by the analyst as it is now.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from orecast.agent import AgentSettings, build_agent, decisions
from orecast.agent.offline import OfflineAnalyst
from orecast.agent.state import ANALYST_STATE
from orecast.checkpoint import StateSchema, open_checkpointer
from orecast.cli.main import app
from tests.agent.conftest import run_turn
from tests.checkpoint.conftest import raw_sql

OLD_REPORTS = ["/srv/orecast/reports/ore-weekly.md", "/srv/orecast/reports/ore-weekly.md"]


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def analyst(saver: Any, settings: AgentSettings, schema: StateSchema | None = None) -> Any:
    agent = build_agent(saver, model=OfflineAnalyst(), settings=settings)
    if schema is None:
        return agent
    return agent.copy({"checkpointer": saver.with_state_schema(schema)})


async def write_version_1_thread(url: str, settings: AgentSettings, thread_id: str) -> None:
    async with open_checkpointer(url) as saver:
        old = analyst(saver, settings, StateSchema(version=1))
        await run_turn(old, thread_id, "铁矿石现在多少钱？")
        await old.aupdate_state(cfg(thread_id), {"reports": OLD_REPORTS})
        await run_turn(old, thread_id, "Plot iron ore since 2020")
    assert raw_sql(url, "SELECT DISTINCT schema_version FROM checkpoints") == [(1,)]


async def export_report(agent: Any, thread_id: str) -> Any:
    await run_turn(agent, thread_id, "导出报告")
    turn = await run_turn(agent, thread_id, decisions({"type": "approve"}))
    (result,) = turn.results
    assert result.ok and result.report
    return result


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'analyst.sqlite3'}"


async def test_version_1_thread_loads_and_exports_with_the_version_2_analyst(
    store: str, settings: AgentSettings, thread_id: str
) -> None:
    await write_version_1_thread(store, settings, thread_id)
    async with open_checkpointer(store) as saver:
        agent = analyst(saver, settings)
        state = await agent.aget_state(cfg(thread_id))
        assert [r["path"] for r in state.values["reports"]] == OLD_REPORTS
        assert [r["revision"] for r in state.values["reports"]] == [1, 2]
        assert len(state.values["messages"]) >= 4  # the old turns are all there
        result = await export_report(agent, thread_id)
        reports = (await agent.aget_state(cfg(thread_id))).values["reports"]
        assert reports[:2] == [
            {"path": p, "title": "ore-weekly", "sections": 0, "figures": 0, "revision": n}
            for n, p in enumerate(OLD_REPORTS, 1)
        ]
        assert reports[2]["path"] == result.report and reports[2]["revision"] == 1
        assert reports[2]["sections"] == 2 and reports[2]["figures"] == 1
        # Every earlier checkpoint that had reports reads them as records too.
        async for snap in agent.aget_state_history(cfg(thread_id)):
            assert all(isinstance(r, dict) for r in snap.values.get("reports", []))


async def test_an_approval_the_version_1_analyst_asked_for_is_given_to_version_2(
    store: str, settings: AgentSettings, thread_id: str
) -> None:
    await write_version_1_thread(store, settings, thread_id)
    async with open_checkpointer(store) as saver:
        old = analyst(saver, settings, StateSchema(version=1))
        (approval,) = (await run_turn(old, thread_id, "导出报告")).approvals  # then the upgrade
    async with open_checkpointer(store) as saver:
        agent = analyst(saver, settings)
        turn = await run_turn(agent, thread_id, decisions({"type": "approve"}))
        (result,) = turn.results
        assert result.ok
        reports = (await agent.aget_state(cfg(thread_id))).values["reports"]
        assert [r["revision"] for r in reports] == [1, 2, 1] and reports[2]["path"] == result.report
        async for snap in agent.aget_state_history(cfg(thread_id)):
            assert all(isinstance(r, dict) for r in snap.values.get("reports", []))
    # The version-2 writes for the interrupted version-1 checkpoint say which version wrote them.
    documents = [json.loads(d) for (d,) in raw_sql(store, "SELECT checkpoint FROM checkpoints WHERE schema_version = 1")]
    assert [d["write_versions"] for d in documents if "write_versions" in d] != []


async def test_without_the_upcaster_the_version_2_analyst_cannot_export(
    store: str, settings: AgentSettings, thread_id: str
) -> None:
    await write_version_1_thread(store, settings, thread_id)
    async with open_checkpointer(store) as saver:
        agent = analyst(saver, settings, StateSchema(version=ANALYST_STATE.version))
        await run_turn(agent, thread_id, "导出报告")
        with pytest.raises(TypeError):
            await run_turn(agent, thread_id, decisions({"type": "approve"}))


async def _history(store: str, settings: AgentSettings, thread_id: str) -> list[dict[str, Any]]:
    async with open_checkpointer(store) as saver:
        return [s.values async for s in analyst(saver, settings).aget_state_history(cfg(thread_id))]


async def _runs_on_as_stored(store: str, settings: AgentSettings, thread_id: str) -> None:
    async with open_checkpointer(store) as saver:
        raw = await saver.aget_tuple(cfg(thread_id))  # no schema: as stored, now records
        assert raw.checkpoint["channel_values"]["reports"][0]["title"] == "ore-weekly"
        await export_report(analyst(saver, settings), thread_id)


def test_migrate_state_command_rewrites_the_analyst_thread(
    store: str, settings: AgentSettings, thread_id: str
) -> None:
    asyncio.run(write_version_1_thread(store, settings, thread_id))
    before = asyncio.run(_history(store, settings, thread_id))
    items_before = raw_sql(store, "SELECT COUNT(*) FROM items")

    runner = CliRunner()
    dry = runner.invoke(app, ["db", "migrate-state", "--dry-run", "--json", "--database-url", store])
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)["threads"] == 1
    assert raw_sql(store, "SELECT DISTINCT schema_version FROM checkpoints") == [(1,)]

    done = runner.invoke(app, ["db", "migrate-state", "--batch", "10", "--database-url", store])
    assert done.exit_code == 0, done.output
    assert "rewrote 1 thread to state version 2" in done.stdout
    assert raw_sql(store, "SELECT DISTINCT schema_version FROM checkpoints") == [(2,)]
    # The two old records are new items; no message was stored again.
    assert raw_sql(store, "SELECT COUNT(*) FROM items") == [(items_before[0][0] + 2,)]
    assert asyncio.run(_history(store, settings, thread_id)) == before
    asyncio.run(_runs_on_as_stored(store, settings, thread_id))
    again = runner.invoke(app, ["db", "migrate-state", "--json", "--database-url", store])
    assert json.loads(again.stdout)["threads"] == 0
