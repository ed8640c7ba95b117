"""A tiny outside graph for `--graph`: echoes the last message back, optionally slowly, with a custom event.

A run's `context` `{"prefix": …}` replaces the reply's `echo`, its `configurable` `{"shout": true}`
upper-cases the text, and `fail` in the state makes the node raise (the run fails). `hold` (a file's
path) keeps the node waiting while that file exists: a test ends such a run when it is done looking at
it, whatever a loaded machine's delays, by deleting the file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import get_runtime
from langgraph.types import interrupt
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    delay: float
    ask: bool
    fail: bool
    hold: str


async def echo(state: State, config: RunnableConfig) -> dict:
    text = state["messages"][-1].content if state.get("messages") else ""
    if state.get("fail"):
        raise RuntimeError(f"asked to fail on {text!r}")
    if config.get("configurable", {}).get("shout"):
        text = text.upper()
    context = get_runtime().context
    prefix = context.get("prefix", "echo") if isinstance(context, dict) else "echo"
    if state.get("delay"):
        await asyncio.sleep(state["delay"])
    while state.get("hold") and Path(state["hold"]).exists():
        await asyncio.sleep(0.02)
    get_stream_writer()({"echoing": text})
    if state.get("ask"):
        answer = interrupt({"question": f"really echo {text!r}?"})
        text = f"{text} ({answer})"
    update = {"messages": [AIMessage(content=f"{prefix}: {text}")], "ask": False, "delay": 0}
    if state.get("hold"):
        update["hold"] = ""
    return update


builder = StateGraph(State)
builder.add_node("echo", echo)
builder.add_edge(START, "echo")
graph = builder.compile()


def done(state: State) -> dict:
    """A last step after the subgraph, so a run can stop between the two (`interrupt_after`)."""
    return {}


parent = StateGraph(State)
parent.add_node("inner", graph)
parent.add_node("done", done)
parent.add_edge(START, "inner")
parent.add_edge("inner", "done")
nested = parent.compile()


# How many `counted` runs are in their node at once in this process, and the most there ever were: the
# service's limit on runs executing at once (runs/slots.py), seen from inside the graphs it runs.
INSIDE = {"now": 0, "peak": 0}


async def counted_echo(state: State, config: RunnableConfig) -> dict:
    INSIDE["now"] += 1
    INSIDE["peak"] = max(INSIDE["peak"], INSIDE["now"])
    try:
        return await echo(state, config)
    finally:
        INSIDE["now"] -= 1


counting = StateGraph(State)
counting.add_node("echo", counted_echo)
counting.add_edge(START, "echo")
counted = counting.compile()
