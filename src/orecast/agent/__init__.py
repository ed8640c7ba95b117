"""The iron-ore forecasting expert agent: build it, pick its model, stream its turns.

    from orecast.agent import AgentSettings, build_agent
    async with open_checkpointer(url) as saver:
        agent = build_agent(saver, settings=AgentSettings.from_env())
        async for event in stream_turn(agent, thread_id, "铁矿石现在多少钱？"):
            ...
"""

from __future__ import annotations

from orecast.agent.build import AGENT_NAME, INTERRUPT_ON, QUANT, build_agent
from orecast.agent.errors import AgentConfigError
from orecast.agent.events import (
    ApprovalRequest,
    Event,
    Token,
    ToolCall,
    ToolResult,
    decisions,
    has_unfinished_run,
    pending_approval,
    stream_turn,
    thread_config,
)
from orecast.agent.mcp import McpLoad, load_mcp_tools
from orecast.agent.models import resolve_model_spec, select_model
from orecast.agent.settings import AgentSettings

__all__ = [
    "AGENT_NAME",
    "INTERRUPT_ON",
    "QUANT",
    "AgentConfigError",
    "AgentSettings",
    "ApprovalRequest",
    "Event",
    "McpLoad",
    "Token",
    "ToolCall",
    "ToolResult",
    "build_agent",
    "decisions",
    "has_unfinished_run",
    "load_mcp_tools",
    "pending_approval",
    "resolve_model_spec",
    "select_model",
    "stream_turn",
    "thread_config",
]
