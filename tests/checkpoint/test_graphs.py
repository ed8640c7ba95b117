"""Real LangGraph graphs on both backends, compared step by step with InMemorySaver."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command, Overwrite

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.core import count_messages
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import (
    TOOL_NAME,
    approval_graph,
    deep_agent,
    delta_graph,
    human,
    subgraph_parent,
    tool_loop,
)


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def history(graph: Any, config: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The comparable part of every snapshot, newest first."""
    out = []
    async for snap in graph.aget_state_history(config):
        out.append(
            (
                snap.values,
                snap.next,
                snap.metadata.get("source"),
                snap.metadata.get("step"),
                tuple(t.name for t in snap.tasks),
                tuple(i.value for i in snap.interrupts),
            )
        )
    return out


async def assert_same_as_memory(graph: Any, reference: Any, thread_id: str) -> None:
    ours = await graph.aget_state(cfg(thread_id))
    theirs = await reference.aget_state(cfg(thread_id))
    assert ours.values == theirs.values
    assert ours.next == theirs.next
    ours_h = await history(graph, cfg(thread_id))
    theirs_h = await history(reference, cfg(thread_id))
    assert len(ours_h) == len(theirs_h)
    for i, (a, b) in enumerate(zip(ours_h, theirs_h, strict=True)):
        assert a == b, f"history entry {i} differs"


async def edit_operations(graph: Any, config: dict[str, Any]) -> None:
    """Replacement by id, RemoveMessage, Overwrite and REMOVE_ALL_MESSAGES through real updates."""
    await graph.aupdate_state(config, {"messages": [HumanMessage("edited question 3", id="h-3")]})
    await graph.aupdate_state(config, {"messages": [RemoveMessage(id="h-5")]})
    await graph.ainvoke({"messages": [human(100)]}, config)
    state = await graph.aget_state(config)
    kept = [m for m in state.values["messages"] if not m.id.startswith("tool-")][:6]
    await graph.aupdate_state(config, {"messages": Overwrite(kept)})
    await graph.ainvoke({"messages": [human(101)]}, config)
    await graph.aupdate_state(
        config,
        {
            "messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES),
                HumanMessage("fresh start", id="h-fresh"),
            ]
        },
    )
    await graph.ainvoke({"messages": [human(102)]}, config)


def test_a_thread_cleared_by_langgraphs_remove_all_counts_from_zero() -> None:
    """The store names LangGraph's clearing id itself (checkpoint/core.py): importing it from
    langgraph.graph.message loaded all of langgraph.graph into every `orecast db` process."""
    written = [[RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("again", id="h-again")]]
    assert count_messages(written) == (1, 1, "again")


async def test_tool_loop_30_turns_matches_memory(saver) -> None:
    graph, reference = tool_loop(saver), tool_loop(InMemorySaver())
    for turn in range(30):
        for g in (graph, reference):
            await g.ainvoke({"messages": [human(turn)]}, cfg("loop"))
    state = await graph.aget_state(cfg("loop"))
    assert len(state.values["messages"]) == 120
    assert state.values["messages"][0] == human(0)
    assert isinstance(state.values["messages"][2], ToolMessage)
    await assert_same_as_memory(graph, reference, "loop")

    for g in (graph, reference):
        await edit_operations(g, cfg("loop"))
    await assert_same_as_memory(graph, reference, "loop")
    final = (await graph.aget_state(cfg("loop"))).values["messages"]
    assert [m.id for m in final[:2]] == ["h-fresh", "h-102"]
    assert len(final) == 5


async def test_edits_before_reopen_survive_reopen(store_url: str) -> None:
    reference = tool_loop(InMemorySaver())
    async with open_checkpointer(store_url) as s:
        graph = tool_loop(s)
        for turn in range(8):
            for g in (graph, reference):
                await g.ainvoke({"messages": [human(turn)]}, cfg("edits"))
        for g in (graph, reference):
            await edit_operations(g, cfg("edits"))
    async with open_checkpointer(store_url) as s:
        await assert_same_as_memory(tool_loop(s), reference, "edits")


