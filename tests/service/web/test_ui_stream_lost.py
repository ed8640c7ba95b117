"""A run whose stream the page lost (the server killed mid-answer, down longer than the SDK's
reconnects last) was shown as failed for good, half answered, with "无法连接到服务器" and Retry,
while the restarted server recovered the run and finished it (Retry would have asked again). The
page now asks for the run until the server answers, says it is reconnecting, and joins it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.service.web.conftest import messages
from tests.service.web.test_ui_runs import set_hidden
from tests.service.web.test_ui_server_gone import Killable, watched

pytestmark = pytest.mark.slow

STALE = {"ORECAST_STALE_RUN_SECONDS": "1"}  # the restarted server recovers the dead one's run at once
LONG_MS = 120_000  # the SDK's reconnects give up after ~30 s; then a restart on a loaded machine


def test_a_lost_run_is_joined_again_once_the_server_is_back(open_page: Any, tmp_path: Path) -> None:
    """The page joined a lost run again only when its look at the conversation list (which backs off to
    16 s between looks, and makes none while the tab is hidden) saw the thread move on, and said nothing
    meanwhile. It now asks for the run itself, from 0.5 s on, and says "正在重新连接…" until it rejoins:
    here the tab is hidden, so only the page's own asking can bring the answer back."""
    db = tmp_path / "orecast.sqlite3"
    server = Killable(db, **STALE)
    try:
        page, errors = watched(open_page, server)
        page.get_by_test_id("composer-input").fill("going on")
        page.get_by_test_id("composer-input").press("Enter")
        answer = messages(page, "ai").last
        expect(answer).to_contain_text("slow1")
        server.kill()
        error = page.get_by_test_id("run-error")
        expect(error).to_contain_text("无法连接到服务器", timeout=LONG_MS)
        expect(error.get_by_test_id("reconnecting")).to_have_text("正在重新连接…")
        expect(error.get_by_test_id("retry-button")).to_have_count(0)  # it would ask the question again
        expect(answer).not_to_contain_text("slow9")
        set_hidden(page, True)
        server = Killable(db, url=server.url, **STALE)
        expect(answer).to_contain_text("slow9", timeout=LONG_MS)  # no reload, no Retry
        expect(error).to_have_count(0)
        expect(page.get_by_test_id("reconnecting")).to_have_count(0)
        expect(page.get_by_test_id("send-button")).to_be_visible()
        assert errors == []
    finally:
        if server.proc.poll() is None:
            server.kill()
