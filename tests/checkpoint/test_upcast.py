"""State upcasting: a thread written by an older graph loads, runs on and migrates after a shape change."""

from __future__ import annotations

import asyncio
import json
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from orecast.checkpoint import (
    StateSchema,
    StateVersionError,
    open_checkpointer,
    open_checkpointer_sync,
)
from orecast.checkpoint.archive import export_thread, import_archive, read_archive
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import delta_graph


class NotesState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    # Version 1: notes are strings and the title a string. Version 2: both are {"text": …} dicts.
    notes: Annotated[list[Any], operator.add]
    title: Any


def notes_graph(checkpointer: Any, version: int) -> Any:
    """The same graph at state version 1 or 2; version 2 reads the notes and title it expects."""

    def take_note(state: NotesState) -> dict[str, Any]:
        question = state["messages"][-1].text
        earlier = state.get("notes", [])
        if version == 1:
            update: dict[str, Any] = {"notes": [question]}
            if "title" not in state:
                update["title"] = question
            answer = f"{len(earlier) + 1} notes"
        else:
            texts = [note["text"] for note in earlier]  # a TypeError on version-1 notes
            update = {"notes": [{"text": question, "len": len(question)}]}
            title = state.get("title") or {"text": question}
            if "title" not in state:
                update["title"] = title
            answer = f"{title['text']}: {len(texts) + 1} notes"
        return {**update, "messages": [AIMessage(answer)]}

    builder = StateGraph(NotesState)
    builder.add_node("take_note", take_note)
    builder.add_edge(START, "take_note")
    builder.add_edge("take_note", END)
    return builder.compile(checkpointer=checkpointer)


def notes_1_to_2(notes: list[Any]) -> list[Any]:
    return [note if isinstance(note, dict) else {"text": note, "len": len(note)} for note in notes]


def title_1_to_2(title: Any) -> Any:
    return title if isinstance(title, dict) else {"text": title}


V1 = StateSchema(version=1)
V2 = StateSchema(version=2, upcasters={(1, "notes"): notes_1_to_2, (1, "title"): title_1_to_2})


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def ask(graph: Any, thread_id: str, text: str) -> dict[str, Any]:
    return await graph.ainvoke({"messages": [HumanMessage(text)]}, cfg(thread_id))


async def write_v1_thread(saver: Any, thread_id: str = "t") -> None:
    v1 = notes_graph(saver.with_state_schema(V1), 1)
    await ask(v1, thread_id, "iron ore")
    await ask(v1, thread_id, "coking coal")


async def all_values(graph: Any, thread_id: str) -> list[dict[str, Any]]:
    return [snap.values async for snap in graph.aget_state_history(cfg(thread_id))]


async def test_old_thread_loads_and_runs_on_after_the_shape_change(store_url: str) -> None:
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver)
    async with open_checkpointer(store_url) as saver:  # a new process: nothing cached
        v2 = notes_graph(saver.with_state_schema(V2), 2)
        state = await v2.aget_state(cfg("t"))
        assert state.values["notes"] == [{"text": "iron ore", "len": 8}, {"text": "coking coal", "len": 11}]
        assert state.values["title"] == {"text": "iron ore"}
        out = await ask(v2, "t", "rebar")
        assert out["messages"][-1].text == "iron ore: 3 notes"
        assert out["notes"][-1] == {"text": "rebar", "len": 5}
        # Every checkpoint of the history reads in the new shape, the old ones too.
        for values in await all_values(v2, "t"):
            assert all(isinstance(n, dict) for n in values.get("notes", []))
            assert "title" not in values or values["title"] == {"text": "iron ore"}
    # The version-2 checkpoints still refer to the title version 1 wrote, and say so.
    stamps = raw_sql(store_url, "SELECT schema_version, COUNT(*) FROM checkpoints GROUP BY schema_version")
    assert sorted(stamps) == [(1, 6), (2, 3)]
    documents = [
        d if isinstance(d, dict) else json.loads(d)
        for (d,) in raw_sql(store_url, "SELECT checkpoint FROM checkpoints WHERE schema_version = 2")
    ]
    assert all(d["older_values"]["title"] == 1 for d in documents)
    assert {"title": 1} in [d["older_values"] for d in documents]  # the notes were written again
    async with open_checkpointer(store_url) as saver:
        v2 = notes_graph(saver.with_state_schema(V2), 2)  # the parent's versions now come from the database
        out = await ask(v2, "t", "scrap")
        assert out["messages"][-1].text == "iron ore: 4 notes"
        assert (await v2.aget_state(cfg("t"))).values["title"] == {"text": "iron ore"}


