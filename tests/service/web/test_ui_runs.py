"""Runs in the page: Stop cancels the run on the server; a reload in the middle of a run re-joins it
(`join_stream`) and shows it to its end; a failed run shows its error in place, and Retry runs it again. A slow test graph is served as `orecast` here."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from playwright.sync_api import expect

from tests.service.conftest import Server, free_port
from tests.service.web.conftest import messages, questions, thread_id_of, wait_idle, web_settings
from tests.service.web.slow_graph import FAIL_WHILE, GATE, SECONDS, TOOL

pytestmark = pytest.mark.slow
HELD_SECONDS = 3



def set_hidden(page: Any, hidden: bool) -> None:
    """As if the tab went to the background (or came back): the page reads `visibilityState`."""
    page.evaluate("""(hidden) => {
      for (const [name, value] of [["visibilityState", hidden ? "hidden" : "visible"], ["hidden", hidden]])
        Object.defineProperty(document, name, { value, configurable: true });
      document.dispatchEvent(new Event("visibilitychange"));
    }""", hidden)


@pytest.fixture
def held() -> Iterator[None]:
    """The slow graph's runs wait after their tokens until the test opens `GATE`: they are running
    whenever the test looks, however slow the machine; open again after the test."""
    GATE.clear()
    try:
        yield
    finally:
        GATE.set()


def send(page: Any, text: str) -> None:
    page.get_by_test_id("composer-input").fill(text)
    page.get_by_test_id("composer-input").press("Enter")


def runs_of(server: Server, thread_id: str) -> list[dict[str, Any]]:
    return get_sync_client(url=server.url).runs.list(thread_id)


def wait_for_tool_to_start(server: Server, thread_id: str, seconds: float = 30) -> None:
    """Until the thread's stored state is at the held tool: the step that called it is stored."""
    client = get_sync_client(url=server.url)
    deadline = time.monotonic() + seconds
    while client.threads.get_state(thread_id)["next"] != ["held_tool"]:
        assert time.monotonic() < deadline, "the tool call was not stored"
        time.sleep(0.1)


def test_stop_cancels_the_run(open_page: Any, slow_server: Server, held: None) -> None:
    page = open_page(slow_server)
    send(page, "stop me")
    stop = page.get_by_test_id("stop-button")
    expect(stop).to_be_visible()
    expect(messages(page, "ai").last).to_contain_text("slow1")  # tokens are streaming
    # The run is held (`GATE`): it cannot end by itself, so only the Stop makes the page idle (it
    # was a 4 s run, and a Stop that took under 2 s told the two apart: on a loaded machine it did not).
    stop.click()
    wait_idle(page)
    expect(page.get_by_test_id("stopped-note")).to_be_visible()
    tid = thread_id_of(page)
    deadline = time.monotonic() + 10
    while (status := runs_of(slow_server, tid)[0]["status"]) in ("pending", "running"):
        assert time.monotonic() < deadline, status
        time.sleep(0.1)
    assert status == "interrupted"
    GATE.set()  # a run that went on would answer now
    time.sleep(SECONDS / 2)  # the run is over on the server: its answer never arrives
    expect(page.get_by_text("answer: stop me")).to_have_count(0)
    expect(questions(page)).to_have_text(["stop me"])
    # Esc stops too
    GATE.clear()
    send(page, "escape me")
    expect(messages(page, "ai").last).to_contain_text("slow1")
    page.keyboard.press("Escape")
    wait_idle(page)
    expect(page.get_by_test_id("stopped-note")).to_be_visible()
    assert runs_of(slow_server, tid)[0]["status"] in ("interrupted", "running")


def test_esc_that_cancels_a_rename_or_a_search_does_not_stop_the_run(
    open_page: Any, slow_server: Server, held: None
) -> None:
    """Esc stopped a running answer wherever it was pressed, also to cancel the conversation's
    rename or to leave the search box: the run was cancelled on the server. In a field of its own
    it only does that field's job; in the question box or on the page it still stops."""
    page = open_page(slow_server)
    send(page, "keep going")
    expect(messages(page, "ai").last).to_contain_text("slow1")
    item = page.get_by_test_id("thread-item").first
    item.get_by_test_id("thread-rename").click()
    page.get_by_test_id("thread-rename-input").press("Escape")
    expect(page.get_by_test_id("thread-rename-input")).to_have_count(0)
    page.get_by_test_id("thread-search").fill("keep")
    page.get_by_test_id("thread-search").press("Escape")
    page.wait_for_timeout(500)
    expect(page.get_by_test_id("stop-button")).to_be_visible()
    expect(page.get_by_test_id("stopped-note")).to_have_count(0)
    page.get_by_test_id("composer-input").press("Escape")
    wait_idle(page)
    expect(page.get_by_test_id("stopped-note")).to_be_visible()


