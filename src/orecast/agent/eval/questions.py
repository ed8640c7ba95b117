"""The evaluation questions, Chinese and English. Expected answers are computed from the data
when the check runs, never written down: new data cannot make a stale expectation pass or fail.

A check reads only the final answer text (what a user sees), so any model can be scored: the
offline analyst, DeepSeek or a local server.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from orecast import market
from orecast.agent.clock import today

NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")
NO_DATA = re.compile(r"没有.{0,20}数据|无.{0,6}数据|do not have|don't have|no data|not available", re.I)


def has_number(text: str, value: float, rel: float = 0.005) -> bool:
    """`value` appears in `text`, to within `rel` (a model may round to one decimal)."""
    for raw in NUMBER.findall(text):
        n = float(raw.replace(",", ""))
        if abs(n - value) <= max(abs(value) * rel, 0.006):
            return True
    return False


Check = Callable[[str], tuple[bool, str]]


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    lang: str  # "zh" or "en"
    turns: tuple[str, ...]  # earlier turns of the same thread, then the question
    check: Check

    @property
    def text(self) -> str:
        return self.turns[-1]


def _latest_futures(text: str) -> tuple[bool, str]:
    s = market.load_series("dce_iron_ore_daily")
    value, day = float(s.iloc[-1]), s.index[-1].date().isoformat()
    ok = has_number(text, value) and day in text
    return ok, f"DCE iron ore {value:.2f} on {day}"


def _last_year_average(text: str) -> tuple[bool, str]:
    year = str(today().year - 1)
    s = market.load_series("iron_ore_wb_monthly")
    if s[year].empty:
        return bool(NO_DATA.search(text)), f"no data for {year}"
    mean = float(s[year].mean())
    whole = float(s.mean())
    ok = has_number(text, mean) and not has_number(text, whole, rel=0.0001)
    return ok, f"{year} average {mean:.2f} (not the whole-history {whole:.2f})"


def _no_inventory(text: str) -> tuple[bool, str]:
    latest = float(market.load_series("iron_ore_wb_monthly").iloc[-1])
    ok = bool(NO_DATA.search(text)) and not has_number(text, latest, rel=0.0001)
    return ok, "says it has no port-inventory data, gives no substitute price"


def _steel_scenario(text: str) -> tuple[bool, str]:
    r = market.scenario("steel_output", -5).to_dict()
    effect = float(r["effect_pct"])  # type: ignore[arg-type]
    ok = has_number(text, effect, rel=0.01) or has_number(text, -effect, rel=0.01)
    hedged = bool(re.search(r"历史|not causation|historical|conditional|条件|因果", text, re.I))
    return ok and hedged, f"effect {effect:+.2f}% with a hedge"


def _forecast_dated(text: str) -> tuple[bool, str]:
    f = market.forecast("iron_ore_wb_monthly", 3).to_dict()
    last = str(f["last"]["date"])  # type: ignore[index]
    ok = last in text and ("80%" in text or "80 %" in text)
    return ok, f"states the data's last date {last} and an 80% range"


def _name(text: str) -> tuple[bool, str]:
    return "Wang Wu" in text or "王五" in text, "remembers the full name"


def _first_question(text: str) -> tuple[bool, str]:
    return ("PMI" in text and "rebar" not in text.lower() and "螺纹" not in text,
            "quotes the first question, not the last ones")


def _methods_table(text: str) -> tuple[bool, str]:
    named = {m for m in ("naive", "drift", "ets", "arima", "theta", "ensemble", "nowcast")
             if re.search(rf"\b{m}\b", text, re.I)}
    ok = "MASE" in text and len(named) >= 4 and bool(re.search(r"覆盖|coverage", text, re.I))
    return ok, "a backtest table: MASE and coverage of at least four methods"


def _two_parts(text: str) -> tuple[bool, str]:
    pmi = float(market.load_series("china_pmi_monthly").iloc[-1])
    coke = float(market.load_series("dce_coke_daily").iloc[-1])
    return has_number(text, pmi) and has_number(text, coke), f"PMI {pmi:.1f} and coke {coke:.2f}"


QUESTIONS: tuple[Question, ...] = (
    Question("latest-futures", "zh", ("铁矿石期货现在多少钱？",), _latest_futures),
    Question("latest-futures", "en", ("What is the iron ore futures price now?",), _latest_futures),
    Question("last-year-average", "zh", ("去年铁矿石均价是多少？",), _last_year_average),
    Question("last-year-average", "en", ("What was the average iron ore price last year?",),
             _last_year_average),
    Question("no-inventory-data", "zh", ("铁矿石港口库存是多少？",), _no_inventory),
    Question("no-inventory-data", "en", ("How big are iron ore port inventories?",), _no_inventory),
    Question("steel-scenario", "zh", ("如果中国粗钢产量下降5%，铁矿石价格会怎样？",), _steel_scenario),
    Question("steel-scenario", "en", ("If China's crude steel output falls 5%, what happens to iron ore?",),
             _steel_scenario),
    Question("forecast-dated", "zh", ("预测铁矿石未来3个月",), _forecast_dated),
    Question("forecast-dated", "en", ("Forecast iron ore for the next 3 months",), _forecast_dated),
    Question("memory-name", "zh", ("我叫王五", "螺纹钢最新价格", "我叫什么？"), _name),
    Question("memory-name", "en", ("My name is Wang Wu", "latest rebar price", "What's my name?"), _name),
    Question("memory-first", "zh", ("最新的PMI是多少", "螺纹钢最新价格", "我问的第一个问题是什么？"),
             _first_question),
    Question("memory-first", "en", ("latest PMI", "latest rebar price", "What did I ask first?"),
             _first_question),
    Question("methods-table", "zh", ("哪种预测方法对铁矿石最准？",), _methods_table),
    Question("methods-table", "en", ("Which forecasting method is most accurate for iron ore?",),
             _methods_table),
    Question("two-parts", "zh", ("PMI最新是多少？焦炭现在多少钱？",), _two_parts),
    Question("two-parts", "en", ("What is the latest PMI, and what is the coke price now?",),
             _two_parts),
)
