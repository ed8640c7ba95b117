"""One turn of the agent as a stream of small typed events, shared by the CLI and the service.

`stream_turn` hides LangGraph's stream shapes: tokens of the main agent's model, tool calls and
results as they happen (subagent ones included, tagged with the agent name), charts, and the
approval request when a sensitive tool waits for a human. Callers render events; they never
touch `astream` parts themselves.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from orecast.agent.tools import payload_of


@dataclass(frozen=True, slots=True)
class Token:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    args: dict[str, Any]
    id: str
    agent: str = ""  # "" for the main agent, else the subagent's name (e.g. "quant")


@dataclass(frozen=True, slots=True)
class ToolResult:
    name: str
    content: str
    id: str
    ok: bool
    agent: str = ""
    chart_png: str | None = None  # set when the tool produced a chart saved as PNG
    report: str | None = None  # set when export_report wrote a file


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A sensitive tool call waits; answer with `decisions(...)` passed to `stream_turn`."""

    interrupt_id: str
    actions: list[dict[str, Any]]  # [{"name", "args", "description"}]
    allowed: list[list[str]] = field(default_factory=list)  # per action: approve/edit/reject


Event = Token | ToolCall | ToolResult | ApprovalRequest

Payload = str | Command | None  # a user message, a resume command, or None to resume a crashed run


def thread_config(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    """The run config of a thread; with `checkpoint_id`, a run from that past step (a branch)."""
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def decisions(*items: dict[str, Any]) -> Command:
    """Resume command for a batched approval: one decision per pending action, in order.

    `{"type": "approve"}`, `{"type": "reject", "message": why}`,
    `{"type": "edit", "edited_action": {"name": tool, "args": {...}}}`.
    """
    return Command(resume={"decisions": list(items)})


def _agent_name(ns: tuple[str, ...], meta: dict[str, Any] | None = None) -> str:
    if not ns:
        return ""
    if meta and meta.get("lc_agent_name"):
        return str(meta["lc_agent_name"])
    return ns[0].split(":")[0]


async def stream_turn(
    agent: CompiledStateGraph, thread_id: str, payload: Payload, *, checkpoint_id: str | None = None
) -> AsyncIterator[Event]:
    """Run one turn (or resume one) and yield its events until it ends or waits for approval.

    `checkpoint_id` starts the turn from that earlier step of the thread instead of its latest: the
    conversation branches there, and later turns continue the branch.
    """
    inp: Any
    if isinstance(payload, str):
        inp = {"messages": [{"role": "user", "content": payload}]}
    else:
        inp = payload
    seen_interrupts: set[str] = set()
    seen_results: set[str] = set()
    sub_names: dict[tuple[str, ...], str] = {}
    async for part in agent.astream(
        inp,
        thread_config(thread_id, checkpoint_id),
        stream_mode=["messages", "updates"],
        subgraphs=True,
        version="v2",
    ):
        ns: tuple[str, ...] = tuple(part.get("ns") or ())
        if part["type"] == "messages":
            chunk, meta = part["data"]
            if ns and meta.get("lc_agent_name"):
                sub_names[ns] = str(meta["lc_agent_name"])
            if (
                not ns
                and meta.get("langgraph_node") == "model"
                and isinstance(chunk, AIMessageChunk)
                and chunk.text
            ):
                yield Token(chunk.text)
            continue
        data = part["data"]
        if not isinstance(data, dict):
            continue
        for node, update in data.items():
            if node == "__interrupt__":
                for intr in update:
                    if intr.id in seen_interrupts:
                        continue
                    seen_interrupts.add(intr.id)
                    value = intr.value if isinstance(intr.value, dict) else {}
                    yield ApprovalRequest(
                        interrupt_id=intr.id,
                        actions=list(value.get("action_requests", [])),
                        allowed=[
                            list(rc.get("allowed_decisions", []))
                            for rc in value.get("review_configs", [])
                        ],
                    )
                continue
            if not isinstance(update, dict):
                continue
            agent_name = sub_names.get(ns) or _agent_name(ns)
            for msg in _messages(update.get("messages")):
                if node == "model" and isinstance(msg, AIMessage):
                    for tc in msg.tool_calls:
                        yield ToolCall(tc["name"], dict(tc["args"]), tc.get("id") or "", agent_name)
                elif isinstance(msg, ToolMessage) and msg.tool_call_id not in seen_results:
                    # Usually from "tools"; a rejected call's message comes from the HITL node.
                    seen_results.add(msg.tool_call_id)
                    yield _result(msg, agent_name)


def _messages(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    # deepagents' DeltaChannel updates may wrap messages; fall back to attribute access.
    inner = getattr(value, "value", None) or getattr(value, "messages", None)
    return list(inner) if isinstance(inner, list | tuple) else [value]


def _result(msg: ToolMessage, agent_name: str) -> ToolResult:
    text = msg.text
    chart = report = None
    payload = payload_of(text)
    if isinstance(payload, dict):
        if isinstance(payload.get("png"), str):
            chart = payload["png"]
        if isinstance(payload.get("report"), str):
            report = payload["report"]
    return ToolResult(
        name=msg.name or "",
        content=text,
        id=msg.tool_call_id,
        ok=msg.status != "error",
        agent=agent_name,
        chart_png=chart,
        report=report,
    )


async def pending_approval(agent: CompiledStateGraph, thread_id: str) -> ApprovalRequest | None:
    """The approval a thread is waiting for, if any (after a restart or a closed terminal)."""
    snap = await agent.aget_state(thread_config(thread_id))
    for intr in snap.interrupts:
        value = intr.value if isinstance(intr.value, dict) else {}
        return ApprovalRequest(
            interrupt_id=intr.id,
            actions=list(value.get("action_requests", [])),
            allowed=[list(rc.get("allowed_decisions", [])) for rc in value.get("review_configs", [])],
        )
    return None


async def has_unfinished_run(agent: CompiledStateGraph, thread_id: str) -> bool:
    """True when the thread stopped half-way (crash, kill) or waits for approval."""
    snap = await agent.aget_state(thread_config(thread_id))
    return bool(snap.next)
