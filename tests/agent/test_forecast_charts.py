""""画个图" after a forecast draws that forecast, its fan included (it drew the history alone)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import run_turn


@pytest.fixture(autouse=True)
def pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", "2026-12-07")


def _fan_points(turn: Any) -> int:
    """How many forecast dates the chart's ECharts option draws past the history."""
    ref = json.loads(next(r.content for r in turn.results if r.name == "make_chart"))
    option = json.loads(Path(ref["echarts"]).read_text(encoding="utf-8"))
    history = next(s for s in option["series"] if s.get("type") == "line")
    dates = option["xAxis"]["data"] if isinstance(option["xAxis"], dict) else option["xAxis"][0]["data"]
    return len(dates) - len([v for v in history["data"] if v is not None])


async def test_a_follow_up_forecast_with_a_chart_draws_the_forecast(agent: Any, thread_id: str) -> None:
    await run_turn(agent, thread_id, "铁矿石价格最近怎么样？")
    turn = await run_turn(agent, thread_id, "那未来三个月呢？画个图")
    forecast = turn.call("forecast_price").args
    assert turn.call("make_chart").args == {"series": forecast["series"],
                                            "forecast_horizon": forecast["horizon"]}
    assert _fan_points(turn) == forecast["horizon"]


async def test_a_chart_asked_after_a_forecast_draws_it_with_its_method(agent: Any, thread_id: str) -> None:
    first = await run_turn(agent, thread_id, "螺纹钢未来两周预测，用naive方法")
    forecast = first.call("forecast_price").args
    turn = await run_turn(agent, thread_id, "画个图")
    assert turn.call("make_chart").args == {"series": "shfe_rebar_daily", "forecast_horizon": forecast["horizon"],
                                            "method": "naive"}
    # Dates of its own are a chart of that period's history, as before.
    dated = await run_turn(agent, thread_id, "画个2024年以来的图")
    assert dated.call("make_chart").args == {"series": "shfe_rebar_daily", "start": "2024"}
