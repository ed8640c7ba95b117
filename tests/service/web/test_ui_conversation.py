"""The page in Debian's chromium: a conversation with a chart, the sidebar (rename, delete, search),
both languages. Against the session's real `orecast serve`-equivalent server (offline analyst)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from playwright.sync_api import expect

from tests.service.conftest import Server
from tests.service.web.conftest import ask, messages, questions, thread_id_of, web_settings

pytestmark = pytest.mark.slow


def test_conversation_with_a_chart(open_page: Any, web_server: Server) -> None:
    page = open_page(web_server)
    expect(page.get_by_test_id("welcome")).to_be_visible()
    ask(page, "Chart iron ore since 2020")
    expect(questions(page)).to_have_text(["Chart iron ore since 2020"])
    card = page.locator('[data-testid="tool-card"][data-tool="make_chart"]')
    expect(card).to_have_attribute("data-state", "done")
    expect(card.get_by_test_id("tool-duration")).to_be_visible()
    chart = page.get_by_test_id("chart")
    expect(chart).to_be_visible()
    expect(chart.locator("svg path").first).to_be_attached()  # ECharts drew it (SVG renderer)
    # the answer captions the chart drawn above instead of naming the server's files
    answer = messages(page, "ai").last.locator(".md")
    expect(answer).to_contain_text("Chart above: Iron ore")
    expect(answer).not_to_contain_text(".png")
    card.get_by_test_id("tool-card-toggle").click()
    expect(card.get_by_test_id("tool-args")).to_contain_text("iron")
    expect(card.get_by_test_id("tool-result")).to_contain_text("png")
    # a follow-up in the same thread; the sidebar lists it, titled by the first question
    ask(page, "What is the latest iron ore price?")
    expect(messages(page, "human")).to_have_count(2)
    expect(messages(page, "ai").last).to_contain_text("108.64")
    tid = thread_id_of(page)
    item = page.locator(f'[data-testid="thread-item"][data-thread-id="{tid}"]')
    expect(item.get_by_test_id("thread-title")).to_have_text("Chart iron ore since 2020")
    # the conversation exports as Markdown and as JSON
    with page.expect_download() as md:
        page.get_by_test_id("export-md").click()
    text = open(md.value.path(), encoding="utf-8").read()
    assert "Chart iron ore since 2020" in text and "108.64" in text
    with page.expect_download() as js:
        page.get_by_test_id("export-json").click()
    assert "What is the latest iron ore price?" in open(js.value.path(), encoding="utf-8").read()
    # reloading loses nothing
    page.reload()
    expect(messages(page, "human")).to_have_count(2)
    expect(page.get_by_test_id("chart")).to_be_visible()


def test_a_chart_is_not_drawn_again_by_the_next_answer(open_page: Any, web_server: Server) -> None:
    """Each `values` event of a run and each history read bring every message anew: every chart of the
    conversation was drawn again (a new SVG) several times per answer, seconds of the page's time in a
    conversation of 60 questions. A new SVG element under the chart means it was drawn again."""
    page = open_page(web_server)
    ask(page, "Chart iron ore since 2020")
    chart = page.get_by_test_id("chart")
    expect(chart.locator("svg path").first).to_be_attached()
    page.wait_for_timeout(500)
    chart.locator("svg").evaluate("svg => { svg.dataset.drawnBefore = 'yes'; }")
    ask(page, "What is the latest iron ore price?")
    expect(messages(page, "ai").last).to_contain_text("108.64")
    page.wait_for_timeout(1000)
    assert chart.locator("svg").get_attribute("data-drawn-before") == "yes"


def test_rename_search_and_delete(open_page: Any, web_server: Server) -> None:
    page = open_page(web_server)
    ask(page, "What is the latest iron ore price?")
    tid = thread_id_of(page)
    item = page.locator(f'[data-testid="thread-item"][data-thread-id="{tid}"]')
    item.get_by_test_id("thread-rename").click()
    rename = item.get_by_test_id("thread-rename-input")
    rename.fill("Morning check 晨检")
    rename.press("Enter")
    expect(item.get_by_test_id("thread-title")).to_have_text("Morning check 晨检")
    page.reload()  # the title is stored on the server
    expect(item.get_by_test_id("thread-title")).to_have_text("Morning check 晨检")
    page.get_by_test_id("thread-search").fill("晨检")
    expect(page.get_by_test_id("thread-item")).to_have_count(1)
    page.get_by_test_id("thread-search").fill("")
    # delete asks first; "no" keeps it, "yes" removes it from the server
    item.get_by_test_id("thread-delete").click()
    page.get_by_test_id("thread-delete-no").click()
    expect(item).to_be_visible()
    item.get_by_test_id("thread-delete").click()
    page.get_by_test_id("thread-delete-yes").click()
    expect(item).to_have_count(0)
    page.reload()
    expect(page.locator(f'[data-testid="thread-item"][data-thread-id="{tid}"]')).to_have_count(0)


def test_chinese_and_english(open_page: Any, web_server: Server) -> None:
    page = open_page(web_server, locale="zh-CN")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.get_by_test_id("new-conversation")).to_contain_text("新")
    ask(page, "铁矿石现在多少钱？")
    expect(messages(page, "ai").last).to_contain_text("铁矿石")
    page.get_by_test_id("lang-en").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_test_id("new-conversation")).to_contain_text("New conversation")
    page.reload()  # the choice is remembered
    expect(page.locator("html")).to_have_attribute("lang", "en")
    english = open_page(web_server, locale="en-US")
    expect(english.locator("html")).to_have_attribute("lang", "en")
    english.get_by_test_id("lang-zh").click()
    expect(english.get_by_test_id("new-conversation")).to_contain_text("新")


def test_a_link_to_a_missing_thread_opens_a_new_conversation(open_page: Any, web_server: Server) -> None:
    """A stale link (the thread deleted, a typo) says so in the page's language and leaves a new
    conversation that works, not the server's raw 404 body over a question box that fails again."""
    missing = "00000000-0000-0000-0000-000000000000"
    page = open_page(web_server, locale="zh-CN", path=f"/#/thread/{missing}")
    notice = page.get_by_test_id("thread-missing")
    expect(notice).to_contain_text("找不到这个对话")
    expect(notice).to_contain_text(missing)
    expect(page.get_by_test_id("run-error")).to_have_count(0)
    expect(page.get_by_test_id("welcome")).to_be_visible()
    assert page.url.endswith("/#/")
    ask(page, "铁矿石现在多少钱？")
    assert thread_id_of(page) != missing
    expect(messages(page, "ai")).to_have_count(1)
    expect(page.get_by_test_id("run-error")).to_have_count(0)
    expect(notice).to_have_count(0)


