"""One real orecast service for the web tests (uvicorn on a free port, offline analyst, a temporary
SQLite store), and one headless Debian chromium driven by Playwright, both shared by the session.

The browser is never downloaded: Playwright launches `/usr/bin/chromium` (`make test` installs the
Debian package when it can). Without it the browser tests skip on a user's machine (with one line
saying why) and fail on CI (`CI` set), where every part must run; Playwright is a dev dependency and
the page is committed, so their absence is always a failure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api

from orecast.service.routes.page import PACKAGE_STATIC
from tests.service.conftest import Server, settings_for

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-dev-shm-usage",
]
API_KEY = "web-test-key"


def web_settings(tmp: Path, **overrides: object) -> Any:
    values: dict[str, object] = {"graphs": {}, "web_dir": None}
    values.update(overrides)
    return settings_for(f"sqlite:///{tmp / 'orecast.sqlite3'}", **values)


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The page and the API without auth, as `make run` serves them."""
    running = Server.start(web_settings(tmp_path_factory.mktemp("web")))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The page with tests/service/web/slow_graph.py served as `orecast` (runs that take their time)."""
    running = Server.start(web_settings(
        tmp_path_factory.mktemp("slow"), analyst=False,
        graphs={"orecast": "tests.service.web.slow_graph:graph"},
    ))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Per module, not per session: Playwright's sync API keeps an event loop running in this thread
    while it is open, and pytest-asyncio's tests cannot run under it; modules with a browser hold
    only sync tests, and the loop is gone before the next module."""
    if not Path(CHROMIUM).exists():
        # Not a skip: `make test` installs chromium (tests/system_packages.sh), so these tests always run.
        pytest.fail(f"{CHROMIUM} is not installed (Debian package chromium; make test installs it)")
    assert (PACKAGE_STATIC / "index.html").is_file(), "the web page is not built (make web)"
    sync_api.expect.set_options(timeout=TIMEOUT_MS)
    with sync_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The same service with API keys on (alice, bob)."""
    running = Server.start(web_settings(tmp_path_factory.mktemp("keyed"), api_keys=KEYS))
    yield running
    running.stop()


KEYS = "alice:alice-key,bob:bob-key"
TIMEOUT_MS = 30_000  # one answer of the offline analyst, on a loaded 2-core machine


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    """`open_page(server, locale="en-US", **context options)`: a fresh browser context (its own
    session and local storage) on the page; closed after the test."""
    contexts: list[Any] = []

    def opener(server: Server, locale: str = "en-US", path: str = "/", **options: Any) -> Any:
        context = browser.new_context(
            locale=locale, viewport=options.pop("viewport", {"width": 1280, "height": 800}),
            accept_downloads=True, **options,
        )
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.goto(server.url + path)
        return page

    yield opener
    for context in contexts:
        context.close()


def ask(page: Any, question: str) -> None:
    """Type a question and send it with Enter; wait until the answer is complete."""
    page.get_by_test_id("composer-input").fill(question)
    page.get_by_test_id("composer-input").press("Enter")
    wait_idle(page)


def wait_idle(page: Any) -> None:
    """The run has ended: the Send button is back (the Stop button is shown while it runs)."""
    page.get_by_test_id("send-button").wait_for()


def thread_id_of(page: Any) -> str:
    """The open conversation's id, from the page's address (`#/thread/<id>`)."""
    match = re.search(r"#/thread/([\w-]+)$", page.url)
    assert match, page.url
    return match.group(1)


def messages(page: Any, role: str) -> Any:
    return page.locator(f'[data-testid="message"][data-role="{role}"]')


def questions(page: Any) -> Any:
    """The text of the user's questions on screen."""
    return messages(page, "human").locator(".bubble")
