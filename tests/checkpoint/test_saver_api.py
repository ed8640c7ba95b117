"""Sync bridges, no pickle, strict allowlist, list/copy/prune/delete_for_runs on real graphs."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import pickle
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint import MysqlCheckpointer, PostgresCheckpointer, SqliteCheckpointer
from tests.checkpoint.conftest import dialect_of, raw_sql, stored_values, tamper_value
from tests.checkpoint.graphs import human, tool_loop

INSTANTIATED: list[int] = []


@dataclasses.dataclass
class Gadget:
    """Not allowlisted in strict mode: loading it there must not run its constructor."""

    size: int

    def __post_init__(self) -> None:
        INSTANTIATED.append(self.size)


def cfg(thread_id: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, **extra}}


def checkpoint_with(values: dict[str, Any]) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = values
    cp["channel_versions"] = {k: "1" for k in values}
    return cp


async def test_saver_types(saver, store_url: str) -> None:
    expected = {"sqlite": SqliteCheckpointer, "postgresql": PostgresCheckpointer, "mysql": MysqlCheckpointer}
    assert isinstance(saver, expected[dialect_of(store_url)])


# -- sync API ------------------------------------------------------------------------------------


async def test_sync_api_from_worker_thread(saver) -> None:
    cp = checkpoint_with({"messages": [HumanMessage("sync hello", id="m1")], "n": 5})

    def work() -> tuple[Any, ...]:
        new_cfg = saver.put(
            cfg("sync"), cp, {"source": "input", "step": -1}, {"messages": "1", "n": "1"}
        )
        saver.put_writes(new_cfg, [("n", 6), ("messages", [HumanMessage("w", id="m2")])], "task-a")
        tup = saver.get_tuple(cfg("sync"))
        listed = list(saver.list(cfg("sync")))
        all_listed = list(saver.list(None, limit=10))
        return new_cfg, tup, listed, all_listed

    new_cfg, tup, listed, all_listed = await asyncio.to_thread(work)
    assert new_cfg["configurable"]["checkpoint_id"] == cp["id"]
    assert tup.checkpoint["channel_values"] == {
        "messages": [HumanMessage("sync hello", id="m1")],
        "n": 5,
    }
    assert [(w[1], w[2]) for w in tup.pending_writes] == [
        ("n", 6),
        ("messages", [HumanMessage("w", id="m2")]),
    ]
    assert [t.config["configurable"]["checkpoint_id"] for t in listed] == [cp["id"]]
    assert len(all_listed) == 1

    await asyncio.to_thread(saver.delete_thread, "sync")
    assert await saver.aget_tuple(cfg("sync")) is None
    assert await asyncio.to_thread(saver.get_tuple, cfg("sync")) is None


async def test_sync_api_on_loop_thread_raises(saver) -> None:
    with pytest.raises(RuntimeError, match="async methods"):
        saver.get_tuple(cfg("x"))
    with pytest.raises(RuntimeError, match="own event loop"):
        saver.put(cfg("x"), checkpoint_with({"a": 1}), {}, {"a": "1"})
    with pytest.raises(RuntimeError):
        list(saver.list(cfg("x")))
    with pytest.raises(RuntimeError):
        saver.put_writes(cfg("x", checkpoint_id="1"), [("a", 1)], "t")
    with pytest.raises(RuntimeError):
        saver.delete_thread("x")
    # Nothing was written by the refused calls.
    assert await saver.aget_thread("x") is None


async def test_sync_graph_in_worker_thread(saver) -> None:
    graph = tool_loop(saver)

    def run() -> list[Any]:
        for turn in range(3):
            graph.invoke({"messages": [human(turn)]}, cfg("sync-graph"))
        return graph.get_state(cfg("sync-graph")).values["messages"]

    messages = await asyncio.to_thread(run)
    assert len(messages) == 12
    assert (await graph.aget_state(cfg("sync-graph"))).values["messages"] == messages


# -- no pickle, strict allowlist -----------------------------------------------------------------


async def test_serializer_refuses_pickle(saver) -> None:
    payload = pickle.dumps(Gadget(1))
    INSTANTIATED.clear()
    with pytest.raises(Exception, match="pickle"):
        saver.serde.loads_typed(("pickle", payload))
    assert INSTANTIATED == []
    # Nor does it ever produce pickle when dumping something it cannot encode natively.
    kind, _ = saver.serde.dumps_typed(Gadget(2))
    assert kind != "pickle"


async def test_pickle_row_in_database_is_not_loaded(saver, store_url: str) -> None:
    cp = checkpoint_with({"v": "value"})
    await saver.aput(cfg("pk"), cp, {"source": "loop", "step": 0}, {"v": "1"})
    # Tamper: make the stored value a serializer row typed "pickle", as an attacker with DB access could.
    payload = pickle.dumps(Gadget(3))
    INSTANTIATED.clear()
    tamper_value(store_url, "v", '"pickle"', kind="serde", blob=payload)
    assert raw_sql(store_url, "SELECT kind FROM channel_values WHERE channel = 'v'") == [("serde",)]
    with pytest.raises(Exception, match="pickle"):
        await saver.aget_tuple(cfg("pk"))
    assert INSTANTIATED == []


async def test_unlisted_class_is_not_instantiated_in_strict_mode(strict_saver, store_url: str) -> None:
    saver = strict_saver
    INSTANTIATED.clear()
    cp = checkpoint_with({"gadget": Gadget(7), "nested": {"g": [Gadget(8)]}})
    await saver.aput(
        cfg("gadget"), cp, {"source": "loop", "step": 0}, {"gadget": "1", "nested": "1"}
    )
    await saver.aput_writes(
        cfg("gadget", checkpoint_ns="", checkpoint_id=cp["id"]), [("gadget", Gadget(9))], "t"
    )
    INSTANTIATED.clear()
    saver.items.clear()
    tup = await saver.aget_tuple(cfg("gadget"))
    values = tup.checkpoint["channel_values"]
    assert not isinstance(values["gadget"], Gadget)
    assert not isinstance(values["nested"]["g"][0], Gadget)
    assert not isinstance(tup.pending_writes[0][2], Gadget)
    assert INSTANTIATED == []
    # The stored form is the serializer's tagged payload, not pickle.
    rows = stored_values(store_url, "gadget")
    assert "pickle" not in str(rows[0][2])
    assert "serde" in str(rows[0][2])


async def test_allowlisted_class_round_trips_in_strict_mode(strict_saver) -> None:
    saver = strict_saver
    allowed = saver.with_allowlist([Gadget])
    cp = checkpoint_with({"gadget": Gadget(11)})
    await allowed.aput(cfg("allowed"), cp, {"source": "loop", "step": 0}, {"gadget": "1"})
    INSTANTIATED.clear()
    tup = await allowed.aget_tuple(cfg("allowed"))
    assert tup.checkpoint["channel_values"]["gadget"] == Gadget(11)
    # The original saver is unchanged: still strict.
    saver.items.clear()
    INSTANTIATED.clear()
    strict = await saver.aget_tuple(cfg("allowed"))
    assert not isinstance(strict.checkpoint["channel_values"]["gadget"], Gadget)
    assert INSTANTIATED == []


async def test_unknown_tag_in_stored_json_is_an_error(saver, store_url: str) -> None:
    cp = checkpoint_with({"v": {"a": 1}})
    await saver.aput(cfg("tag"), cp, {"source": "loop", "step": 0}, {"v": "1"})
    b64 = base64.b64encode(pickle.dumps(Gadget(4))).decode()
    evil = json.dumps({"$t": "serde", "type": "pickle", "b64": b64})
    INSTANTIATED.clear()
    tamper_value(store_url, "v", evil)
    with pytest.raises(Exception, match="pickle"):
        await saver.aget_tuple(cfg("tag"))
    assert INSTANTIATED == []


# -- list filters, copy, prune, delete_for_runs on real graph threads ---------------------------


async def test_list_filters_and_pagination(saver) -> None:
    graph = tool_loop(saver)
    for turn in range(30):  # 120+ checkpoints: more than one page
        await graph.ainvoke({"messages": [human(turn)]}, cfg("many"))
    everything = [t async for t in saver.alist(cfg("many"))]
    ids = [t.config["configurable"]["checkpoint_id"] for t in everything]
    assert len(ids) == 150 and ids == sorted(ids, reverse=True)
    assert len({*ids}) == 150
    inputs = [t async for t in saver.alist(cfg("many"), filter={"source": "input"})]
    assert len(inputs) == 30
    step5 = [t async for t in saver.alist(cfg("many"), filter={"step": 5})]
    assert len(step5) == 1 and step5[0].metadata["step"] == 5
    before = [t async for t in saver.alist(cfg("many"), before=everything[100].config, limit=7)]
    assert [t.config["configurable"]["checkpoint_id"] for t in before] == ids[101:108]
    with pytest.raises(ValueError):
        [t async for t in saver.alist(cfg("many"), filter={"a') OR 1=1 --": 1})]


async def test_copy_thread(saver) -> None:
    graph = tool_loop(saver)
    for turn in range(3):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("src"))
    src_state = (await graph.aget_state(cfg("src"))).values
    src_history = [s.values async for s in graph.aget_state_history(cfg("src"))]
    await saver.acopy_thread("src", "dst")
    assert (await graph.aget_state(cfg("dst"))).values == src_state
    assert [s.values async for s in graph.aget_state_history(cfg("dst"))] == src_history
    await graph.ainvoke({"messages": [human(3)]}, cfg("dst"))
    assert (await graph.aget_state(cfg("src"))).values == src_state  # source untouched
    assert len((await graph.aget_state(cfg("dst"))).values["messages"]) == 16
    assert (await saver.aget_thread("dst")).message_count == 16
    assert (await saver.aget_thread("src")).message_count == 12


async def test_prune_keep_latest_and_delete(saver) -> None:
    graph = tool_loop(saver)
    for turn in range(4):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("dst"))

    await saver.aprune(["dst"], strategy="keep_latest")
    assert len([t async for t in saver.alist(cfg("dst"))]) == 1
    assert len((await graph.aget_state(cfg("dst"))).values["messages"]) == 16
    assert (await saver.aget_thread("dst")).checkpoint_count == 1
    await graph.ainvoke({"messages": [human(4)]}, cfg("dst"))  # continues after pruning
    assert len((await graph.aget_state(cfg("dst"))).values["messages"]) == 20

    with pytest.raises(ValueError):
        await saver.aprune(["dst"], strategy="shrink")
    await saver.aprune(["dst"], strategy="delete")
    assert await saver.aget_thread("dst") is None


async def test_delete_for_runs(saver) -> None:
    graph = tool_loop(saver)
    run_id = "00000000-0000-0000-0000-00000000beef"
    run_cfg = {"configurable": {"thread_id": "runs", "run_id": run_id}}
    await graph.ainvoke({"messages": [human(0)]}, cfg("runs"))
    await graph.ainvoke({"messages": [human(1)]}, run_cfg)
    before = [t async for t in saver.alist(cfg("runs"))]
    assert any(t.metadata.get("run_id") == run_id for t in before)
    await saver.adelete_for_runs([run_id])
    after = [t async for t in saver.alist(cfg("runs"))]
    assert len(after) == 5 and not any(t.metadata.get("run_id") == run_id for t in after)
    assert len((await graph.aget_state(cfg("runs"))).values["messages"]) == 4
    assert (await saver.aget_thread("runs")).checkpoint_count == 5
