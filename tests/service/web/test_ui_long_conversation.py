"""A conversation longer than the history the page reads (500 checkpoints): an answer streams
without freezing the page and reads back only the checkpoints it wrote, and a question whose start is
older than that history cannot be edited (it has no known checkpoint to fork from) while a recent one
can. A slow test graph is served as `orecast`; the conversation is written with `update_state`, a
checkpoint per message (`long_thread`, web/conftest.py). Its history's own tests are in
test_ui_long_conversation_history.py, on a server and thread of their own: each file runs whole on one
worker of `make test`, and the two together took 150-220 s."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph_sdk import get_sync_client

from tests.service.conftest import Server
from tests.service.web.conftest import LONG_CHECKPOINTS, messages, wait_idle

pytestmark = pytest.mark.slow

# The page's long tasks (> 50 ms), from opening the conversation to the answer's end, measured with
# 260 questions: 3 of them, 440 ms in all; without the patch of useStream (web/src/lib/sdkPatch.ts)
# 29, 5.2 s in all (each render re-scanned the 500 checkpoints once per message).
BLOCKED_MS = 2_000
WATCH_LONG_TASKS = """window.longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.longTasks.push(e.duration); })
  .observe({ type: "longtask", buffered: true });"""


def test_an_answer_streams_without_freezing_a_long_conversation(
    open_page: Any, slow_server: Server, long_thread: str
) -> None:
    page = open_page(slow_server, path=f"/#/thread/{long_thread}")
    page.add_init_script(WATCH_LONG_TASKS)
    page.reload()
    messages(page, "human").nth(200).wait_for()  # the conversation is shown (other tests add to it)
    page.get_by_test_id("composer-input").fill("one more")
    page.get_by_test_id("composer-input").press("Enter")
    page.get_by_test_id("stop-button").wait_for()
    wait_idle(page)
    messages(page, "ai").last.get_by_text("answer: one more").wait_for()
    blocked = sum(page.evaluate("window.longTasks"))
    assert blocked < BLOCKED_MS, f"the page was busy for {blocked:.0f} ms"


def test_only_questions_that_start_in_the_history_read_can_be_edited(
    open_page: Any, slow_server: Server, long_thread: str
) -> None:
    page = open_page(slow_server, path=f"/#/thread/{long_thread}")
    asked = messages(page, "human")
    asked.nth(LONG_CHECKPOINTS // 2 - 1).get_by_test_id("edit-button").wait_for()
    # The history read starts at the message written 500 checkpoints ago: the questions before it
    # have no checkpoint to fork from (an edit of the first one forked from that checkpoint, after it).
    assert asked.first.get_by_test_id("edit-button").count() == 0
    assert messages(page, "ai").first.get_by_test_id("regenerate-button").count() == 0
    recent = asked.nth(LONG_CHECKPOINTS // 2 - 2)
    recent.get_by_test_id("edit-button").click()
    page.get_by_test_id("edit-input").fill("question edited")
    page.get_by_test_id("edit-submit").click()
    wait_idle(page)
    messages(page, "ai").last.get_by_text("answer: question edited").wait_for()
    shown = messages(page, "human").locator(".bubble").all_inner_texts()
    assert shown[-1] == "question edited"
    assert shown[-2] == f"question {LONG_CHECKPOINTS // 2 - 3}", (
        "the edit replaced the question, after the one before it"
    )


def history_reads(page: Any) -> list[list[Any]]:
    """The checkpoints of each history response the page gets from now on."""
    read: list[list[Any]] = []

    def on_response(response: Any) -> None:
        if response.url.endswith("/history"):
            read.append(response.json())

    page.on("response", on_response)
    return read


def test_an_answer_reads_only_the_new_checkpoints_of_a_long_conversation(
    open_page: Any, slow_server: Server, long_thread: str
) -> None:
    """After each answer the page read the newest 500 checkpoints again (56 MB and 2–6 s of the
    server in a conversation of 60 questions of the analyst); it now reads the new ones and the
    known head, and the conversation is the same as after a reload."""
    page = open_page(slow_server, path=f"/#/thread/{long_thread}")
    messages(page, "human").last.get_by_test_id("edit-button").wait_for(state="attached")  # history in
    page.wait_for_timeout(500)
    read = history_reads(page)
    client = get_sync_client(url=slow_server.url, api_key=None)
    # The newest checkpoint before the answer: the checkpoints listed before it (newest first) are the
    # ones the answer wrote (reading the whole history twice to count them took 10-20 s of the test).
    [head_before] = client.threads.get_history(long_thread, limit=1)
    page.get_by_test_id("composer-input").fill("one more, read lightly")
    page.get_by_test_id("composer-input").press("Enter")
    page.get_by_test_id("stop-button").wait_for()
    wait_idle(page)
    messages(page, "ai").last.get_by_text("answer: one more, read lightly").wait_for()
    messages(page, "human").last.get_by_test_id("edit-button").wait_for(state="attached")
    page.wait_for_timeout(1000)
    newest = client.threads.get_history(long_thread, limit=20)
    written = [state["checkpoint"]["checkpoint_id"] for state in newest].index(
        head_before["checkpoint"]["checkpoint_id"]
    )
    checkpoints = sum(len(states) for states in read)
    assert 0 < written < checkpoints <= written + 10, (written, [len(states) for states in read])
    shown = messages(page, "human").locator(".bubble").all_inner_texts()
    page.reload()
    messages(page, "human").last.get_by_test_id("edit-button").wait_for(state="attached")
    assert messages(page, "human").locator(".bubble").all_inner_texts() == shown
