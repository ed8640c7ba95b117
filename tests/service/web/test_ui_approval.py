"""Approvals in the page: the analyst's `export_report` waits for Approve / Edit / Reject; an approved
report downloads; edited arguments are the ones the report is written with; a pending approval
survives a reload."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.service.conftest import Server
from tests.service.web.conftest import ask, messages, wait_idle

pytestmark = pytest.mark.slow


def test_approve_then_download(open_page: Any, web_server: Server) -> None:
    page = open_page(web_server)
    ask(page, "What is the latest iron ore price?")
    ask(page, "Export a report")
    panel = page.get_by_test_id("approval-panel")
    expect(panel.locator('[data-testid="approval-action"][data-tool="export_report"]')).to_be_visible()
    page.reload()  # the pending approval comes back from the server
    expect(panel).to_be_visible()
    panel.get_by_test_id("approval-approve").click()
    wait_idle(page)
    expect(panel).to_have_count(0)
    ready = page.get_by_test_id("report-ready")
    expect(ready).to_contain_text(".md")
    # the answer names the file, not where the server keeps it
    answer = messages(page, "ai").last.locator(".md")
    expect(answer).to_contain_text("Report exported: ")
    expect(answer).not_to_contain_text("/reports/")
    with page.expect_download() as info:
        ready.get_by_test_id("report-download").click()
    download = info.value
    assert download.suggested_filename.endswith(".md")
    text = open(download.path(), encoding="utf-8").read()
    assert "What is the latest iron ore price?" in text and "108.64" in text


def test_reject_with_a_reason(open_page: Any, web_server: Server) -> None:
    page = open_page(web_server, locale="zh-CN")
    ask(page, "铁矿石最新价格")
    ask(page, "导出报告")
    panel = page.get_by_test_id("approval-panel")
    panel.get_by_test_id("approval-reason").fill("not now")
    panel.get_by_test_id("approval-reject").click()
    wait_idle(page)
    expect(panel).to_have_count(0)
    expect(messages(page, "ai").last).to_contain_text("拒绝")
    expect(page.locator('[data-testid="tool-card"][data-tool="export_report"]')).to_have_attribute(
        "data-state", "rejected"
    )
    expect(page.get_by_test_id("report-ready")).to_have_count(0)


def test_edit_the_arguments_before_approving(open_page: Any, web_server: Server) -> None:
    page = open_page(web_server)
    ask(page, "What is the latest iron ore price?")
    ask(page, "Export a report")
    panel = page.get_by_test_id("approval-panel")
    panel.get_by_test_id("approval-edit").click()
    args_box = panel.get_by_test_id("approval-edit-args")
    args = json.loads(args_box.input_value())
    assert "title" in args
    args_box.fill("{ not json")  # a typo is caught on the page and nothing is sent
    panel.get_by_test_id("approval-submit-edit").click()
    expect(panel.get_by_role("alert")).to_be_visible()
    expect(panel).to_be_visible()
    args_box.fill(json.dumps({**args, "title": "Edited title 编辑过", "filename": "edited-by-web"}))
    panel.get_by_test_id("approval-submit-edit").click()
    wait_idle(page)
    expect(panel).to_have_count(0)
    ready = page.get_by_test_id("report-ready")
    expect(ready).to_contain_text("edited-by-web.md")
    with page.expect_download() as info:
        ready.get_by_test_id("report-download").click()
    text = open(info.value.path(), encoding="utf-8").read()
    assert text.startswith("# Edited title 编辑过\n")
    assert "What is the latest iron ore price?" in text


def test_a_question_asked_instead_of_deciding_leaves_the_export_not_run(open_page: Any, web_server: Server) -> None:
    """Asking something else while an export awaits approval drops the export (deepagents answers
    the call "did not complete"): its card says it did not run, not that it failed."""
    page = open_page(web_server)
    ask(page, "What is the latest iron ore price?")
    ask(page, "Export a report")
    expect(page.get_by_test_id("approval-panel")).to_be_visible()
    ask(page, "How volatile was iron ore over the past year?")
    expect(page.get_by_test_id("approval-panel")).to_have_count(0)
    card = page.locator('[data-testid="tool-card"][data-tool="export_report"]')
    expect(card).to_have_attribute("data-state", "cancelled")
    expect(card).to_contain_text("not run")
    expect(card).not_to_contain_text("failed")
    expect(card.get_by_test_id("tool-duration")).to_have_count(0)


def test_edited_arguments_that_are_no_json_object_are_explained_in_the_page_language(
    open_page: Any, web_server: Server
) -> None:
    """Broken JSON showed the browser's own parser message (English in a Chinese page), and a JSON
    list was sent to the server as the tool's arguments: both now stay in the page, explained."""
    page = open_page(web_server, locale="zh-CN")
    ask(page, "铁矿石现在多少钱？")
    ask(page, "导出报告")
    panel = page.get_by_test_id("approval-panel")
    panel.get_by_test_id("approval-edit").click()
    edit = panel.get_by_test_id("approval-edit-args")
    args = {**json.loads(edit.input_value()), "filename": "edited-note.md"}
    for text in ['{"filename": "a.md",}', '["a.md"]']:
        edit.fill(text)
        panel.get_by_test_id("approval-submit-edit").click()
        expect(panel.get_by_role("alert")).to_contain_text("参数必须是一个 JSON 对象")
        expect(panel.get_by_role("alert")).not_to_contain_text("JSON at position")
    expect(page.locator('[data-testid="tool-card"][data-tool="export_report"]')).to_have_attribute("data-state", "waiting")
    edit.fill(json.dumps(args, ensure_ascii=False))
    panel.get_by_test_id("approval-submit-edit").click()
    wait_idle(page)
    expect(page.get_by_test_id("report-ready")).to_contain_text("edited-note.md")


def test_approval_and_history_words_in_one_language(open_page: Any, web_server: Server) -> None:
    """The approval's description came in both languages at once ("导出报告需要批准 / Exporting a
    report needs approval") and the history panel's detail said "next:" in a Chinese page."""
    page = open_page(web_server, locale="zh-CN")
    ask(page, "铁矿石现在多少钱？")
    ask(page, "导出报告")
    action = page.get_by_test_id("approval-action")
    expect(action).to_contain_text("导出报告需要批准")
    expect(action).not_to_contain_text("Exporting")
    page.get_by_test_id("history-toggle").click()
    page.get_by_test_id("history-item").first.click()  # the head: waiting for the approval
    detail = page.get_by_test_id("history-detail")
    expect(detail).to_contain_text("下一步: ")
    expect(detail).not_to_contain_text("next:")
    page.get_by_test_id("lang-en").click()
    expect(action).to_contain_text("Exporting a report needs approval")
    expect(action).not_to_contain_text("导出报告需要批准")
    expect(detail).to_contain_text("next: ")
