"""Answers a seventh QA pass found wrong (asked on Monday 2026-12-07, as a user would).

Every expected number is recomputed here with pandas from the bundled CSVs, not read from the tools.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from tests.agent.conftest import run_turn
from tests.agent.test_answers_qa5 import _settles, pinned_today

__all__ = ["pinned_today"]  # the autouse fixture that pins today to 2026-12-07, shared with QA5


def _week_verdict(values: pd.Series, first: str, last: str) -> tuple[str, str]:
    """The zh word and numbers of a period's change, from the last value before it."""
    before = values[: pd.Timestamp(first) - pd.Timedelta(days=1)]
    inside = values[first:last]
    v0, v1 = float(before.iloc[-1]), float(inside.iloc[-1])
    word = "涨了" if v1 > v0 else "跌了"
    numbers = (f"从 {before.index[-1].date()} 的 {v0:,.2f} 元/吨 到 {inside.index[-1].date()} 的 {v1:,.2f} 元/吨，"
               f"{(v1 / v0 - 1) * 100:+.2f}%")
    return word, numbers


async def test_did_rebar_rise_or_fall_last_week_is_a_verdict(agent: Any, thread_id: str) -> None:
    # Was: a forecast of last week with no verdict.
    turn = await run_turn(agent, thread_id, "上周螺纹钢涨了还是跌了")
    assert [c.name for c in turn.calls] == ["price_history"]
    rebar = _settles("shfe_rebar_futures_daily.csv")
    last = rebar.index[-1]
    assert last < pd.Timestamp("2026-11-30")
    assert "2026-11-30 至 2026-12-06 没有实际数据" in turn.text
    assert "不能说那段时间涨了还是跌了" in turn.text
    monday = last - pd.Timedelta(days=last.weekday())
    word, numbers = _week_verdict(rebar, str(monday.date()), str(last.date()))
    assert f"数据里最后一周（{monday.date()} 至 {last.date()}）{word}：{numbers}" in turn.text


async def test_did_rebar_rise_last_week_inside_the_data(
    agent: Any, thread_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORECAST_TODAY", "2025-06-16")  # Monday: last week is 2025-06-09 .. 06-15
    turn = await run_turn(agent, thread_id, "上周螺纹钢涨了还是跌了")
    word, numbers = _week_verdict(_settles("shfe_rebar_futures_daily.csv"), "2025-06-09", "2025-06-15")
    assert f"在 2025-06-09 至 2025-06-15，{word}：{numbers}" in turn.text
    english = await run_turn(agent, thread_id, "did rebar rise last week?")
    assert ("it rose" if word == "涨了" else "it fell") in english.text


async def test_this_week_after_another_period_is_this_week(
    agent: Any, thread_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A question with its own period word is about that period, not the one asked about before.
    monkeypatch.setenv("ORECAST_TODAY", "2025-06-18")  # Wednesday: this week is 2025-06-16 .. 06-18
    await run_turn(agent, thread_id, "螺纹钢2025年3月走势")
    turn = await run_turn(agent, thread_id, "这周涨了吗")
    assert turn.calls[0].args == {"series": "shfe_rebar_daily", "start": "2025-06-16", "end": "2025-06-18"}
    word, numbers = _week_verdict(_settles("shfe_rebar_futures_daily.csv"), "2025-06-16", "2025-06-18")
    assert f"在 2025-06-16 至 2025-06-18，{word}：{numbers}" in turn.text
    assert "2025-03" not in turn.text


async def test_this_week_after_a_month_past_the_data_says_there_is_none(agent: Any, thread_id: str) -> None:
    await run_turn(agent, thread_id, "铁矿石期货8月走势")
    turn = await run_turn(agent, thread_id, "这周涨了吗")
    assert "你问的 2026-12-07 没有实际数据" in turn.text
    assert "2026-08-01" not in turn.text  # not August again
