"""From a question and the conversation so far to tool calls (or a direct reply).

The planner is what makes the offline analyst useful: it picks the tool and its arguments
(series ids from Chinese or English names, dates, horizons in the series' own periods, methods),
reuses the previous question's series and tool for follow-ups ("and for 6 months?"), delegates
method comparisons to the `quant` subagent, answers memory questions from the thread, and keeps
notes about the user in `/memories/` (`notes.py`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from orecast import market
from orecast.agent.clock import today
from orecast.agent.offline import catalogue as cat
from orecast.agent.offline import (
    compose,
    contracts,
    convert,
    counts,
    datafacts,
    direction,
    doubling,
    drivers,
    notes,
    rankings,
    scope,
)
from orecast.agent.offline.intents import NAME_SET, ROLE_SET, Query, parse, part_without_year
from orecast.agent.offline.lexicon import DEFAULT_SERIES, SERIES_ALIASES, USD_UNIT, _boundary_match
from orecast.agent.reports import collect
from orecast.market import trading_days
from orecast.market.catalog import find_spec
from orecast.market.scenario import DRIVERS

PRIMARY = (
    "report", "methods", "margin", "relate", "backtest", "forecast", "chart", "describe",
    "history", "latest", "catalogue", "compare",
)
# Every method a user can ask for; `nowcast` only where a daily indicator exists (see below).
COMPARED_METHODS = ("naive", "drift", "ets", "arima", "theta", "ensemble")
COMPARISON_STEP = {"daily": 10, "weekly": 4, "monthly": 3}
FRESHER = "dce_iron_ore_daily"  # the iron ore series that reaches furthest, for periods after the benchmark's
_IRON_ORE = {DEFAULT_SERIES, FRESHER}
# Calls after which a follow-up naming its own period asks that period's history, as if asked afresh.
_PERIOD_FOLLOWS = ("latest_price", "price_history", "describe_series", "forecast_price")
# The series a scenario driver is measured by: never the target of its own shock.
DRIVER_SERIES = {
    "steel_output": ("crude_steel_china_annual", "crude_steel_world_annual"),
    "pmi": ("china_pmi_monthly",), "usd_cnh": ("usd_cnh_daily",),
    "coking_coal": ("dce_coking_coal_daily",), "coke": ("dce_coke_daily",),
    "rebar": ("shfe_rebar_daily",), "hrc": ("shfe_hrc_daily",),
    "oil": ("brent_wb_monthly", "wti_wb_monthly", "crude_oil_avg_wb_monthly"),
    "iron_ore": ("iron_ore_wb_monthly", "iron_ore_62fe_wb_monthly", "dce_iron_ore_daily"),
    "iron_ore_futures": ("iron_ore_wb_monthly", "iron_ore_62fe_wb_monthly", "dce_iron_ore_daily"),
}


def has_nowcast(series: str) -> bool:
    """Whether `series` has the daily indicator the `nowcast` method needs."""
    spec = find_spec(series)
    return bool(spec is not None and spec.indicator)


@dataclass(slots=True)
class Plan:
    """Tool calls to make now, or a reply to give without tools."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    reply: str | None = None
    notes: list[str] = field(default_factory=list)  # said before the tool results' answer
    in_scope: bool = True  # False: the reply is the "what I can do" text
    focus: dict[str, str] = field(default_factory=dict)  # series -> first forecast date asked about


def _together(plans: list[Plan]) -> Plan:
    """One plan asking for every call of `plans` once, with their notes (and replies) once each; a
    reply of those notes when none has a call."""
    merged = Plan([])
    for plan in plans:
        merged.calls += [call for call in plan.calls if call not in merged.calls]
        merged.notes += [n for n in [*plan.notes, plan.reply] if n and n not in merged.notes]
        merged.focus.update(plan.focus)
    return merged if merged.calls else Plan(reply="\n\n".join(merged.notes))


@dataclass(slots=True)
class Context:
    """What the conversation before the current question tells us."""

    questions: list[str]  # earlier user messages, oldest first
    user_name: str | None
    last_call: tuple[str, dict[str, Any]] | None  # most recent market tool call
    last_series: str | None
    user_role: str | None = None
    answers: list[str] = field(default_factory=list)  # earlier final answers, oldest first
    answered: int = 0  # earlier questions with an answer, as a report counts them
    turn_series: tuple[str, ...] = ()  # the series the last turn with market calls asked about, in order
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()  # every market call before, oldest first
    asked_series: tuple[tuple[str, ...], ...] = ()  # each earlier question's series, in order asked


def context_of(messages: list[BaseMessage], upto: int) -> Context:
    questions: list[str] = []
    answers: list[str] = []
    name: str | None = None
    role: str | None = None
    last_call: tuple[str, dict[str, Any]] | None = None
    last_series: str | None = None
    turn_series: list[str] = []
    asked: list[str] = []  # this turn's series so far
    calls: list[tuple[str, dict[str, Any]]] = []
    per_question: list[list[str]] = []
    for msg in messages[:upto]:
        if isinstance(msg, HumanMessage):
            questions.append(msg.text)
            asked = []
            per_question.append(asked)
            for rx in NAME_SET:
                m = rx.search(msg.text)
                if m and m.group(1) not in ("什么", "谁", "啥"):
                    name = m.group(1)
                    break
            for rx in ROLE_SET:
                m = rx.search(msg.text)
                if m:
                    role = m.group(1).strip()
                    break
        elif isinstance(msg, AIMessage) and not msg.tool_calls and msg.text.strip():
            answers.append(msg.text)
        if isinstance(msg, AIMessage):
            for tc in msg.tool_calls:
                if tc["name"] in ("export_report", "list_series"):
                    continue
                last_call = (tc["name"], dict(tc["args"]))
                calls.append(last_call)
                series = tc["args"].get("series") or tc["args"].get("a")
                if isinstance(series, str):
                    last_series = series
                    asked.append(series)
                    turn_series = asked
    answered = len(collect(messages[:upto])[0])
    return Context(questions, name, last_call, last_series, role, answers, answered,
                   tuple(dict.fromkeys(turn_series)), tuple(calls),
                   tuple(tuple(dict.fromkeys(x)) for x in per_question if x))


