"""MCP tools from ORECAST_MCP_CONFIG: loaded from a real stdio server; a broken server is skipped."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from orecast.agent import AgentConfigError, AgentSettings, build_agent, load_mcp_tools
from orecast.agent.offline import OfflineAnalyst
from tests.agent.conftest import run_turn

SERVER = Path(__file__).with_name("mcp_fixture_server.py")


def write_config(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


@pytest.mark.slow
async def test_stdio_server_tool_is_called_and_a_broken_server_is_skipped(
    tmp_path: Path, settings: AgentSettings, thread_id: str
) -> None:
    config = write_config(tmp_path, {
        "ports": {"command": sys.executable, "args": [str(SERVER)]},
        "broken": {"command": str(tmp_path / "no-such-binary")},
    })
    loaded = await load_mcp_tools(config, timeout_s=30)
    assert [t.name for t in loaded.tools] == ["port_stocks"]
    assert len(loaded.errors) == 1 and "'broken' skipped" in loaded.errors[0]

    agent = build_agent(InMemorySaver(), model=OfflineAnalyst(), extra_tools=loaded.tools,
                        settings=settings)
    turn = await run_turn(agent, thread_id, "use port_stocks port=rizhao")
    assert turn.call("port_stocks").args == {"port": "rizhao"}
    assert "rizhao iron ore port stocks: 18.2 Mt" in turn.text


def test_missing_or_malformed_config_is_one_clear_line(tmp_path: Path) -> None:
    import asyncio

    with pytest.raises(AgentConfigError, match="does not exist"):
        asyncio.run(load_mcp_tools(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"servers": {}}', encoding="utf-8")
    with pytest.raises(AgentConfigError, match="mcpServers"):
        asyncio.run(load_mcp_tools(bad))
    odd = write_config(tmp_path, {"x": {"args": []}})
    with pytest.raises(AgentConfigError, match="'command'"):
        asyncio.run(load_mcp_tools(odd))


async def test_no_config_means_no_mcp_tools() -> None:
    loaded = await load_mcp_tools(None)
    assert loaded.tools == [] and loaded.errors == []
