"""The real HTTP path: ChatDeepSeek and ChatOpenAI with base_url against a local scripted server.

This is the code a real DeepSeek key (or vLLM / Ollama / llama.cpp) takes: `select_model` builds
the client from the environment, the deepagents graph binds our tools, the server streams a tool
call, our tool runs on the real market data, and the answer streams back token by token.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from orecast import market
from orecast.agent import AgentSettings, build_agent, select_model
from tests.agent.conftest import run_turn
from tests.agent.scripted_openai_server import ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as srv:
        yield srv


@pytest.mark.parametrize(
    ("spec", "env_of"),
    [
        ("deepseek:deepseek-chat",
         lambda url: {"DEEPSEEK_API_KEY": "sk-local-test", "DEEPSEEK_API_BASE": url}),
        ("openai:qwen2.5-7b-instruct",
         lambda url: {"OPENAI_API_KEY": "sk-local-test", "OPENAI_BASE_URL": url}),
    ],
    ids=["ChatDeepSeek", "ChatOpenAI"],
)
async def test_tool_call_and_streamed_answer_over_http(
    server: ScriptedServer, spec: str, env_of, tmp_path: Path
) -> None:
    model = select_model(spec, env_of(server.base_url))
    settings = AgentSettings(charts_dir=tmp_path / "c", reports_dir=tmp_path / "r")
    agent = build_agent(InMemorySaver(), model=model, settings=settings)

    turn = await run_turn(agent, str(uuid.uuid4()), "What is the iron ore price now?")

    assert [c.name for c in turn.calls] == ["latest_price"]
    assert turn.call("latest_price").args == {"series": "iron_ore_wb_monthly"}
    latest = market.load_series("iron_ore_wb_monthly")
    assert f"{latest.iloc[-1]:g}" in turn.text
    assert latest.index[-1].date().isoformat() in turn.text
    assert turn.tokens > 5, "the answer must stream as several tokens"

    first, second = server.requests[0], server.requests[-1]
    assert first["path"] == "/v1/chat/completions"
    assert first["auth"] == "Bearer sk-local-test"
    assert first["body"]["stream"] is True
    sent_tools = {t["function"]["name"] for t in first["body"]["tools"]}
    assert {"latest_price", "forecast_price", "export_report", "task"} <= sent_tools
    assert first["body"]["messages"][0]["role"] == "system"
    assert "铁矿石" in first["body"]["messages"][0]["content"]
    tool_msg = second["body"]["messages"][-1]
    assert tool_msg["role"] == "tool"
    assert tool_msg["tool_call_id"] == turn.calls[0].id


async def test_prompt_and_scenario_tool_reach_a_real_model(
    server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What steers a real model: today's date, the no-data rule and the scenario tool's contract."""
    monkeypatch.setenv("ORECAST_TODAY", "2026-11-30")
    model = select_model("openai:qwen2.5-7b-instruct",
                         {"OPENAI_API_KEY": "sk-local-test", "OPENAI_BASE_URL": server.base_url})
    settings = AgentSettings(charts_dir=tmp_path / "c", reports_dir=tmp_path / "r")
    agent = build_agent(InMemorySaver(), model=model, settings=settings)

    turn = await run_turn(agent, str(uuid.uuid4()), "If China's crude steel output falls 5% next year?")

    assert [(c.name, c.args) for c in turn.calls] == [
        ("price_scenario", {"driver": "steel_output", "shock": -5})]
    expected = market.scenario("steel_output", -5).to_dict()
    assert str(expected["effect_pct"]) in turn.text
    first = server.requests[0]["body"]
    system = first["messages"][0]["content"]
    assert "Today is 2026-11-30" in system
    assert "I do not have that data" in system and "port inventories" in system
    assert "price_scenario" in system and "freshness" in system
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    scenario = tools["price_scenario"]
    assert {"driver", "shock", "target"} <= set(scenario["parameters"]["properties"])
    assert "steel_output" in scenario["description"] and "refused" in scenario["description"]
    assert "freshness" in tools["latest_price"]["description"]
    result = server.requests[-1]["body"]["messages"][-1]
    assert result["role"] == "tool" and '"r2"' in result["content"]
