"""The conversation suite: real questions to the offline analyst, half Chinese, half English.

Each case checks the tool the analyst called, its arguments, and that the numbers in the answer
are the ones `orecast.market` gives when called directly with those arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from orecast import market
from orecast.agent import clock
from orecast.agent.offline import catalogue as cat
from orecast.market import trading_days
from orecast.market.catalog import find_spec
from tests.agent.conftest import run_turn

NUMBER = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[-+]?\d+(?:\.\d+)?")


def printed(text: str) -> list[tuple[float, int]]:
    """Every number in `text` (thousands separators read) with its printed decimals."""
    out = []
    for x in NUMBER.findall(text):
        plain = x.replace(",", "")
        out.append((float(plain), len(plain.partition(".")[2])))
    return out


def numbers(text: str) -> list[float]:
    return [n for n, _ in printed(text)]


def assert_number(text: str, value: float) -> None:
    """`value` appears in `text` rounded to the decimals printed (at least 2)."""
    assert any(d >= 2 and abs(n - value) <= 0.5 * 10 ** -d + 1e-9 for n, d in printed(text)), (
        f"{value} not in answer:\n{text}")


def ahead(series: str, n: int, unit: str) -> int:
    """Forecast steps from the data's last date to the end of "the next n units" from today: the
    periods between the data's end and today's period come first (counted here with pandas).
    Daily series count their trading days: "the next 2 weeks" are the trading days of those weeks."""
    last = market.load_series(series).index[-1]
    now = pd.Timestamp(clock.today())
    if cat.catalogue()[series].frequency == "monthly":
        gap = max(0, (now.year - last.year) * 12 + now.month - last.month - 1)
        return gap + n * {"month": 1, "year": 12}[unit]
    calendar = find_spec(series).calendar
    gap = len(trading_days.trading_days(last + pd.Timedelta(days=1), now - pd.Timedelta(days=1), calendar))
    if unit == "day":
        return gap + n
    end = now + pd.DateOffset(**{f"{unit}s": n}) - pd.Timedelta(days=1)
    return gap + len(trading_days.trading_days(now, end, calendar))


def next_year(series: str) -> int:
    """Monthly steps from the data's last month to December of next year ("明年")."""
    last = market.load_series(series).index[-1]
    return (clock.today().year + 1 - last.year) * 12 + 12 - last.month


def next_month(series: str) -> int:
    """Trading days from the data's last date to the end of next calendar month ("下个月")."""
    last = market.load_series(series).index[-1]
    end = pd.Timestamp(clock.today()) + pd.offsets.MonthEnd(0) + pd.offsets.MonthEnd(1)
    return len(trading_days.trading_days(last + pd.Timedelta(days=1), end, find_spec(series).calendar))


def year_ago(series: str) -> str:
    end = pd.Timestamp(cat.catalogue()[series].end)
    return (end - pd.DateOffset(years=1)).date().isoformat()


Check = Callable[[str, dict[str, Any]], None]


def latest(text: str, args: dict[str, Any]) -> None:
    s = market.load_series(args["series"])
    assert_number(text, float(s.iloc[-1]))
    assert s.index[-1].date().isoformat() in text


def history(text: str, args: dict[str, Any]) -> None:
    s = market.load_series(args["series"], args.get("start"), args.get("end"))
    for v in (s.iloc[0], s.iloc[-1], s.max(), s.min()):
        assert_number(text, float(v))
    assert s.index[s.values.argmax()].date().isoformat() in text


def describe(text: str, args: dict[str, Any]) -> None:
    d = market.describe(args["series"], start=args.get("start"), end=args.get("end")).to_dict()
    for v in (d["mean"], d["min"], d["max"], d["last"]["value"]):
        assert_number(text, v)
    if d["volatility_annualised_pct"] is not None:
        assert_number(text, d["volatility_annualised_pct"])


