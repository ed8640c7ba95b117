"""The conversation list's looks (every 2 to 16 s while the page is visible) ask the server only for
what the list shows: ids, metadata, status, updated_at and the first message (the title of a thread
without one), never the threads' values, which were ~38 kB a conversation of five answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from playwright.sync_api import expect

from tests.service.conftest import Server
from tests.service.web.conftest import web_settings

pytestmark = pytest.mark.slow

QUESTION = "Chart iron ore since 2020"


def untitled_thread(page: Any, server: Server, question: str) -> str:
    """A conversation made through the API, as `orecast chat` or a script would: no metadata title."""
    tid = page.request.post(f"{server.url}/threads", data={}).json()["thread_id"]
    answer = page.request.post(
        f"{server.url}/threads/{tid}/runs/wait",
        data={
            "assistant_id": "orecast",
            "input": {"messages": [{"type": "human", "content": question}]},
        },
    )
    assert answer.ok, answer.text()
    return tid


def test_the_list_asks_for_no_values_and_still_titles_by_the_first_question(
    open_page: Any, web_server: Server
) -> None:
    page = open_page(web_server)
    tid = untitled_thread(page, web_server, QUESTION)
    # Only the reloaded page's searches: one the page made before could still answer once the reload
    # began, and its body is gone with that page (Playwright: "No resource with given identifier").
    reloaded: list[bool] = []
    asked_since: set[Any] = set()
    searches: list[Any] = []

    def on_request(request: Any) -> None:
        if request.is_navigation_request():
            reloaded.append(True)
        elif reloaded and request.url.endswith("/threads/search"):
            asked_since.add(request)

    page.on("request", on_request)
    page.on("response", lambda r: searches.append(r) if r.request in asked_since else None)
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
    assert (
        open(md.value.path(), encoding="utf-8")
        .read()
        .startswith("# 未命名对话 / Untitled conversation\n")
    )
    with page.expect_download() as js:
        page.get_by_test_id("export-json").click()
    assert (
        json.loads(open(js.value.path(), encoding="utf-8").read())["title"]
        == "未命名对话 / Untitled conversation"
    )


LISTED = 200  # the newest conversations the list looks at (web/src/api.ts LIST_QUERY)


@pytest.fixture(scope="module")
def crowded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A service holding more conversations than the list looks at: the oldest is "the oldest one"."""
    running = Server.start(web_settings(tmp_path_factory.mktemp("crowded")))
    client = get_sync_client(url=running.url, api_key=None)
    for i in range(LISTED + 5):
        client.threads.create(
            metadata={"title": "the oldest one" if i == 0 else f"conversation {i}"}
        )
    yield running
    running.stop()


def test_conversations_older_than_the_list_are_read_on_request(
    open_page: Any, crowded_server: Server
) -> None:
    """The list showed the newest 200 conversations and searched only those: an older one could be
    neither seen nor found. It is read, a page at a time, with "show older conversations"."""
    page = open_page(crowded_server)
    items = page.get_by_test_id("thread-item")
    expect(items).to_have_count(LISTED)
    page.get_by_test_id("thread-search").fill("oldest")
    expect(items).to_have_count(0)
    page.get_by_test_id("thread-older").click()
    expect(items).to_have_count(1)
    expect(page.get_by_test_id("thread-older")).to_have_count(0)  # the page read was not full
    items.get_by_test_id("thread-open").click()
    expect(page.get_by_test_id("chat-title")).to_have_text("the oldest one")
    # Renamed and deleted from an older page: the page shows it, not only the server.
    items.get_by_test_id("thread-rename").click()
    page.get_by_test_id("thread-rename-input").fill("the oldest, renamed")
    page.get_by_test_id("thread-rename-input").press("Enter")
    page.get_by_test_id("thread-search").fill("renamed")
    expect(items.get_by_test_id("thread-title")).to_have_text("the oldest, renamed")
    items.get_by_test_id("thread-delete").click()
    page.get_by_test_id("thread-delete-yes").click()
    expect(items).to_have_count(0)
    page.get_by_test_id("thread-search").fill("")
    expect(items).to_have_count(LISTED + 4)
