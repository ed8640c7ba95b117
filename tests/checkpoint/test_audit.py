"""The tool-call audit (`tool_calls` view, `atool_calls`): calls, arguments, results, on both backends."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph

from orecast.checkpoint import ToolCallRecord
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import TOOL_NAME, human, tool_loop


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def test_tool_calls_of_a_tool_loop(saver) -> None:
    graph = tool_loop(saver)
    for turn in range(3):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("audit"))
    state = (await graph.aget_state(cfg("audit"))).values["messages"]
    expected = [
        (call["id"], call["name"], call["args"])
        for message in state
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    ]
    results = {m.tool_call_id: m.content for m in state if isinstance(m, ToolMessage)}

    calls = await saver.atool_calls("audit")
    assert [(c.call_id, c.tool, c.args) for c in calls] == expected
    assert all(isinstance(c, ToolCallRecord) and c.tool == TOOL_NAME for c in calls)
    assert [c.result for c in calls] == [results[c.call_id] for c in calls]
    assert {c.status for c in calls} == {"success"}
    assert await saver.atool_calls("no-such-thread") == []


def _calls_graph(saver, messages_by_turn: list[list[Any]]):
    """A graph whose single node appends the given messages: tool calls without the tool loop."""
    turns = iter(messages_by_turn)

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": next(turns)}

    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    return builder.compile(checkpointer=saver)


async def test_pending_error_and_ordered_parallel_calls(saver, store_url: str) -> None:
    parallel = AIMessage(
        "",
        id="ai-1",
        tool_calls=[
            {"name": "forecast_price", "args": {"series": "dce_iron_ore_daily", "horizon": 5}, "id": "c-b"},
            {"name": "describe_series", "args": {"series": "铁矿石", "to": 1, "from": 0}, "id": "c-a"},
            {"name": "make_chart", "args": {}, "id": "c-c"},
        ],
    )
    answers = [
        ToolMessage('{"mean": [101.5]}', tool_call_id="c-b", id="t-1"),
        ToolMessage("unknown series", tool_call_id="c-a", status="error", id="t-2"),
    ]
    graph = _calls_graph(saver, [[parallel], answers])
    await graph.ainvoke({"messages": [HumanMessage("forecast", id="h-1")]}, cfg("parallel"))
    await graph.ainvoke({"messages": [HumanMessage("go on", id="h-2")]}, cfg("parallel"))

    calls = await saver.atool_calls("parallel")
    # In the order the model wrote them, not sorted by id.
    assert [c.call_id for c in calls] == ["c-b", "c-a", "c-c"]
    assert [c.status for c in calls] == ["success", "error", "pending"]
    assert calls[0].result == '{"mean": [101.5]}'
    assert calls[1].result == "unknown series"
    assert calls[2].result is None and calls[2].args == {}
    # Arguments come back exactly, key order included (JSONB sorts keys; the store keeps the order).
    assert list(calls[1].args) == ["series", "to", "from"]
    assert calls[1].args["series"] == "铁矿石"

    # The view is plain SQL: the same audit without orecast.
    rows = raw_sql(store_url, "SELECT tool, status FROM tool_calls ORDER BY item_no, position")
    assert rows == [("forecast_price", "success"), ("describe_series", "error"), ("make_chart", "pending")]
