"""The analyst uses the conversation: names, earlier questions, follow-ups — per thread."""

from __future__ import annotations

import uuid
from typing import Any

from orecast import market
from tests.agent.conftest import run_turn
from tests.agent.test_conversation import ahead, assert_number


async def test_remembers_a_name_in_chinese(agent: Any, thread_id: str) -> None:
    await run_turn(agent, thread_id, "我叫赵六")
    await run_turn(agent, thread_id, "铁矿石现在多少钱？")
    turn = await run_turn(agent, thread_id, "我叫什么？")
    assert turn.calls == []
    assert "赵六" in turn.text


async def test_remembers_a_name_in_english_and_not_across_threads(agent: Any) -> None:
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    await run_turn(agent, a, "Hi, my name is Alice")
    assert "Alice" in (await run_turn(agent, a, "What's my name?")).text
    other = await run_turn(agent, b, "What's my name?")
    assert "Alice" not in other.text
    assert "haven't told me" in other.text


async def test_recalls_earlier_questions(agent: Any, thread_id: str) -> None:
    await run_turn(agent, thread_id, "What is the latest rebar price?")
    await run_turn(agent, thread_id, "correlation between coke and coking coal")
    turn = await run_turn(agent, thread_id, "what did I ask before?")
    assert "What is the latest rebar price?" in turn.text
    assert "correlation between coke and coking coal" in turn.text
    zh = await run_turn(agent, thread_id, "我之前问了什么？")
    assert "what did I ask before?" in zh.text


async def test_follow_up_reuses_series_and_tool(agent: Any, thread_id: str) -> None:
    first = await run_turn(agent, thread_id, "Forecast rebar for the next 10 trading days with the drift method")
    assert first.call("forecast_price").args["series"] == "shfe_rebar_daily"
    turn = await run_turn(agent, thread_id, "and for 6 months?")
    args = turn.call("forecast_price").args
    horizon = ahead("shfe_rebar_daily", 6, "month")
    assert args == {"series": "shfe_rebar_daily", "horizon": horizon, "method": "drift"}
    f = market.forecast("shfe_rebar_daily", horizon, method="drift").to_dict()["forecast"][-1]
    assert_number(turn.text, f["mean"])


async def test_follow_up_in_chinese_switches_series(agent: Any, thread_id: str) -> None:
    await run_turn(agent, thread_id, "铁矿石现在多少钱？")
    turn = await run_turn(agent, thread_id, "螺纹钢呢？")
    assert turn.call("latest_price").args == {"series": "shfe_rebar_daily"}
    assert_number(turn.text, float(market.load_series("shfe_rebar_daily").iloc[-1]))
    later = await run_turn(agent, thread_id, "那未来3个月呢？用naive方法")
    assert later.call("forecast_price").args == {
        "series": "shfe_rebar_daily", "horizon": ahead("shfe_rebar_daily", 3, "month"), "method": "naive"}
