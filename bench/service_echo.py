"""The LLM-free graph of the service benchmark: one node that answers each message with its echo."""

from __future__ import annotations

from typing import Annotated

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def reply(state: Chat) -> dict:
    return {"messages": [AIMessage(content=f"echo: {state['messages'][-1].content}")]}


builder = StateGraph(Chat)
builder.add_node("reply", reply)
builder.add_edge(START, "reply")
graph = builder.compile()