async def test_without_the_upcaster_the_old_thread_breaks(store_url: str) -> None:
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver)
        v2 = notes_graph(saver.with_state_schema(StateSchema(version=2)), 2)
        with pytest.raises(TypeError):
            await ask(v2, "t", "rebar")


async def test_upcaster_runs_once_per_value_on_a_copy(store_url: str) -> None:
    calls: list[Any] = []

    def in_place(notes: list[Any]) -> list[Any]:
        calls.append(list(notes))
        for i, note in enumerate(notes):  # edits what it gets: must be a private copy
            notes[i] = {"text": note, "len": len(note)}
        return notes

    schema = StateSchema(version=2, upcasters={(1, "notes"): in_place, (1, "title"): title_1_to_2})
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver)
        history = [t async for t in saver.with_state_schema(schema).alist(cfg("t"))]
        stored_notes = {json.dumps(t.checkpoint["channel_values"].get("notes")) for t in history}
        # One call per stored value of the channel (and per pending write to it), not one per
        # checkpoint that shares a value.
        distinct = [h for h in stored_notes if h != "null"]
        writes = [w for t in history for w in t.pending_writes if w[1] == "notes"]
        sharing = [t for t in history if "notes" in t.checkpoint["channel_values"]]
        assert len(calls) == len(distinct) + len(writes)
        assert len(distinct) < len(sharing)
        # The raw saver (no schema) still reads what was stored: nothing cached was edited.
        raw = await saver.aget_tuple(cfg("t"))
        assert raw.checkpoint["channel_values"]["notes"] == ["iron ore", "coking coal"]
        again = await saver.with_state_schema(schema).aget_tuple(cfg("t"))
        assert again.checkpoint["channel_values"]["notes"][0] == {"text": "iron ore", "len": 8}
        # Pending writes are upcast as the checkpoint's version wrote them.
        await saver.with_state_schema(V1).aput_writes(raw.config, [("notes", ["scrap"])], "task-1")
        pending = (await saver.with_state_schema(V2).aget_tuple(raw.config)).pending_writes
        assert ("task-1", "notes", [{"text": "scrap", "len": 5}]) in pending


async def test_writes_a_newer_graph_adds_to_an_old_checkpoint_keep_their_version(
    store_url: str, tmp_path: Path
) -> None:
    # Not idempotent on purpose: a version-2 value upcast again would come out wrong.
    strict = StateSchema(version=2, upcasters={(1, "notes"): lambda notes: [{"text": n, "len": len(n)} for n in notes]})
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver)
        old = (await saver.aget_tuple(cfg("t"))).config  # stamped version 1
        await saver.with_state_schema(V1).aput_writes(old, [("notes", ["scrap"])], "task-old")
        # e.g. an interrupt the version-1 graph left, resumed by the version-2 graph
        await saver.with_state_schema(strict).aput_writes(old, [("notes", [{"text": "ore", "len": 3}])], "task-new")
        expected = [
            ("task-new", "notes", [{"text": "ore", "len": 3}]),
            ("task-old", "notes", [{"text": "scrap", "len": 5}]),
        ]

        def notes_writes(tup: Any) -> list[Any]:
            return sorted(w for w in tup.pending_writes if w[0].startswith("task-"))

        assert notes_writes(await saver.with_state_schema(strict).aget_tuple(old)) == expected
        await export_thread(saver, "t", tmp_path / "w.gz")
        await saver.with_state_schema(strict).amigrate_state()
        assert notes_writes(await saver.aget_tuple(old)) == expected  # stored so now
    target = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    async with open_checkpointer(target) as saver:
        await import_archive(saver, read_archive(saver, tmp_path / "w.gz"))
        assert notes_writes(await saver.with_state_schema(strict).aget_tuple(old)) == expected


