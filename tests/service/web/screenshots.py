"""Screenshots of the page's main screens for the README, into docs/img/.

    python -m tests.service.web.screenshots          # needs /usr/bin/chromium and the built page

A real service (offline analyst, a temporary store) on a free port, driven by Playwright as the
browser tests do; the same questions give the same pictures.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from tests.service.conftest import Server
from tests.service.web.conftest import CHROMIUM, CHROMIUM_ARGS, ask, web_settings

OUT = Path(__file__).resolve().parents[3] / "docs" / "img"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
TALL = {"width": 1280, "height": 1240}


def shoot(page: Any, name: str) -> None:
    page.wait_for_timeout(600)  # let the chart's animation settle
    page.screenshot(path=str(OUT / f"{name}.png"))
    print(OUT / f"{name}.png")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ORECAST_CHARTS_DIR"] = str(Path(tmp) / "charts")
        os.environ["ORECAST_REPORTS_DIR"] = str(Path(tmp) / "reports")
        server = Server.start(web_settings(Path(tmp)))
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

                def page_for(locale: str, viewport: dict[str, int], **options: Any) -> Any:
                    context = browser.new_context(locale=locale, viewport=viewport, **options)
                    context.set_default_timeout(120_000)  # a first forecast fits its models (no cache yet)
                    page = context.new_page()
                    page.goto(server.url + "/")
                    return page

                page = page_for("en-US", DESKTOP)
                ask(page, "Chart the iron ore forecast for the next 6 months")
                # the fan chart sits above the forecast's long answer: bring it into view
                page.locator('[data-tool="make_chart"]').evaluate("el => el.scrollIntoView({block: 'start'})")
                shoot(page, "web-chart")
                ask(page, "Forecast iron ore for the next 6 months")
                ask(page, "Export a report")
                page.get_by_test_id("approval-panel").scroll_into_view_if_needed()
                shoot(page, "web-approval")
                page.get_by_test_id("approval-approve").click()
                page.get_by_test_id("send-button").wait_for()
                first = page.locator('[data-testid="message"][data-role="human"]').first
                first.get_by_test_id("edit-button").click()
                page.get_by_test_id("edit-input").fill("Chart rebar since 2020")
                page.get_by_test_id("edit-submit").click()
                page.get_by_test_id("send-button").wait_for()
                page.get_by_test_id("history-toggle").click()
                page.get_by_test_id("history-item").nth(1).click()
                shoot(page, "web-history-branches")
                page.get_by_test_id("history-close").click()
                page.get_by_test_id("theme-toggle").click()
                page.get_by_test_id("branch-prev").first.click()
                shoot(page, "web-dark")

                zh = page_for("zh-CN", DESKTOP)
                ask(zh, "画出铁矿石价格走势图")
                ask(zh, "铁矿石未来6个月预测")
                shoot(zh, "web-chinese")

                phone = page_for("zh-CN", PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
                ask(phone, "铁矿石最近一年波动率")
                shoot(phone, "web-phone")
                ops_view(page_for)
                browser.close()
        finally:
            server.stop()


def ops_view(page_for: Any) -> None:
    """The operations view after the conversations above, with a failed call among them."""
    page = page_for("zh-CN", TALL)
    ask(page, "回测铁矿石期货从2010年开始")  # the backtest tool fails: the futures start later
    ask(page, "铁矿石现在多少钱？")
    page.get_by_test_id("ops-link").click()
    page.get_by_test_id("ops-growth-chart").locator("svg path").first.wait_for(state="attached")
    shoot(page, "web-ops")


if __name__ == "__main__":
    main()
