"""`export_report` waits for a human: approve writes it, edit writes the edited one, reject writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orecast.agent import AgentSettings, decisions
from tests.agent.conftest import run_turn


async def _ask_for_report(agent: Any, thread_id: str) -> Any:
    await run_turn(agent, thread_id, "铁矿石现在多少钱？")
    await run_turn(agent, thread_id, "Plot iron ore since 2020")
    turn = await run_turn(agent, thread_id, "导出报告")
    assert turn.call("export_report")
    assert turn.results == [], "nothing runs before the human decides"
    (approval,) = turn.approvals
    assert approval.actions[0]["name"] == "export_report"
    assert approval.allowed == [["approve", "edit", "reject"]]
    return approval


async def test_approve_writes_the_report_with_figures(
    agent: Any, thread_id: str, settings: AgentSettings
) -> None:
    approval = await _ask_for_report(agent, thread_id)
    turn = await run_turn(agent, thread_id, decisions({"type": "approve"}))
    (result,) = turn.results
    assert result.ok and result.report
    text = Path(result.report).read_text(encoding="utf-8")
    assert text.startswith(f"# {approval.actions[0]['args']['title']}")
    assert "铁矿石现在多少钱？" in text and "108.64" in text or "US$/dmt" in text
    figures = list((settings.reports_dir).glob("*_figures/*.png"))
    assert len(figures) == 1 and figures[0].name in text
    assert "报告已导出" in turn.text and result.report in turn.text


async def test_edit_changes_title_and_file(agent: Any, thread_id: str, settings: AgentSettings) -> None:
    approval = await _ask_for_report(agent, thread_id)
    args = {**approval.actions[0]["args"], "title": "Weekly ore note", "filename": "weekly-note"}
    turn = await run_turn(
        agent, thread_id,
        decisions({"type": "edit", "edited_action": {"name": "export_report", "args": args}}),
    )
    (result,) = turn.results
    assert result.ok
    path = settings.reports_dir / "weekly-note.md"
    assert result.report == str(path)
    assert path.read_text(encoding="utf-8").startswith("# Weekly ore note")


async def test_reject_writes_nothing_and_says_so(
    agent: Any, thread_id: str, settings: AgentSettings
) -> None:
    await _ask_for_report(agent, thread_id)
    turn = await run_turn(agent, thread_id, decisions({"type": "reject", "message": "not now"}))
    (result,) = turn.results
    assert not result.ok
    assert not settings.reports_dir.exists() or not list(settings.reports_dir.glob("*.md"))
    assert "没有导出" in turn.text and "not now" in turn.text
    after = await agent.aget_state({"configurable": {"thread_id": thread_id}})
    assert after.next == ()
