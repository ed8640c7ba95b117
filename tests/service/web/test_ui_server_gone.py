"""The server going away under the page: every failed request is said on the page, in its language,
and none is left as an uncaught promise rejection (the browser's `pageerror`). The server is a real
`orecast serve` process serving the slow test graph, killed while the page uses it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.service.conftest import Server, free_port, wait_for_serve
from tests.service.web.conftest import ask, messages, thread_id_of, wait_idle, web_settings

pytestmark = pytest.mark.slow


class Killable:
    """`orecast serve` in its own process, which the test kills as a crash or a power cut would."""

    def __init__(self, db: Path, url: str | None = None, **env_vars: str) -> None:
        """`url`: the address of the one it restarts (same port); `env_vars`: its settings."""
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "ORECAST_CANCEL_POLL_SECONDS": "0.05", **env_vars}
        env.pop("ORECAST_API_KEYS", None)
        self.url = url or f"http://127.0.0.1:{free_port()}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "orecast.cli.main", "serve", "--port", self.url.rsplit(":", 1)[1],
             "--database-url", f"sqlite:///{db}", "--no-analyst", "--graph", "orecast=tests.service.web.slow_graph:graph"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        wait_for_serve(self.proc, self.url, 90)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.communicate()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Killable]:
    server = Killable(tmp_path / "orecast.sqlite3")
    yield server
    if server.proc.poll() is None:
        server.kill()


def watched(open_page: Any, server: Killable | Server, **options: Any) -> tuple[Any, list[str]]:
    """A page on `server` in Chinese, and the uncaught errors it throws."""
    page = open_page(server, locale="zh-CN", **options)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    return page, errors


def test_stop_rename_and_delete_without_a_server_are_said(open_page: Any, served: Killable) -> None:
    page, errors = watched(open_page, served)
    page.get_by_test_id("composer-input").fill("kept")
    page.get_by_test_id("composer-input").press("Enter")
    expect(messages(page, "ai").last).to_contain_text("answer: kept")
    wait_idle(page)
    page.get_by_test_id("new-conversation").click()
    page.get_by_test_id("composer-input").fill("going on")
    page.get_by_test_id("composer-input").press("Enter")
    expect(messages(page, "ai").last).to_contain_text("slow1")
    tid = thread_id_of(page)
    served.kill()
    page.get_by_test_id("stop-button").click()
    notice = page.get_by_test_id("notice")
    expect(notice).to_contain_text("无法停止")
    expect(notice).to_contain_text("无法连接到服务器")
    expect(page.get_by_test_id("stopped-note")).to_have_count(0)  # it was not stopped: no one heard
    notice.get_by_test_id("notice-close").click()
    expect(notice).to_have_count(0)
    item = page.locator(f'[data-testid="thread-item"][data-thread-id="{tid}"]')
    item.get_by_test_id("thread-rename").click()
    page.get_by_test_id("thread-rename-input").fill("renamed")
    page.get_by_test_id("thread-rename-input").press("Enter")
    expect(notice).to_contain_text("无法重命名对话")
    notice.get_by_test_id("notice-close").click()
    item.get_by_test_id("thread-delete").click()
    item.get_by_test_id("thread-delete-yes").click()
    expect(notice).to_contain_text("无法删除对话")
    expect(item).to_have_count(1)
    page.get_by_test_id("lang-en").click()  # the notice is in the page's language, whichever it is
    expect(notice).to_contain_text("Could not delete the conversation: Cannot reach the server")
    # opening a conversation that cannot be loaded is said in place (and not thrown as well)
    page.get_by_test_id("thread-open").last.click()
    expect(page.get_by_test_id("run-error")).to_contain_text("Cannot reach the server")
    page.get_by_test_id("history-toggle").click()
    expect(page.get_by_test_id("history-panel").get_by_role("alert")).to_contain_text("Cannot reach the server")
    page.wait_for_timeout(1000)  # a late rejection would land by now
    assert errors == []


def test_a_link_to_a_missing_thread_throws_nothing(open_page: Any, web_server: Server) -> None:
    page, errors = watched(open_page, web_server, path="/#/thread/00000000-0000-4000-8000-000000000000")
    expect(page.get_by_test_id("thread-missing")).to_be_visible()
    page.wait_for_timeout(1000)
    assert errors == []


def test_a_report_download_and_the_operations_view_without_a_server_are_said(
    open_page: Any, tmp_path: Path
) -> None:
    """The report link and the operations view showed the browser's "Failed to fetch"."""
    server = Server.start(web_settings(tmp_path))
    try:
        page, errors = watched(open_page, server)
        ask(page, "导出报告")
        page.get_by_test_id("approval-approve").click()
        wait_idle(page)
        expect(page.get_by_test_id("report-ready")).to_be_visible()
        expect(page.get_by_test_id("ops-link")).to_be_visible()
    finally:
        server.stop()
    page.get_by_test_id("report-download").click()
    expect(page.get_by_test_id("report-ready").get_by_role("alert")).to_have_text(re.compile("^无法连接到服务器"))
    page.get_by_test_id("ops-link").click()
    expect(page.get_by_test_id("ops-error")).to_have_text(re.compile("^无法连接到服务器"))
    assert errors == []
