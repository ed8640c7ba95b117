"""With API keys on, the page asks for a key, refuses a wrong one, keeps the right one in the tab's
session storage (a reload stays signed in, a new browser session asks again) and shows only the
signed-in user's conversations."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from playwright.sync_api import expect

from tests.service.conftest import Server, say
from tests.service.web.conftest import ask, thread_id_of

pytestmark = pytest.mark.slow


def sign_in(page: Any, key: str) -> None:
    page.get_by_test_id("signin-key").fill(key)
    page.get_by_test_id("signin-submit").click()


def test_sign_in_with_an_api_key(open_page: Any, keyed_server: Server) -> None:
    bob = get_sync_client(url=keyed_server.url, api_key="bob-key")
    bobs = bob.threads.create(metadata={"title": "bob's secret"})
    bob.runs.wait(bobs["thread_id"], "orecast", input=say("hi"))
    page = open_page(keyed_server)
    expect(page.get_by_test_id("signin")).to_be_visible()
    expect(page.get_by_test_id("composer")).to_have_count(0)
    sign_in(page, "wrong-key")
    expect(page.get_by_test_id("signin-error")).to_be_visible()
    sign_in(page, "alice-key")
    expect(page.get_by_test_id("signin")).to_have_count(0)
    assert page.evaluate("sessionStorage.getItem('orecast:apiKey')") == "alice-key"
    assert page.evaluate("localStorage.getItem('orecast:apiKey')") is None
    ask(page, "What is the latest iron ore price?")
    tid = thread_id_of(page)
    expect(page.locator(f'[data-testid="thread-item"][data-thread-id="{tid}"]')).to_be_visible()
    expect(page.get_by_text("bob's secret")).to_have_count(0)
    page.reload()  # same tab: still signed in
    expect(page.get_by_test_id("composer")).to_be_visible()
    expect(page.locator(f'[data-testid="thread-item"][data-thread-id="{tid}"]')).to_be_visible()
    fresh = open_page(keyed_server)  # another browser session asks again
    expect(fresh.get_by_test_id("signin")).to_be_visible()


def test_sign_out_asks_for_the_key_again(open_page: Any, keyed_server: Server) -> None:
    page = open_page(keyed_server)
    sign_in(page, "alice-key")
    expect(page.get_by_test_id("composer")).to_be_visible()
    page.get_by_test_id("signout").click()
    expect(page.get_by_test_id("signin")).to_be_visible(timeout=5_000)
    assert page.evaluate("sessionStorage.getItem('orecast:apiKey')") is None
