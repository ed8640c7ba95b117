"""A graph to kill a server under: `fast` and `slow` run in the same step, `after` once both are done.

Each node appends its name to the file `log` names when it starts, so a test counts what ran in every
process; `slow` then waits while the file `hold` names exists, so a test kills the server in the
middle of the step, after `fast` has finished. `for_user` is the same graph as a factory taking a
`ServerRuntime`, its `after` naming the user custom auth authenticated for the run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph_sdk.runtime import ServerRuntime
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    log: str
    hold: str


def note(state: State, name: str) -> None:
    with open(state["log"], "a", encoding="utf-8") as f:
        f.write(name + "\n")


def fast(state: State) -> dict:
    note(state, "fast")
    return {"messages": [AIMessage("fast done", id="fast")]}


async def slow(state: State) -> dict:
    note(state, "slow")
    while Path(state["hold"]).exists():
        await asyncio.sleep(0.02)
    return {"messages": [AIMessage("slow done", id="slow")]}


def after(state: State) -> dict:
    note(state, "after")
    return {"messages": [AIMessage("after done", id="after")]}


def _builder(after_node) -> StateGraph:
    builder = StateGraph(State)
    builder.add_node("fast", fast)
    builder.add_node("slow", slow)
    builder.add_node("after", after_node)
    builder.add_edge(START, "fast")
    builder.add_edge(START, "slow")
    builder.add_edge(["fast", "slow"], "after")
    return builder


graph = _builder(after).compile()


def for_user(runtime: ServerRuntime) -> StateGraph:
    user = runtime.user
    who = f"{user.identity} {sorted(user.permissions)}" if user is not None else "nobody"

    def after_for_user(state: State) -> dict:
        note(state, "after")
        return {"messages": [AIMessage(f"after done for {who}", id="after")]}

    return _builder(after_for_user)
