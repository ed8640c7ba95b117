"""The page's access check (may this browser use the API, with or without a key?) is its first
request; when it failed (the network gone for a moment, the server restarting, its database down)
the page stayed on "出错了: http://…" until reloaded. It is tried again with growing waits, says why
and when in the page's language, and the page opens by itself once the check passes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.service.conftest import Server
from tests.service.web.conftest import ask, questions, thread_id_of

pytestmark = pytest.mark.slow

SEARCH = "**/threads/search"


def test_a_failed_access_check_is_retried_until_the_page_opens(open_page: Any, web_server: Server) -> None:
    page = open_page(web_server, locale="zh-CN")
    ask(page, "铁矿石现在多少钱？")
    tid = thread_id_of(page)
    checks: list[str] = []

    def unreachable(route: Any) -> None:
        checks.append(route.request.url)
        route.abort("internetdisconnected")

    page.route(SEARCH, unreachable)
    page.reload()
    down = page.get_by_test_id("access-down")
    expect(down).to_contain_text("无法连接到服务器")
    expect(page.get_by_test_id("access-retry-in")).to_contain_text("秒后自动重试")
    page.wait_for_timeout(1500)  # the first retry is due after 1 s
    assert len(checks) >= 2, checks
    page.get_by_test_id("lang-en").click()
    expect(down).to_contain_text("Cannot reach the server")
    page.unroute(SEARCH)
    # the next retry (2 s) opens the page: the list, and the conversation that could not be loaded
    expect(down).to_have_count(0)
    expect(page.locator(f'[data-testid="thread-item"][data-thread-id="{tid}"]')).to_be_visible()
    expect(questions(page)).to_have_text(["铁矿石现在多少钱？"])
    expect(page.get_by_test_id("run-error")).to_have_count(0)


def test_a_database_outage_at_the_check_is_said_and_retry_now_checks_at_once(
    open_page: Any, web_server: Server
) -> None:
    page = open_page(web_server, locale="zh-CN", path="/#/")
    outage = json.dumps({"error": "database_unavailable", "message": "database unavailable"})
    checks: list[str] = []

    def unavailable(route: Any) -> None:
        checks.append(route.request.url)
        route.fulfill(status=503, body=outage, content_type="application/json")

    page.route(SEARCH, unavailable)
    page.reload()
    down = page.get_by_test_id("access-down")
    expect(down).to_contain_text("数据库暂时不可用")
    page.wait_for_timeout(3500)  # checks at 0, 1 and 3 s: the next one is 4 s away
    assert len(checks) >= 3, checks
    wait = page.get_by_test_id("access-retry-in").inner_text()
    assert int(re.sub(r"\D", "", wait)) >= 2, wait
    page.unroute(SEARCH)
    page.get_by_test_id("access-retry").click()  # not waiting for the timer
    expect(down).to_have_count(0, timeout=1500)
    expect(page.get_by_test_id("welcome")).to_be_visible()
