"""`build_agent`: the iron-ore analyst as a deepagents graph, owned by its caller.

No module-level agent or checkpointer: the CLI, the service and the tests each build their own
with their own settings, so threads, files and models never leak between them.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import Any

from deepagents import create_deep_agent
from deepagents.middleware.subagents import GENERAL_PURPOSE_SUBAGENT
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from orecast.agent.audit import AuditMiddleware
from orecast.agent.clock import today
from orecast.agent.memories import analyst_backend
from orecast.agent.models import select_model
from orecast.agent.reports import REPORT_TOOL, report_tool
from orecast.agent.settings import AgentSettings
from orecast.agent.state import ANALYST_STATE, ReportsMiddleware
from orecast.agent.tools import market_tools

AGENT_NAME = "orecast"
QUANT = "quant"
# The system prompt's last section, on /memories/: only true of a graph with a store.
MEMORY_SECTION = "# 长期记忆 / Long-term memory"

# Only the report writes outside the conversation, so only it needs a human's approval;
# "respond" is left out because the report has no question to answer.
INTERRUPT_ON: dict[str, Any] = {
    REPORT_TOOL: {
        "allowed_decisions": ["approve", "edit", "reject"],
        "description": "导出报告需要批准 / Exporting a report needs approval",
    }
}


def load_prompt(name: str) -> str:
    """A prompt shipped in `orecast/agent/prompts/` (package data, so it works from a wheel)."""
    return resources.files("orecast.agent").joinpath("prompts", name).read_text(encoding="utf-8")


def system_prompt(*, memories: bool) -> str:
    """The analyst's prompt with today's date; without `memories` the /memories/ section is cut."""
    prompt = load_prompt("system_zh_en.md").replace("{today}", today().isoformat())
    return prompt if memories else prompt.partition(MEMORY_SECTION)[0].rstrip() + "\n"


def _subagent_model(model: BaseChatModel) -> BaseChatModel:
    # The offline analyst answers differently as the quant specialist; real LLMs read the prompt.
    as_quant = getattr(model, "as_role", None)
    return as_quant(QUANT) if callable(as_quant) else model


def build_agent(
    checkpointer: BaseCheckpointSaver | None,
    *,
    model: BaseChatModel | str | None = None,
    extra_tools: Sequence[BaseTool] = (),
    settings: AgentSettings | None = None,
    store: BaseStore | None = None,
) -> CompiledStateGraph:
    """The compiled analyst graph.

    `store` (LangGraph's, e.g. `orecast.checkpoint.store.open_store`) keeps the files under
    `/memories/` per user across threads; without one there is no such folder apart from the
    others, and the prompt does not promise it.

    `model`: a chat model, a spec (`offline`, `deepseek:NAME`, `openai:NAME`) or None for
    `settings.model` / the environment. `extra_tools` (e.g. MCP tools) are added after the market
    tools; one with the same name as a built-in tool replaces it. Raises `AgentConfigError` on a
    bad model spec.
    """
    settings = settings or AgentSettings.from_env()
    if checkpointer is not None and hasattr(checkpointer, "with_state_schema"):
        # The saver records the analyst's state version and upcasts threads older agents wrote.
        checkpointer = checkpointer.with_state_schema(ANALYST_STATE)
    chat = model if isinstance(model, BaseChatModel) else select_model(model or settings.model)
    tools: dict[str, BaseTool] = {t.name: t for t in market_tools(settings.charts_dir)}
    tools[REPORT_TOOL] = report_tool(settings.reports_dir)
    for tool in extra_tools:
        tools[tool.name] = tool
    quant_tools = [t for name, t in tools.items() if name != REPORT_TOOL]
    quant = {
        "name": QUANT,
        "description": (
            "Quantitative specialist for multi-series comparisons, correlations and "
            "backtest-heavy questions (comparing forecasting methods, several series at once). "
            "Give it the full question; it returns a compact result with numbers and sources."
        ),
        "system_prompt": load_prompt("quant_zh_en.md"),
        "tools": quant_tools,
        "model": _subagent_model(chat),
        "middleware": [AuditMiddleware()],
    }
    # deepagents' own general-purpose subagent, as it would make it, plus the audit.
    general = {**GENERAL_PURPOSE_SUBAGENT, "middleware": [AuditMiddleware()]}
    return create_deep_agent(
        model=chat,
        tools=list(tools.values()),
        system_prompt=system_prompt(memories=store is not None),
        subagents=[general, quant],  # type: ignore[list-item]  # SubAgent is a TypedDict
        # Every tool call is audited in the checkpointer's tool_call_audit table (when it has one), the
        # time of recording an exported report in the `reports` channel included.
        middleware=[AuditMiddleware(), ReportsMiddleware()],
        interrupt_on=INTERRUPT_ON,
        backend=analyst_backend() if store is not None else None,
        checkpointer=checkpointer,
        store=store,
        name=AGENT_NAME,
    )
