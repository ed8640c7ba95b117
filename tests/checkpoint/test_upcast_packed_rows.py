"""State upcasting where values live in their checkpoint's row (PostgreSQL 007, MySQL 008, SQLite's
`inline_values`): an inherited
value an older schema wrote is copied as stored, so it is upcast exactly once on every read, and
`amigrate_state` rewrites the copies kept in checkpoint documents too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import copy_checkpoint, empty_checkpoint

from orecast.checkpoint import StateSchema, open_checkpointer
from orecast.checkpoint.archive import export_thread, import_archive, read_archive
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.test_upcast import all_values, ask, cfg, notes_graph, write_v1_thread

# Not idempotent on purpose: a value upcast twice comes out nested ({"text": {"text": …}}).
STRICT = StateSchema(
    version=2,
    upcasters={
        (1, "notes"): lambda notes: [{"text": n, "len": len(n)} for n in notes],
        (1, "title"): lambda title: {"text": title},
    },
)


def documents(url: str, thread_id: str) -> dict[str, dict[str, Any]]:
    mark = "?" if url.startswith("sqlite") else "%s"
    rows = raw_sql(url, f"SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = {mark}", (thread_id,))
    return {cid: d if isinstance(d, dict) else json.loads(d) for cid, d in rows}


@pytest.mark.parametrize("cold", [False, True], ids=["cached", "cold"])
async def test_an_inherited_older_value_is_kept_as_stored(store_url: str, cold: bool) -> None:
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver)
        v2 = saver.with_state_schema(STRICT)
        head = await v2.aget_tuple(cfg("t"))
        assert head.checkpoint["channel_values"]["title"] == {"text": "iron ore"}  # upcast in memory
        if cold:
            # Nothing cached of how the parent stores its values: the put reads them from its row.
            saver.items.clear()
        child = copy_checkpoint(head.checkpoint)
        child["id"] = empty_checkpoint()["id"]
        config = await v2.aput(head.config, child, {"source": "update", "step": 9, "parents": {}}, {})
        for fresh in (False, True):
            if fresh:
                saver.items.clear()
            values = (await v2.aget_tuple(config)).checkpoint["channel_values"]
            assert values["title"] == {"text": "iron ore"}
            assert values["notes"] == [{"text": "iron ore", "len": 8}, {"text": "coking coal", "len": 11}]
        # A graph continues from it, and every checkpoint reads upcast once.
        await ask(notes_graph(v2, 2), "t", "rebar")
        for values in await all_values(notes_graph(v2, 2), "t"):
            assert values.get("title", {"text": "iron ore"}) == {"text": "iron ore"}
            assert all(isinstance(n["text"], str) for n in values.get("notes", []))
    stored = documents(store_url, "t")
    new, parent = stored[config["configurable"]["checkpoint_id"]], stored[head.config["configurable"]["checkpoint_id"]]
    assert new["older_values"] == {channel: 1 for channel in new["channel_versions"]}
    # The copy in the new row is the parent's own, in the shape version 1 wrote.
    assert new["vals"] == parent["vals"] and new["vals"]["title"] is not None


async def test_migrate_state_rewrites_values_kept_in_checkpoint_rows(store_url: str) -> None:
    big = "x" * 300
    grows = StateSchema(
        version=2,
        upcasters={
            (1, "notes"): lambda notes: [{"text": n, "len": len(n)} for n in notes],
            # upcast, the title no longer fits in a checkpoint's row
            (1, "title"): lambda title: {"text": title, "pad": big},
        },
    )
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver)
        await ask(notes_graph(saver.with_state_schema(grows), 2), "t", "rebar")
        titles = {json.dumps(d["vals"].get("title")) for d in documents(store_url, "t").values() if "title" in d["vals"]}
        assert titles and "null" not in titles  # the old title: small, in the rows
        before = await all_values(notes_graph(saver.with_state_schema(grows), 2), "t")

        done = await saver.with_state_schema(grows).amigrate_state()
        assert (done.threads, done.values) == (1, 3)  # the two notes version 1 wrote, its title
        for document in documents(store_url, "t").values():
            assert "older_values" not in document
            if "title" in document["vals"]:
                assert document["vals"]["title"] is None  # now a row of its own
        assert raw_sql(store_url, "SELECT count(*) FROM channel_values WHERE channel = 'title'") == [(1,)]
        # Read as stored, with no schema: nothing old is left anywhere.
        saver.items.clear()
        for values in await all_values(notes_graph(saver, 2), "t"):
            assert values.get("title", {"text": "iron ore", "pad": big}) == {"text": "iron ore", "pad": big}
            assert all(isinstance(n, dict) and isinstance(n["text"], str) for n in values.get("notes", []))
        assert await all_values(notes_graph(saver.with_state_schema(grows), 2), "t") == before
        await saver.aprune(["t"], strategy="keep_latest")  # the moved title stays referenced
        await ask(notes_graph(saver.with_state_schema(grows), 2), "t", "scrap")
        state = await notes_graph(saver.with_state_schema(grows), 2).aget_state(cfg("t"))
        assert state.values["title"] == {"text": "iron ore", "pad": big}
        assert [n["text"] for n in state.values["notes"]] == ["iron ore", "coking coal", "rebar", "scrap"]


async def test_archive_and_copy_of_a_mixed_thread_upcast_once(store_url: str, tmp_path: Path) -> None:
    """A thread written at versions 1 and 2, imported and copied within the same store (on PostgreSQL
    and MySQL and SQLite its values in the checkpoints' rows): every copy reads as the original, each value upcast once."""
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver)
        await ask(notes_graph(saver.with_state_schema(STRICT), 2), "t", "rebar")
        source = await all_values(notes_graph(saver.with_state_schema(STRICT), 2), "t")
        await export_thread(saver, "t", tmp_path / "t.gz")
        await import_archive(saver, read_archive(saver, tmp_path / "t.gz"), thread_id="imported")
        await saver.acopy_thread("t", "copied")
        saver.items.clear()
        for thread in ("imported", "copied"):
            assert await all_values(notes_graph(saver.with_state_schema(STRICT), 2), thread) == source
            await ask(notes_graph(saver.with_state_schema(STRICT), 2), thread, "scrap")
            state = await notes_graph(saver.with_state_schema(STRICT), 2).aget_state(cfg(thread))
            assert state.values["title"] == {"text": "iron ore"}
            assert [n["text"] for n in state.values["notes"]] == ["iron ore", "coking coal", "rebar", "scrap"]
    # Every copy keeps a title in the shape of the version that wrote it, as its label says.
    ts = (
        "checkpoint->>'ts'" if store_url.startswith("postgres")
        else "json_extract(checkpoint, '$.ts')" if store_url.startswith("sqlite")
        else "JSON_UNQUOTE(JSON_EXTRACT(checkpoint, '$.ts'))"
    )
    stamps = {
        thread: {ts: version for thread_id, ts, version in raw_sql(
            store_url, f"SELECT thread_id, {ts}, schema_version FROM checkpoints"
        ) if thread_id == thread}
        for thread in ("t", "imported", "copied")
    }
    for thread in ("t", "imported", "copied"):
        for document in documents(store_url, thread).values():
            entry = document["vals"].get("title")
            if entry is None:
                continue
            new_shape = "text" in json.loads(entry[1])
            written_at = document.get("older_values", {}).get("title", stamps[thread][document["ts"]])
            assert new_shape == (written_at == 2), (thread, document)


