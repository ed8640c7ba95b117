"""Small, deterministic LangGraph graphs for the checkpoint tests (importable by subprocess scripts).

Every message carries an explicit id so runs on different savers produce identical states.
"""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import TypedDict

TOOL_NAME = "lookup_ore_price"


class ChatState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _turn_of(messages: list[AnyMessage]) -> int:
    return sum(isinstance(m, HumanMessage) for m in messages)


def agent_node(state: ChatState) -> dict[str, Any]:
    messages = state["messages"]
    last = messages[-1]
    turn = _turn_of(messages)
    if isinstance(last, HumanMessage):
        call_id = f"call-{turn}-{len(messages)}"
        return {
            "messages": [
                AIMessage(
                    content="",
                    id=f"ai-call-{turn}-{len(messages)}",
                    tool_calls=[
                        {
                            "name": TOOL_NAME,
                            "args": {"benchmark": "62% Fe", "turn": turn},
                            "id": call_id,
                            "type": "tool_call",
                        }
                    ],
                )
            ]
        }
    return {
        "messages": [
            AIMessage(
                content=f"answer-{turn:04d} after {len(messages)} messages: {last.content}",
                id=f"ai-final-{turn}-{len(messages)}",
            )
        ]
    }


def tools_node(state: ChatState) -> dict[str, Any]:
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    out = []
    for call in last.tool_calls:
        out.append(
            ToolMessage(
                content=f"price-{call['args']['turn']:04d}: 101.5 USD/dmt",
                tool_call_id=call["id"],
                name=call["name"],
                id=f"tool-{call['id']}",
            )
        )
    return {"messages": out}


def route(state: ChatState) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else END


def tool_loop(checkpointer: Any, state_schema: type = ChatState):
    """human -> agent (tool call) -> tools -> agent (answer): 4 new messages per turn."""
    builder = StateGraph(state_schema)
    builder.add_node("agent", agent_node)
    builder.add_node("tools", tools_node)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def human(turn: int, text: str | None = None) -> HumanMessage:
    return HumanMessage(content=text or f"question-{turn:04d} about iron ore", id=f"h-{turn}")


# -- interrupt -----------------------------------------------------------------------------------


def approval_graph(checkpointer: Any):
    def ask(state: ChatState) -> dict[str, Any]:
        answer = interrupt({"question": "approve?", "n": len(state["messages"])})
        return {"messages": [AIMessage(content=f"approved: {answer}", id=f"ai-approved-{answer}")]}

    builder = StateGraph(ChatState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=checkpointer)


# -- subgraph ------------------------------------------------------------------------------------


class SubState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    notes: Annotated[list[str], operator.add]


def subgraph_parent(checkpointer: Any):
    def research(state: SubState) -> dict[str, Any]:
        n = len(state["messages"])
        return {
            "messages": [AIMessage(content=f"research-{n}", id=f"ai-research-{n}")],
            "notes": [f"note-{n}"],
        }

    def review(state: SubState) -> dict[str, Any]:
        verdict = interrupt({"review": state["notes"][-1]})
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"review-{n}: {verdict}", id=f"ai-review-{n}")]}

    sub = StateGraph(SubState)
    sub.add_node("research", research)
    sub.add_node("review", review)
    sub.add_edge(START, "research")
    sub.add_edge("research", "review")
    sub.add_edge("review", END)
    child = sub.compile()

    def summarize(state: SubState) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"summary-{n}", id=f"ai-summary-{n}")]}

    parent = StateGraph(SubState)
    parent.add_node("child", child)
    parent.add_node("summarize", summarize)
    parent.add_edge(START, "child")
    parent.add_edge("child", "summarize")
    parent.add_edge("summarize", END)
    return parent.compile(checkpointer=checkpointer)


# -- DeltaChannel --------------------------------------------------------------------------------


def extend_reducer(state: list | None, writes: list) -> list:
    out = list(state or [])
    for w in writes:
        if isinstance(w, list):
            out.extend(w)
        else:
            out.append(w)
    return out


def _messages_delta_reducer():
    from deepagents._messages_reducer import _messages_delta_reducer as reducer

    return reducer


class DeltaState(TypedDict):
    messages: Annotated[
        list[AnyMessage], DeltaChannel(_messages_delta_reducer(), snapshot_frequency=3)
    ]
    log: Annotated[list, DeltaChannel(extend_reducer, snapshot_frequency=3)]
    counter: int


class SparseDeltaState(TypedDict):
    """DeltaState with snapshots far apart, as deepagents keeps its messages: most puts between."""

    messages: Annotated[
        list[AnyMessage], DeltaChannel(_messages_delta_reducer(), snapshot_frequency=50)
    ]
    log: Annotated[list, DeltaChannel(extend_reducer, snapshot_frequency=50)]
    counter: int


def sparse_delta_graph(checkpointer: Any):
    return delta_graph(checkpointer, SparseDeltaState)


def delta_graph(checkpointer: Any, state_type: type = DeltaState):
    def step(state: dict[str, Any]) -> dict[str, Any]:  # (the graph's state: `state_type`)
        n = state.get("counter", 0) + 1
        last = state["messages"][-1]
        return {
            "messages": [AIMessage(content=f"delta-answer-{n} to {last.id}", id=f"ai-delta-{n}")],
            "log": [{"step": n, "seen": len(state["messages"])}],
            "counter": n,
        }

    builder = StateGraph(state_type)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    return builder.compile(checkpointer=checkpointer)


# -- a fake tool-calling chat model for deepagents -----------------------------------------------


class ScriptedChat(BaseChatModel):
    """Stateless: a human message -> one tool call; a tool result -> a final answer."""

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> ScriptedChat:
        return self

    def _decide(self, messages: list[Any]) -> AIMessage:
        last = messages[-1]
        turn = sum(isinstance(m, HumanMessage) for m in messages)
        if isinstance(last, HumanMessage):
            return AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "get_iron_ore_price",
                        "args": {"benchmark": f"62% Fe turn {turn}"},
                        "id": f"call_{turn}_{len(messages)}",
                        "type": "tool_call",
                    }
                ],
            )
        if isinstance(last, ToolMessage):
            return AIMessage(content=f"Turn {turn}: tool said {last.content}")
        return AIMessage(content="ok")

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._decide(messages))])

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        msg = self._decide(messages)
        if msg.tool_calls:
            tc = msg.tool_calls[0]
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        {
                            "name": tc["name"],
                            "args": json.dumps(tc["args"]),
                            "id": tc["id"],
                            "index": 0,
                        }
                    ],
                    chunk_position="last",
                )
            )
            return
        yield ChatGenerationChunk(
            message=AIMessageChunk(content=msg.content, chunk_position="last")
        )


def deep_agent(checkpointer: Any):
    from deepagents import create_deep_agent
    from langchain_core.tools import tool

    @tool
    def get_iron_ore_price(benchmark: str) -> str:
        """Return the latest iron-ore benchmark price (stub)."""
        return f"{benchmark}: 101.5 USD/dmt (stub)"

    return create_deep_agent(
        model=ScriptedChat(),
        tools=[get_iron_ore_price],
        system_prompt="You are an iron-ore price forecasting expert.",
        checkpointer=checkpointer,
    )
