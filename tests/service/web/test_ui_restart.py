"""Restarting the server loses nothing the page shows: after a stop and a start on the same store
(and port), a reload brings back the conversation, its chart and its pending approval, which can
then be approved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.service.conftest import Server, free_port
from tests.service.web.conftest import ask, questions, wait_idle, web_settings

pytestmark = pytest.mark.slow


def test_restart_keeps_conversation_and_pending_approval(open_page: Any, tmp_path: Path) -> None:
    port = free_port()
    first = Server.start(web_settings(tmp_path), port=port)
    try:
        page = open_page(first)
        ask(page, "Chart iron ore since 2020")
        ask(page, "Export a report")
        expect(page.get_by_test_id("approval-panel")).to_be_visible()
    finally:
        first.stop()
    second = Server.start(web_settings(tmp_path), port=port)
    try:
        page.reload()
        expect(questions(page)).to_have_text(["Chart iron ore since 2020", "Export a report"])
        expect(page.get_by_test_id("chart")).to_be_visible()
        panel = page.get_by_test_id("approval-panel")
        expect(panel).to_be_visible()
        panel.get_by_test_id("approval-approve").click()
        wait_idle(page)
        expect(page.get_by_test_id("report-ready")).to_be_visible()
    finally:
        second.stop()


def test_a_thread_opened_while_the_server_is_down_loads_on_retry(open_page: Any, tmp_path: Path) -> None:
    """Opening a conversation while the server is down shows why in the page's language, not the
    welcome screen of an empty conversation; once the server is back, Retry loads it (it did
    nothing before: no question had been sent from the page)."""
    port = free_port()
    first = Server.start(web_settings(tmp_path), port=port)
    try:
        page = open_page(first, locale="zh-CN")
        ask(page, "铁矿石现在多少钱？")
        page.get_by_test_id("new-conversation").click()
        ask(page, "2020年以来铁矿石价格走势")
    finally:
        first.stop()
    page.get_by_test_id("thread-open").last.click()  # the older conversation, while the server is down
    error = page.get_by_test_id("run-error")
    expect(error).to_contain_text("无法连接到服务器")
    expect(page.get_by_test_id("welcome")).to_have_count(0)
    second = Server.start(web_settings(tmp_path), port=port)
    try:
        error.get_by_test_id("retry-button").click()
        expect(questions(page)).to_have_text(["铁矿石现在多少钱？"])
        expect(page.get_by_test_id("run-error")).to_have_count(0)
    finally:
        second.stop()