def test_reload_mid_run_rejoins(open_page: Any, slow_server: Server, held: None) -> None:
    page = open_page(slow_server)
    send(page, "survive a reload")
    expect(messages(page, "ai").last).to_contain_text("slow1")
    tid = thread_id_of(page)
    page.reload()  # the run is held (`GATE`) until the reloaded page has re-joined it
    expect(questions(page)).to_have_text(["survive a reload"])
    expect(page.get_by_test_id("stop-button")).to_be_visible()  # re-joined, still running
    GATE.set()
    expect(messages(page, "ai").last).to_contain_text("answer: survive a reload")
    wait_idle(page)
    assert runs_of(slow_server, tid)[0]["status"] == "success"
    # another browser (no session storage of this run) opening the thread mid-run joins it too
    GATE.clear()
    send(page, "second run")
    expect(messages(page, "ai").last).to_contain_text("slow1")
    other = open_page(slow_server, path=f"/#/thread/{tid}")
    expect(other.get_by_test_id("stop-button")).to_be_visible()
    GATE.set()
    expect(messages(other, "ai").last).to_contain_text("answer: second run")
    wait_idle(other)


def test_failed_run_shows_the_error_and_retry_runs_it_again(
    open_page: Any, slow_server: Server, tmp_path: Path
) -> None:
    flag = tmp_path / "broken"
    flag.touch()
    page = open_page(slow_server)
    send(page, f"{FAIL_WHILE}{flag}")
    error = page.get_by_test_id("run-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("broken exists")
    tid = thread_id_of(page)
    assert runs_of(slow_server, tid)[0]["status"] == "error"
    expect(messages(page, "ai")).to_have_count(0)
    flag.unlink()  # the cause is gone: Retry runs the failed step again, no new question
    error.get_by_test_id("retry-button").click()
    expect(messages(page, "ai").last).to_contain_text("recovered: broken")
    wait_idle(page)
    expect(page.get_by_test_id("run-error")).to_have_count(0)
    expect(questions(page)).to_have_text([f"{FAIL_WHILE}{flag}"])
    assert [r["status"] for r in runs_of(slow_server, tid)] == ["success", "error"]


def test_a_tool_call_rejoined_after_a_reload_shows_its_whole_duration(
    open_page: Any, slow_server: Server, held: None
) -> None:
    """A reload re-joins the run and the stream replays the tool call: the page must not start the
    call's clock then (it showed the time since the reload, not since the call began)."""
    page = open_page(slow_server)
    send(page, f"{TOOL}held")
    card = page.get_by_test_id("tool-card")
    expect(card).to_have_attribute("data-state", "running")
    time.sleep(HELD_SECONDS)
    page.reload()
    expect(page.get_by_test_id("stop-button")).to_be_visible()  # re-joined, the tool still held
    expect(card).to_have_attribute("data-state", "running")
    GATE.set()
    expect(messages(page, "ai").last).to_contain_text("after tool")
    wait_idle(page)
    duration = page.get_by_test_id("tool-duration")
    expect(duration).to_have_text(re.compile(r"^\d+(\.\d+)? s$"))
    assert float(duration.inner_text().removesuffix(" s")) >= HELD_SECONDS, duration.inner_text()


def test_a_tool_call_stopped_before_its_result_says_it_did_not_run(
    open_page: Any, slow_server: Server, held: None
) -> None:
    """Stopped while a tool ran, its card kept a grey dot and no word, as if still waiting, until the
    next question patched the call; after a reload too. It says "未执行 / not run" at once."""
    page = open_page(slow_server, locale="zh-CN")
    send(page, f"{TOOL}stopped")
    card = page.get_by_test_id("tool-card")
    expect(card).to_have_attribute("data-state", "running")
    # The card runs from the streamed call; a Stop before the step holding the call is stored ends the
    # run without it (seen at load 13): the tool must have started, its call stored.
    wait_for_tool_to_start(slow_server, thread_id_of(page))
    page.get_by_test_id("stop-button").click()
    wait_idle(page)
    expect(card).to_have_attribute("data-state", "cancelled")
    expect(card).to_contain_text("未执行")
    page.reload()
    expect(page.get_by_test_id("stopped-note")).to_be_visible()
    expect(card).to_have_attribute("data-state", "cancelled")


def test_a_stopped_run_stays_stopped_after_a_reload(open_page: Any, slow_server: Server, held: None) -> None:
    """After Stop the list's "running" badge goes, and a reload shows the run as stopped: the step
    it was in holds LangGraph's `CancelledError`, which the page showed as a failure ("出错了
    'CancelledError()'")."""
    page = open_page(slow_server)
    send(page, "stop and reload")
    expect(messages(page, "ai").last).to_contain_text("slow1")
    page.get_by_test_id("stop-button").click()
    wait_idle(page)
    tid = thread_id_of(page)
    item = page.locator(f'[data-testid="thread-item"][data-thread-id="{tid}"]')
    expect(item).to_have_attribute("data-status", "idle")
    page.reload()
    expect(questions(page)).to_have_text(["stop and reload"])
    expect(page.get_by_test_id("stopped-note")).to_be_visible()
    expect(page.get_by_test_id("run-error")).to_have_count(0)


def test_a_run_cut_by_a_server_restart_finishes_after_it(open_page: Any, tmp_path: Path, held: None) -> None:
    """The server stops in the middle of an answer: it releases the run, the next start takes it over
    (runs/recover.py) and finishes it, and the reloaded page shows the whole answer, once."""
    port = free_port()
    settings = web_settings(tmp_path, analyst=False, graphs={"orecast": "tests.service.web.slow_graph:graph"})
    first = Server.start(settings, port=port)
    try:
        page = open_page(first)
        send(page, "survive a restart")
        expect(messages(page, "ai").last).to_contain_text("slow1")  # answering, held by `GATE`
        tid = thread_id_of(page)
    finally:
        first.stop()
    GATE.set()
    second = Server.start(settings, port=port)
    try:
        page.reload()
        expect(messages(page, "ai").last).to_contain_text("answer: survive a restart")
        wait_idle(page)
        expect(questions(page)).to_have_text(["survive a restart"])
        expect(messages(page, "ai")).to_have_count(1)
        [run] = runs_of(second, tid)
        assert run["status"] == "success"
    finally:
        second.stop()


def test_a_second_tab_follows_a_run_started_in_the_first(open_page: Any, slow_server: Server, held: None) -> None:
    """A tab showing a conversation sees a run another tab starts on it, as it streams, and its
    answer, without a reload: it stayed on the old answer until reloaded."""
    GATE.set()
    first = open_page(slow_server)
    send(first, "first question")
    expect(messages(first, "ai").last).to_contain_text("answer: first question")
    wait_idle(first)
    tid = thread_id_of(first)
    second = open_page(slow_server, path=f"/#/thread/{tid}")
    expect(messages(second, "ai").last).to_contain_text("answer: first question")
    wait_idle(second)
    GATE.clear()
    send(first, "asked in the first tab")
    expect(questions(second)).to_have_text(["first question", "asked in the first tab"])
    expect(messages(second, "ai")).to_have_count(2)
    expect(messages(second, "ai").last).to_contain_text("slow1")  # streaming in the second tab too
    expect(second.get_by_test_id("stop-button")).to_be_visible()
    GATE.set()
    expect(messages(second, "ai").last).to_contain_text("answer: asked in the first tab")
    wait_idle(second)
    # and back: a question asked in the second tab shows in the first (already finished when seen)
    send(second, "asked in the second tab")
    expect(messages(second, "ai").last).to_contain_text("answer: asked in the second tab")
    expect(questions(first)).to_have_text(["first question", "asked in the first tab", "asked in the second tab"])
    expect(messages(first, "ai").last).to_contain_text("answer: asked in the second tab")
    wait_idle(first)
    assert [r["status"] for r in runs_of(slow_server, tid)] == ["success"] * 3


def test_a_tab_stops_looking_for_runs_of_a_thread_deleted_elsewhere(open_page: Any, slow_server: Server) -> None:
    """A conversation deleted in another tab: the open tab asked the server for its runs every 2 s,
    a 404 each time, for as long as it stayed open."""
    page = open_page(slow_server)
    send(page, "soon deleted")
    expect(messages(page, "ai").last).to_contain_text("answer: soon deleted")
    wait_idle(page)
    tid = thread_id_of(page)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if f"/threads/{tid}/runs" in r.url else None)
    get_sync_client(url=slow_server.url).threads.delete(tid)
    page.wait_for_timeout(3000)  # (the test's own sleep would hold the page's events back)
    settled = len(asked)
    assert settled >= 1  # it did look, and got its 404
    page.wait_for_timeout(5000)
    assert len(asked) == settled, asked


