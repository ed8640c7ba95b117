"""`export_report` waits for a human: approve writes it, edit writes the edited one, reject writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from orecast.agent import AgentSettings, decisions
from orecast.agent.reports import NOTHING_ANSWERED, UNTITLED, report_title
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


async def _edited_report(agent: Any, thread_id: str, **changes: str) -> Any:
    """The result of a report asked for, then approved with its arguments edited."""
    approval = await _ask_for_report(agent, thread_id)
    args = {**approval.actions[0]["args"], **changes}
    turn = await run_turn(
        agent, thread_id,
        decisions({"type": "edit", "edited_action": {"name": "export_report", "args": args}}),
    )
    (result,) = turn.results
    return result


async def test_edit_changes_title_and_file(agent: Any, thread_id: str, settings: AgentSettings) -> None:
    result = await _edited_report(agent, thread_id, title="Weekly ore note", filename="weekly-note")
    assert result.ok
    path = settings.reports_dir / "weekly-note.md"
    assert result.report == str(path)
    assert path.read_text(encoding="utf-8").startswith("# Weekly ore note")


async def test_a_report_edited_to_an_empty_title_is_titled_by_the_first_question(agent: Any, thread_id: str) -> None:
    """It was headed "# " (and named "-<thread>.md"): an empty title is no title."""
    result = await _edited_report(agent, thread_id, title="  ", filename="")
    assert result.ok and result.report
    assert Path(result.report).read_text(encoding="utf-8").startswith("# 铁矿石现在多少钱？\n")
    assert Path(result.report).name.startswith("铁矿石现在多少钱")


def test_a_report_without_title_or_question_is_untitled_in_both_languages() -> None:
    assert report_title("", [AIMessage("hello")]) == UNTITLED == "未命名对话 / Untitled conversation"
    assert report_title(" ", [HumanMessage("\n铁矿石\n  走势 ")]) == "铁矿石 走势"
    assert report_title("Weekly ore note ", [HumanMessage("q")]) == "Weekly ore note"


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


async def _export(agent: Any, thread_id: str, question: str) -> tuple[str, str, str]:
    """(the summary the analyst proposed, the report's text, the analyst's reply) of an approved export."""
    asked = await run_turn(agent, thread_id, question)
    (approval,) = asked.approvals
    done = await run_turn(agent, thread_id, decisions({"type": "approve"}))
    (result,) = done.results
    text = Path(result.report).read_text(encoding="utf-8")
    return approval.actions[0]["args"]["summary"], text, done.text


async def test_a_report_of_a_conversation_without_answers_says_so(agent: Any, thread_id: str) -> None:
    """"导出报告" as the first message: the summary said "汇总本对话中的 0 个问题" ("the 0 questions")
    over an empty section."""
    summary, text, reply = await _export(agent, thread_id, "导出报告")
    assert summary == "本对话还没有已回答的问题，所以这份报告只有标题和说明。"
    assert NOTHING_ANSWERED in text and "### " not in text
    assert "（0 个问答，0 张图）" in reply


async def test_a_report_counts_the_answered_questions_it_holds(agent: Any, thread_id: str) -> None:
    """The summary counted the last 8 questions, the report held them all; nor is an earlier
    request for a report one of its questions."""
    await run_turn(agent, thread_id, "What is the latest iron ore price?")
    summary, text, reply = await _export(agent, thread_id, "Export a report")
    assert summary.startswith("This report holds the one question of this conversation answered")
    assert text.count("\n### ") == 1 and "(1 section, 0 figures)" in reply
    for _ in range(8):
        await run_turn(agent, thread_id, "螺纹钢最新价格")
    summary, text, reply = await _export(agent, thread_id, "导出报告")
    assert summary.startswith("本报告汇总本对话中已回答的 9 个问题")
    assert text.count("\n### ") == 9 and "### Export a report" not in text
    assert "（9 个问答" in reply


async def test_a_report_names_its_own_copy_of_a_chart_not_the_servers_files(
    agent: Any, thread_id: str, settings: AgentSettings
) -> None:
    """The chart's answer said where the server saved its PNG and its ECharts option (for the web
    page); the report repeated both paths, which mean nothing next to it."""
    await _ask_for_report(agent, thread_id)
    turn = await run_turn(agent, thread_id, decisions({"type": "approve"}))
    report = Path(turn.results[0].report)
    text = report.read_text(encoding="utf-8")
    (figure,) = settings.reports_dir.glob("*_figures/*.png")
    assert text.count(f"{figure.parent.name}/{figure.name}") == 2  # in the answer, and as the figure
    assert str(settings.charts_dir) not in text and "ECharts" not in text
