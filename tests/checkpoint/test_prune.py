"""Pruning: the policy's checkpoints go, and everything kept still loads the same — pending interrupts,
branch points and DeltaChannel chains included — on both backends."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from langgraph.types import Command

from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import approval_graph, delta_graph, human, subgraph_parent, tool_loop


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def states(saver: Any, graph: Any, thread_id: str) -> dict[tuple[str, str], Any]:
    """Every stored checkpoint of the thread as it loads: the raw tuple, and the graph's state for the root."""
    out = {}
    async for tup in saver.alist(cfg(thread_id)):
        conf = tup.config["configurable"]
        key = (conf["checkpoint_ns"], conf["checkpoint_id"])
        state = None
        if key[0] == "":
            snap = await graph.aget_state(tup.config)
            state = (snap.values, snap.next, tuple((t.name, t.interrupts) for t in snap.tasks))
        out[key] = (tup.checkpoint, tup.metadata, tup.pending_writes, state)
    return out


async def assert_kept_load_the_same(saver: Any, graph: Any, thread_id: str, before: dict) -> dict:
    after = await states(saver, graph, thread_id)
    assert after, "a prune never empties a thread"
    for key, loaded in after.items():
        assert loaded == before[key], key
    return after


async def test_keep_latest_keeps_delta_chains_loadable(saver) -> None:
    graph = delta_graph(saver)
    for step in range(7):
        await graph.ainvoke({"messages": [human(step)], "log": [{"input": step}]}, cfg("d"))
    before = await states(saver, graph, "d")
    [result] = await saver.aprune(["d"], keep_last=2)
    assert result.protected.get("delta", 0) > 0
    after = await assert_kept_load_the_same(saver, graph, "d", before)
    assert len(after) == result.checkpoints_kept < len(before)
    assert result.checkpoints_deleted == len(before) - len(after)
    # It carries on from what was kept.
    await graph.ainvoke({"messages": [human(7)], "log": []}, cfg("d"))
    assert (await graph.aget_state(cfg("d"))).values["counter"] == 8


async def test_pending_interrupt_on_an_old_branch_survives_and_resumes(saver) -> None:
    graph = approval_graph(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("a"))
    waiting = (await graph.aget_state(cfg("a"))).config  # interrupted, a run waits here
    start = [s async for s in graph.aget_state_history(cfg("a"))][-1].config
    await graph.ainvoke({"messages": [human(1)]}, start)  # a newer branch, interrupted too
    before = await states(saver, graph, "a")
    [result] = await saver.aprune(["a"])
    assert result.protected == {"interrupt": 1, "branch": 1}  # and where the two branches part
    await assert_kept_load_the_same(saver, graph, "a", before)
    assert await saver.aget_tuple(waiting) is not None
    await graph.ainvoke(Command(resume="late"), waiting)
    assert (await graph.aget_state(cfg("a"))).values["messages"][-1].content == "approved: late"


async def test_older_than_keeps_the_branch_point_of_kept_branches(saver) -> None:
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("f"))
    branch_point = (await graph.aget_state(cfg("f"))).config
    await graph.ainvoke({"messages": [human(1)]}, cfg("f"))
    await graph.ainvoke({"messages": [human(2)]}, cfg("f"))
    turn_2 = [s async for s in graph.aget_state_history(cfg("f"))][4]  # 5 checkpoints a turn: turn 2's input
    cutoff = datetime.fromisoformat(turn_2.created_at)
    await graph.ainvoke({"messages": [human(7, "a fork")]}, branch_point)
    before = await states(saver, graph, "f")
    [dry] = await saver.aprune(["f"], older_than=cutoff, dry_run=True)
    assert await states(saver, graph, "f") == before  # a dry run changes nothing
    [result] = await saver.aprune(["f"], older_than=cutoff)
    assert (dry.deleted, dry.bytes_freed) == (result.deleted, result.bytes_freed)
    assert result.protected == {"branch": 1}
    after = await assert_kept_load_the_same(saver, graph, "f", before)
    bp = branch_point["configurable"]["checkpoint_id"]
    assert ("", bp) in after
    assert result.checkpoints_deleted == 4 + 5  # turn 0's but its last (the branch point), and turn 1's
    assert all(datetime.fromisoformat(c["ts"]) >= cutoff for (ns, cid), (c, *_r) in after.items() if cid != bp)