class Planner:
    """Plans one turn for the main analyst (`role="main"`) or the quant subagent."""

    def __init__(self, tool_names: set[str], role: str, extra_tools: dict[str, dict[str, Any]]):
        self.tools = tool_names
        self.role = role
        self.extra = extra_tools  # name -> JSON schema of tools that are not ours (MCP …)

    # ---- entry point -------------------------------------------------------------------

    def plan(self, q: Query, ctx: Context) -> Plan:
        plan = self._plan(q, ctx)
        if (presumes := direction.presumed(q.text)) and "price_history" in self.tools:
            self._check_premise(q, plan, presumes)
        if _FROM_PEAK.search(q.text):
            # "现在离最高点跌了多少": the latest value against the high of the statistics shown, in a
            # sentence (was: the statistics alone, the two numbers left to subtract).
            plan.notes[:0] = [n for name, args in plan.calls if name == "describe_series"
                              and (n := _below_peak(args, q.zh)) is not None][:1]
        if q.name and plan.calls:  # "我叫王五，铁矿石现在多少钱？": greet, then answer
            plan.notes.insert(0, f"你好，{q.name}！" if q.zh else f"Hello, {q.name}!")
        return plan

    def _plan(self, q: Query, ctx: Context) -> Plan:
        if q.follow_up and q.part_assumed and not q.intents and ctx.last_call and \
                ctx.last_call[0] == "forecast_price" and \
                (part := part_without_year(q.text, ahead=True)) is not None:
            # "一季度呢" after a forecast: the next first quarter not yet over, forecast too, not the
            # last one in the data (its year said, as for any part named without one).
            q.start, q.end, q.part_assumed = part
            q.intents = ["forecast"]
        if (q.follow_up or (not q.series and _AGAINST.search(q.text))) and ctx.last_call and \
                (asked := _period_asked(ctx.last_call)) is not None:
            _in_period_asked(q, *asked)
        if not (q.start or q.end or q.relative or q.last_period or q.ago) and _THAT_PERIOD.search(q.text) and \
                ctx.last_call and ctx.last_call[0] in _PERIOD_FOLLOWS and ctx.last_call[1].get("start"):
            # "What was the biggest daily drop that month?" after July 2026's history: that month
            # (was: the whole history's largest falls).
            q.start, q.end = ctx.last_call[1]["start"], ctx.last_call[1].get("end")
        # Notes about the user live in a file, read first either way (model.py writes the note).
        if q.remember and {"read_file", "write_file"} <= self.tools:
            return Plan([("read_file", {"file_path": notes.PREFERENCES})])
        if q.asks_name:
            return Plan(reply=_name_reply(q, ctx))
        if q.asks_role:
            return Plan(reply=_role_reply(q, ctx))
        if q.asks_past:
            return Plan(reply=_past_reply(q, ctx))
        if q.asks_earlier_number:
            return Plan(reply=_earlier_answer(q, ctx))
        if q.asks_memory and "read_file" in self.tools:
            return Plan([("read_file", {"file_path": notes.PREFERENCES})])
        if ctx.last_call and ctx.last_call[0] == "mill_margin" and not q.series and "mill_margin" in self.tools \
                and not set(q.intents) - {"history", "describe", "forecast"} and \
                (plan := self._margin_follow_up(q, ctx.last_call[1])) is not None:
            return plan
        if not q.series and ctx.last_call and ctx.last_call[0] == "price_scenario" and _HOW_SURE.search(q.text) \
                and not (q.scenario or q.start or q.relative or q.horizon):
            # "这个结论可靠吗" after a scenario: how far that estimate goes, from its own fit (was: out of
            # scope, and "Is that reliable?" a backtest of the iron ore forecast, which was not asked).
            return Plan([ctx.last_call], notes=[_SCENARIO_SURE_ZH if q.zh else _SCENARIO_SURE_EN])
        if not q.series and not q.intents and _WHEN.search(q.text) and ctx.last_call and \
                ctx.last_call[0] == "describe_series" and ctx.questions and \
                (when := _when_extreme(ctx.questions[-1], ctx.last_call[1], q.zh)) is not None:
            # "是什么时候" after "铁矿石历史最高价是多少": the day of that high (was: out of scope).
            return Plan([ctx.last_call], notes=[when])
        if q.asks_today and not q.series:
            return Plan(reply=scope.today_reply(q.zh, q.text))  # "今天是几号": the date, not a price
        if q.streak and not q.series and ctx.last_series:
            q.series = [ctx.last_series]  # "低于50几个月了" after a PMI answer: the PMI's run
        if q.streak and "latest_price" in self.tools and (s := (q.series or [FRESHER])[0]) and \
                cat.frequency(s == DEFAULT_SERIES and FRESHER or s) == "daily":
            # "铁矿石期货连续下跌了几天": the run of falls (rises) the daily data ends with.
            s = FRESHER if s == DEFAULT_SERIES else s
            return Plan([("latest_price", {"series": s})], notes=[scope.price_run(s, q.zh)])
        if q.threshold and "latest_price" in self.tools:
            # "在50美元以下的时候铁矿石是哪些年": the periods the price spent below (above) the level.
            level_, side, currency = q.threshold
            s = (q.series or [DEFAULT_SERIES])[0]
            if s in DRIVER_SERIES["iron_ore"] and not scope.asks_benchmark(q.text):
                s = FRESHER if currency == "CNY" else DEFAULT_SERIES
            if (note := scope.threshold_periods(s, level_, side, q.zh)) is not None:
                q.claims, q.claim = [], None  # "ever below 40 dollars" names a level, it claims no price
                return Plan([("latest_price", {"series": s})], notes=[note])
        if scope.asks_pmi_meaning(q.text) and "latest_price" in self.tools:
            # "PMI高于50意味着什么": what the index means, with where it stands; no forecast of 50.
            return Plan([("latest_price", {"series": "china_pmi_monthly"})], notes=[scope.pmi_meaning(q.zh)])
        if (factor := doubling.asked(q.text)) and "latest_price" in self.tools:
            # "铁矿石价格翻倍需要多久": the history of doublings, since no forecast says when.
            s = (q.series or [DEFAULT_SERIES])[0]
            return Plan([("latest_price", {"series": s})], notes=[doubling.answer(s, factor, q.zh)])
        if counts.asked(q.text) and "price_history" in self.tools:
            # "铁矿石期货今年有几天上涨": the rises and falls of the period counted.
            s = (q.series or [DEFAULT_SERIES])[0]
            s = FRESHER if s == DEFAULT_SERIES and not scope.asks_benchmark(q.text) else s
            if q.relative and not (q.start or q.end):
                q.start, q.end = scope.calendar_period(*q.relative)
            if note := counts.up_and_down(s, q.start, q.end, q.zh):
                return Plan([("price_history", {"series": s, **self._dates(q, s)})], notes=[note])
        if drivers.asked(q.text) and set(q.series) <= _IRON_ORE and "relate_series" in self.tools and \
                not (q.scenario or q.scenario_unsupported or q.missing):
            # "影响铁矿石价格的因素有哪些": the drivers, which the data has, and how those moved with it
            # (was: the latest prices).
            return Plan(drivers.calls(), notes=[drivers.note(q.zh)])
        if datafacts.asks_count(q.text) and "latest_price" in self.tools and \
                (s := (q.series or [ctx.last_series or DEFAULT_SERIES])[0]) in cat.catalogue():
            # "螺纹钢有多少条数据": the count and span of the data (was: the latest price).
            if q.relative and not (q.start or q.end):
                q.start, q.end = scope.calendar_period(*q.relative)
            if (note := datafacts.count(s, q.start, q.end, q.zh)) is not None:
                return Plan([("latest_price", {"series": s})], notes=[note])
        if datafacts.asks_updates(q.text):
            # "数据多久更新一次": each series' frequency and last date, from the files, not the help text.
            return Plan(reply=datafacts.updates(q.series or datafacts.named_sources(q.text), q.zh))
        if (datafacts.asks_weekly(q.text) or datafacts.asks_daily_mean(q.text)) and "price_history" in self.tools:
            if (facts_plan := self._data_facts(q, ctx)) is not None:
                return facts_plan
        if (contract := contracts.asked(q.text)) and "latest_price" in self.tools:
            # "明年1月合约": one contract, which the continuous series is not; its latest price, said so.
            code, named = contract
            futures = [x for x in [named or "", *q.series, ctx.last_series or ""] if x in scope.EXCHANGE_SERIES]
            s = futures[0] if futures and futures[0] != DEFAULT_SERIES else FRESHER
            if "forecast" in q.intents and "forecast_price" in self.tools:
                # "i2701合约未来一个月走势预测": the continuous contract's forecast, said not to be the contract's.
                h, start = self._ahead(q, s)
                return Plan([("forecast_price", {"series": s, "horizon": h, "method": q.method or "auto"})],
                            notes=[contracts.note(s, code, q.zh)], focus={s: start.date().isoformat()})
            return Plan([("latest_price", {"series": s})], notes=[contracts.note(s, code, q.zh)])
        if direction.asked(q.text) and not direction.presumed(q.text) and "price_history" in self.tools and \
                len(q.series) <= 1 and \
                (q.relative or q.start or q.last_period) and not q.whole_year and \
                (dplan := self._direction_plan(q, ctx)):
            return dplan
        if (best := rankings.asked(q.text)) and "price_history" in self.tools:
            if not q.series and ctx.last_call and ctx.last_series:
                # "哪个月跌得最多" after a question about 2025's futures: that series and period.
                q.series = [ctx.last_series]
                if not (q.start or q.end or q.relative):
                    q.start, q.end = ctx.last_call[1].get("start"), ctx.last_call[1].get("end")
            return self._ranking_plan(q, *best)
        if q.pct_move is not None and "latest_price" in self.tools and not q.start:
            # "铁矿石涨10%是多少钱": arithmetic on the latest value (each iron ore price in its unit).
            named = q.series if q.series not in ([], [DEFAULT_SERIES]) or scope.asks_benchmark(q.text) \
                else [FRESHER, DEFAULT_SERIES]
            return Plan([("latest_price", {"series": s}) for s in named[:2]])
        if q.points_asked is not None and "latest_price" in self.tools:
            # "铁矿石期货跌了10个点是什么意思": a point is a price unit (1 元/吨), not a percent.
            s = next((x for x in q.series if x != DEFAULT_SERIES), FRESHER)
            return Plan([("latest_price", {"series": s})], notes=[scope.points_meaning(s, q.points_asked, q.zh)])
        if q.scenario_unsupported:
            return Plan(reply=scope.unsupported_shock(q.scenario_unsupported, q.zh))
        if q.scenario and "price_scenario" in self.tools:
            driver, shock = q.scenario
            if driver == "iron_ore" and re.search(r"期货|futures|dce|大商所|元|yuan|cny", q.text.lower()):
                driver = "iron_ore_futures"
            return Plan([("price_scenario", {"driver": driver, "shock": shock,
                                             "target": _scenario_target(q, driver)})])
        if q.scenario_level and "price_scenario" in self.tools:
            return scenario_level_plan(q, ctx)
        if convert.asked(q.text) is not None and "latest_price" in self.tools:
            q.claims, q.claim = [], None  # "100美元相当于多少元" converts a figure, it does not claim one
            return Plan([("latest_price", {"series": "usd_cnh_daily"})])
        if (s := convert.latest_to_convert(q.text, q.series)) and (q.start or q.end) and \
                "describe_series" in self.tools and (note := convert.period_mean(s, q.start, q.end, q.zh)):
            # "铁矿石期货2025年均价换成美元": the period's mean at the period's mean rate, not the latest price.
            q.claims, q.claim = [], None
            return Plan([("describe_series", {"series": s, **self._dates(q, s)})], notes=[note])
        if (s := convert.latest_to_convert(q.text, q.series or ([ctx.last_series] if ctx.last_series else []))) \
                and "latest_price" in self.tools:
            # "铁矿石期货换算成美元是多少": no figure given, so the latest price is the one converted.
            q.claims, q.claim = [], None
            return Plan([("latest_price", {"series": s}), ("latest_price", {"series": "usd_cnh_daily"})])
        if q.target_level and "forecast_price" in self.tools:
            return self._target_plan(q, ctx)
        if q.missing:
            return Plan(reply=scope.no_data(q.missing, q.zh))
        if q.bad_date:
            return Plan(reply=scope.not_a_date(q.bad_date, q.zh))
        if q.bad_horizon:
            return Plan(reply=scope.not_a_horizon(q.bad_horizon, q.zh))
        if q.bad_method:
            return Plan(reply=scope.not_a_method(q.bad_method, q.zh))
        if q.unknown and not q.series:
            return Plan(reply=scope.no_series(q.unknown, q.zh))
        if q.holiday and (q.series or [FRESHER])[0] in scope.EXCHANGE_SERIES and not scope.asks_benchmark(q.text):
            return Plan(reply=scope.closed_for_holiday((q.series or [FRESHER])[0], q.holiday, q.zh))
        extra = self._extra_tool(q)
        if extra:
            return extra
        if q.ago and not (q.start or q.end):
            # "三个月前螺纹钢多少钱", "那一年前呢？" after a spread: one day, answered as "上周五" is
            # (after the data's end, the nearest earlier day with data, said to be that).
            q.start = q.end = scope.days_ago(*q.ago)
            q.day_word = q.ago_words
            if (day_plan := self._named_days(q, q.series or list(ctx.turn_series))) is not None:
                return day_plan
        if (q.day_word or q.christmas) and (day_plan := self._named_day(q)) is not None:
            return day_plan
        if q.start and q.start == q.end and len(q.start) == 10 and not (q.relative or q.periods) \
                and q.series in ([], [DEFAULT_SERIES]) and not scope.asks_benchmark(q.text) \
                and q.intents[:1] in ([], ["latest"], ["history"]) \
                and (day_plan := self._named_day(replace(q, series=[FRESHER]))) is not None:
            # "2026年3月18日铁矿石价格": iron ore's price on a day is the daily futures' (the World
            # Bank's is a monthly average), as for "上周五".
            return day_plan
        if q.start and q.end and len(q.start) == len(q.end) == 10 and q.start != q.end \
                and q.series in ([], [DEFAULT_SERIES]) and not scope.asks_benchmark(q.text):
            q.series = [FRESHER]  # "去年12月底铁矿石价格": days of iron ore are the daily futures
        if q.holiday_edge and (edge := self._holiday_edge(q)) is not None:
            return edge
        if q.asks_band_why and not q.series and ctx.last_call and ctx.last_call[0] == "forecast_price":
            # "为什么区间这么宽？" after a forecast: that forecast again, its width explained.
            name, args = ctx.last_call
            return Plan([(name, args)])
        intents = [i for i in q.intents if i in PRIMARY]
        if q.asks_band_why:
            intents = ["forecast"]  # "区间" is also a describe word; the bands asked about are a forecast's
        if q.annualised and not q.missing and "forecast" not in intents[:1]:
            intents = ["history"]  # "过去10年平均每年涨多少": the first and last values give the yearly rate
        if q.advice and not q.missing:
            intents = ["describe"]  # "现在适合买入吗": where the price stands, and no advice
        series = q.series or ([ctx.last_series] if ctx.last_series else [])
        daily_note = None
        if series in ([], [DEFAULT_SERIES]) and q.horizon and q.horizon[1] in ("day", "week") and \
                "forecast" in intents[:1] and not scope.asks_benchmark(q.text):
            # "铁矿石未来一周每天的价格": days and weeks are the daily futures', not 7 monthly steps.
            series = [FRESHER]
            daily_note = scope.daily_forecast_note(q.zh)
        if series == [FRESHER] and re.search(r"世界银行|世行|world bank|\bcfr\b|普氏|platts", q.text, re.I) \
                and intents[:1] != ["latest"]:
            series = [FRESHER, DEFAULT_SERIES]  # "compare the futures and the World Bank price": both
        if q.moves and series in ([], [DEFAULT_SERIES]) and re.search(r"单日|一天|当天|daily|one[- ]day|1[- ]day|single[- ]day", q.text, re.I):
            # "2025年最大的单日涨幅": a day's move needs daily prices; the World Bank's are monthly.
            series = [FRESHER]
            daily_note = scope.daily_moves_note(q.zh)
        if not intents and q.relative and ctx.last_series and not q.series:
            # "那下个月呢？" after a price: that series over that calendar period (a forecast when it
            # is still ahead), now that 下个月 / next week are periods rather than horizons.
            intents = ["forecast" if q.relative[1] > 0 else "history"]
            if len(ctx.turn_series) > 1 and ctx.last_call and ctx.last_call[0] in ("price_history", "describe_series"):
                series = list(ctx.turn_series[:4])  # "去年呢" after two series compared: both, that year
        if not intents and q.ago and (q.series or ctx.turn_series):
            # "半年前的PMI": that series on that day; "那一年前呢？" after a price (or two, a spread):
            # the same series on that day.
            intents, series = ["history"], q.series or list(ctx.turn_series[:4])
        if not intents and q.streak and series == ["china_pmi_monthly"]:
            intents = ["history"]  # "低于50几个月了": the run, counted below
        if not q.series and _BOTH.search(q.text) and intents[:1] in (["describe"], ["chart"], ["history"]) and \
                len(pair := _last_two_series(ctx)) == 2:
            # "which one is more volatile?", "plot both" after iron ore then coking coal: the two series
            # talked about, over the period asked last (was: the last series alone).
            last = ctx.last_call[1] if ctx.last_call else {}
            if q.relative and not (q.start or q.end):
                # "Which one fell more this year?" after two verdicts on last week: this year, the
                # period it names (was: last week's dates again).
                q.start, q.end = scope.calendar_period(*q.relative)
            dates = {k: last[k] for k in ("start", "end") if last.get(k) and not (q.start or q.end)} or \
                self._dates(q, pair[0])
            if intents[0] == "chart":
                return Plan([("make_chart", {"series": pair[0], "compare": pair[1], **dates})])
            name = "describe_series" if intents[0] == "describe" else "price_history"
            return Plan([(name, {"series": s, **dates}) for s in pair])
        if not q.series and _BOTH.search(q.text) and intents[:1] in (["forecast"], ["backtest"]) and \
                len(pair := _last_two_series(ctx)) == 2:
            # "forecast both for next month" after rebar then hot-rolled coil, "which forecast is more
            # reliable?" after their forecasts: the two series talked about (was: the last one alone, and
            # the question handed to the quant subagent without them, which checked iron ore).
            series = pair
            if intents[0] == "backtest":
                done = {a.get("series"): a for n, a in ctx.calls if n == "forecast_price"}
                return Plan([("backtest_forecast", {
                    "series": s, "horizon": (not q.horizon and done.get(s, {}).get("horizon")) or self._horizon(q, s),
                    "method": q.method or done.get(s, {}).get("method") or "auto"}) for s in pair])
        if q.follow_up and q.series and ctx.last_series and ctx.last_series not in q.series and \
                re.search(r"贵多少|便宜多少|高多少|低多少|差多少", q.text):
            # "比螺纹钢贵多少" after the HRC price: the two latest prices and the spread between them.
            intents, series = ["latest"], [ctx.last_series, *q.series[:1]]
        if not q.series and len(ctx.turn_series) == 2 and re.search(r"价差|差价|spread", q.text, re.I) and \
                not (q.start or q.end or q.relative or q.last_period):
            # "价差现在多少" after "热卷和螺纹钢哪个涨得多": the two series' latest prices and their
            # spread (was: rebar's latest price alone).
            intents, series = ["latest"], list(ctx.turn_series)
        if (q.follow_up and intents[:1] == ["compare"] or not intents and _WHICH_PERIOD.search(q.text)) and \
                not (q.series or q.start or q.end or q.relative) and \
                (two := _two_periods_asked(ctx)) is not None:
            # "两年比较哪个高" after "螺纹钢2025年均价" and "那2024年呢": those two periods side by side.
            return Plan([("describe_series", args) for args in two])
        if not q.series and q.relative and not q.start and _AGAINST.search(q.text):
            q.start, q.end = scope.calendar_period(*q.relative)  # "和前年比呢": that year
            if q.relative[0] == "year" and q.relative[1] < 0 and ctx.last_call and \
                    (asked := _period_asked(ctx.last_call)) is not None and \
                    (not _whole_year(*asked) or q.start[:4] == asked[0][:4]):
                # "和前年比呢" after "2025年三季度铁矿石均价": 2023's third quarter, counted from the
                # period asked, not from today (nor a whole year set against a quarter); a whole year
                # is counted from it only when today's count would give that year itself.
                year = str(int(asked[0][:4]) + q.relative[1])
                q.start, q.end = year + asked[0][4:], year + asked[1][4:]
        if not q.series and q.start and _AGAINST.search(q.text) and ctx.last_call and \
                ctx.last_call[0] in ("describe_series", "price_history") and ctx.last_call[1].get("start") and \
                (q.start, q.end) != (ctx.last_call[1].get("start"), ctx.last_call[1].get("end")):
            # "和一季度比哪个高" after "二季度呢": the period named and the one asked before, side by side.
            prev = {k: ctx.last_call[1][k] for k in ("series", "start", "end") if ctx.last_call[1].get(k)}
            named = {"series": prev["series"], **self._dates(q, prev["series"])}
            return Plan([("describe_series", args) for args in sorted((prev, named), key=lambda a: str(a["start"]))])
        if q.follow_up and not (q.series or q.start or q.end or q.last_period or q.relative) and \
                intents[:1] in (["describe"], ["history"]) and ctx.last_call and not _NOW.search(q.text) and \
                ctx.last_call[0] in ("describe_series", "price_history"):
            # "最低呢" after "今年最高价是多少": the same period, not the whole history.
            q.start, q.end = ctx.last_call[1].get("start"), ctx.last_call[1].get("end")
        if not intents and q.follow_up and (q.start or q.end) and not (q.horizon or q.method) and ctx.last_call \
                and ctx.last_call[0] in _PERIOD_FOLLOWS and (q.series or len(set(ctx.turn_series)) <= 1
                                                             or set(ctx.turn_series) == _IRON_ORE):
            # "2026上半年铁矿石" or "那2025年下半年呢" after a price or a forecast: that period's history
            # (its statistics after a statistics question), planned as the same words in a fresh
            # thread are; iron ore's two series together give way to "铁矿石" as there.
            if not q.series:
                intents = ["describe" if ctx.last_call[0] == "describe_series" else "history"]
                series = [DEFAULT_SERIES] if set(ctx.turn_series) == _IRON_ORE else \
                    [(ctx.turn_series or (ctx.last_series,))[-1] or DEFAULT_SERIES]
        elif not intents and q.follow_up and ctx.last_call and len(q.series) < 2 and (
                q.series or q.horizon or q.start or q.method or q.last_period):
            # Two series named ("铁矿石和焦煤今年谁涨得多" after a chart) make a question of their own,
            # planned as in a fresh thread (was: the chart again with one series swapped).
            return self._follow_up(q, ctx)
        if not intents and (q.series or (q.tomorrow and ctx.last_series)):
            intents = ["latest"]  # "那明天呢？" after a price: the series talked about, tomorrow
        if not intents:
            if q.name:
                return Plan(reply=_greet(q, q.name))
            if q.role:
                return Plan(reply=_noted_role(q, q.role))
            if "help" in q.intents or _is_greeting(q.text):
                return Plan(reply=help_text(q.zh))
            if q.asks_why:  # "why?" after an answer is in scope: say what the data cannot show
                return Plan(reply=scope.why_reply(ctx.last_series, q.zh))
            return Plan(reply=out_of_scope(q.zh), in_scope=False)
        if q.streak and series == ["china_pmi_monthly"] and not (q.start or q.end or q.relative):
            # "PMI连续几个月低于50": the last three years month by month, the run at their end counted.
            q.start = (pd.Timestamp(cat.catalogue()["china_pmi_monthly"].end) - pd.DateOffset(months=35)).strftime("%Y-%m")
            intents = ["history"]
        if q.periods and intents[0] in ("describe", "history", "latest", "compare") and "describe_series" in self.tools:
            # "2024年四季度和2025年四季度铁矿石均价比较": each period's statistics, side by side.
            s = (series or [DEFAULT_SERIES])[0]
            return Plan([("describe_series", {"series": s, "start": a, "end": b}) for a, b in q.periods])
        if q.relative and not (q.start or q.end):
            q.start, q.end = scope.calendar_period(*q.relative)
            if q.whole_year and q.relative == ("year", 0):
                q.end = f"{q.start[:4]}-12-31"  # "今年全年": to the year's end, not to today
        if q.whole_year and intents[0] != "forecast" and \
                scope.forecast_target((series or [DEFAULT_SERIES])[0], q.start, q.end) is not None:
            intents = ["forecast"]  # "will iron ore rise or fall this year as a whole": its end is ahead
        target = scope.future_target(q.start, q.end, q.tomorrow)
        if target is None and intents[0] == "forecast":
            target = scope.forecast_target((series or [DEFAULT_SERIES])[0], q.start, q.end)
        gap = None
        fresher = None
        plan: Plan | None = None
        if target is None and series in ([], [DEFAULT_SERIES]) and not scope.asks_benchmark(q.text) \
                and intents[0] in ("latest", "history", "describe", "chart"):
            # "2026年7月铁矿石价格": past the World Bank's last month, but the futures traded then.
            fresher = scope.fresher_note(DEFAULT_SERIES, FRESHER, q.start, q.end, q.zh)
            series = [FRESHER] if fresher else series
        if target is None and intents[0] in ("latest", "history", "describe") and q.start and q.start == q.end \
                and re.fullmatch(r"\d{4}-\d{2}-\d{2}", q.start) and \
                scope.gap_target((series or [DEFAULT_SERIES])[0], q.start, q.end) and \
                (day_plan := self._named_days(q, series or [DEFAULT_SERIES])) is not None:
            # "2026年11月30日螺纹钢价格" past the data's end: as "上周五" is, the nearest earlier day.
            plan = day_plan
        elif target is None and intents[0] in ("latest", "history", "describe", "chart") and \
                scope.one_month(q.start, q.end) and scope.gap_target((series or [DEFAULT_SERIES])[0], q.start, q.end):
            # "上个月的价格" when the data ends before last month: as a day past the data's end is
            # answered, the nearest earlier month with data, said not to be the month asked.
            plan = self._month_before_data(q, intents, series or [DEFAULT_SERIES])
        elif target is None and intents[0] in ("latest", "history", "describe", "chart"):
            # "上周的价格" when the data ends before last week: no value, but a forecast of it.
            gap = target = scope.gap_target((series or [DEFAULT_SERIES])[0], q.start, q.end)
        if target is not None and intents[0] in ("latest", "history", "describe", "forecast", "chart"):
            # "2027年的价格", "明天的价格": no data holds a future period; a forecast to it does.
            plan = self._forecast_to(q, series or [DEFAULT_SERIES], target, gap=gap is not None)
        elif plan is None:
            plan = self._plan_dated(q, intents, series, ctx)
        if daily_note:
            plan.notes.insert(0, daily_note)
        if q.advice:
            plan.notes.insert(0, scope.no_advice_note(q.zh))
        if q.asks_why and not q.asks_band_why:  # "Why did iron ore fall in 2015?": the numbers, and what they cannot show
            plan.notes.insert(0, scope.why_note(q.zh))
        if fresher:
            plan.notes.insert(0, fresher)
        if q.month_assumed:
            plan.notes.insert(0, scope.month_assumed(q.month_assumed, q.zh))
        elif q.part_assumed and q.start:
            plan.notes.insert(0, scope.part_assumed(q.part_assumed, q.start, q.end or q.start, q.zh))
        return plan

    def _data_facts(self, q: Query, ctx: Context) -> Plan | None:
        """"周线数据", "平均每天涨跌多少": the daily futures' weekly bars or mean daily change (iron ore's
        are the DCE futures': the World Bank's monthly averages have neither weeks nor days)."""
        named = [s for s in [*q.series, ctx.last_series or ""] if s in cat.catalogue()]
        s = named[0] if named else FRESHER
        if s == DEFAULT_SERIES:
            s = FRESHER
        if cat.frequency(s) != "daily":
            return None
        if q.relative and not (q.start or q.end):
            q.start, q.end = scope.calendar_period(*q.relative)
        if datafacts.asks_weekly(q.text):
            answer = datafacts.weekly(s, q.start, q.end, q.zh)
        elif q.start:
            answer = datafacts.period_daily_mean(s, q.start, q.end or q.start, q.zh)
        else:
            answer = datafacts.daily_mean(s, q.zh)
        if answer is None:
            return None
        text, dates = answer
        notes = [text]
        if s == FRESHER and FRESHER not in q.series:
            notes.append(direction.futures_note(q.zh))
        return Plan([("price_history", {"series": s, **dates})], notes=notes)

    def _check_premise(self, q: Query, plan: Plan, presumes: str) -> None:
        """"过去一年铁矿石跌了多少": a verdict on each price history the answer shows, which way it moved,
        by how much and between which days, saying so when the move asked about is not the one that
        happened (was: the World Bank's +12.03% with no word that it rose, and nothing of the futures'
        fall). "铁矿石" alone is both iron ore prices, each counted on its own data."""
        history = [args for name, args in plan.calls if name == "price_history" and args.get("start")]
        if not history:
            return
        lookback = bool(q.last_period) and not (q.relative or q.start)
        if [a["series"] for a in history] == [DEFAULT_SERIES] and not scope.asks_benchmark(q.text):
            first = history[0]
            start = cat.lookback_start(FRESHER, *q.last_period) if lookback and q.last_period else first["start"]
            extra = {"series": FRESHER, "start": start, **({"end": first["end"]} if first.get("end") else {})}
            plan.calls.append(("price_history", extra))
            history.append(extra)
        lines, ways = [], set()
        for args in history:
            if args["series"] not in cat.catalogue() or args["series"] == "usd_cnh_daily":
                continue  # the yuan rising is USD/CNH falling: its history says which way, in both terms
            found = direction.premise(args["series"], args["start"], args.get("end") or (None if lookback else args["start"]),
                                      lookback, presumes, q.zh)
            if found is not None:
                lines.append(found[0])
                ways.add(found[1])
        if not lines:
            return
        if q.zh:
            head = "**结论**（" + ("每个序列按它自己的最后日期倒推" if lookback else "从这段时间之前最后一个有数据的日子算起") + "）："
            both = "两个序列方向不同：世界银行是月均价（美元/干吨），期货是日度结算价（元/吨），口径和时间都不一样。"
        else:
            head = "**Answer** (" + ("each series counted back from its own last date" if lookback
                                     else "from the last value before the period") + "):"
            both = ("The two series moved opposite ways: the World Bank's is a monthly average (US$/dmt), the "
                    "futures a daily settle (CNY/t), over different dates.")
        note = "\n".join([head, *[f"- {line}" for line in lines]])
        if len(ways - {"flat"}) > 1:
            note += "\n\n" + both
        plan.notes.insert(0, note)

    def _margin_follow_up(self, q: Query, before: dict[str, Any]) -> Plan | None:
        """"How has it changed this year?" after the mill margin: the margin over that period (was: out
        of scope); "Will it improve next quarter?": no forecast of it, said so (was: iron ore's)."""
        product = {k: v for k, v in before.items() if k == "product"}
        if "forecast" in q.intents or (q.relative and q.relative[1] > 0) or q.horizon:
            return Plan(reply=_NO_MARGIN_FORECAST_ZH if q.zh else _NO_MARGIN_FORECAST_EN)
        if q.relative and not (q.start or q.end):
            q.start, q.end = scope.calendar_period(*q.relative)
        if not (q.start or q.end or q.last_period):
            return None
        return Plan([("mill_margin", {**self._dates(q, "shfe_rebar_daily"), **product})])

    def _direction_plan(self, q: Query, ctx: Context) -> Plan | None:
        """"上周螺纹钢涨了还是跌了", "这周涨了吗" after another period: the period the question names
        (its own, never the one talked about before), its change from the value before it, in a word."""
        s = (q.series or ([ctx.last_series] if ctx.last_series else []) or [FRESHER])[0]
        if s == DEFAULT_SERIES and not scope.asks_benchmark(q.text):
            s = FRESHER  # a week's or a day's move is the daily futures'; the World Bank's are months
        relative = q.relative or (None if direction.LOOKBACK.search(q.text)
                                  else direction.LAST.get(q.last_period))  # type: ignore[arg-type]
        start, end = scope.calendar_period(*relative) if relative else (q.start, q.end)
        if not (relative or start) and q.last_period and s in cat.catalogue():
            # "螺纹钢过去三个月涨了还是跌了": the look-back from the data's last day, as its history counts
            # it (was: that history with no word of which way).
            start, end = cat.lookback_start(s, *q.last_period), str(cat.catalogue()[s].end)
        if s not in cat.catalogue() or (period := direction.period_of(start, end)) is None:
            return None
        if (answer := direction.verdict(s, *period, q.zh)) is None:
            return None
        head, (lo, hi) = answer
        notes = [head]
        if s == FRESHER and FRESHER not in q.series:
            notes.append(direction.futures_note(q.zh))
        return Plan([("price_history", {"series": s, "start": lo, "end": hi})], notes=notes)

    def _holiday_edge(self, q: Query) -> Plan | None:
        """"铁矿石期货春节前最后一个交易日价格": the holiday's closure in the year asked (else the latest
        one before today), and the series' last trading day before it (first after it)."""
        assert q.holiday_edge is not None
        name, side = q.holiday_edge
        series = [s for s in q.series if s != DEFAULT_SERIES or scope.asks_benchmark(q.text)] or [FRESHER]
        s = series[0]
        if cat.frequency(s) != "daily":
            return None
        found = scope.holiday_edge_day(s, name, side, q.start or q.end, q.zh)
        if found is None:
            return None
        day, note = found
        if pd.Timestamp(day) > pd.Timestamp(cat.catalogue()[s].end):
            return Plan([("latest_price", {"series": s})], notes=[note, scope.day_after_data(s, "", day, q.zh)])
        q.start = q.end = day
        plan = self._plan_dated(q, ["history"], [s], Context([], None, None, None))
        plan.notes.insert(0, note)
        return plan

    def _ranking_plan(self, q: Query, unit: str, measure: str) -> Plan:
        """"2025年铁矿石期货哪个月涨得最多", "铁矿石哪个季度均价最高": the period's history and its
        months (quarters) ranked (`rankings.ranking`)."""
        s = (q.series or [DEFAULT_SERIES])[0]
        if q.relative and not (q.start or q.end):
            q.start, q.end = scope.calendar_period(*q.relative)
        note = rankings.ranking(s, unit, measure, q.start, q.end, q.zh)
        if not note:
            return self._plan_dated(q, ["history"], [s], Context([], None, None, None))
        return Plan([("price_history", {"series": s, **self._dates(q, s)})], notes=[note])

    def _month_before_data(self, q: Query, intents: list[str], series: list[str]) -> Plan:
        """Each series (at most four) over the last month it has data in, with a note that this is
        not the month asked. Iron ore unnamed is both its series: the futures' month is nearer, the
        World Bank's is in dollars."""
        asked = scope.one_month(q.start, q.end) or ""
        if series == [DEFAULT_SERIES] and not scope.asks_benchmark(q.text):
            series = [FRESHER, DEFAULT_SERIES]
        # A month's "price" is its prices (high, low, mean); "均价" keeps its statistics.
        intent = "history" if intents[0] == "latest" else intents[0]
        plans = []
        for s in dict.fromkeys(series[:4]):
            if scope.gap_target(s, q.start, q.end) is None:
                plans.append(self._plan_dated(q, [intent], [s], Context([], None, None, None)))
                continue
            first, last = scope.month_with_data(s)
            plan = self._plan_dated(replace(q, start=first, end=last), [intent], [s], Context([], None, None, None))
            plan.notes.insert(0, scope.month_after_data(s, asked, q.zh))
            plans.append(plan)
        return _together(plans)

    def _named_days(self, q: Query, series: list[str]) -> Plan | None:
        """`_named_day` for each series (at most four), in one plan; None when one of them is not a
        daily series (the dated path answers them all)."""
        if len(series) <= 1:
            return self._named_day(replace(q, series=series))
        plans = [self._named_day(replace(q, series=[s])) for s in dict.fromkeys(series[:4])]
        return _together([p for p in plans if p is not None]) if None not in plans else None

    def _named_day(self, q: Query) -> Plan | None:
        """"上周五的价格", "昨天螺纹钢收盘价", "圣诞节2024年铁矿石价格": one day counted from today (or
        25 December). Iron ore's day is the daily futures' (the World Bank's is a monthly average).
        A day after the data's end gets its nearest earlier day with data, said so."""
        series = [s for s in q.series if s != DEFAULT_SERIES or scope.asks_benchmark(q.text)] or [FRESHER]
        s = series[0]
        if cat.frequency(s) != "daily" or q.start is None or pd.Timestamp(q.start) > pd.Timestamp(today()):
            return None  # "这周五" still ahead: the forecast path answers it
        notes_: list[str] = []
        if q.christmas:
            notes_.append(scope.christmas_note(s, q.start, q.zh))
        if pd.Timestamp(q.start) > pd.Timestamp(cat.catalogue()[s].end):
            notes_.append(scope.day_after_data(s, q.day_word or "", q.start, q.zh))
            return Plan([("latest_price", {"series": s})], notes=notes_)
        if q.day_word:
            notes_.append(scope.day_named(q.day_word, q.start, q.zh))
        plan = self._plan_dated(q, ["history"], [s], Context([], None, None, None))
        plan.notes[:0] = notes_
        return plan

    def _target_plan(self, q: Query, ctx: Context) -> Plan:
        """"铁矿石会涨到800元吗？", "chance iron ore falls below 600 CNY/t in 3 months": a forecast of
        the series in the target's own unit (800 元 is the DCE futures, not the World Bank's US$),
        to the horizon asked (default: the usual one from today); the answer then sets the target
        against the latest value and the forecast's bands (`compose.target_check`)."""
        assert q.target_level is not None
        value, currency = q.target_level
        s = (q.series or [ctx.last_series or DEFAULT_SERIES])[0]
        notes_: list[str] = []
        if s in DRIVER_SERIES["iron_ore"]:
            if currency is None:
                wb, dce = (float(cat.latest_value(x)) for x in (DEFAULT_SERIES, FRESHER))
                currency = "USD" if abs(math.log(value / wb)) <= abs(math.log(value / dce)) else "CNY"
                notes_.append(scope.level_unit_assumed(value, currency, q.zh))
            if currency == "CNY":
                s = FRESHER
            elif s == FRESHER:
                s = DEFAULT_SERIES
        unit = cat.catalogue()[s].unit
        if currency is not None and _currency_of(unit) not in (None, currency):
            return Plan(reply=scope.level_in_other_currency(s, currency, q.zh))
        if _YEAR_END.search(q.text):
            # "年底会跌破600元吗", "by the end of next year": that year's December (this year's unnamed).
            shift = q.relative[1] if q.relative and q.relative[0] == "year" else 0
            year = q.start[:4] if q.start else str(today().year + shift)
            q.start = q.end = f"{year}-12"
        h, start = self._ahead(q, s)
        if q.start and (target := scope.bound(q.end or q.start, True)) > pd.Timestamp(cat.catalogue()[s].end):
            # "2026年底会跌破90美元吗", "明年6月会涨到120美元吗": the forecast ends at the period asked, where
            # the target is checked (was: the usual horizon from today, May 2027, or "6月" read as
            # six months), and the period's own first day is the one asked about.
            h = scope.periods_until(s, target) or h
            start = scope.period_start(s, target)
        if h > scope.MAX_TARGET_PERIODS.get(cat.frequency(s), 36):
            return Plan(reply=scope.too_far(s, start, q.zh))
        if q.horizon and not q.start and (note := scope.ahead_note(s, *q.horizon, start, q.zh)):
            notes_.append(note)
        return Plan([("forecast_price", {"series": s, "horizon": h, "method": q.method or "auto"})],
                    notes=notes_, focus={s: start.date().isoformat()})

    def _forecast_to(self, q: Query, series: list[str], target: Any, *, gap: bool = False) -> Plan:
        """A forecast of each series named (at most four) to `target`: "螺纹钢和热卷明年的价格" forecast
        the rebar alone and dropped the coil without a word."""
        plans = []
        for s in series[:4]:
            if gap and s != series[0] and scope.gap_target(s, q.start, q.end) is None:
                # "三个月前呢" past one series' data but not another's: that one has the day itself.
                plans.append(Plan([("price_history", {"series": s, **self._dates(q, s)})]))
            else:
                plans.append(self._forecast_one_to(q, s, target, gap=gap))
        if len(plans) == 1:
            return plans[0]
        return _together(plans)

    def _forecast_one_to(self, q: Query, s: str, target: Any, *, gap: bool) -> Plan:
        if q.tomorrow and s == DEFAULT_SERIES and not scope.asks_benchmark(q.text):
            s = "dce_iron_ore_daily"  # tomorrow is a trading day: the daily futures, as "price now"
        facts = cat.catalogue().get(s)
        closed_day = None
        if q.tomorrow and facts and facts.frequency == "daily" and \
                not trading_days.is_trading_day(target, scope.calendar_of(s)):
            # Tomorrow is a weekend or an exchange holiday: no price exists for it; the next
            # trading day's forecast is what can be given.
            closed_day, target = target, trading_days.next_trading_days(target, 1, scope.calendar_of(s))[0]
        h = scope.periods_until(s, target)
        limit = scope.MAX_TARGET_PERIODS.get(facts.frequency if facts else "monthly", 36)
        if h is None or h > limit:
            return Plan(reply=scope.too_far(s, target, q.zh))
        first = target if q.tomorrow or not q.start else scope.period_start(s, scope.bound(q.start))
        note = (scope.gap_note(s, q.start, q.end, q.zh) if gap and q.start
                else scope.closed_tomorrow_note(s, closed_day, target, q.zh) if closed_day is not None
                else scope.future_note(s, target, q.tomorrow, q.zh))
        settle = scope.settle_not_close(s, q.text, q.zh)  # "明天开盘价": the forecast is of the settle
        calls: list[tuple[str, dict[str, Any]]] = [("forecast_price", {"series": s, "horizon": h,
                                                                        "method": q.method or "auto"})]
        if facts and q.start and not q.tomorrow and not gap and scope.bound(q.start) <= pd.Timestamp(facts.end):
            # "2026年铁矿石均价预计多少" with data to May: the months with data are data, not "no data yet";
            # an average asked for blends them with the forecast of the rest (model._blended_average).
            note = scope.part_data_note(s, q.start, target, q.zh)
            if q.asks_average:
                calls.insert(0, ("describe_series", {"series": s, "start": q.start, "end": facts.end}))
            elif q.will_go:
                # "下半年会怎样": the part of the period with data is history, given first, then the rest
                calls.insert(0, ("price_history", {"series": s, "start": q.start, "end": facts.end}))
        return Plan(calls, notes=[note, *([settle] if settle else [])], focus={s: first.date().isoformat()})

    def _plan_dated(self, q: Query, intents: list[str], series: list[str], ctx: Context) -> Plan:
        if (q.start or q.end or q.last_period) and intents[0] == "latest":
            # "去年铁矿石价格", "近三个月铁矿石期货怎么样" ask about a period, not the last value.
            intents[0] = "history"
        series = series or [DEFAULT_SERIES]
        note = scope.day_in_month(series[0], q) or scope.closed_day(series[0], q)
        plan = self._by_intent(intents, q, series, ctx)
        if note:
            plan.notes.insert(0, note)
        if settle := scope.settle_not_close(series[0], q.text, q.zh):
            plan.notes.append(settle)
        return plan

    # ---- planning by intent --------------------------------------------------------------

    def _by_intent(self, intents: list[str], q: Query, series: list[str], ctx: Context) -> Plan:
        # "对比一下今年的表现": comparing over a period is the two histories; without one, co-movement.
        plain = "history" if (q.start or q.end or q.last_period) else "relate"
        first = intents[0] if intents[0] != "compare" else (intents[1:] or [plain])[0]
        past_note = None
        if first == "forecast" and q.last_period and not q.horizon:
            # "预测过去3个月": a look-back has data (or is said to have none); nothing to forecast.
            first, past_note = "history", scope.past_not_forecast(q.zh)
        if first == "catalogue":
            return Plan([("list_series", {})])
        if first == "report":
            return Plan([("export_report", _report_args(q, ctx))])
        many = len(series) >= 2
        if self.role == "main" and "task" in self.tools and (
            first == "methods" or (first == "backtest" and many) or (first == "forecast" and many
                                                                     and "compare" in intents)
        ):
            return Plan([("task", {"description": q.text, "subagent_type": "quant"})])
        if first == "methods":
            s = series[0]
            h = self._horizon(q, s)
            facts = cat.catalogue().get(s)
            step = COMPARISON_STEP.get(facts.frequency if facts else "monthly", 1)
            methods = COMPARED_METHODS + (("nowcast",) if has_nowcast(s) else ())
            return Plan([("backtest_forecast", {"series": s, "horizon": h, "method": m, "step": step})
                         for m in methods])
        if first == "margin":
            if re.search(r"热卷|热轧|hrc|hot[- ]rolled", q.text, re.I) and re.search(r"螺纹|rebar", q.text, re.I):
                # "热卷利润是不是比螺纹钢利润高": both margins, set side by side (model._COMPARED).
                dates = self._dates(q, "shfe_rebar_daily")
                return Plan([("mill_margin", dict(dates)), ("mill_margin", {**dates, "product": "hrc"})])
            product = {"product": "hrc"} if q.product == "hrc" else {}  # "热卷利润": not rebar's
            return Plan([("mill_margin", {**self._dates(q, "shfe_rebar_daily"), **product})])
        if first == "relate" and len(series) >= 3 and re.search(r"比|than|higher|lower|stronger|weaker|更", q.text, re.I):
            # "螺纹钢和焦炭的相关性比铁矿石高吗": the first series against each of the two others.
            a = series[0]
            others = [FRESHER if s == DEFAULT_SERIES and cat.frequency(a) == "daily" else s for s in series[1:3]]
            return Plan([("relate_series", {"a": a, "b": b, **self._dates(q, a)}) for b in others])
        if first == "relate" or (first == "compare" and many):
            if len(series) < 2 and ctx.last_series and ctx.last_series != series[0]:
                # "螺纹钢最新价，以及和铁矿石的相关性": the series talked about is the other side.
                series = [ctx.last_series, series[0]]
            elif len(series) < 2:
                other = "dce_iron_ore_daily" if series[0] != "dce_iron_ore_daily" else "shfe_rebar_daily"
                series = [series[0], other]
            if (q.start or q.end or q.last_period) and DEFAULT_SERIES in series[:2] and not scope.asks_benchmark(q.text) \
                    and any(cat.frequency(s) == "daily" for s in series[:2] if s in cat.catalogue()):
                # "铁矿石和螺纹钢今年的相关性": the ore's futures on rebar's days (the World Bank's months
                # this year are too few to correlate).
                series = [FRESHER if s == DEFAULT_SERIES else s for s in series]
            relate = ("relate_series", {"a": series[0], "b": series[1], **self._dates(q, series[0])})
            if "chart" in intents:  # "铁矿石和螺纹钢的相关性图": the two related, drawn together
                return Plan([relate, ("make_chart", {"series": series[0], "compare": series[1],
                                                     **self._dates(q, series[0])})])
            return Plan([relate])
        if "chart" in intents and first != "forecast" and not q.series and ctx.last_call \
                and ctx.last_call[0] == "relate_series":
            # "…的相关性怎么样？画个图": the chart is of the two series just related.
            series = [ctx.last_call[1]["a"], ctx.last_call[1]["b"]]
            many = True
        calls: list[tuple[str, dict[str, Any]]] = []
        notes: list[str] = [past_note] if past_note else []
        if first in ("latest", "history") and DEFAULT_SERIES in series and len(series) > 1 and re.search(
                r"比价|价格比|比值|ratio|价差|差价|spread", q.text, re.I) and not scope.asks_benchmark(q.text) \
                and any(_currency_of(cat.catalogue()[s].unit) == "CNY" for s in series if s in cat.catalogue()):
            # "铁矿石和螺纹钢的比价": a ratio or spread needs one unit; the ore in yuan is the DCE futures.
            series = list(dict.fromkeys(FRESHER if s == DEFAULT_SERIES else s for s in series))
        elif first in ("history", "describe", "chart") and DEFAULT_SERIES in series and len(series) > 1 and \
                (q.start or q.end or q.last_period or re.search(r"波动|volatil", q.text, re.I)) and \
                not scope.asks_benchmark(q.text) and \
                any(cat.frequency(s) == "daily" for s in series if s in cat.catalogue() and s != DEFAULT_SERIES):
            # "2025年铁矿石和螺纹钢谁涨得多": the ore on the other futures' trading days (DCE), not the
            # World Bank's monthly averages, whose months end on other days and whose data ends sooner.
            series = list(dict.fromkeys(FRESHER if s == DEFAULT_SERIES else s for s in series))
            notes.append(scope.ore_beside_futures_note(q.zh))
        dollars = bool(USD_UNIT.search(q.text) or re.search(
            r"多少美元|美元一吨|美元每吨|几美元|\bin (?:us )?dollars\b|\bin usd\b", q.text, re.I)) or any(
            c == "USD" for _, c in q.claims)
        yuan = any(c == "CNY" for _, c in q.claims) or "元/吨" in USD_UNIT.sub(" ", q.text)
        if first == "latest" and series == [DEFAULT_SERIES] and dollars and not yuan:
            pass  # "铁矿石价格是多少美元/干吨", "是100美元/吨对吗": the dollar price, the World Bank's
        elif first in ("describe", "history") and series == [DEFAULT_SERIES] and not scope.asks_benchmark(q.text) \
                and not dollars and re.search(r"哪天|哪一天|哪个交易日|which day|what day|on what date", q.text, re.I):
            # "铁矿石的历史最高价是哪天": a day is the daily futures'; the World Bank's is a monthly average.
            series = [FRESHER]
            notes.append(scope.day_is_futures_note(q.text, q.zh))
        elif first in ("describe", "history") and series == [DEFAULT_SERIES] and not scope.asks_benchmark(q.text) \
                and not dollars and not q.claim and \
                re.search(r"多少元|几元|多少块|元/吨|元一吨|人民币|\bin (?:yuan|rmb|cny)\b", q.text, re.I):
            # "铁矿石价格历史最高是多少元": the yuan history is the DCE futures, not the World Bank's dollars.
            series = [FRESHER]
            notes.append(scope.yuan_price_note(q.zh))
        elif first == "latest" and series == [DEFAULT_SERIES] and not scope.asks_benchmark(q.text) and (
                not re.search(r"美元|美金|dollar|\busd\b|us\$", q.text, re.I) and (
                yuan or re.search(r"人民币|元|\b(?:yuan|rmb|cny|renminbi)\b",
                                  re.sub(r"美元|美金|港元|欧元|日元|澳元", " ", USD_UNIT.sub(" ", q.text)), re.I))):
            # "多少钱一吨（人民币）": the price in yuan is the DCE futures alone, not the US$ benchmark too.
            series = [FRESHER]
            notes.append(scope.yuan_price_note(q.zh))
        elif first == "latest" and series == [DEFAULT_SERIES] and not scope.asks_benchmark(q.text):
            # "Price now": the freshest series first, the World Bank monthly average as context.
            series = ["dce_iron_ore_daily", DEFAULT_SERIES]
            notes.append(scope.price_now_note(q.zh))
        elif first == "latest" and series == [FRESHER] and scope.asks_benchmark(q.text):
            series = [FRESHER, DEFAULT_SERIES]  # "铁矿石期货和世界银行价格差多少": both, each in its unit
        elif first == "latest" and series == [FRESHER] and dollars and yuan:
            series = [FRESHER, DEFAULT_SERIES]  # "700元/吨还是100美元/干吨": each figure in its own unit
        if first in ("describe", "history", "chart") and (q.start or q.end):
            kept = []
            for s in series:
                gap = scope.coverage_gap(s, q.start, q.end, q.zh)
                if gap is None:
                    kept.append(s)
                    if partial := scope.partial_note(s, q.start, q.end, q.zh):
                        notes.append(partial)
                        if s == DEFAULT_SERIES and FRESHER not in series and not scope.asks_benchmark(q.text) \
                                and (also := scope.futures_for_the_rest(q.start, q.end, q.zh)):
                            # "2026上半年铁矿石": the World Bank's months stop in May; the futures
                            # traded the whole half, so they answer it too, said to be the futures.
                            notes.append(also)
                            kept.append(FRESHER)
                elif s == DEFAULT_SERIES and (old := scope.old_contract(q.start, q.end, q.zh)):
                    notes.append(old)  # "1990年铁矿石价格": the old contract price, in its own unit
                else:
                    notes.append(gap)
                    calls.append(("latest_price", {"series": s}))
            series = kept
            if not series:
                return Plan(calls, notes=notes)
        if q.last_period and not (q.start or q.end) and first in ("describe", "history", "chart"):
            note = scope.lookback_note(series[0], q.last_period, q.zh)
            if note:
                notes.append(note)
        focus: dict[str, str] = {}
        if first == "backtest" and (unchecked := scope.nothing_to_check(series[0], q.start, q.zh)):
            return Plan(reply=unchecked)  # "how accurate was the forecast for October 2026?"
        if first == "backtest" and scope.asks_own_record(q.text):
            notes.append(scope.own_record_note(q.zh))
        for s in series[:4]:
            if first == "backtest":
                # "How reliable is that?" after an ETS forecast: that forecast's method and reach (12
                # months from data ending in May for "the next 6 months" in December) are the ones checked.
                was = ctx.last_call[1] if not q.series and ctx.last_call and ctx.last_call[0] == "forecast_price" \
                    and ctx.last_call[1].get("series") == s else {}
                args: dict[str, Any] = {"series": s, "horizon": (not q.horizon and was.get("horizon")) or self._horizon(q, s),
                                        "method": q.method or was.get("method") or "auto"}
                if q.start:
                    args["start"] = q.start
                calls.append(("backtest_forecast", args))
            elif first == "forecast":
                h, start = self._ahead(q, s)
                if h > scope.MAX_TARGET_PERIODS.get(cat.frequency(s), 36) and q.horizon:
                    n, unit = q.horizon
                    return Plan(reply=scope.too_far(s, start + pd.DateOffset(**{f"{unit}s": n}), q.zh))
                calls.append(("forecast_price", {"series": s, "horizon": h, "method": q.method or "auto"}))
                focus[s] = start.date().isoformat()
                if s == series[0] and q.horizon and (note := scope.ahead_note(s, *q.horizon, start, q.zh)):
                    notes.append(note)
            elif first == "describe" and s == FRESHER and len(series) == 1 and dollars and not yuan \
                    and "describe_series" in self.tools:
                # "铁矿石期货2025年平均价格是多少美元": the futures are in yuan; the dollar price is the
                # World Bank's. Both, said so, rather than a yuan figure for a dollar question.
                notes.append(scope.futures_in_yuan_note(q.zh))
                calls.append(("describe_series", {"series": s, **self._dates(q, s)}))
                calls.append(("describe_series", {"series": DEFAULT_SERIES, **self._dates(q, DEFAULT_SERIES)}))
            elif first == "describe":
                if s == DEFAULT_SERIES and q.claim and q.claim[1] == "CNY" and not scope.asks_benchmark(q.text):
                    s = FRESHER  # "1000元一吨的铁矿石贵吗": a yuan figure is set against the yuan series
                    if note := scope.figure_in_range(s, q.claim[0], q.zh):
                        notes.append(note)
                calls.append(("describe_series", {"series": s, **self._dates(q, s)}))
            elif first == "history":
                calls.append(("price_history", {"series": s, **self._dates(q, s)}))
            elif first == "latest":
                calls.append(("latest_price", {"series": s}))
        if "chart" in intents and many and first != "forecast":
            # "铁矿石和螺纹钢走势对比图", "plot ore against coking coal": both drawn, not the first alone.
            calls.append(self._comparison_chart(q, series))
        elif "chart" in intents:
            s = series[0]
            chart_args: dict[str, Any] = {"series": s, **self._dates(q, s)}
            if first == "forecast":
                chart_args["forecast_horizon"] = self._ahead(q, s)[0]
            elif (first == "chart" and not q.series and not (q.start or q.end) and ctx.last_call
                  and ctx.last_call[0] == "forecast_price" and ctx.last_call[1].get("series") == s):
                # "…未来三个月呢？画个图": the chart of the forecast just made, its fan included.
                forecast = ctx.last_call[1]
                chart_args["forecast_horizon"] = forecast["horizon"]
                if forecast.get("method", "auto") != "auto":
                    chart_args["method"] = forecast["method"]
            calls.append(("make_chart", chart_args))
        return Plan(calls, notes=notes, focus=focus)

    def _comparison_chart(self, q: Query, series: list[str]) -> tuple[str, dict[str, Any]]:
        """make_chart of the first two series as indexes. Iron ore against a daily exchange series is
        the DCE futures (same market, same days, fresher) unless the World Bank's is asked for."""
        a, b = series[:2]
        daily = [s for s in (a, b) if cat.frequency(s) == "daily"]
        if DEFAULT_SERIES in (a, b) and daily and not scope.asks_benchmark(q.text):
            a, b = (FRESHER if s == DEFAULT_SERIES else s for s in (a, b))
        if a == b:  # (the ore named twice once the benchmark gave way: the other side stays)
            a, b = series[:2]
        return ("make_chart", {"series": a, "compare": b, **self._dates(q, a)})

    def _follow_up(self, q: Query, ctx: Context) -> Plan:
        assert ctx.last_call is not None
        name, prev = ctx.last_call
        args = dict(prev)
        if name == "task":
            return Plan([("task", {"description": f"{prev.get('description', '')}\n{q.text}",
                                   "subagent_type": "quant"})])
        if name == "describe_series" and len(q.series) == 1 and not (q.start or q.end or q.last_period) and \
                len(ctx.calls) >= 2 and (two := ctx.calls[-2:]) and all(c[0] == name for c in two) and \
                two[0][1].get("series") == two[1][1].get("series") != q.series[0] and \
                (two[0][1].get("start"), two[0][1].get("end")) != (two[1][1].get("start"), two[1][1].get("end")):
            # "焦煤呢" after "2024年和2023年比铁矿石怎么样": the new series over both periods, compared
            # (was: the later period alone).
            return Plan([(name, {**c[1], "series": q.series[0]}) for c in two])
        if name in ("price_history", "describe_series", "latest_price") and not q.series and \
                len(ctx.turn_series) > 1 and (q.start or q.end or q.last_period):
            # "那2024年呢" after "2025年热卷和螺纹钢谁涨得多" (or their two prices): both series again
            # over the new period.
            name = "price_history" if name == "latest_price" else name
            return Plan([(name, {"series": s, **self._dates(q, s)}) for s in ctx.turn_series[:4]])
        series_key = "a" if name == "relate_series" else "series"
        if q.series and series_key in args:
            args[series_key] = q.series[0]
            if name == "relate_series" and len(q.series) > 1:
                args["b"] = q.series[1]
        s = args.get(series_key) or DEFAULT_SERIES
        if q.horizon and name == "backtest_forecast":
            args["horizon"] = cat.periods(s, *q.horizon)  # steps ahead of each origin, not dates
        elif q.horizon and "horizon" in args:
            args["horizon"] = scope.ahead(s, *q.horizon)[0]
        elif q.horizon and name == "make_chart":
            args["forecast_horizon"] = scope.ahead(s, *q.horizon)[0]
        if q.method and "method" in args:
            args["method"] = q.method
        if q.start and name == "latest_price":  # "那2024年呢？" after a price: that day's or period's
            name = "price_history"
        if (q.start or q.end or q.last_period) and name in (
            "price_history", "describe_series", "relate_series", "mill_margin", "make_chart"
        ):
            args.pop("start", None)
            args.pop("end", None)
            args.update(self._dates(q, s))
        if q.horizon and name in ("latest_price", "price_history", "describe_series"):
            # "and for 6 months?" after a price question most likely asks for a forecast.
            h, start = scope.ahead(s, *q.horizon)
            return Plan([("forecast_price", {"series": s, "horizon": h, "method": q.method or "auto"})],
                        focus={s: start.date().isoformat()})
        if name == "forecast_price" and q.horizon:
            return Plan([(name, args)], focus={s: scope.ahead(s, *q.horizon)[1].date().isoformat()})
        return Plan([(name, args)])

    def _extra_tool(self, q: Query) -> Plan | None:
        """A tool that is not ours (MCP, caller-supplied) named in the question."""
        low = q.text.lower()
        for name, schema in self.extra.items():
            if name.lower() in low or name.lower().replace("_", " ") in low:
                args, missing = _fill_args(q.text, schema)
                if missing:
                    need = ", ".join(missing)
                    return Plan(reply=(f"工具 {name} 需要参数：{need}。请用 参数=值 的形式给出。" if q.zh
                                       else f"Tool {name} needs: {need}. Give them as name=value."))
                return Plan([(name, args)])
        return None

    # ---- argument helpers ---------------------------------------------------------------

    def _horizon(self, q: Query, series: str) -> int:
        """Steps ahead for a backtest: counted from each origin, not from today."""
        if q.horizon:
            return cat.periods(series, *q.horizon)
        return cat.default_horizon(series)

    def _ahead(self, q: Query, series: str) -> tuple[int, Any]:
        """A forecast's horizon from the data's end to the periods asked, counted from today."""
        return scope.ahead(series, *q.horizon) if q.horizon else scope.ahead(series)

    def _dates(self, q: Query, series: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if q.start:
            out["start"] = q.start
        if q.end:
            out["end"] = q.end
        if not out and q.last_period:
            start = cat.lookback_start(series or "dce_iron_ore_daily", *q.last_period)
            if start:
                out["start"] = start
        return out


# "which one", "哪个", "both", "两个": the two series talked about last.
_BOTH = re.compile(r"哪个|哪一个|谁|两个|两者|二者|两种|\bboth\b|\bwhich one\b|\bwhich of (?:them|the two)\b|"
                   r"\bwhich forecast\b|"
                   r"\bthe two\b|\bthem\b", re.I)


def _last_two_series(ctx: Context) -> list[str]:
    """The last two different series of the conversation's market calls, in the order first asked."""
    seen: list[str] = []
    for _, args in reversed(ctx.calls):
        for key in ("series", "a", "compare", "b"):
            if isinstance(s := args.get(key), str) and s not in seen:
                seen.append(s)
        if len(seen) >= 2:
            return list(reversed(seen[:2]))
    return seen


_NO_MARGIN_FORECAST_ZH = (
    "我没有钢厂利润（盘面利润）的预测：它是螺纹钢 − 1.6×铁矿石 − 0.5×焦炭 的期货价差，我能分别预测这三个价格（各带 80%/95% "
    "区间），但把它们合成利润的区间需要三者之间的相关性，我不做这种合成，以免给出没有依据的数字。可以问“螺纹钢未来三个月预测”"
    "“铁矿石期货未来三个月预测”“焦炭未来三个月预测”，或“钢厂利润今年以来的变化”。")
_NO_MARGIN_FORECAST_EN = (
    "I have no forecast of the mill margin: it is a spread of futures (rebar − 1.6 × iron ore − 0.5 × coke). I can "
    "forecast each of the three prices (with 80%/95% ranges), but a range for the margin would need how they move "
    "together, which I do not model, so I give no number for it. Ask e.g. 'forecast rebar for 3 months', 'forecast "
    "iron ore futures for 3 months', 'forecast coke for 3 months', or 'the mill margin this year'.")
_HOW_SURE = re.compile(r"可靠|靠谱|可信|准吗|准不准|把握|\breliab|\bhow sure\b|\bconfident\b|\btrust\b", re.I)
_SCENARIO_SURE_ZH = (
    "**这个情景结论有多可靠**：它来自历史上两者同步变动的回归，可靠程度看下面同一情景的三个数字——R²（这个因素解释了价格变动的多少）、"
    "斜率的 80% 区间（关系本身有多不确定）、以及加上其它因素后的 80%/95% 区间。R² 低时，这个因素只解释很小一部分变动，"
    "结论只能当作方向上的参考；它是同步关系，不是因果，也没有回测过。")
_SCENARIO_SURE_EN = (
    "**How far this scenario can be trusted**: it comes from a regression of how the two moved together, so read "
    "three numbers of the same scenario below — R² (how much of the price's moves this factor explains), the 80% "
    "range of the slope (how uncertain the relation itself is), and the 80%/95% ranges with everything else added. "
    "With a low R² the factor explains little, and the result is a direction at most; it is co-movement, not cause, "
    "and it has not been backtested.")
_FROM_PEAK = re.compile(r"离(?:历史)?最?高点|距离?(?:历史)?最?高点|比(?:历史)?最高(?:点|价)?(?:低|跌)|"
                        r"\b(?:from|below|off) (?:the|its) (?:peak|high|all[- ]time high)\b", re.I)


def _window(args: dict[str, Any]) -> pd.Series | None:
    """The bundled values of a statistics call's series over its [start, end] (None: no such series)."""
    s = args.get("series")
    if s not in cat.catalogue():
        return None
    values = market.load_series(s)
    if args.get("start"):
        values = values[values.index >= scope.bound(args["start"])]
    if args.get("end"):
        values = values[values.index <= scope.bound(args["end"], True)]
    return values


def _below_peak(args: dict[str, Any], zh: bool) -> str | None:
    """The last value of a series' statistics window against that window's high."""
    s = args.get("series")
    values = _window(args)
    if values is None or len(values) < 2:
        return None
    day, last = values.idxmax(), float(values.iloc[-1])
    unit = cat.catalogue()[s].unit
    u = compose.UNIT_ZH.get(unit, unit) if zh else unit
    high = float(values[day])
    rate = (last / high - 1) * 100
    if zh:
        return (f"**{cat.name(s, zh)}最新 {compose.level(last, u)}（{values.index[-1].date()}）比最高 "
                f"{compose.level(high, u)}（{day.date()}）{compose.pct(rate)}（{compose.signed(last - high, u)}）**。")
    return (f"**{cat.name(s, zh)}: the latest {compose.level(last, u)} ({values.index[-1].date()}) is {compose.pct(rate)} "
            f"({compose.signed(last - high, u)}) against the high of {compose.level(high, u)} ({day.date()})**.")


# "是什么时候", "when was that?": the date of the extreme asked about just before.
_WHEN = re.compile(r"^\s*(?:那|那是|是)?(?:什么时候|哪天|哪一天|何时)|\bwhen (?:was|did) (?:that|it)\b", re.I)


def _when_extreme(asked: str, args: dict[str, Any], zh: bool) -> str | None:
    """The date of the high (low) the question before asked of a series' statistics."""
    high = re.search(r"最高|高点|峰值|highest|peak|\bhigh\b|\bmax", asked, re.I)
    low = re.search(r"最低|低点|谷底|lowest|bottom|\blow\b|\bmin", asked, re.I)
    s = args.get("series")
    values = _window(args)
    if bool(high) == bool(low) or values is None or values.empty:
        return None
    day = values.idxmax() if high else values.idxmin()
    unit = cat.catalogue()[s].unit
    value = compose.level(float(values[day]), compose.UNIT_ZH.get(unit, unit) if zh else unit)
    if zh:
        return f"**{cat.name(s, zh)}的{'最高' if high else '最低'}值 {value} 出现在 {day.date()}**（{values.index[0].date()} 至 {values.index[-1].date()} 的数据里）。"
    return (f"**The {'high' if high else 'low'} of {cat.name(s, zh)}, {value}, was on {day.date()}** (in the data from "
            f"{values.index[0].date()} to {values.index[-1].date()}).")


# "that month", "那个月": the period of the call before.
_THAT_PERIOD = re.compile(r"\bthat (?:month|year|week|quarter|period)\b|\b(?:in|during|over) that (?:time|period)\b|"
                          r"那个月|那一年|那年|那一周|那周|那个季度|那段时间|当月|当周|那几个月", re.I)
# "which year was higher?" after two years compared: those two periods again, side by side.
_WHICH_PERIOD = re.compile(r"\bwhich (?:year|month|quarter|period)\b|哪一?年|哪个月|哪个季度|哪段", re.I)
# "现在适合买入吗" after "2015年最低是多少": today's standing, not the period asked before.
_NOW = re.compile(r"现在|目前|当前|眼下|此刻|\bnow\b|\bcurrently\b|\bat present\b|\btoday\b", re.I)
# "年底", "by year end", "end of 2026": a year's last month, where a price target is checked.
_YEAR_END = re.compile(r"年底|年末|年终|\byear[- ]end\b|\bend of (?:the |this |next )?(?:year|\d{4})\b", re.I)
# "和一季度比哪个高", "compared with 2024": a period set against the one asked before.
_AGAINST = re.compile(r"^\s*(?:那)?(?:和|跟|与|同)|比(?:较)?(?:哪个|谁|哪|呢|怎么样|如何)|对比|\bcompared? (?:with|to)\b|"
                      r"\bvs\.?\b|\bversus\b|\bagainst\b", re.I)
# "去年同期呢", "2024年同期呢", "the same quarter a year earlier": the period asked before, in
# another year (alone, "去年同期" is the latest value against a year ago).
# "How does that compare with a year earlier?" after March 2026: March 2025 (was: a correlation).
_SAME_PERIOD = re.compile(r"同期|same (?:period|time|quarter|half|month)|\ba year (?:earlier|before)\b", re.I)
_YEARS_BACK = ((re.compile(r"前年|two years (?:earlier|before|ago)|year before last", re.I), 2),
               (re.compile(r"去年|上年|上一年|last year|previous year|prior year|a year (?:earlier|before|ago)", re.I), 1))


def _period_asked(call: tuple[str, dict[str, Any]]) -> tuple[str, str] | None:
    """The (start, end) of a history or statistics call within one calendar year, else None."""
    name, args = call
    start, end = args.get("start"), args.get("end") or args.get("start")
    if name not in ("price_history", "describe_series") or not start or str(start)[:4] != str(end)[:4]:
        return None
    return str(start), str(end)


def _whole_year(start: str, end: str) -> bool:
    """Whether (start, end) of one calendar year, as a call writes them, is all of it."""
    return start[4:] in ("", "-01", "-01-01") and end[4:] in ("", "-12", "-12-31")


def _in_period_asked(q: Query, start: str, end: str) -> None:
    """A follow-up read against the period asked before: "三季度呢", "2月呢" in its year, and
    "去年同期呢" as that period a year earlier."""
    if q.year_assumed and q.start:
        # "三季度呢" after "2025年一季度螺纹钢均价": 2025's third quarter, not the latest one.
        q.start, q.end = (d and start[:4] + d[4:] for d in (q.start, q.end))
        q.month_assumed = q.part_assumed = ""
    elif _SAME_PERIOD.search(q.text) and not q.last_period and (q.start or "")[:4] == (q.end or "")[:4]:
        if q.start and len(q.start) == 4:
            year = q.start  # "2024年同期呢"
        elif back := next((n for rx, n in _YEARS_BACK if rx.search(q.text)), None):
            year = str(int(start[:4]) - back)
        else:
            return
        q.start, q.end, q.relative, q.ago, q.horizon = year + start[4:], year + end[4:], None, None, None
        q.intents = [i for i in q.intents if i != "latest"]


def _two_periods_asked(ctx: Context) -> list[dict[str, Any]] | None:
    """The last two statistics (histories) asked of one series over two different periods, earlier
    period first; None when the last two calls were not that."""
    last = [c for c in ctx.calls if c[0] in ("describe_series", "price_history")][-2:]
    if len(last) != 2 or last[0][1].get("series") != last[1][1].get("series"):
        return None
    periods = [{k: a[k] for k in ("series", "start", "end") if a.get(k)} for _, a in last]
    if periods[0] == periods[1] or not all(p.get("start") for p in periods):
        return None
    return sorted(periods, key=lambda p: str(p["start"]))


def _scenario_target(q: Query, driver: str) -> str:
    """"如果PMI上升1个点，螺纹钢会怎样": the series named that is not the driver's own; iron ore
    unless another is named (rebar when iron ore is the driver)."""
    own = DRIVER_SERIES.get(driver, ())
    named = [s for s in q.series if s not in own and not (s == "usd_cnh_daily" and q.scenario_level
                                                          and q.scenario_level[2])]
    if named:
        return named[0]
    return "shfe_rebar_daily" if driver.startswith("iron_ore") else "iron_ore_wb_monthly"


def scenario_level_plan(q: Query, ctx: Context) -> Plan:
    """"如果螺纹钢跌到3000元/吨，铁矿石会怎样？": the scenario of the driver reaching that level from
    its latest value, in the driver series' own unit (a level in another currency is not converted)."""
    assert q.scenario_level is not None
    key, value, currency = q.scenario_level
    if not key:  # "如果它跌到2900元": the series talked about before, if a driver measures it
        key = next((k for k, d in DRIVERS.items() if d.series == ctx.last_series), "")
        if key == "iron_ore_futures":
            key = "iron_ore"  # resolved by the currency below, as when it is named
        if not key:
            return Plan(reply=scope.level_without_driver(value, q.zh))
    notes_: list[str] = []
    if key == "iron_ore":
        # The currency says which iron ore: US$/dmt is the World Bank's, CNY/t the DCE futures'.
        if currency is None:
            wb, dce = (float(cat.latest_value(s)) for s in ("iron_ore_wb_monthly", "dce_iron_ore_daily"))
            currency = "USD" if abs(math.log(value / wb)) <= abs(math.log(value / dce)) else "CNY"
            notes_.append(scope.level_unit_assumed(value, currency, q.zh))
        key = "iron_ore" if currency == "USD" else "iron_ore_futures"
    driver_series = DRIVERS[key].series
    unit = cat.catalogue()[driver_series].unit
    if currency is not None and currency != _currency_of(unit):
        return Plan(reply=scope.level_in_other_currency(driver_series, currency, q.zh))
    if not 1 / 3 <= value / cat.latest_value(driver_series) <= 3:
        # A level a third or three times the price is no scenario the data can speak to; most
        # likely the number belongs to another series or unit.
        return Plan(reply=scope.level_too_far(driver_series, value, q.zh))
    target = _scenario_target(q, key)
    if target == DEFAULT_SERIES and cat.frequency(driver_series) == "daily" and not scope.asks_benchmark(q.text):
        target = FRESHER  # the same day's iron ore futures, not a monthly average months older
    return Plan([("price_scenario", {"driver": key, "level": value, "target": target})], notes=notes_)


def _currency_of(unit: str) -> str | None:
    return "CNY" if unit.startswith("CNY") else "USD" if unit.startswith("US$") else None


def _fill_args(text: str, schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    args: dict[str, Any] = {}
    missing: list[str] = []
    for key, spec in props.items():
        m = re.search(rf"{re.escape(key)}\s*[=:：]\s*[\"'“]?([^\s\"'”，,]+)", text)
        if m:
            raw = m.group(1)
            kind = spec.get("type")
            try:
                args[key] = int(raw) if kind == "integer" else float(raw) if kind == "number" else raw
            except ValueError:
                args[key] = raw
        elif key in required:
            missing.append(key)
    return args, missing


def _report_subject(ctx: Context, zh: bool) -> str:
    """What the conversation was mostly about, for a report's title: the subject most questions asked
    (the iron ore prices counted as one), both when two tie (was: the last series asked, rebar after
    four iron ore questions and one on rebar)."""
    counts: dict[str, int] = {}
    names: dict[str, set[str]] = {}
    for asked in ctx.asked_series:
        for subject in dict.fromkeys("iron_ore" if s in DRIVER_SERIES["iron_ore"] else s for s in asked):
            counts[subject] = counts.get(subject, 0) + 1
        for s in asked:
            names.setdefault("iron_ore" if s in DRIVER_SERIES["iron_ore"] else s, set()).add(s)
    if not counts:
        return cat.name(ctx.last_series or DEFAULT_SERIES, zh)

    def name(subject: str) -> str:
        if len(names[subject]) == 1:
            return cat.name(next(iter(names[subject])), zh)
        return "铁矿石" if zh else "Iron ore"  # both iron ore prices were asked about

    ranked = sorted(counts, key=lambda k: -counts[k])  # stable: the first asked wins among equals
    top = [k for k in ranked if counts[k] == counts[ranked[0]]]
    if len(top) == 2:
        return f"{name(top[0])}与{name(top[1])}" if zh else f"{name(top[0])} and {name(top[1])}"
    return name(ranked[0])


def _report_args(q: Query, ctx: Context) -> dict[str, Any]:
    subject = _report_subject(ctx, q.zh)
    title = f"{subject}分析报告" if q.zh else f"{subject} analysis report"
    summary = _report_summary(ctx.answered, q.zh)
    # An empty filename lets the reviewer pick one when editing the call.
    return {"title": title, "summary": summary, "filename": ""}


def _report_summary(answered: int, zh: bool) -> str:
    """What the report holds, counted as `export_report` will write it (its answered questions)."""
    if zh:
        if not answered:
            return "本对话还没有已回答的问题，所以这份报告只有标题和说明。"
        return f"本报告汇总本对话中已回答的 {answered} 个问题及其回答（数据均来自 orecast.market）。"
    if not answered:
        return ("No question of this conversation has been answered yet, so this report holds only "
                "its title and notes.")
    if answered == 1:
        return ("This report holds the one question of this conversation answered so far, with its "
                "answer (all figures from orecast.market).")
    return (f"This report collects the {answered} questions of this conversation answered so far, with "
            "their answers (all figures from orecast.market).")


def _is_greeting(text: str) -> bool:
    return bool(re.fullmatch(r"\s*(hi|hello|hey|你好|您好|嗨|早上好|晚上好)[\s!！。.,，]*", text, re.I))


def _greet(q: Query, name: str) -> str:
    if q.zh:
        return f"你好，{name}！我记住了你的名字。想了解铁矿石或钢材哪方面的行情、统计或预测？"
    return f"Nice to meet you, {name}! I'll remember your name. What would you like to know about iron ore?"


def _name_reply(q: Query, ctx: Context) -> str:
    if ctx.user_name:
        return f"你叫{ctx.user_name}。" if q.zh else f"Your name is {ctx.user_name}."
    return ("你还没有在这个对话里告诉我你的名字。" if q.zh
            else "You haven't told me your name in this conversation yet.")


_ORDINAL_ZH = {1: "第一个", 2: "第二个", 3: "第三个", -1: "上一个"}
_ORDINAL_EN = {1: "first", 2: "second", 3: "third", -1: "last"}


def _past_reply(q: Query, ctx: Context) -> str:
    asked = [x.strip() for x in ctx.questions if x.strip()]
    if not asked:
        return ("这是你在本对话中的第一个问题。" if q.zh
                else "This is your first question in this conversation.")
    if q.ordinal is not None:
        n = q.ordinal
        if n > len(asked):
            return (f"你在本对话中只问过 {len(asked)} 个问题。" if q.zh
                    else f"You have asked only {len(asked)} question(s) in this conversation.")
        text = asked[n - 1] if n > 0 else asked[-1]
        if q.zh:
            return f"你问的{_ORDINAL_ZH[n]}问题是：“{text}”"
        return f"Your {_ORDINAL_EN[n]} question was: \"{text}\""
    lines = "\n".join(f"{i}. {x}" for i, x in enumerate(asked, 1))
    if q.zh:
        return f"你在本对话中问过 {len(asked)} 个问题（按顺序）：\n{lines}"
    return f"In this conversation you asked {len(asked)} question(s), in order:\n{lines}"


def _role_reply(q: Query, ctx: Context) -> str:
    if ctx.user_role:
        return f"你说过你是{ctx.user_role}。" if q.zh else f"You told me you are a {ctx.user_role}."
    return ("你还没有在这个对话里告诉我你的职业或身份。" if q.zh
            else "You haven't told me your role in this conversation yet.")


def _noted_role(q: Query, role: str) -> str:
    return (f"好的，我记住了：你是{role}。想了解铁矿石哪方面的数据？" if q.zh
            else f"Noted: you are a {role}. What would you like to know about iron ore?")


_EARLIER_ZH = "我在本对话中之前给出的数字是："
_EARLIER_EN = "Earlier in this conversation I said:"


def _earlier_answer(q: Query, ctx: Context) -> str:
    """Quote the last answer that had numbers in it, from the thread itself (not an earlier
    quote: "and before that?" would otherwise quote the quote)."""
    for answer in reversed(ctx.answers):
        if answer.startswith((_EARLIER_ZH, _EARLIER_EN)):
            continue
        lines = [x for x in answer.splitlines() if re.search(r"\d", x)]
        if lines:
            quoted = "\n".join(f"> {x}" for x in lines[:4])
            return f"{_EARLIER_ZH}\n{quoted}" if q.zh else f"{_EARLIER_EN}\n{quoted}"
    return ("本对话中我还没有给出过数字。" if q.zh
            else "I have not given any numbers in this conversation yet.")


def help_text(zh: bool) -> str:
    if zh:
        return (
            "我是 orecast 离线分析师（不连接大模型，所有数字来自本地数据）。我可以：\n"
            "- 查询最新价格和历史走势：如“铁矿石现在多少钱？”“螺纹钢2024年走势”\n"
            "- 统计指标：如“大商所铁矿石过去一年的波动率”\n"
            "- 预测（带80%/95%区间）：如“预测铁矿石未来6个月”，可指定方法 naive/drift/ets/arima/theta/ensemble\n"
            "- 回测与方法比较：如“铁矿石预测的准确度”“哪种方法最好？”\n"
            "- 相关性与比较：如“铁矿石和螺纹钢的相关性”；钢厂利润：如“螺纹钢厂利润”\n"
            "- 画图和导出报告：如“画出铁矿石走势图”“导出报告”\n"
            "设置 DEEPSEEK_API_KEY（或 ORECAST_MODEL=openai:模型名 与 OPENAI_BASE_URL）可使用大模型。"
        )
    return (
        "I am the orecast offline analyst (no LLM; every number comes from the bundled data). I can:\n"
        "- latest prices and history: 'What is the iron ore price now?', 'rebar history in 2024'\n"
        "- statistics: 'volatility of DCE iron ore over the past year'\n"
        "- forecasts with 80%/95% ranges: 'forecast iron ore for the next 6 months' "
        "(methods naive/drift/ets/arima/theta/ensemble)\n"
        "- accuracy and method comparisons: 'how accurate is the iron ore forecast?', 'which method is best?'\n"
        "- correlations and comparisons: 'correlation between iron ore and rebar'; 'rebar mill margin'\n"
        "- charts and report export: 'chart iron ore since 2020', 'export a report'\n"
        "Set DEEPSEEK_API_KEY (or ORECAST_MODEL=openai:MODEL with OPENAI_BASE_URL) to use an LLM."
    )


def out_of_scope(zh: bool) -> str:
    if zh:
        return ("抱歉，我是 orecast 的离线分析师，只能回答铁矿石、钢材、煤焦、汇率和 PMI 等数据相关的问题，"
                "不会编造数字。\n" + help_text(True).split("\n", 1)[1])
    return ("Sorry, I am orecast's offline analyst: I only answer questions about iron ore, steel, coal, "
            "FX and PMI data, and I never make numbers up.\n" + help_text(False).split("\n", 1)[1])


def _series_alone(q: Query) -> bool:
    """"那焦炭呢", "What about iron ore?": a follow-up naming one series and nothing else."""
    return q.follow_up and len(q.series) == 1 and not (
        q.intents or q.start or q.end or q.relative or q.last_period or q.horizon or q.method or q.ago
        or q.day_word or q.scenario or q.scenario_level or q.target_level or q.missing or q.claims
        or q.periods or q.remember)


def _alias_in(series: str, low: str) -> str | None:
    """The longest name of `series` that `low` (a lower-cased question) uses."""
    found = [a for a in SERIES_ALIASES.get(series, ()) if _boundary_match(low, a) >= 0]
    return max(found, key=len) if found else None


def restated(q: Query, questions: list[str]) -> Query:
    """Another series alone after a question whose period counts from a series' own data ("过去一年
    铁矿石跌了多少" then "那焦炭呢"; "Did rebar rise or fall last week?" then "What about iron ore?"):
    that question asked again of the new series, so its period is counted from that series' data
    and it gets the same kind of answer (was: the dates worked out for the first series, 15 months
    of coke for "过去一年", and the World Bank's monthly series asked for one week, an error)."""
    if not _series_alone(q):
        return q
    known = set(cat.catalogue())
    earlier = next((p for p in (parse(t, known) for t in reversed(questions)) if not _series_alone(p)), None)
    if earlier is None or len(earlier.series) > 1 or not (
            earlier.relative or earlier.last_period or earlier.ago or earlier.day_word):
        return q
    new = _alias_in(q.series[0], q.text.lower())
    if new is None:
        return q
    low = earlier.text.lower()
    if earlier.series:
        old = _alias_in(earlier.series[0], low)
        if old is None or earlier.series == q.series:
            return q
        text = low.replace(old, new, 1)
    else:
        text = f"{new} {low}"  # "上周涨了吗" said of the series before; now of this one
    again = parse(text, known)
    if again.series != q.series:
        return q
    again.zh = q.zh
    return again


def question_of(messages: list[BaseMessage]) -> tuple[int, Query | None]:
    """Index and parse of the last user message (-1, None when there is none)."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            known = set(cat.catalogue())
            return i, parse(messages[i].text, known)
    return -1, None
