"""Errors raised by the market tools reach the answer in the question's language."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from orecast import market
from orecast.agent.market_errors import _ZH, explain, tool_error
from orecast.market.errors import CODES, MarketError
from tests.agent.conftest import run_turn
from tests.agent.test_scope import ALLOWED


def foreign_words(text: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text) if not ALLOWED.match(w)]


def test_every_error_code_has_a_chinese_wording() -> None:
    assert set(_ZH) == CODES


def test_an_unknown_code_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown MarketError code"):
        MarketError("x", "no_such_code")


@pytest.mark.parametrize(("call", "code"), [
    (lambda: market.load_series("iron_ore_spot"), "unknown_series"),
    (lambda: market.forecast("iron_ore_wb_monthly", 0), "bad_horizon"),
    (lambda: market.forecast("iron_ore_wb_monthly", 3, method="prophet"), "unknown_method"),
    (lambda: market.load_series("iron_ore_wb_monthly", start="2020", end="2019"), "start_after_end"),
    (lambda: market.load_series("iron_ore_wb_monthly", start="soon"), "bad_date"),
    (lambda: market.load_series("iron_ore_wb_monthly", start="1990", end="1991"), "no_data_in_range"),
    (lambda: market.load_series("iron_ore_wb_monthly", freq="X"), "unknown_freq"),
    (lambda: market.backtest("dce_iron_ore_daily", 5, start="2010"), "start_too_early"),
    (lambda: market.scenario("port_inventory", -5), "unsupported_driver"),
    (lambda: market.scenario("weather", 1), "unknown_driver"),
    (lambda: market.scenario("coking_coal", -150), "shock_too_low"),
    (lambda: market.load_series("/nonexistent/prices.csv"), "csv_not_found"),
    (lambda: market.load_series("/dev/zero"), "csv_not_a_file"),
])
def test_market_errors_carry_a_code_worded_in_both_languages(call: Any, code: str) -> None:
    with pytest.raises(MarketError) as info:
        call()
    assert info.value.code == code
    text = tool_error(info.value)
    assert text.splitlines()[0] == str(info.value)  # the terminal's one-line trace stays English
    zh = explain(text, zh=True)
    assert zh and re.search(r"[\u4e00-\u9fff]", zh) and zh != _ZH["invalid"]
    # What the user typed and the ids the message quotes stay as they are; nothing else is English.
    quoted = json.dumps(info.value.params)
    symbols = ("CSV", "YYYY", "MM", "DD", "W", "M", "Q", "A")
    assert [w for w in foreign_words(zh) if w not in quoted and w not in symbols] == [], zh
    assert explain(text, zh=False) == str(info.value)


def test_other_tool_errors_are_not_taken_for_market_errors() -> None:
    assert explain("Connection refused", zh=True) is None
    assert explain("bad\n{\"no\": 1}", zh=True) is None


@pytest.mark.parametrize(("question", "zh"), [
    ("回测铁矿石期货从2010年开始", True),
    ("backtest iron ore futures from 2010", False),
    ("焦煤和PMI 2003年的相关性", True),
])
async def test_a_failed_tool_call_is_explained_in_the_questions_language(
    agent: Any, thread_id: str, question: str, zh: bool
) -> None:
    turn = await run_turn(agent, thread_id, question)
    failed = [r for r in turn.results if not r.ok]
    assert failed, [c.name for c in turn.calls]
    english = failed[0].content.splitlines()[0]
    if zh:
        assert english not in turn.text
        assert "无法完成" in turn.text
        assert not foreign_words(turn.text), foreign_words(turn.text)
    else:
        assert english in turn.text
        assert not re.search(r"[\u4e00-\u9fff]", turn.text)