async def test_subgraph_interrupt_and_namespaces_survive(saver) -> None:
    graph = subgraph_parent(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("s"))
    before = await states(saver, graph, "s")
    namespaces = {ns for ns, _ in before}
    [result] = await saver.aprune(["s"])
    after = await assert_kept_load_the_same(saver, graph, "s", before)
    assert {ns for ns, _ in after} == namespaces and len(namespaces) == 2
    assert result.checkpoints_deleted > 0
    await graph.ainvoke(Command(resume="fine"), cfg("s"))
    assert (await graph.aget_state(cfg("s"))).values["messages"][-1].content.startswith("summary")


async def test_dry_run_bytes_are_the_payload_a_prune_frees(saver, store_url: str) -> None:
    graph = tool_loop(saver)
    for turn in range(6):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("b"))
    payload = saver.q.PAYLOAD_BYTES
    before_bytes = int(raw_sql(store_url, payload)[0][0])  # MySQL's SUM is a DECIMAL
    [dry] = await saver.aprune(["b"], keep_last=3, dry_run=True)
    assert dry.dry_run and dry.checkpoints_deleted == 6 * 5 - 3 and dry.writes_deleted > 0
    [done] = await saver.aprune(["b"], keep_last=3)
    freed = before_bytes - int(raw_sql(store_url, payload)[0][0])
    assert done.bytes_freed == dry.bytes_freed > 0
    # SQLite and MariaDB (JSON kept as text) count the same bytes exactly; PostgreSQL's JSONB and
    # MySQL 8's binary JSON are rendered as text their own way (a few %).
    assert abs(freed - dry.bytes_freed) <= 0.05 * freed
    assert (await saver.aget_thread("b")).checkpoint_count == 3


async def test_bad_policy_is_refused(saver) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        await saver.aprune(["x"], keep_last=0)
    with pytest.raises(ValueError, match="aware datetime"):
        await saver.aprune(["x"], older_than=datetime(2026, 1, 1))


def test_plan_on_a_small_tree() -> None:
    """a1 ← a2 ← a3 ← a4 (head) and a2 ← b5 ← b6 (a fork); `d` is a DeltaChannel stored at a1 and b5 only."""
    from orecast.checkpoint.retention import Node, PrunePolicy, plan

    def node(cid: str, parent: str | None, version: str, *, interrupted: bool = False) -> Node:
        return Node("", cid, parent, None, {"d": version}, frozenset({"d"}), interrupted)

    nodes = [
        node("a1", None, "1"),
        node("a2", "a1", "2"),
        node("a3", "a2", "3"),
        node("a4", "a3", "4"),
        node("b5", "a2", "5"),
        node("b6", "b5", "6"),
    ]
    populated = {("", "d", "1"), ("", "d", "5")}
    keep, why = plan(nodes, populated, PrunePolicy(keep_last=1))
    # b6 is the newest; its value is rebuilt from b5 (a seed): nothing else is needed.
    assert keep == {("", "b6"), ("", "b5")} and why == {"delta": 1}
    keep, why = plan(nodes, populated, PrunePolicy(keep_last=3))
    # b6, b5 and a4 (ids grow with time); a4 is rebuilt from a3, a2 and a1 (its seed).
    assert keep == {("", c) for c in ("a1", "a2", "a3", "a4", "b5", "b6")} and why == {"delta": 3}
    nodes[3] = node("a4", "a3", "4", interrupted=True)
    keep, why = plan(nodes, {("", "d", v) for v in "123456"}, PrunePolicy(keep_last=1))
    assert keep == {("", "a4"), ("", "b6"), ("", "a2")} and why == {"interrupt": 1, "branch": 1}


async def test_items_a_prune_deletes_are_not_referred_to_by_another_process(saver, store_url: str) -> None:
    """A prune in one process deleted the items of an abandoned branch; the process that wrote the
    thread still knew them by hash, and the same question asked again on a new branch referred to the
    deleted item by number: every other process then failed to load the thread (CorruptRowError:
    "items [5] are referenced but not stored")."""
    from orecast.checkpoint import open_checkpointer

    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("t"))
    after_first = (await graph.aget_state(cfg("t"))).config
    await graph.ainvoke({"messages": [human(1)]}, cfg("t"))
    await graph.ainvoke({"messages": [human(2)]}, after_first)  # a fork: the first branch is abandoned
    async with open_checkpointer(store_url) as other:
        (result,) = await other.aprune(["t"], strategy="keep_latest")
        assert result.items_deleted > 0
    await graph.ainvoke({"messages": [human(1)]}, after_first)  # that branch's question again
    expected = (await graph.aget_state(cfg("t"))).values["messages"]
    async with open_checkpointer(store_url) as fresh:
        assert (await tool_loop(fresh).aget_state(cfg("t"))).values["messages"] == expected
