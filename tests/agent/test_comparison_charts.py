"""A chart asked of two series draws both (it drew the first alone and dropped the other silently)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import run_turn


@pytest.fixture(autouse=True)
def pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TODAY", "2026-12-07")


def _drawn(turn: Any) -> list[str]:
    """The names of the lines the chart's ECharts option draws."""
    ref = json.loads(next(r.content for r in turn.results if r.name == "make_chart"))
    option = json.loads(Path(ref["echarts"]).read_text(encoding="utf-8"))
    return [s["name"] for s in option["series"]]


@pytest.mark.parametrize(("question", "chart_args", "words"), [
    ("铁矿石和螺纹钢走势对比图",
     {"series": "dce_iron_ore_daily", "compare": "shfe_rebar_daily"},
     ["大商所铁矿石期货", "上期所螺纹钢期货", "指数，100 = 2013-10-18"]),
    ("plot iron ore futures against coking coal since 2020",
     {"series": "dce_iron_ore_daily", "compare": "dce_coking_coal_daily", "start": "2020"},
     ["DCE iron ore futures", "DCE coking coal futures", "indexed, 100 = 2020-01-02"]),
])
async def test_a_chart_of_two_series_draws_both(
    agent: Any, thread_id: str, question: str, chart_args: dict[str, str], words: list[str]
) -> None:
    turn = await run_turn(agent, thread_id, question)
    assert [(c.name, c.args) for c in turn.calls] == [("make_chart", chart_args)]
    assert len(_drawn(turn)) == 2
    for word in words:
        assert word in turn.text


async def test_a_chart_after_a_correlation_draws_the_two_series_related(agent: Any, thread_id: str) -> None:
    turn = await run_turn(agent, thread_id, "大商所铁矿石期货和螺纹钢的相关性怎么样？画个图")
    assert [(c.name, c.args) for c in turn.calls] == [
        ("relate_series", {"a": "dce_iron_ore_daily", "b": "shfe_rebar_daily"}),
        ("make_chart", {"series": "dce_iron_ore_daily", "compare": "shfe_rebar_daily"}),
    ]
    assert [name.split(" / ")[1] for name in _drawn(turn)] == [
        "大商所铁矿石期货（连续，结算价）", "上期所螺纹钢期货（连续，结算价）"]


async def test_a_correlation_chart_draws_the_pair_it_correlates(agent: Any, thread_id: str) -> None:
    """The World Bank ore against rebar is correlated at monthly averages: the same pair is drawn,
    not the DCE futures a plain comparison chart would take."""
    turn = await run_turn(agent, thread_id, "铁矿石和螺纹钢的相关性图")
    related = turn.call("relate_series").args
    assert turn.call("make_chart").args == {"series": related["a"], "compare": related["b"]}
