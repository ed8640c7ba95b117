"""The conversation list's looks (every 2 to 16 s while the page is visible) ask the server only for
what the list shows: ids, metadata, status, updated_at and the first message (the title of a thread
without one), never the threads' values, which were ~38 kB a conversation of five answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.service.conftest import Server

pytestmark = pytest.mark.slow

QUESTION = "Chart iron ore since 2020"


def untitled_thread(page: Any, server: Server, question: str) -> str:
    """A conversation made through the API, as `orecast chat` or a script would: no metadata title."""
    tid = page.request.post(f"{server.url}/threads", data={}).json()["thread_id"]
    answer = page.request.post(
        f"{server.url}/threads/{tid}/runs/wait",
        data={"assistant_id": "orecast", "input": {"messages": [{"type": "human", "content": question}]}},
    )
    assert answer.ok, answer.text()
    return tid


def test_the_list_asks_for_no_values_and_still_titles_by_the_first_question(
    open_page: Any, web_server: Server
) -> None:
    page = open_page(web_server)
    tid = untitled_thread(page, web_server, QUESTION)
    searches: list[Any] = []
    page.on("response", lambda r: searches.append(r) if r.url.endswith("/threads/search") else None)
    page.reload()
    item = page.locator(f'[data-testid="thread-item"][data-thread-id="{tid}"]')
    expect(item.get_by_test_id("thread-title")).to_have_text(QUESTION)
    item.get_by_test_id("thread-open").click()
    expect(page.get_by_test_id("chat-title")).to_have_text(QUESTION)
    page.wait_for_timeout(2500)  # a second look of the list
    assert len(searches) >= 2, [r.url for r in searches]
    for response in searches:
        asked = response.request.post_data_json
        assert asked.get("select") and "values" not in asked["select"], asked
        answered = json.loads(response.body())
        assert answered and all("values" not in th for th in answered), str(answered)[:300]


def test_a_conversation_without_title_or_question_text_exports_untitled_in_both_languages(
    open_page: Any, web_server: Server
) -> None:
    """A thread made through the API whose first question is blank has no title: its export was
    headed "# " with nothing after it, and its heading on the page said "新对话" (a new one)."""
    page = open_page(web_server, locale="zh-CN")
    tid = untitled_thread(page, web_server, "   ")
    page.goto(f"{web_server.url}/#/thread/{tid}")
    page.reload()
    expect(page.get_by_test_id("chat-title")).to_have_text("未命名对话")
    with page.expect_download() as md:
        page.get_by_test_id("export-md").click()
    assert open(md.value.path(), encoding="utf-8").read().startswith("# 未命名对话 / Untitled conversation\n")
    with page.expect_download() as js:
        page.get_by_test_id("export-json").click()
    assert json.loads(open(js.value.path(), encoding="utf-8").read())["title"] == "未命名对话 / Untitled conversation"