def test_a_question_to_a_conversation_deleted_elsewhere_is_explained_and_kept(open_page: Any, slow_server: Server) -> None:
    """A question sent in a tab whose conversation another tab deleted showed the server's English
    "thread … not found (HTTP 404)" with a Retry that could only fail again, and the question was
    shown as asked; it is said in the page's language, the question is put back in the box, and a new
    conversation takes the deleted one's place (as when the page's look finds it deleted)."""
    page = open_page(slow_server, locale="zh-CN")
    send(page, "before")
    expect(messages(page, "ai").last).to_contain_text("answer: before")
    wait_idle(page)
    tid = thread_id_of(page)
    set_hidden(page, True)  # no look at the list (which would find it deleted first) until the question fails
    get_sync_client(url=slow_server.url).threads.delete(tid)
    send(page, "after the delete")
    notice = page.get_by_test_id("thread-missing")
    expect(notice).to_contain_text("问题没有发送，已放回输入框")
    expect(notice).to_contain_text(tid)
    expect(page.get_by_test_id("composer-input")).to_have_value("after the delete")
    expect(page.get_by_test_id("welcome")).to_be_visible()
    expect(page.get_by_test_id("run-error")).to_have_count(0)
    expect(page.get_by_text("not found")).to_have_count(0)
    expect(questions(page)).to_have_count(0)

