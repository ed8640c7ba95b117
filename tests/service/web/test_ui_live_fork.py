"""A fork while its answer streams: an edited question (or a regenerated answer) had no "‹ 2 / 2 ›" for
as long as its run went on (useStream reads the thread's history again only when a run ends), so
the branch it replaced could not be looked at meanwhile either. The slow test graph holds its runs
(`GATE`), so the test acts while the fork's answer is surely still streaming."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.service.conftest import Server
from tests.service.web.conftest import messages, questions, wait_idle
from tests.service.web.slow_graph import GATE
from tests.service.web.test_ui_runs import held, send  # noqa: F401  (a fixture; slow_server is the conftest's)

pytestmark = pytest.mark.slow


def position(page: Any, role: str) -> Any:
    return messages(page, role).first.get_by_test_id("branch-position")


def answered(open_page: Any, server: Server, question: str) -> Any:
    """A page where `question` was answered; the runs started after it are held (`GATE`)."""
    page = open_page(server)
    GATE.set()
    send(page, question)
    wait_idle(page)
    GATE.clear()
    return page


def test_an_edited_question_has_its_branches_while_its_answer_streams(
    open_page: Any, slow_server: Server, held: None,  # noqa: F811  (the fixtures imported above)
) -> None:
    page = answered(open_page, slow_server, "first")
    messages(page, "human").first.get_by_test_id("edit-button").click()
    page.get_by_test_id("edit-input").fill("edited")
    page.get_by_test_id("edit-submit").click()
    expect(messages(page, "ai").last).to_contain_text("slow1")
    expect(page.get_by_test_id("stop-button")).to_be_visible()  # the fork's run is going on
    expect(questions(page)).to_have_text(["edited"])
    expect(position(page, "human")).to_have_text("2 / 2")
    # the branch it replaced, as it was, while the new answer goes on
    position(page, "human").locator("..").get_by_test_id("branch-prev").click()
    expect(questions(page)).to_have_text(["first"])
    expect(position(page, "human")).to_have_text("1 / 2")
    expect(messages(page, "ai").last).to_contain_text("answer: first")
    expect(page.get_by_test_id("stop-button")).to_be_visible()
    page.get_by_test_id("branch-next").first.click()
    expect(questions(page)).to_have_text(["edited"])
    expect(messages(page, "ai").last).to_contain_text("slow1")
    GATE.set()
    wait_idle(page)
    expect(messages(page, "ai").last).to_contain_text("answer: edited")
    expect(position(page, "human")).to_have_text("2 / 2")
    page.get_by_test_id("branch-prev").first.click()
    expect(questions(page)).to_have_text(["first"])


def test_a_regenerated_answer_has_its_branches_while_it_streams(
    open_page: Any, slow_server: Server, held: None,  # noqa: F811  (the fixtures imported above)
) -> None:
    page = answered(open_page, slow_server, "question")
    first_id = messages(page, "ai").last.get_attribute("data-message-id")
    messages(page, "ai").last.get_by_test_id("regenerate-button").click()
    expect(page.get_by_test_id("stop-button")).to_be_visible()
    expect(messages(page, "ai").last).not_to_have_attribute("data-message-id", first_id or "")
    expect(messages(page, "ai").last).to_contain_text("slow1")
    expect(position(page, "ai")).to_have_text("2 / 2")
    page.get_by_test_id("branch-prev").first.click()
    expect(position(page, "ai")).to_have_text("1 / 2")
    expect(messages(page, "ai").last).to_have_attribute("data-message-id", first_id or "")
    expect(messages(page, "ai").last).to_contain_text("answer: question")
    page.get_by_test_id("branch-next").first.click()
    expect(messages(page, "ai").last).not_to_have_attribute("data-message-id", first_id or "")
    GATE.set()
    wait_idle(page)
    expect(position(page, "ai")).to_have_text("2 / 2")
    page.get_by_test_id("branch-prev").first.click()
    expect(messages(page, "ai").last).to_have_attribute("data-message-id", first_id or "")
