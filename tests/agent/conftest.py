"""Fixtures for the agent tests: an offline agent on a fresh in-memory or SQLite store."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from orecast.agent import (
    AgentSettings,
    ApprovalRequest,
    Token,
    ToolCall,
    ToolResult,
    build_agent,
    stream_turn,
)
from orecast.agent.events import Payload
from orecast.agent.offline import OfflineAnalyst


@dataclass
class Turn:
    """Everything one turn produced, as the CLI would see it."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    approvals: list[ApprovalRequest] = field(default_factory=list)
    tokens: int = 0

    def call(self, name: str) -> ToolCall:
        found = [c for c in self.calls if c.name == name]
        assert found, f"expected a {name} call, got {[c.name for c in self.calls]}"
        return found[0]


async def run_turn(agent: Any, thread_id: str, payload: Payload) -> Turn:
    turn = Turn()
    async for event in stream_turn(agent, thread_id, payload):
        if isinstance(event, Token):
            turn.text += event.text
            turn.tokens += 1
        elif isinstance(event, ToolCall):
            turn.calls.append(event)
        elif isinstance(event, ToolResult):
            turn.results.append(event)
        else:
            turn.approvals.append(event)
    return turn


async def last_turn(agent: Any, *questions: str) -> Turn:
    """The last question's turn, asked after the others in one thread."""
    thread = str(uuid.uuid4())
    for text in questions[:-1]:
        await run_turn(agent, thread, text)
    return await run_turn(agent, thread, questions[-1])


def call_args(turn: Turn) -> list[tuple[str, dict[str, Any]]]:
    """The turn's tool calls as (name, arguments)."""
    return [(c.name, dict(c.args)) for c in turn.calls]


@pytest.fixture
def settings(tmp_path: Path) -> AgentSettings:
    return AgentSettings(
        model="offline", charts_dir=tmp_path / "charts", reports_dir=tmp_path / "reports"
    )


@pytest.fixture
def agent(settings: AgentSettings) -> Any:
    return build_agent(InMemorySaver(), model=OfflineAnalyst(), settings=settings)


@pytest.fixture
def thread_id() -> str:
    return str(uuid.uuid4())
