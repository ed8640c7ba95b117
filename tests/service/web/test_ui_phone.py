"""The page on a phone (375×812), in both languages and both themes: nothing sticks out sideways,
the question box's hint is readable whole, "branch from here" shows where the next question goes,
and the operations charts' labels do not overlap."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.service.conftest import Server
from tests.service.web.conftest import ask

pytestmark = pytest.mark.slow
PHONE = {"width": 375, "height": 812}

# What sticks out of the screen sideways, outside a box that scrolls or clips it.
STICKING_OUT = """() => {
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || r.right <= window.innerWidth + 1 || el.closest('.sidebar:not(.open)')) continue;
    let p = el.parentElement;
    while (p && !/(auto|scroll|hidden)/.test(getComputedStyle(p).overflowX)) p = p.parentElement;
    if (!p) out.push(`${el.tagName.toLowerCase()}.${el.className} ${el.dataset.testid ?? ''} ${Math.round(r.right)}`);
  }
  return out;
}"""

# Pairs of texts drawn over each other in an SVG chart. A scrolling legend's page count ("1/2") lies
# over the items clipped out of its view, by design.
OVERLAPPING_TEXT = """(svg) => {
  const boxes = [...svg.querySelectorAll('text')].map((t) => [t.textContent, t.getBoundingClientRect()])
    .filter(([s, r]) => s.trim() && !/^\\d+\\/\\d+$/.test(s) && r.width && r.height);
  const out = [];
  boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => {
    const x = Math.min(p.right, q.right) - Math.max(p.left, q.left), y = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
    if (x > 1 && y > 1) out.push(`${a} / ${b}`);
  }));
  return out;
}"""


def phone(open_page: Any, server: Server, locale: str, theme: str, path: str = "/") -> Any:
    page = open_page(server, locale=locale, viewport=PHONE, is_mobile=True, has_touch=True)
    page.evaluate(f"localStorage.setItem('orecast:theme', '{theme}')")
    page.goto(server.url + path)
    page.reload()
    return page


def fits(page: Any) -> None:
    assert page.evaluate(STICKING_OUT) == []


@pytest.mark.parametrize(("locale", "theme"), [("zh-CN", "light"), ("en-US", "dark")])
def test_every_screen_fits_a_phone(
    open_page: Any, web_server: Server, locale: str, theme: str
) -> None:
    page = phone(open_page, web_server, locale, theme)
    box = page.get_by_test_id("composer-input")
    # the hint was cut after its second line ("…Shift+Enter 换" and nothing more)
    assert box.evaluate("el => el.scrollHeight <= el.clientHeight"), box.get_attribute(
        "placeholder"
    )
    fits(page)
    page.get_by_test_id("menu-button").click()
    fits(page)
    page.get_by_test_id("new-conversation").click()
    ask(page, "Chart iron ore since 2020")
    expect(page.get_by_test_id("chart").locator("svg")).to_be_attached()
    # the export buttons left the title a dozen characters ("Chart iron or…")
    title = page.get_by_test_id("chat-title")
    expect(title).to_have_text("Chart iron ore since 2020")
    assert title.evaluate("el => el.scrollWidth <= el.clientWidth"), "the title is cut"
    expect(
        page.get_by_role("button", name="Export Markdown" if locale == "en-US" else "导出 Markdown")
    ).to_be_visible()
    ask(page, "Export a report")
    expect(page.get_by_test_id("approval-panel")).to_be_visible()
    fits(page)
    page.get_by_test_id("history-toggle").click()
    page.get_by_test_id("history-item").nth(2).click()
    fits(page)
    page.get_by_test_id("history-branch").click()
    # the panel covers the whole conversation on a phone: it gives way to the armed question
    expect(page.get_by_test_id("history-panel")).to_have_count(0)
    expect(page.get_by_test_id("fork-banner")).to_be_in_viewport()
    expect(page.get_by_test_id("composer-input")).to_be_in_viewport()
    fits(page)
    page.goto(web_server.url + "/#/ops")
    page.reload()
    chart = page.get_by_test_id("ops-tools-chart")
    expect(chart.locator("svg text").first).to_be_attached()
    page.wait_for_timeout(500)  # the bars' animation
    expect(page.get_by_test_id("ops-back")).to_be_in_viewport(ratio=1)
    fits(page)
    for test_id in ("ops-tools-chart", "ops-growth-chart"):
        assert page.get_by_test_id(test_id).locator("svg").evaluate(OVERLAPPING_TEXT) == [], test_id


# The legend's labels drawn whole inside the chart (a clipped one lies past the chart's right edge).
LEGEND_SHOWN = """(svg) => {
  const right = svg.getBoundingClientRect().right;
  return [...svg.querySelectorAll('text')].filter((t) => t.getBoundingClientRect().right <= right).map((t) => t.textContent);
}"""


def test_a_forecast_chart_shows_its_whole_legend_on_a_phone(
    open_page: Any, web_server: Server
) -> None:
    """The legend scrolled on one line: "95% 区" was cut at the edge and the 80 % band was behind a
    "1/2" pager. It wraps on a phone now."""
    page = phone(open_page, web_server, "zh-CN", "light")
    ask(page, "铁矿石价格未来6个月预测，画图")
    svg = page.get_by_test_id("chart").locator("svg")
    expect(svg.locator("text", has_text="80% 区间")).to_be_attached()
    page.wait_for_timeout(500)  # the lines' animation
    shown = svg.evaluate(LEGEND_SHOWN)
    for label in ("历史", "95% 区间", "80% 区间"):
        assert label in shown, shown
    assert svg.evaluate(OVERLAPPING_TEXT) == []
