"""The `quant` subagent: method comparisons are delegated and run in their own checkpoint namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orecast import market
from orecast.agent import AgentSettings, build_agent
from orecast.agent.offline import OfflineAnalyst
from orecast.checkpoint import open_checkpointer
from tests.agent.conftest import run_turn
from tests.agent.test_conversation import assert_number


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_method_comparison_runs_in_the_quant_subagent(
    store: str, tmp_path: Path, settings: AgentSettings, thread_id: str
) -> None:
    url = "memory://" if store == "memory" else f"sqlite:///{tmp_path / 'agent.sqlite3'}"
    async with open_checkpointer(url) as saver:
        agent = build_agent(saver, model=OfflineAnalyst(), settings=settings)
        turn = await run_turn(agent, thread_id, "哪种方法预测铁矿石最好？")

        (task,) = [c for c in turn.calls if c.name == "task"]
        assert task.agent == "" and task.args["subagent_type"] == "quant"
        quant_calls = [c for c in turn.calls if c.agent == "quant"]
        assert {c.name for c in quant_calls} == {"backtest_forecast"}
        methods = sorted(c.args["method"] for c in quant_calls)
        assert methods == ["arima", "drift", "ensemble", "ets", "naive", "nowcast", "theta"]

        maes = {}
        for call in quant_calls:
            b = market.backtest(call.args["series"], call.args["horizon"],
                                method=call.args["method"], step=call.args["step"]).to_dict()
            assert_number(turn.text, b["mae"])
            maes[call.args["method"]] = b["mae"]
        best = min(maes, key=maes.__getitem__)
        assert re.search(rf"MASE 最低的是 {best}", turn.text)  # same origins: MAE and MASE agree

        namespaces = {
            c.config["configurable"].get("checkpoint_ns", "")
            async for c in saver.alist({"configurable": {"thread_id": thread_id}})
        }
        assert "" in namespaces
        assert any(ns.startswith("tools:") for ns in namespaces), namespaces
