"""The operations view in Debian's chromium: an admin sees real figures after a real conversation of
the offline analyst (a chart, a failing backtest), reaches a thread's history at a checkpoint from
it, in both languages and both themes; a user who is not an admin has no way in and gets 403."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from playwright.sync_api import expect

from tests.service.conftest import Server
from tests.service.web.conftest import ask, thread_id_of, web_settings

pytestmark = pytest.mark.slow

KEYS = "alice:alice-key,root:root-key:admin"


@pytest.fixture(scope="module")
def ops_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server.start(web_settings(Path(tmp_path_factory.mktemp("ops")), api_keys=KEYS))
    yield running
    running.stop()


def sign_in(page: Any, key: str) -> None:
    page.get_by_test_id("signin-key").fill(key)
    page.get_by_test_id("signin-submit").click()
    expect(page.get_by_test_id("composer")).to_be_visible()


def status_of(page: Any, path: str, key: str) -> int:
    return page.evaluate(
        "([p, k]) => fetch(p, {headers: {'x-api-key': k}}).then(r => r.status)", [path, key]
    )


def test_admin_sees_the_operations_view(open_page: Any, ops_server: Server) -> None:
    page = open_page(ops_server, locale="zh-CN")
    sign_in(page, "root-key")
    ask(page, "Chart iron ore since 2020")
    ask(page, "backtest iron ore futures from 2010")  # the backtest tool fails: start too early
    tid = thread_id_of(page)

    page.get_by_test_id("ops-link").click()
    ops = page.get_by_test_id("ops-page")
    expect(ops.get_by_role("heading", name="工具排行")).to_be_visible()
    assert page.url.endswith("#/ops")
    expect(page.get_by_test_id("ops-active-24h")).to_have_text("1")
    expect(page.get_by_test_id("ops-turns-24h")).to_have_text("2")
    chart = page.locator('[data-testid="ops-tool-row"][data-tool="make_chart"]')
    expect(chart.get_by_test_id("ops-tool-calls")).to_have_text("1")
    expect(chart.get_by_test_id("ops-tool-error-rate")).to_have_text("0.0%")
    # the failing backtest: every call of it failed
    expect(
        page.locator('[data-testid="ops-tool-row"]').filter(has_text="100.0%").first
    ).to_be_visible()
    # both charts are drawn (ECharts' SVG), in their own chunk
    expect(page.get_by_test_id("ops-tools-chart").locator("svg path").first).to_be_attached()
    expect(page.get_by_test_id("ops-growth-chart").locator("svg path").first).to_be_attached()
    expect(page.get_by_test_id("ops-growth-total")).to_contain_text("轮次 2")
    rows = page.locator('[data-testid="ops-table-row"][data-table="checkpoints"]').get_by_test_id(
        "ops-table-rows"
    )
    assert int(rows.inner_text().replace(",", "")) > 0
    expect(page.get_by_test_id("ops-sweep")).to_contain_text("过期清理")

    # English, then dark: the same figures, redrawn
    page.get_by_test_id("lang-en").click()
    expect(ops.get_by_role("heading", name="Tool ranking")).to_be_visible()
    expect(page.get_by_test_id("ops-growth-total")).to_contain_text("Turns 2")
    page.get_by_test_id("theme-toggle").click()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    expect(page.get_by_test_id("ops-tools-chart").locator("svg path").first).to_be_attached()

    # a failed call opens its thread with the history at its checkpoint (once the timed audit lists them)
    if page.get_by_test_id("ops-failure").count():
        failure = page.get_by_test_id("ops-failure").first
        failure.get_by_test_id("ops-failure-open").click()
        expect(page.get_by_test_id("history-panel")).to_be_visible()
        expect(page.locator('[data-testid="history-item"][aria-pressed="true"]')).to_have_count(1)
        page.go_back()
        expect(ops).to_be_visible()

    # the address a failure links to: the thread, the history panel open at that checkpoint
    history = get_sync_client(url=ops_server.url, api_key="root-key").threads.get_history(
        tid, limit=50
    )
    checkpoint = history[len(history) // 2]["checkpoint"]["checkpoint_id"]
    page.goto(f"{ops_server.url}/#/thread/{tid}/checkpoint/{checkpoint}")
    page.reload()
    selected = page.locator(f'[data-testid="history-item"][data-checkpoint-id="{checkpoint}"]')
    expect(selected).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("history-detail")).to_be_visible()
    expect(page.get_by_test_id("chat-title")).to_have_text("Chart iron ore since 2020")
    # back to the operations view from the navigation
    page.get_by_test_id("ops-link").click()
    expect(ops).to_be_visible()


def test_a_user_who_is_not_an_admin_has_no_way_in(open_page: Any, ops_server: Server) -> None:
    page = open_page(ops_server)
    sign_in(page, "alice-key")
    assert status_of(page, "/ops/stats", "alice-key") == 403
    assert status_of(page, "/ops/stats", "root-key") == 200
    page.goto(f"{ops_server.url}/#/ops")
    page.reload()
    # shown once the page knows she is no admin: by then the navigation has no way in either
    expect(page.get_by_test_id("ops-denied")).to_have_text("The operations view is for admins only")
    expect(page.get_by_test_id("ops-link")).to_have_count(0)
    expect(page.get_by_test_id("ops-page")).to_have_count(0)
    page.get_by_test_id("lang-zh").click()
    expect(page.get_by_test_id("ops-denied")).to_have_text("运维概览仅对管理员开放")


def test_the_operations_view_scrolls_in_its_box_under_the_top_bar(
    open_page: Any, ops_server: Server
) -> None:
    """The sizes table's column heading for screen readers (absolutely placed) escaped the view's
    scrolling box: the whole document scrolled, and a wheel over the top bar or the list took them
    off the screen, leaving a blank strip below."""
    page = open_page(ops_server, locale="zh-CN")
    sign_in(page, "root-key")
    ask(page, "Chart iron ore since 2020")
    page.get_by_test_id("ops-link").click()
    expect(page.get_by_test_id("ops-sizes-table")).to_be_attached()
    expect(page.get_by_test_id("ops-growth-chart").locator("svg path").first).to_be_attached()
    assert page.evaluate("document.scrollingElement.scrollHeight <= window.innerHeight")
    page.mouse.move(20, 20)
    page.mouse.wheel(0, 600)
    page.wait_for_timeout(300)
    expect(page.get_by_test_id("theme-toggle")).to_be_in_viewport(ratio=1)