@pytest.mark.parametrize("store_url", ["postgres"], indirect=True)
async def test_a_write_version_is_not_noted_over_a_migrated_document(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL's put_writes has no transaction: a migrate-state that commits between the read of
    the checkpoint's document and the noting of a newer task's version is not undone by it."""
    async with open_checkpointer(store_url) as saver:
        await write_v1_thread(saver)
        old = (await saver.aget_tuple(cfg("t"))).config
        v2 = saver.with_state_schema(STRICT)
        codec, loads = saver.plain_codec, saver.plain_codec.loads
        raced: list[bool] = []

        def loads_then_migrate(text: Any) -> Any:
            document = loads(text)
            if not raced and isinstance(document, dict) and "channel_versions" in document:
                raced.append(True)  # as a migrate-state committing right after the note's read
                raw_sql(store_url, "UPDATE checkpoints SET schema_version = 2 WHERE thread_id = 't'")
                raw_sql(store_url, "UPDATE threads SET incarnation = 'migrated' WHERE thread_id = 't'")
            return document

        monkeypatch.setattr(codec, "loads", loads_then_migrate)
        await v2.aput_writes(old, [("notes", [{"text": "ore", "len": 3}])], "task-new")
        monkeypatch.undo()
        assert raced
        # Not written back at version 1: the write started again and found the checkpoint at 2.
        assert raw_sql(store_url, "SELECT DISTINCT schema_version FROM checkpoints WHERE thread_id = 't'") == [(2,)]
        pending = (await v2.aget_tuple(old)).pending_writes
        assert ("task-new", "notes", [{"text": "ore", "len": 3}]) in pending


async def test_an_inherited_older_large_value_is_read_from_its_row(store_url: str) -> None:
    long = "iron ore " * 40  # a title too large for a checkpoint's row (PostgreSQL and MySQL keep it in a row)
    async with open_checkpointer(store_url) as saver:
        v1 = notes_graph(saver.with_state_schema(StateSchema(version=1)), 1)
        await ask(v1, "t", long)
        v2 = saver.with_state_schema(STRICT)
        head = await v2.aget_tuple(cfg("t"))
        saver.items.clear()  # the put copies from the parent's row: the title is named there with null
        config = head.config
        for step in range(2):  # the second put copies from what the first one cached
            child = copy_checkpoint(head.checkpoint)
            child["id"] = empty_checkpoint()["id"]
            config = await v2.aput(config, child, {"source": "update", "step": 9 + step, "parents": {}}, {})
        saver.items.clear()
        values = (await v2.aget_tuple(config)).checkpoint["channel_values"]
        assert values["title"] == {"text": long}
        assert values["notes"] == [{"text": long, "len": len(long)}]
    assert documents(store_url, "t")[config["configurable"]["checkpoint_id"]]["vals"]["title"] is None
