"""DeltaChannel support: delta history equals InMemorySaver's; copy/prune/fork keep delta threads whole."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from orecast.checkpoint import open_checkpointer
from tests.checkpoint.graphs import delta_graph, human

STEPS = 10


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def _run(graph: Any, thread_id: str, steps: int = STEPS) -> None:
    for step in range(steps):
        await graph.ainvoke({"messages": [human(step)], "log": [{"input": step}]}, cfg(thread_id))


def _comparable(history: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for ch, entry in history.items():
        seed = entry.get("seed")
        out[ch] = {
            "writes": [(channel, value) for _task, channel, value in entry["writes"]],
            "seed": getattr(seed, "value", seed) if "seed" in entry else "<none>",
        }
    return out


async def test_delta_history_matches_memory(store_url: str) -> None:
    memory = InMemorySaver()
    reference = delta_graph(memory)
    await _run(reference, "d")
    async with open_checkpointer(store_url) as s:
        await _run(delta_graph(s), "d")
        ours = [t.checkpoint["channel_versions"] async for t in s.alist(cfg("d"))]
        assert len(ours) == len([t async for t in memory.alist(cfg("d"))])
    # Compare per position (checkpoint ids differ between the two runs), from a cold saver.
    theirs_cps = [t.config async for t in memory.alist(cfg("d"))]
    async with open_checkpointer(store_url) as s:
        ours_cps = [t.config async for t in s.alist(cfg("d"))]
        for mine, ref in zip(ours_cps, theirs_cps, strict=True):
            got = await s.aget_delta_channel_history(config=mine, channels=["messages", "log"])
            want = await memory.aget_delta_channel_history(config=ref, channels=["messages", "log"])
            assert _comparable(got) == _comparable(want)
        assert await s.aget_delta_channel_history(config=cfg("d"), channels=[]) == {}
        missing = await s.aget_delta_channel_history(config=cfg("nope"), channels=["messages"])
        assert missing == {"messages": {"writes": []}}


async def test_delta_thread_copy_prune_fork(saver) -> None:
    graph = delta_graph(saver)
    await _run(graph, "src")
    state = (await graph.aget_state(cfg("src"))).values
    assert len(state["messages"]) == 2 * STEPS

    await saver.acopy_thread("src", "copy")
    saver.items.clear()
    assert (await graph.aget_state(cfg("copy"))).values == state
    await graph.ainvoke({"messages": [human(50)], "log": []}, cfg("copy"))
    assert len((await graph.aget_state(cfg("copy"))).values["messages"]) == 2 * STEPS + 2

    # Fork the copy from an early checkpoint: the delta channels replay that branch only.
    early = [
        s
        async for s in graph.aget_state_history(cfg("copy"))
        if s.values.get("counter") == 3 and not s.next
    ]
    assert len(early) == 1
    await graph.ainvoke(
        {"messages": [HumanMessage("fork", id="h-fork")], "log": []}, early[0].config
    )
    forked = (await graph.aget_state(cfg("copy"))).values
    assert [m.id for m in forked["messages"]][-2:] == ["h-fork", "ai-delta-4"]
    assert len(forked["messages"]) == 8 and forked["counter"] == 4

    await saver.aprune(["src"], strategy="keep_latest")
    saver.items.clear()
    assert (await graph.aget_state(cfg("src"))).values == state
    assert len([t async for t in saver.alist(cfg("src"))]) < 3 * STEPS  # something was pruned
    await graph.ainvoke({"messages": [human(60)], "log": []}, cfg("src"))
    after = (await graph.aget_state(cfg("src"))).values
    assert after["messages"][:-2] == state["messages"] and after["counter"] == STEPS + 1