def test_chart_words_follow_the_page_language(open_page: Any, web_server: Server) -> None:
    """The chart's title, legend and source are in the page's language (the spec carries English
    series names and a two-language title), and the title sits above the chart as text: drawn
    inside it, a wrapped title ran over the source line and the legend."""
    page = open_page(web_server, locale="zh-CN")
    ask(page, "画出2020年以来的铁矿石价格图")
    chart = page.get_by_test_id("chart")
    expect(chart.locator("svg path").first).to_be_attached()
    title = page.get_by_test_id("chart-title")
    expect(title).to_contain_text("铁矿石")
    expect(title).not_to_contain_text("Iron ore")
    # the source's name too ("来源：World Bank Commodity Price Data …" before)
    expect(page.get_by_test_id("chart-source")).to_contain_text("来源：世界银行大宗商品价格数据")
    expect(chart.locator("svg")).to_contain_text("历史")
    expect(chart.locator("svg")).not_to_contain_text("history")
    heading = page.locator(".chart-figure figcaption").bounding_box()
    drawn = chart.bounding_box()
    assert heading and drawn and heading["y"] + heading["height"] <= drawn["y"]
    page.get_by_test_id("lang-en").click()
    expect(title).to_contain_text("Iron ore")
    expect(page.get_by_test_id("chart-source")).to_contain_text("Source: World Bank Commodity Price Data")
    expect(chart.locator("svg")).to_contain_text("history")


