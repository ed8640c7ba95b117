"""One real orecast service for the web tests (uvicorn on a free port, offline analyst, a temporary
SQLite store), and one headless Debian chromium driven by Playwright, both shared by the session.

The browser is never downloaded: Playwright launches `/usr/bin/chromium` (`make test` installs the
Debian package when it can); without it, or without the committed page, the browser tests skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (Debian package chromium)")
    if not (PACKAGE_STATIC / "index.html").is_file():
        pytest.skip("the web page is not built (make web)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()
