"""The history of a conversation longer than the page reads (500 checkpoints, `long_thread` in
web/conftest.py, on a slow test graph served as `orecast`): the conversation shows, and a run stored
for re-joining is joined, before its history is in, and the open history panel reads nothing of its
own. The answers' tests in the same conversation are in test_ui_long_conversation.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.service.conftest import Server
from tests.service.web.conftest import messages, wait_idle
from tests.service.web.slow_graph import GATE

pytestmark = pytest.mark.slow


def test_the_open_history_panel_reads_nothing_of_its_own(
    open_page: Any, slow_server: Server, long_thread: str
) -> None:
    """The history panel read its 200 checkpoints again at each message of a streaming answer (three
    30 MB reads per answer in a conversation of 60 questions), then once when each answer ended: it
    now shows the conversation's own history, which an answer adds its new checkpoints to."""
    page = open_page(slow_server, path=f"/#/thread/{long_thread}")
    messages(page, "human").nth(200).wait_for()  # the conversation is shown (other tests add to it)
    page.get_by_test_id("history-toggle").click()
    page.get_by_test_id("history-item").nth(199).wait_for()
    reads: list[Any] = []

    def read_by_the_panel(request: Any) -> None:
        if (
            request.url.endswith("/history")
            and json.loads(request.post_data or "{}").get("limit") == 200
        ):
            reads.append(request)

    page.on("request", read_by_the_panel)
    page.get_by_test_id("composer-input").fill("one more beside the history")
    page.get_by_test_id("composer-input").press("Enter")
    page.get_by_test_id("stop-button").wait_for()
    wait_idle(page)
    messages(page, "ai").last.get_by_text("answer: one more beside the history").wait_for()
    asked = page.get_by_test_id("history-node").filter(has_text="one more beside the history")
    expect(asked).to_have_count(1)
    assert page.get_by_test_id("history-item").count() == 200
    page.wait_for_timeout(1000)
    assert reads == []


def test_a_long_conversation_shows_before_its_history_is_read(
    open_page: Any, slow_server: Server, long_thread: str
) -> None:
    """Nothing of the conversation was shown until its 500 checkpoints were read (50 s for 60
    questions of the analyst on a loaded machine): the head state shows it first, the history then
    brings the branches and the edits."""
    page = open_page(slow_server)
    page.get_by_test_id("welcome").wait_for()
    held: list[Any] = []
    page.route("**/history", lambda route: held.append(route))
    page.evaluate("(id) => { window.location.hash = `#/thread/${id}`; }", long_thread)
    asked = messages(page, "human")
    asked.nth(200).wait_for()
    assert held, "the history was asked for"
    assert asked.last.get_by_test_id("edit-button").count() == 0, "no fork point before the history"
    for route in held:
        route.continue_()
    page.unroute("**/history")
    asked.last.get_by_test_id("edit-button").wait_for(state="attached")


def test_a_reload_mid_run_rejoins_before_the_history_is_read(
    open_page: Any, slow_server: Server, long_thread: str
) -> None:
    """A run stored for re-joining was joined only once the whole history was in: after a reload in a
    conversation of 60 questions of the analyst, the answer stood still for the 30 s of that read."""
    page = open_page(slow_server, path=f"/#/thread/{long_thread}")
    messages(page, "human").last.get_by_test_id("edit-button").wait_for(state="attached")
    held: list[Any] = []
    GATE.clear()  # the run waits after its tokens: it is still running after the reload
    try:
        page.get_by_test_id("composer-input").fill("held across a reload")
        page.get_by_test_id("composer-input").press("Enter")
        expect(messages(page, "ai").last).to_contain_text("slow1")
        page.route("**/history", lambda route: held.append(route))
        page.reload()
        expect(messages(page, "human").last).to_have_text("held across a reload")
        expect(messages(page, "ai").last).to_contain_text("slow1")  # re-joined: its tokens again
        expect(page.get_by_test_id("stop-button")).to_be_visible()
        assert held, "the history was asked for, and is not in"
    finally:
        GATE.set()
    for route in held:
        route.continue_()
    page.unroute("**/history")
    wait_idle(page)
    expect(messages(page, "ai").last).to_contain_text("answer: held across a reload")
    messages(page, "human").last.get_by_test_id("edit-button").wait_for(state="attached")
