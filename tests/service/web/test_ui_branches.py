"""Time travel in the page: edit an earlier question (a fork from its parent checkpoint), regenerate
an answer, switch between the branches, and branch from a checkpoint of the history panel."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from playwright.sync_api import expect

from tests.service.conftest import Server
from tests.service.web.conftest import ask, messages, questions, thread_id_of, wait_idle

pytestmark = pytest.mark.slow

FIRST = "What is the latest iron ore price?"
SECOND = "How volatile was iron ore over the past year?"
EDITED = "What is the latest rebar price?"


def test_edit_and_switch_branches(open_page: Any, web_server: Server) -> None:
    page = open_page(web_server)
    ask(page, FIRST)
    ask(page, SECOND)
    first = page.locator('[data-testid="message"][data-role="human"]').first
    first.get_by_test_id("edit-button").click()
    page.get_by_test_id("edit-input").fill(EDITED)
    page.get_by_test_id("edit-submit").click()
    wait_idle(page)
    # the new branch has only the edited question; its switcher says 2 / 2
    expect(questions(page)).to_have_text([EDITED])
    switcher = page.locator('[data-testid="message"][data-role="human"]').first.get_by_test_id(
        "branch-switcher"
    )
    expect(switcher.get_by_test_id("branch-position")).to_have_text("2 / 2")
    switcher.get_by_test_id("branch-prev").click()
    expect(questions(page)).to_have_text([FIRST, SECOND])
    expect(page.get_by_test_id("branch-position").first).to_have_text("1 / 2")
    page.reload()  # branches are stored: the thread's head comes back, and the other branch with it
    expect(questions(page)).to_have_text([EDITED])
    page.get_by_test_id("branch-prev").first.click()
    expect(questions(page)).to_have_text([FIRST, SECOND])


def test_history_panel_branch_from_here(open_page: Any, web_server: Server) -> None:
    page = open_page(web_server)
    ask(page, FIRST)
    ask(page, SECOND)
    page.get_by_test_id("history-toggle").click()
    history = page.get_by_test_id("history-panel")
    items = history.get_by_test_id("history-item")
    expect(items.first).to_be_visible()
    # the checkpoint that ended the first run (asked the API): one question, answered, nothing next
    client = get_sync_client(url=web_server.url)
    states = client.threads.get_history(thread_id_of(page), limit=100)
    target = next(
        s["checkpoint"]["checkpoint_id"]
        for s in states
        if not s["next"] and [m["type"] for m in s["values"]["messages"]].count("human") == 1
    )
    history.locator(f'[data-testid="history-item"][data-checkpoint-id="{target}"]').click()
    detail = history.get_by_test_id("history-detail")
    expect(detail).to_contain_text(FIRST)
    expect(detail).not_to_contain_text(SECOND)
    detail.get_by_test_id("history-branch").click()
    expect(page.get_by_test_id("fork-banner")).to_be_visible()
    expect(questions(page)).to_have_text([FIRST])
    ask(page, EDITED)
    expect(page.get_by_test_id("fork-banner")).to_have_count(0)
    expect(questions(page)).to_have_text([FIRST, EDITED])
    expect(page.get_by_test_id("branch-position").last).to_have_text("2 / 2")


def test_regenerate_makes_a_second_answer(open_page: Any, web_server: Server) -> None:
    page = open_page(web_server)
    ask(page, FIRST)
    answer = messages(page, "ai").last
    first_id = answer.get_attribute("data-message-id")
    answer.get_by_test_id("regenerate-button").click()
    wait_idle(page)
    # a sibling of the answer, from the same question: 2 / 2, and the first one is still there
    answer = messages(page, "ai").last
    expect(answer.get_by_test_id("branch-position")).to_have_text("2 / 2")
    expect(questions(page)).to_have_text([FIRST])
    second_id = answer.get_attribute("data-message-id")
    assert second_id != first_id
    answer.get_by_test_id("branch-prev").click()
    expect(messages(page, "ai").last.get_by_test_id("branch-position")).to_have_text("1 / 2")
    expect(messages(page, "ai").last).to_have_attribute("data-message-id", first_id or "")
    states = get_sync_client(url=web_server.url).threads.get_history(thread_id_of(page), limit=100)
    answered = {
        m["id"]
        for s in states
        for m in s["values"].get("messages", [])
        if m["type"] == "ai" and not s["next"]
    }
    assert {first_id, second_id} <= answered


def test_a_question_on_an_older_branch_stays_in_view(open_page: Any, web_server: Server) -> None:
    """Going back to branch 1 / 2 and asking there continues that branch: the page shows the new
    question and answer, after the run and after a reload (the SDK alone showed branch 2 again,
    each fork's newest child, and the question seemed lost)."""
    page = open_page(web_server)
    ask(page, FIRST)
    page.locator('[data-testid="message"][data-role="human"]').first.get_by_test_id(
        "edit-button"
    ).click()
    page.get_by_test_id("edit-input").fill(EDITED)
    page.get_by_test_id("edit-submit").click()
    wait_idle(page)
    page.get_by_test_id("branch-prev").first.click()
    expect(questions(page)).to_have_text([FIRST])
    ask(page, SECOND)
    expect(questions(page)).to_have_text([FIRST, SECOND])
    expect(page.get_by_test_id("branch-position").first).to_have_text("1 / 2")
    expect(messages(page, "ai")).to_have_count(2)
    page.reload()
    expect(questions(page)).to_have_text([FIRST, SECOND])
    expect(page.get_by_test_id("branch-position").first).to_have_text("1 / 2")
    page.get_by_test_id("branch-next").first.click()  # the edited branch is still one click away
    expect(questions(page)).to_have_text([EDITED])


def test_history_counts_one_message_in_the_singular(open_page: Any, web_server: Server) -> None:
    """The checkpoint of the question alone said "1 messages"."""
    page = open_page(web_server)
    ask(page, FIRST)
    page.get_by_test_id("history-toggle").click()
    history = page.get_by_test_id("history-panel")
    states = get_sync_client(url=web_server.url).threads.get_history(thread_id_of(page), limit=100)
    one = next(
        s["checkpoint"]["checkpoint_id"]
        for s in states
        if len(s["values"].get("messages", [])) == 1
    )
    history.locator(f'[data-testid="history-item"][data-checkpoint-id="{one}"]').click()
    expect(history.get_by_test_id("history-detail")).to_contain_text("· 1 message ·")
    many = next(
        s["checkpoint"]["checkpoint_id"]
        for s in states
        if len(s["values"].get("messages", [])) == 2
    )
    history.locator(f'[data-testid="history-item"][data-checkpoint-id="{many}"]').click()
    expect(history.get_by_test_id("history-detail")).to_contain_text("· 2 messages")


def test_the_title_follows_an_edited_first_question_unless_renamed(
    open_page: Any, web_server: Server
) -> None:
    """The title (metadata `title`, which the API, the CLI and the list show) is the first question;
    after that question was edited the list and the heading still said the old one. A title the user
    gave stays as it is."""
    page = open_page(web_server)
    ask(page, FIRST)
    tid = thread_id_of(page)
    item = page.locator(f'[data-testid="thread-item"][data-thread-id="{tid}"]')
    expect(item.get_by_test_id("thread-title")).to_have_text(FIRST)
    page.locator('[data-testid="message"][data-role="human"]').first.get_by_test_id(
        "edit-button"
    ).click()
    page.get_by_test_id("edit-input").fill(EDITED)
    page.get_by_test_id("edit-submit").click()
    wait_idle(page)
    expect(item.get_by_test_id("thread-title")).to_have_text(EDITED)
    expect(page.get_by_test_id("chat-title")).to_have_text(EDITED)
    client = get_sync_client(url=web_server.url)
    assert client.threads.get(tid)["metadata"]["title"] == EDITED
    # renamed by the user: an edit of the first question leaves the name alone
    client.threads.update(tid, metadata={"title": "My ore notes"})
    page.reload()
    expect(item.get_by_test_id("thread-title")).to_have_text("My ore notes")
    page.locator('[data-testid="message"][data-role="human"]').first.get_by_test_id(
        "edit-button"
    ).click()
    page.get_by_test_id("edit-input").fill(SECOND)
    page.get_by_test_id("edit-submit").click()
    wait_idle(page)
    expect(questions(page)).to_have_text([SECOND])
    expect(item.get_by_test_id("thread-title")).to_have_text("My ore notes")
    assert client.threads.get(tid)["metadata"]["title"] == "My ore notes"


def test_the_history_names_steps_and_messages_in_the_pages_language(
    open_page: Any, web_server: Server
) -> None:
    """A Chinese page's history listed "human …", "ai …" (nothing to read for a tool call) and
    "tool …", and named a turn's steps only by code ("__start__"): the turn's first step now says its
    question, and each message who wrote it."""
    page = open_page(web_server, locale="zh-CN")
    ask(page, "铁矿石最近一年波动率")
    page.get_by_test_id("history-toggle").click()
    expect(
        page.get_by_test_id("history-node").filter(has_text="提问：铁矿石最近一年波动率")
    ).to_have_count(1)
    page.get_by_test_id("history-item").first.click()
    detail = page.get_by_test_id("history-detail")
    expect(detail).to_contain_text("提问 铁矿石最近一年波动率")
    expect(detail).to_contain_text("分析师 调用 describe_series")
    expect(detail).to_contain_text("工具结果 describe_series: ")
    expect(detail.locator("b").filter(has_text=re.compile(r"^(human|ai|tool)$"))).to_have_count(0)
