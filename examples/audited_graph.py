"""A hand-written LangGraph graph whose tool calls land in orecast's tool-call audit.

Serve it next to the analyst and read what its tools did:

    orecast serve --graph pricer=./examples/audited_graph.py:graph
    orecast audit tools --tool lookup_price

or run it here: `python examples/audited_graph.py sqlite:///demo.sqlite3`.

The graph is compiled without a checkpointer (the server binds its own); `tool_call_auditing()` finds the
store the graph runs on, so nothing here names a database.
"""

from __future__ import annotations

import asyncio
import sys

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from orecast.agent.audit import tool_call_auditing

PRICES = {"62% Fe": 101.5, "65% Fe": 117.0}


@tool
def lookup_price(benchmark: str) -> str:
    """The benchmark's latest price in US$/dmt."""
    if benchmark not in PRICES:
        raise ValueError(f"no benchmark {benchmark!r}; try one of {', '.join(PRICES)}")
    return f"{benchmark}: {PRICES[benchmark]} US$/dmt"


def pick_tool(state: MessagesState) -> dict:
    """A stand-in for a model: ask the tool about the user's words, then repeat its answer."""
    last = state["messages"][-1]
    if isinstance(last, HumanMessage):
        call = {"name": "lookup_price", "args": {"benchmark": last.text}, "id": f"call-{len(state['messages'])}"}
        return {"messages": [AIMessage("", tool_calls=[call])]}
    return {"messages": [AIMessage(last.text)]}


builder = StateGraph(MessagesState)
builder.add_node("model", pick_tool)
builder.add_node("tools", ToolNode([lookup_price], handle_tool_errors=True, **tool_call_auditing()))
builder.add_edge(START, "model")
builder.add_conditional_edges("model", tools_condition)
builder.add_edge("tools", "model")
graph = builder.compile()


async def main(url: str) -> list[str]:
    from orecast.checkpoint import open_checkpointer

    async with open_checkpointer(url) as saver:
        app = graph.copy(update={"checkpointer": saver})  # what `orecast serve --graph` does
        config = {"configurable": {"thread_id": "pricer-demo"}}
        for question in ("62% Fe", "58% Fe"):
            await app.ainvoke({"messages": [HumanMessage(question)]}, config)
        calls = await saver.aaudit_tool_calls(thread_id="pricer-demo")
        return [f"{c.tool} {c.args['benchmark']} {c.status} {c.duration_ms:.1f} ms" for c in reversed(calls)]


if __name__ == "__main__":
    for line in asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///demo.sqlite3")):
        print(line)
