"""A graph whose checkpoints hold every kind of value a thread's history answer has to say in JSON.

`talk` adds a message of each type (an AI message with tool calls and usage, a tool message with an
artifact, a system, a chat and a function message) and sets `extra` to values JSON has no word for:
datetimes, a date, bytes, a UUID, non-str keys, a tuple, a set, special floats, an enum, a dataclass
and a pydantic model. `inner` is a subgraph that interrupts when `ask` is set, so a checkpoint has a task with a
subgraph's state and interrupts; `check` raises when `fail` is set, so a checkpoint has a task with
an error."""

from __future__ import annotations

import dataclasses
import enum
import uuid
from datetime import UTC, date, datetime
from typing import Annotated, Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    ChatMessage,
    FunctionMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from pydantic import BaseModel
from typing_extensions import TypedDict


class Grade(enum.Enum):
    FINES = "fines"
    LUMP = "lump"


@dataclasses.dataclass
class Cargo:
    port: str
    tonnes: float


class Quote(BaseModel):
    price: float
    at: datetime


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    extra: Any
    ask: bool
    fail: bool


def talk(state: State) -> dict:
    turn = len(state.get("messages", []))
    call = {"name": "price", "args": {"grade": "62% Fe", "months": 6}, "id": f"call-{turn}"}
    at = datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=UTC)
    return {
        "messages": [
            SystemMessage(content="You are terse.", id=f"system-{turn}"),
            AIMessage(
                content="", id=f"ai-call-{turn}", tool_calls=[call],
                usage_metadata={"input_tokens": 11, "output_tokens": 7, "total_tokens": 18},
                response_metadata={"model_name": "offline", "finish_reason": "tool_calls"},
            ),
            ToolMessage(content="105.5", tool_call_id=call["id"], id=f"tool-{turn}", artifact={"rows": [1, 2]}),
            ChatMessage(content="noted", role="critic", id=f"chat-{turn}"),
            FunctionMessage(content="{}", name="legacy", id=f"function-{turn}"),
            AIMessage(content=[{"type": "text", "text": "铁矿石 105.5 $/t"}], id=f"ai-{turn}"),
        ],
        "extra": {
            "at": at, "naive": datetime(2026, 3, 4, 5, 6, 7), "day": date(2026, 3, 4),
            "raw": b"\x00\xffore", "id": uuid.UUID(int=turn + 1), 7: "seven", 2.5: "two and a half",
            "pair": (1, "a"), "grades": {Grade.FINES}, "inf": float("inf"), "nan": float("nan"),
            "grade": Grade.LUMP, "cargo": Cargo("Qingdao", 170_000.0), "quote": Quote(price=105.5, at=at),
            "turn": turn,
        },
    }


def ask(state: State) -> dict:
    if not state.get("ask"):
        return {}
    answer = interrupt({"question": "publish?", "when": datetime(2026, 3, 4, tzinfo=UTC)})
    return {"messages": [AIMessage(content=f"asked: {answer}", id=f"asked-{len(state['messages'])}")]}


def check(state: State) -> dict:
    if state.get("fail"):
        raise RuntimeError("asked to fail")
    return {}


inner_builder = StateGraph(State)
inner_builder.add_node("ask", ask)
inner_builder.add_edge(START, "ask")
inner = inner_builder.compile()

builder = StateGraph(State)
builder.add_node("talk", talk)
builder.add_node("inner", inner)
builder.add_node("check", check)
builder.add_edge(START, "talk")
builder.add_edge("talk", "inner")
builder.add_edge("inner", "check")
graph = builder.compile()