async def test_a_graph_older_than_the_thread_refuses_it(store_url: str) -> None:
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver)
        await ask(notes_graph(saver.with_state_schema(V2), 2), "t", "rebar")
        with pytest.raises(StateVersionError, match="newer than this graph's 1"):
            await saver.with_state_schema(V1).aget_tuple(cfg("t"))


async def test_migrate_state_rewrites_old_rows_once(store_url: str) -> None:
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver, "a")
        await write_v1_thread(saver, "b")
        await ask(notes_graph(saver.with_state_schema(V2), 2), "b", "rebar")
        await ask(notes_graph(saver.with_state_schema(V2), 2), "c", "fresh")  # already version 2
        v2_saver = saver.with_state_schema(V2)
        v2 = notes_graph(v2_saver, 2)
        before = {t: await all_values(v2, t) for t in "abc"}
        rows_before = raw_sql(store_url, "SELECT COUNT(*) FROM checkpoints")

        assert await v2_saver.acount_old_state_threads() == 2
        dry = await v2_saver.amigrate_state(dry_run=True)
        assert (dry.threads, dry.checkpoints, dry.values, dry.writes) == (2, 15, 6, 6)
        assert raw_sql(store_url, "SELECT COUNT(*) FROM checkpoints WHERE schema_version = 1") == [(12,)]

        ticks: list[int] = []
        done = await v2_saver.amigrate_state(batch=1, progress=ticks.append)
        assert (done.threads, done.checkpoints, done.values, done.writes, done.newer) == (2, 15, 6, 6, [])
        assert sum(ticks) == 2
        assert raw_sql(store_url, "SELECT DISTINCT schema_version FROM checkpoints") == [(2,)]
        assert raw_sql(store_url, "SELECT COUNT(*) FROM checkpoints") == rows_before
        for (document,) in raw_sql(store_url, "SELECT checkpoint FROM checkpoints"):
            assert "older_values" not in (document if isinstance(document, dict) else json.loads(document))
        # Every checkpoint loads as before, now with nothing left to upcast: the raw saver agrees.
        assert {t: await all_values(v2, t) for t in "abc"} == before
        raw = await saver.aget_tuple(cfg("a"))
        assert raw.checkpoint["channel_values"]["notes"][0] == {"text": "iron ore", "len": 8}
        # Notes are dicts now, stored once each as items of their thread; messages were not touched.
        assert sorted(raw_sql(store_url, "SELECT thread_id, COUNT(*) FROM items GROUP BY thread_id")) == [
            ("a", 4 + 2),
            ("b", 6 + 3),
            ("c", 2 + 1),
        ]
        again = await v2_saver.amigrate_state()
        assert again.threads == 0 and await v2_saver.acount_old_state_threads() == 0
        await ask(v2, "a", "pellets")  # and the thread runs on
        assert (await v2.aget_state(cfg("a"))).values["notes"][-1] == {"text": "pellets", "len": 7}


async def test_archive_keeps_state_versions(store_url: str, tmp_path: Path) -> None:
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver)
        await ask(notes_graph(saver.with_state_schema(V2), 2), "t", "rebar")
        source = await all_values(notes_graph(saver.with_state_schema(V2), 2), "t")
        # Exported through a graph's saver or not, values are archived as stored, with their versions.
        await export_thread(saver.with_state_schema(V2), "t", tmp_path / "t.gz")
    target = f"sqlite:///{tmp_path / 'target.sqlite3'}"
    async with open_checkpointer(target) as saver:
        await import_archive(saver, read_archive(saver, tmp_path / "t.gz"))
        assert await all_values(notes_graph(saver.with_state_schema(V2), 2), "t") == source
        assert (await saver.aget_tuple(cfg("t"))).checkpoint["channel_values"]["title"] == "iron ore"
    stamps = raw_sql(target, "SELECT schema_version, COUNT(*) FROM checkpoints GROUP BY schema_version")
    assert sorted(stamps) == [(1, 6), (2, 3)]