async def test_interrupt_and_resume(saver) -> None:
    # Several threads: with the default async durability the checkpoint put and the interrupt write
    # are submitted concurrently, so a store whose status depends on their commit order fails here.
    graph, reference = approval_graph(saver), approval_graph(InMemorySaver())
    for n in range(6):
        thread_id = f"hitl-{n}"
        for g in (graph, reference):
            await g.ainvoke({"messages": [human(1)]}, cfg(thread_id))
        snap = await graph.aget_state(cfg(thread_id))
        assert snap.next == ("ask",)
        assert [i.value for i in snap.interrupts] == [{"question": "approve?", "n": 1}]
        thread = await saver.aget_thread(thread_id)
        assert thread is not None and thread.status == "interrupted", thread_id

    assert await saver.acount_threads(status="interrupted") == 6
    for n in range(6):
        thread_id = f"hitl-{n}"
        for g in (graph, reference):
            await g.ainvoke(Command(resume=f"yes-{n}"), cfg(thread_id))
        snap = await graph.aget_state(cfg(thread_id))
        assert snap.next == ()
        assert snap.values["messages"][-1].content == f"approved: yes-{n}"
        assert (await saver.aget_thread(thread_id)).status == "idle"
        await assert_same_as_memory(graph, reference, thread_id)
    assert await saver.acount_threads(status="interrupted") == 0


async def test_subgraph_state_and_history(saver, store_url: str) -> None:
    graph, reference = subgraph_parent(saver), subgraph_parent(InMemorySaver())
    for g in (graph, reference):
        await g.ainvoke({"messages": [human(1)], "notes": []}, cfg("sub"))
    ours = await graph.aget_state(cfg("sub"), subgraphs=True)
    theirs = await reference.aget_state(cfg("sub"), subgraphs=True)
    assert ours.next == ("child",)
    sub_ours, sub_theirs = ours.tasks[0].state, theirs.tasks[0].state
    assert sub_ours.values == sub_theirs.values
    assert sub_ours.values["notes"] == ["note-1"]
    assert sub_ours.next == sub_theirs.next == ("review",)
    assert sub_ours.config["configurable"]["checkpoint_ns"].startswith("child:")
    assert [i.value for i in ours.interrupts] == [{"review": "note-1"}]

    # The subgraph's own history, read through its namespace.
    sub_cfg = {"configurable": {**sub_ours.config["configurable"]}}
    sub_cfg["configurable"].pop("checkpoint_id", None)
    sub_hist = [s.values async for s in graph.aget_state_history(sub_cfg)]
    ref_cfg = {"configurable": {**sub_theirs.config["configurable"]}}
    ref_cfg["configurable"].pop("checkpoint_id", None)
    assert sub_hist == [s.values async for s in reference.aget_state_history(ref_cfg)]
    assert len(sub_hist) >= 2

    rows = raw_sql(store_url, "SELECT count(*) FROM checkpoints WHERE checkpoint_ns <> ''")
    assert rows[0][0] >= 2

    for g in (graph, reference):
        await g.ainvoke(Command(resume="ok"), cfg("sub"))
    final = await graph.aget_state(cfg("sub"))
    assert [m.content for m in final.values["messages"]] == [
        "question-0001 about iron ore",
        "research-1",
        "review-2: ok",
        "summary-3",
    ]
    await assert_same_as_memory(graph, reference, "sub")


