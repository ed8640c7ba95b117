"""One number format in every answer and both languages: thousands separated, 2 decimals (4 for
the exchange rate, correlations and betas, 3 for MASE), a unit after every level, % for changes of
prices and points for the PMI.

Expected values are recomputed with pandas from the bundled CSVs.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from orecast import market
from tests.agent.conftest import run_turn

DATA = Path(market.__file__).parent / "data"
TOKEN = re.compile(r"[-+]?\d+(?:,\d{3})*\.\d+|\d{4}-\d{2}-\d{2}")  # values with decimals, dates


@pytest.fixture(autouse=True)
def pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", "2026-12-07")


def settle(file: str) -> pd.Series:
    """A futures CSV's settle price, the close where there is no settle (as the loader documents)."""
    frame = pd.read_csv(DATA / file, parse_dates=["date"], index_col="date")
    return frame["settle_cny_per_t"].fillna(frame["close_cny_per_t"]).dropna()


def body(text: str) -> list[str]:
    """The answer's lines without the source citation (its wording differs by language)."""
    return [x for x in text.splitlines() if not re.match(r"(来源|Source)[:：]", x)]


def tokens(text: str) -> list[str]:
    return [t for x in body(text) for t in TOKEN.findall(x)]


def check_format(text: str) -> None:
    for line in body(text):
        for tok in TOKEN.findall(line):
            whole, _, decimals = tok.lstrip("+-").partition(".")
            if not decimals:
                continue  # a date
            assert re.fullmatch(r"\d{1,3}(?:,\d{3})*", whole), f"{tok!r} is not thousands separated: {line}"
            if len(decimals) == 4:
                assert re.search(r"CNH|离岸人民币|相关|β|correlation|beta", line), f"{tok!r}: {line}"
            elif len(decimals) == 3:
                assert re.search(r"MASE|\| (naive|drift|ets|arima|theta|ensemble|nowcast) \|", line), line
            else:
                assert len(decimals) == 2, f"{tok!r}: {line}"


PAIRS = [
    ("螺纹钢期货2019年以来的最大回撤是多少？", "What was the maximum drawdown of rebar futures since 2019?"),
    ("螺纹钢最新价格是多少？", "What is the latest rebar price?"),
    ("美元兑人民币最新汇率是多少？", "What is the latest USD/CNH rate?"),
    ("提前3个月的铁矿石预测准确吗？", "How accurate is the 3-month forecast of iron ore?"),
    ("如果焦煤价格上涨10%，铁矿石会怎么样？", "What if coking coal rises 10%?"),
    ("PMI最新是多少？", "What is the latest PMI?"),
    ("镍的历史统计", "nickel statistics"),
]


@pytest.mark.parametrize(("zh", "en"), PAIRS, ids=[en for _, en in PAIRS])
async def test_chinese_and_english_answers_print_the_same_numbers(
    agent: Any, zh: str, en: str
) -> None:
    answer_zh = (await run_turn(agent, "zh-" + en, zh)).text
    answer_en = (await run_turn(agent, "en-" + en, en)).text
    check_format(answer_zh)
    check_format(answer_en)
    assert Counter(tokens(answer_zh)) == Counter(tokens(answer_en)), (answer_zh, answer_en)


@pytest.mark.parametrize(("question", "unit"), [
    ("螺纹钢期货2019年以来的最大回撤是多少？", "元/吨"),
    ("What was the maximum drawdown of rebar futures since 2019?", "CNY/t"),
])
async def test_rebar_statistics_have_one_format_and_their_unit(
    agent: Any, thread_id: str, question: str, unit: str
) -> None:
    text = (await run_turn(agent, thread_id, question)).text
    rebar = settle("shfe_rebar_futures_daily.csv")
    since = rebar["2019":]
    last = float(since.iloc[-1])
    percentile = 100 * float((since <= last).mean())
    rets = np.log(rebar).diff().dropna()
    year = rets[rets.index > rebar.index[-1] - pd.DateOffset(years=1)]
    volatility = float(year.std(ddof=1) * np.sqrt(252) * 100)
    drawdown = float(100 * (since / since.cummax() - 1).min())
    assert volatility < 10 and percentile < 10  # the values that once got 4 decimals
    assert f"{last:,.2f} {unit}" in text
    assert f"{since.mean():,.2f} {unit}" in text
    assert f"{percentile:.2f} " in text and f"{volatility:.2f}%" in text
    assert f"{drawdown:.2f}%" in text


@pytest.mark.parametrize(("question", "unit"), [
    ("螺纹钢最新价格是多少？", "元/吨"), ("What is the latest rebar price?", "CNY/t")])
async def test_a_change_of_a_price_says_its_unit(agent: Any, thread_id: str, question: str, unit: str) -> None:
    text = (await run_turn(agent, thread_id, question)).text
    rebar = settle("shfe_rebar_futures_daily.csv")
    change = float(rebar.iloc[-1] - rebar.iloc[-2])
    assert f"{change:+,.2f} {unit}，" in text or f"{change:+,.2f} {unit}," in text


@pytest.mark.parametrize(("question", "words"), [
    ("PMI最新是多少？", "个点"), ("What is the latest PMI?", "points")])
async def test_a_change_of_the_pmi_is_in_points(agent: Any, thread_id: str, question: str, words: str) -> None:
    text = (await run_turn(agent, thread_id, question)).text
    pmi = pd.read_csv(DATA / "china_nbs_manufacturing_pmi_monthly.csv", parse_dates=["date"], index_col="date")
    pmi = pmi.iloc[:, 0].dropna()
    assert f"{float(pmi.iloc[-1] - pmi.iloc[-2]):+.2f} {words}" in text


async def test_a_chinese_backtest_names_the_unit_in_chinese(agent: Any, thread_id: str) -> None:
    text = (await run_turn(agent, thread_id, "提前3个月的铁矿石预测准确吗？")).text
    assert "美元/干吨" in text and "US$" not in text