async def test_migrate_state_while_the_new_graph_runs(store_url: str) -> None:
    strict = StateSchema(
        version=2,
        upcasters={
            (1, "notes"): lambda notes: [{"text": n, "len": len(n)} for n in notes],
            (1, "title"): lambda title: {"text": title},
        },
    )
    threads = [f"m{i}" for i in range(4)]
    async with open_checkpointer(store_url) as saver:
        for t in threads:
            await write_v1_thread(saver, t)
    async with open_checkpointer(store_url) as saver, open_checkpointer(store_url) as other_process:
        v2 = notes_graph(other_process.with_state_schema(strict), 2)
        for t in threads:
            await v2.aget_state(cfg(t))  # the other process has the thread's versions cached
        migration, *_ = await asyncio.gather(
            saver.with_state_schema(strict).amigrate_state(batch=2),
            *(ask(v2, t, "rebar") for t in threads),
        )
        assert migration.threads == 4
        for t in threads:
            await ask(v2, t, "scrap")
            for values in await all_values(notes_graph(saver.with_state_schema(strict), 2), t):
                # upcast once, never twice (a second pass would nest the dicts)
                assert all(type(n["text"]) is str for n in values.get("notes", [])), values
                assert values.get("title", {"text": "iron ore"}) == {"text": "iron ore"}
            assert (await v2.aget_state(cfg(t))).values["notes"][-2:] == [
                {"text": "rebar", "len": 5},
                {"text": "scrap", "len": 5},
            ]


def test_sync_bridge_upcasts(store_url: str) -> None:
    with open_checkpointer_sync(store_url) as saver:
        v1 = notes_graph(saver.with_state_schema(V1), 1)
        v1.invoke({"messages": [HumanMessage("iron ore")]}, cfg("s"))
        v2 = notes_graph(saver.with_state_schema(V2), 2)
        assert v2.get_state(cfg("s")).values["notes"] == [{"text": "iron ore", "len": 8}]
        assert [s.values.get("title") for s in v2.get_state_history(cfg("s"))][0] == {"text": "iron ore"}


async def test_delta_channels_cannot_be_upcast(tmp_path: Path) -> None:
    async with open_checkpointer(f"sqlite:///{tmp_path / 'd.sqlite3'}") as saver:
        await delta_graph(saver).ainvoke({"messages": [HumanMessage("hi", id="h-1")]}, cfg("d"))
        schema = StateSchema(version=2, upcasters={(1, "messages"): list})
        with pytest.raises(StateVersionError, match="'messages' is a DeltaChannel"):
            await delta_graph(saver.with_state_schema(schema)).aget_state(cfg("d"))


async def test_a_view_is_the_same_saver_but_its_schema(tmp_path: Path) -> None:
    async with open_checkpointer(f"sqlite:///{tmp_path / 'v.sqlite3'}") as saver:
        view = saver.with_state_schema(V2)
        raw = view.with_state_schema(None)
        assert isinstance(view, type(saver)) and view.items is saver.items
        assert (saver.state_schema, saver.schema_version) == (None, 1)
        assert (view.state_schema, view.schema_version) == (V2, 2)
        assert (raw.state_schema, raw.schema_version) == (None, 1)
        saver.some_counter = 3  # state a saver changes as it runs is the view's too
        assert view.some_counter == 3 and raw.some_counter == 3


def test_schema_is_checked() -> None:
    with pytest.raises(ValueError, match="outside 1..1"):
        StateSchema(version=2, upcasters={(2, "notes"): notes_1_to_2})
    with pytest.raises(ValueError, match="version must be"):
        StateSchema(version=0)
    with pytest.raises(ValueError, match="is \\(version, channel\\)"):
        StateSchema(version=2, upcasters={"notes": notes_1_to_2})  # type: ignore[dict-item]