def forecast(text: str, args: dict[str, Any]) -> None:
    f = market.forecast(args["series"], args["horizon"], method=args["method"]).to_dict()
    last = f["forecast"][-1]
    for key in ("mean", "lo_80", "hi_80", "lo_95", "hi_95"):
        assert_number(text, last[key])
    assert last["date"] in text
    assert ("80%" in text and "95%" in text), "a forecast is always a range"
    assert re.search(r"风险|Risks", text)


def backtest(text: str, args: dict[str, Any]) -> None:
    b = market.backtest(args["series"], args["horizon"], method=args["method"],
                        start=args.get("start"), step=args.get("step", 1)).to_dict()
    for v in (b["mae"], b["mape_pct"], b["mase"]):
        assert_number(text, v)


def relate(text: str, args: dict[str, Any]) -> None:
    # As relate_series computes it: daily returns on likely contract-roll days left out.
    r = market.relate(args["a"], args["b"], start=args.get("start"), end=args.get("end"),
                      leave_out_rolls=True).to_dict()
    tol = 0.00006
    assert any(abs(n - r["correlation"]) <= tol for n in numbers(text)), text
    assert any(abs(n - r["beta_a_on_b"]) <= tol for n in numbers(text)), text


def margin(text: str, args: dict[str, Any]) -> None:
    m = market.mill_margin(start=args.get("start"), end=args.get("end"),
                           product=args.get("product", "rebar")).to_dict()
    for v in (m["last"]["value"], m["mean"], m["min"], m["max"]):
        assert_number(text, v)


def catalogue(text: str, args: dict[str, Any]) -> None:
    rows = market.list_series()
    assert str(len(rows)) in text
    assert all(r.id in text for r in rows)


def chart(text: str, args: dict[str, Any]) -> None:
    png = re.search(r"([^\s：:]+\.png)", text)
    assert png and Path(png.group(1)).is_file()
    assert Path(png.group(1)).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Case:
    question: str
    tool: str | None
    args: dict[str, Any]
    check: Check | None = None
    says: str | None = None  # a phrase the answer must contain (no-tool answers)
    more: tuple[dict[str, Any], ...] = ()  # further calls of the same tool, checked the same way