def test_notes_under_a_list_are_not_part_of_its_last_bullet(open_page: Any, web_server: Server) -> None:
    """The analyst writes its "注意" and "来源" lines right under a list of changes; Markdown's lazy
    continuation put them inside the last bullet, as if they were about that one change."""
    page = open_page(web_server, locale="zh-CN")
    ask(page, "铁矿石现在多少钱？")
    answer = messages(page, "ai").last
    expect(answer.locator(".md li").first).to_be_visible()
    expect(answer.locator(".md p", has_text="来源：").first).to_be_visible()
    expect(answer.locator(".md li", has_text="来源：")).to_have_count(0)
    expect(answer.locator(".md li", has_text="注意：")).to_have_count(0)


def test_dates_and_an_empty_search_follow_the_page_language(open_page: Any, web_server: Server) -> None:
    """A browser in English switched to 中文 writes the conversations' dates the Chinese way (they
    followed the browser, not the page: "12/6/2026 10:22 PM" under Chinese labels), and a search
    that matches nothing says so rather than "还没有对话" (no conversations yet)."""
    page = open_page(web_server, locale="en-US")
    ask(page, "What is the latest iron ore price?")
    page.get_by_test_id("lang-zh").click()
    when = page.get_by_test_id("thread-item").first.locator(".thread-meta")
    expect(when).to_have_text(re.compile(r"^\d{4}/\d{1,2}/\d{1,2} \d{2}:\d{2}$"))
    page.get_by_test_id("history-toggle").click()
    expect(page.get_by_test_id("history-item").first.locator(".cp-time")).to_have_text(re.compile(r"^\d{2}:\d{2}:\d{2}$"))
    page.get_by_test_id("thread-search").fill("no conversation is called this")
    expect(page.get_by_test_id("sidebar")).to_contain_text("没有匹配的对话")
    page.get_by_test_id("lang-en").click()
    expect(when).to_have_count(0)  # filtered out by the search
    page.get_by_test_id("thread-search").fill("")
    expect(when.first).to_have_text(re.compile(r"^\d{1,2}/\d{1,2}/\d{4} \d{2}:\d{2} [AP]M$"))


def test_a_question_over_the_size_limit_is_explained_and_kept(open_page: Any, tmp_path: Path) -> None:
    """A question longer than the server accepts (413 `too_large`) showed the server's English
    sentence and a Retry that could only fail again, and the text was gone from the box."""
    server = Server.start(web_settings(tmp_path, max_body_bytes=4000))
    try:
        page = open_page(server, locale="zh-CN")
        question = "铁矿石价格走势" * 300  # 2100 characters, 6300 bytes of UTF-8
        page.get_by_test_id("composer-input").fill(question)
        page.get_by_test_id("composer-input").press("Enter")
        error = page.get_by_test_id("run-error")
        expect(error).to_contain_text("问题太长")
        expect(error).not_to_contain_text("request body")
        expect(error.get_by_test_id("retry-button")).to_have_count(0)
        expect(page.get_by_test_id("composer-input")).to_have_value(question)
        page.get_by_test_id("composer-input").fill("铁矿石现在多少钱？")  # shortened: it runs
        page.get_by_test_id("composer-input").press("Enter")
        expect(messages(page, "ai")).to_have_count(1)
        expect(page.get_by_test_id("run-error")).to_have_count(0)
    finally:
        server.stop()