def item(page: Any, thread_id: str) -> Any:
    return page.locator(f'[data-testid="thread-item"][data-thread-id="{thread_id}"]')


def test_conversations_deleted_elsewhere_leave_the_page_without_a_question(
    open_page: Any, slow_server: Server
) -> None:
    """Deleted in another tab (or through the API): the tab kept showing them, in the list and open,
    until a question sent to the open one failed. Now, at the page's next look, the list drops them
    and the open one gives way to a new conversation with a notice in the page's language; what was
    being typed stays in the box."""
    page = open_page(slow_server, locale="zh-CN")
    send(page, "listed")
    expect(messages(page, "ai").last).to_contain_text("answer: listed")
    listed = thread_id_of(page)
    page.get_by_test_id("new-conversation").click()
    send(page, "open")
    expect(messages(page, "ai").last).to_contain_text("answer: open")
    wait_idle(page)
    opened = thread_id_of(page)
    expect(item(page, listed)).to_have_count(1)
    client = get_sync_client(url=slow_server.url)
    client.threads.delete(listed)
    expect(item(page, listed)).to_have_count(0, timeout=10_000)
    expect(questions(page)).to_have_text(["open"])
    page.get_by_test_id("composer-input").fill("half-typed")
    client.threads.delete(opened)
    notice = page.get_by_test_id("thread-missing")
    expect(notice).to_contain_text("这个对话已被删除", timeout=10_000)
    expect(notice).to_contain_text(opened)
    expect(item(page, opened)).to_have_count(0)
    expect(page.get_by_test_id("welcome")).to_be_visible()
    assert page.url.endswith("#/"), page.url
    expect(page.get_by_test_id("composer-input")).to_have_value("half-typed")


def test_an_idle_tab_looks_for_changes_less_and_less_and_not_while_hidden(
    open_page: Any, slow_server: Server
) -> None:
    """An open conversation listed its runs every 2 s for as long as the tab was visible (30 requests
    a minute for nothing). The page now looks at the conversation list, twice as long after each
    look that finds nothing (up to 16 s), lists the runs only when the open thread changed there, and
    looks at nothing while hidden; shown again, it looks at once."""
    page = open_page(slow_server)
    send(page, "then idle")
    expect(messages(page, "ai").last).to_contain_text("answer: then idle")
    wait_idle(page)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/threads" in r.url else None)
    page.wait_for_timeout(16_000)
    assert 1 <= len(asked) <= 4, asked  # it was 8
    set_hidden(page, True)
    hidden_from = len(asked)
    page.wait_for_timeout(4_000)
    assert asked[hidden_from:] == []
    set_hidden(page, False)
    page.wait_for_timeout(1_000)
    assert any("/threads/search" in url for url in asked[hidden_from:]), asked[hidden_from:]