CASES: list[Case] = [
    # latest prices
    # "price now": the freshest series (DCE daily) first, the World Bank monthly as context
    Case("铁矿石现在多少钱？", "latest_price", {"series": "dce_iron_ore_daily"}, latest,
         more=({"series": "iron_ore_wb_monthly"},)),
    Case("What is the latest iron ore price?", "latest_price", {"series": "dce_iron_ore_daily"},
         latest, more=({"series": "iron_ore_wb_monthly"},)),
    Case("螺纹钢最新价格", "latest_price", {"series": "shfe_rebar_daily"}, latest),
    Case("Where is hot-rolled coil trading now?", "latest_price", {"series": "shfe_hrc_daily"}, latest),
    Case("焦炭现在的价格是多少", "latest_price", {"series": "dce_coke_daily"}, latest),
    Case("current coking coal futures price", "latest_price", {"series": "dce_coking_coal_daily"}, latest),
    Case("美元兑人民币汇率最新是多少？", "latest_price", {"series": "usd_cnh_daily"}, latest),
    Case("latest China manufacturing PMI", "latest_price", {"series": "china_pmi_monthly"}, latest),
    Case("大商所铁矿石期货最新结算价", "latest_price", {"series": "dce_iron_ore_daily"}, latest),
    Case("What's the Brent oil price now?", "latest_price", {"series": "brent_wb_monthly"}, latest),
    # history
    Case("rebar price history in 2024", "price_history",
         {"series": "shfe_rebar_daily", "start": "2024", "end": "2024"}, history),
    Case("铁矿石2021年的走势", "price_history",
         {"series": "iron_ore_wb_monthly", "start": "2021", "end": "2021"}, history),
    Case("How did DCE iron ore futures move from 2020 to 2022?", "price_history",
         {"series": "dce_iron_ore_daily", "start": "2020", "end": "2022"}, history),
    Case("焦煤自2023年以来的行情", "price_history",
         {"series": "dce_coking_coal_daily", "start": "2023"}, history),
    Case("copper price history since 2019", "price_history",
         {"series": "copper_wb_monthly", "start": "2019"}, history),
    Case("过去一年热卷的走势", "price_history",
         {"series": "shfe_hrc_daily", "start": year_ago("shfe_hrc_daily")}, history),
    # statistics
    Case("铁矿石的统计数据", "describe_series", {"series": "iron_ore_wb_monthly"}, describe),
    Case("What is the volatility of DCE iron ore futures?", "describe_series",
         {"series": "dce_iron_ore_daily"}, describe),
    Case("螺纹钢2020年到2024年的平均价格", "describe_series",
         {"series": "shfe_rebar_daily", "start": "2020", "end": "2024"}, describe),
    Case("statistics of the USD/CNH rate since 2022", "describe_series",
         {"series": "usd_cnh_daily", "start": "2022"}, describe),
    Case("PMI的最高和最低值", "describe_series", {"series": "china_pmi_monthly"}, describe),
    # forecasts
    Case("用naive方法预测铁矿石未来3个月", "forecast_price",
         {"series": "iron_ore_wb_monthly", "horizon": ahead("iron_ore_wb_monthly", 3, "month"), "method": "naive"},
         forecast),
    Case("Forecast rebar for the next 10 trading days with the drift method", "forecast_price",
         {"series": "shfe_rebar_daily", "horizon": ahead("shfe_rebar_daily", 10, "day"), "method": "drift"},
         forecast),
    Case("用ARIMA预测大商所铁矿石期货未来两周", "forecast_price",
         {"series": "dce_iron_ore_daily", "horizon": ahead("dce_iron_ore_daily", 2, "week"), "method": "arima"},
         forecast),
    Case("forecast iron ore for the next 6 months", "forecast_price",
         {"series": "iron_ore_wb_monthly", "horizon": ahead("iron_ore_wb_monthly", 6, "month"), "method": "auto"},
         forecast),
    Case("预测焦炭下个月，用theta方法", "forecast_price",
         {"series": "dce_coke_daily", "horizon": next_month("dce_coke_daily"), "method": "theta"}, forecast),
    Case("What's the outlook for the USD/CNH rate over the next 2 weeks using naive?",
         "forecast_price", {"series": "usd_cnh_daily", "horizon": ahead("usd_cnh_daily", 2, "week"), "method": "naive"},
         forecast),
    Case("铁矿石明年的价格预测（漂移法）", "forecast_price",
         {"series": "iron_ore_wb_monthly", "horizon": next_year("iron_ore_wb_monthly"), "method": "drift"},
         forecast),
    # accuracy
    Case("How accurate is a naive forecast of iron ore 3 months ahead?", "backtest_forecast",
         {"series": "iron_ore_wb_monthly", "horizon": 3, "method": "naive"}, backtest),
    Case("回测铁矿石漂移法提前1个月的误差", "backtest_forecast",
         {"series": "iron_ore_wb_monthly", "horizon": 1, "method": "drift"}, backtest),
    Case("backtest the drift method on rebar 5 days ahead", "backtest_forecast",
         {"series": "shfe_rebar_daily", "horizon": 5, "method": "drift"}, backtest),
    Case("螺纹钢naive方法预测准确吗？提前20个交易日", "backtest_forecast",
         {"series": "shfe_rebar_daily", "horizon": 20, "method": "naive"}, backtest),
    # relations
    Case("correlation between iron ore futures and rebar since 2020", "relate_series",
         {"a": "dce_iron_ore_daily", "b": "shfe_rebar_daily", "start": "2020"}, relate),
    Case("铁矿石和PMI的相关性", "relate_series",
         {"a": "iron_ore_wb_monthly", "b": "china_pmi_monthly"}, relate),
    Case("relationship between coke and coking coal", "relate_series",
         {"a": "dce_coke_daily", "b": "dce_coking_coal_daily"}, relate),
    Case("焦炭和铁矿石期货的联动关系，2022年以来", "relate_series",
         {"a": "dce_coke_daily", "b": "dce_iron_ore_daily", "start": "2022"}, relate),
    # mill margin
    Case("螺纹钢厂利润现在怎么样？", "mill_margin", {}, margin),
    Case("What is the steel mill margin since 2023?", "mill_margin", {"start": "2023"}, margin),
    Case("热卷利润是多少？", "mill_margin", {"product": "hrc"}, margin),  # not rebar's
    Case("What is the HRC mill margin?", "mill_margin", {"product": "hrc"}, margin),
    # catalogue
    Case("What data series do you have?", "list_series", {}, catalogue),
    Case("有哪些数据可以查？", "list_series", {}, catalogue),
    # charts
    Case("Plot iron ore since 2020", "make_chart",
         {"series": "iron_ore_wb_monthly", "start": "2020"}, chart),
    Case("画出螺纹钢2024年以来的走势图", "make_chart",
         {"series": "shfe_rebar_daily", "start": "2024"}, chart),
    # out of scope: honest, no tool, no numbers made up
    Case("What's the weather in Beijing?", None, {}, None, "offline analyst"),
    Case("给我讲个笑话", None, {}, None, "离线分析师"),
]