def test_a_refused_first_question_leaves_no_empty_conversation(open_page: Any, tmp_path: Path) -> None:
    """The first question of a new conversation makes its thread before the run is refused (413):
    the thread stayed in the list, empty, titled with the refused question. It is deleted again;
    a refused question in a conversation that has others keeps that conversation."""
    server = Server.start(web_settings(tmp_path, max_body_bytes=4000))
    try:
        page = open_page(server, locale="zh-CN")
        too_long = "铁矿石价格走势" * 300
        page.get_by_test_id("composer-input").fill(too_long)
        page.get_by_test_id("composer-input").press("Enter")
        expect(page.get_by_test_id("run-error")).to_contain_text("问题太长")
        expect(page).to_have_url(re.compile(r"#/$"))
        expect(page.get_by_test_id("composer-input")).to_have_value(too_long)
        client = get_sync_client(url=server.url)
        deadline = time.monotonic() + 10
        while client.threads.search():
            assert time.monotonic() < deadline, "the refused question's thread is still there"
            time.sleep(0.1)
        expect(page.get_by_test_id("thread-item")).to_have_count(0)
        expect(page.get_by_test_id("run-error")).to_contain_text("问题太长")  # still said after the list changed
        ask(page, "铁矿石现在多少钱？")
        expect(page.get_by_test_id("thread-title")).to_have_text(["铁矿石现在多少钱？"])
        tid = thread_id_of(page)
        page.get_by_test_id("composer-input").fill(too_long)
        page.get_by_test_id("composer-input").press("Enter")
        expect(page.get_by_test_id("run-error")).to_contain_text("问题太长")
        assert thread_id_of(page) == tid
        expect(questions(page)).to_have_text(["铁矿石现在多少钱？"])
        assert [t["thread_id"] for t in client.threads.search()] == [tid]
    finally:
        server.stop()


def test_copy_says_it_copied(open_page: Any, web_server: Server) -> None:
    """Copy gave no sign that it did anything, and did nothing where the browser has no Clipboard
    API (a page served over plain http on the network): it says "已复制" and the answer is copied,
    through a selection there."""
    page = open_page(web_server, locale="zh-CN", permissions=["clipboard-read", "clipboard-write"])
    ask(page, "铁矿石现在多少钱？")
    copy = messages(page, "ai").last.get_by_test_id("copy-button")
    copy.click()
    expect(copy).to_have_text("已复制")
    assert "108.64" in page.evaluate("navigator.clipboard.readText()")
    expect(copy).to_have_text("复制")  # back after a moment
    page.evaluate("navigator.clipboard.writeText('')")
    # as on an insecure origin, where `navigator.clipboard` is undefined
    page.add_init_script("Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => undefined})")
    page.reload()
    copy = messages(page, "ai").last.get_by_test_id("copy-button")
    copy.click()
    expect(copy).to_have_text("已复制")
    reader = page.context.new_page()
    reader.goto(web_server.url + "/")
    assert "108.64" in reader.evaluate("navigator.clipboard.readText()")


def test_a_long_question_titles_the_conversation_as_the_cli_does_and_the_list_shows_it_whole(
    open_page: Any, web_server: Server
) -> None:
    """The list cuts a long title to its width ("铁矿石价格未来6个月预…") and gave no way to read the
    rest but opening it; the title itself was the question's first 80 characters, where `orecast
    chat` puts a long question on one line and ends the cut with "…"."""
    question = "铁矿石现在多少钱？\n" + "请说明数据来源、单位和日期，" * 8
    page = open_page(web_server, locale="zh-CN")
    ask(page, question)
    title = " ".join(question.split())[:79] + "…"
    item = page.locator(f'[data-testid="thread-item"][data-thread-id="{thread_id_of(page)}"]')
    expect(item.get_by_test_id("thread-title")).to_have_text(title)
    expect(item.get_by_test_id("thread-open")).to_have_attribute("title", title)
    assert get_sync_client(url=web_server.url).threads.get(thread_id_of(page))["metadata"]["title"] == title
