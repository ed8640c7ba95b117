"""A graph that remembers a conversation across process restarts.

    python examples/durable_memory.py "My name is Zhao Liu"
    python examples/durable_memory.py "What is my name?"      # a new process: still remembers

Each run is one turn on thread "demo" of the SQLite store `data/example.sqlite3`.
"""

from __future__ import annotations

import asyncio
import re
import sys

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from orecast.checkpoint import open_checkpointer


def reply(state: MessagesState) -> dict:
    """Answers from the whole conversation, which the checkpointer restores on every turn."""
    said = [m.content for m in state["messages"] if isinstance(m, HumanMessage)]
    names = [m.group(1) for text in said if (m := re.search(r"my name is (\w[\w ]*)", text, re.I))]
    if "what is my name" in said[-1].lower():
        answer = f"Your name is {names[-1]}." if names else "You have not told me yet."
    else:
        answer = f"Noted. This is message {len(said)} of our conversation."
    return {"messages": [AIMessage(answer)]}


async def main(text: str, url: str = "sqlite:///data/example.sqlite3") -> str:
    builder = StateGraph(MessagesState)
    builder.add_node(reply)
    builder.add_edge(START, "reply")
    async with open_checkpointer(url) as saver:
        graph = builder.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "demo"}}
        result = await graph.ainvoke({"messages": [HumanMessage(text)]}, config)
        return result["messages"][-1].content


if __name__ == "__main__":
    print(asyncio.run(main(" ".join(sys.argv[1:]) or "hello")))