def test_the_suite_is_bilingual_and_large_enough() -> None:
    zh = [c for c in CASES if re.search(r"[\u4e00-\u9fff]", c.question)]
    assert len(CASES) >= 40
    assert abs(len(zh) - (len(CASES) - len(zh))) <= 2


@pytest.mark.parametrize("case", CASES, ids=[c.question for c in CASES])
async def test_question(agent: Any, thread_id: str, case: Case) -> None:
    turn = await run_turn(agent, thread_id, case.question)
    if case.tool is None:
        assert turn.calls == []
        assert case.says and case.says in turn.text
        return
    assert [c.name for c in turn.calls] == [case.tool] * (1 + len(case.more))
    assert [c.args for c in turn.calls] == [case.args, *case.more]
    assert all(r.ok for r in turn.results), [r.content for r in turn.results]
    assert turn.tokens > 3, "answers stream token by token"
    assert case.check is not None
    for args in (case.args, *case.more):
        case.check(turn.text, args)
    if case.tool not in ("list_series", "make_chart"):
        assert re.search(r"来源|Source", turn.text), "answers cite their source"


MULTI_PART = [
    (
        "比较铁矿石期货和螺纹钢的相关性，再预测铁矿石期货未来20个交易日",
        [
            ("relate_series", {"a": "dce_iron_ore_daily", "b": "shfe_rebar_daily"}, relate),
            ("forecast_price", {"series": "dce_iron_ore_daily", "horizon": ahead("dce_iron_ore_daily", 20, "day"),
                                "method": "auto"}, forecast),
        ],
    ),
    (
        "What is the latest rebar price, and then forecast it for 3 months with drift?",
        [
            ("latest_price", {"series": "shfe_rebar_daily"}, latest),
            ("forecast_price", {"series": "shfe_rebar_daily", "horizon": ahead("shfe_rebar_daily", 3, "month"),
                                "method": "drift"}, forecast),
        ],
    ),
]


@pytest.mark.parametrize("question,expected", MULTI_PART, ids=[q for q, _ in MULTI_PART])
async def test_several_part_question(agent: Any, thread_id: str, question: str, expected: list) -> None:
    """One question asking for two things gets both tools in one round and both answers."""
    turn = await run_turn(agent, thread_id, question)
    assert [(c.name, c.args) for c in turn.calls] == [(name, args) for name, args, _ in expected]
    assert all(r.ok for r in turn.results), [r.content for r in turn.results]
    for _name, args, check in expected:
        check(turn.text, args)


async def test_a_comma_alone_does_not_split(agent: Any, thread_id: str) -> None:
    turn = await run_turn(agent, thread_id, "铁矿石，未来3个月怎么看")
    assert [c.name for c in turn.calls] == ["forecast_price"]