async def test_fork_from_old_checkpoint(saver) -> None:
    graph, reference = tool_loop(saver), tool_loop(InMemorySaver())
    for turn in range(4):
        for g in (graph, reference):
            await g.ainvoke({"messages": [human(turn)]}, cfg("fork"))

    async def fork(g: Any) -> list[Any]:
        # The checkpoint right after turn 1 finished (8 messages, nothing next).
        old = [
            s
            async for s in g.aget_state_history(cfg("fork"))
            if len(s.values.get("messages", [])) == 8 and not s.next
        ]
        assert len(old) == 1
        new_cfg = await g.aupdate_state(
            old[0].config,
            {"messages": [HumanMessage("forked question", id="h-fork")]},
            as_node="tools",
        )
        await g.ainvoke(None, new_cfg)
        # A second fork: invoke with new input directly from the old checkpoint.
        await g.ainvoke({"messages": [human(50)]}, old[0].config)
        return (await g.aget_state(cfg("fork"))).values["messages"]

    ours, theirs = await fork(graph), await fork(reference)
    assert ours == theirs
    assert [m.id for m in ours[:8]] == [m.id for m in theirs[:8]]
    assert ours[8].id == "h-50" and len(ours) == 12
    await assert_same_as_memory(graph, reference, "fork")
    # The first fork's branch is still readable from history.
    branch = [
        s
        async for s in graph.aget_state_history(cfg("fork"))
        if any(m.id == "h-fork" for m in s.values.get("messages", []))
    ]
    assert branch
    # h-0, h-1 and h-fork are the human messages of that branch: its answer is turn 3's.
    assert branch[0].values["messages"][-1].content.startswith("answer-0003 after 11 messages")


async def test_delta_channel_state_and_history(store_url: str) -> None:
    reference = delta_graph(InMemorySaver())
    async with open_checkpointer(store_url) as s:
        graph = delta_graph(s)
        for step in range(20):
            for g in (graph, reference):
                await g.ainvoke({"messages": [human(step)], "log": [{"input": step}]}, cfg("delta"))
        # Edits through the delta reducer.
        for g in (graph, reference):
            await g.aupdate_state(cfg("delta"), {"messages": [RemoveMessage(id="h-2")]})
            await g.aupdate_state(cfg("delta"), {"messages": [HumanMessage("edited", id="h-4")]})
            await g.ainvoke({"messages": [human(99)], "log": []}, cfg("delta"))
        await assert_same_as_memory(graph, reference, "delta")
        state = (await graph.aget_state(cfg("delta"))).values
        assert state["counter"] == 21
        assert len(state["log"]) == 41  # 20 inputs + 20 steps + 1 step after the empty input
        assert len(state["messages"]) == 41
    # Cold caches: a new saver must rebuild the same states from the database alone.
    async with open_checkpointer(store_url) as s:
        await assert_same_as_memory(delta_graph(s), reference, "delta")


async def test_deep_agent_survives_reopen(store_url: str) -> None:
    async with open_checkpointer(store_url) as s:
        agent = deep_agent(s)
        for turn in range(3):
            result = await agent.ainvoke(
                {"messages": [{"role": "user", "content": f"price turn {turn}?"}]}, cfg("deep")
            )
        before = await agent.aget_state(cfg("deep"))
        hist_before = [h.values async for h in agent.aget_state_history(cfg("deep"))]
    messages = result["messages"]
    assert [type(m).__name__ for m in messages[:4]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert messages[-1].content.startswith("Turn 3: tool said 62% Fe turn 3")
    assert len(messages) == 12
    async with open_checkpointer(store_url) as s:
        agent = deep_agent(s)
        after = await agent.aget_state(cfg("deep"))
        assert after.values == before.values
        assert [h.values async for h in agent.aget_state_history(cfg("deep"))] == hist_before
        thread = await s.aget_thread("deep")
        assert thread is not None and thread.message_count == 12
        # The conversation continues on the reopened store.
        result = await agent.ainvoke(
            {"messages": [{"role": "user", "content": "again?"}]}, cfg("deep")
        )
        assert len(result["messages"]) == 16
        assert result["messages"][-1].content.startswith("Turn 4:")


async def test_tool_call_args_round_trip_in_graph(saver) -> None:
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(7)]}, cfg("args"))
    msgs = (await graph.aget_state(cfg("args"))).values["messages"]
    call = msgs[1]
    assert isinstance(call, AIMessage)
    assert call.tool_calls == [
        {
            "name": TOOL_NAME,
            "args": {"benchmark": "62% Fe", "turn": 1},
            "id": "call-1-1",
            "type": "tool_call",
        }
    ]
