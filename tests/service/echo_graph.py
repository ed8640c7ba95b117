"""A tiny outside graph for `--graph`: echoes the last message back, optionally slowly, with a custom event."""

from __future__ import annotations

import asyncio
from typing import Annotated

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.config import get_stream_writer
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    delay: float
    ask: bool


async def echo(state: State) -> dict:
    text = state["messages"][-1].content if state.get("messages") else ""
    if state.get("delay"):
        await asyncio.sleep(state["delay"])
    get_stream_writer()({"echoing": text})
    if state.get("ask"):
        answer = interrupt({"question": f"really echo {text!r}?"})
        text = f"{text} ({answer})"
    return {"messages": [AIMessage(content=f"echo: {text}")], "ask": False, "delay": 0}


builder = StateGraph(State)
builder.add_node("echo", echo)
builder.add_edge(START, "echo")
graph = builder.compile()


parent = StateGraph(State)
parent.add_node("inner", graph)
parent.add_edge(START, "inner")
nested = parent.compile()
