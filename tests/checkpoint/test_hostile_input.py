"""Hostile or unlucky input on both backends: copies onto existing threads, ids the store cannot keep."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint.encoding import CorruptRowError
from orecast.checkpoint.ids import MAX_ID_BYTES, MAX_KEY_BYTES, UnstorableId
from tests.checkpoint.conftest import dialect_of, ph, raw_sql, tamper_value
from tests.checkpoint.graphs import human, tool_loop


def cfg(thread_id: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **extra}}


def checkpoint_with(values: dict[str, Any]) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = values
    cp["channel_versions"] = {k: "1" for k in values}
    return cp


def count_rows(url: str) -> int:
    tables = ("threads", "checkpoints", "channel_values", "items", "writes")
    return sum(raw_sql(url, f"SELECT COUNT(*) FROM {t}")[0][0] for t in tables)


# -- copy_thread ---------------------------------------------------------------------------------


async def test_copy_thread_onto_itself_is_refused_and_deletes_nothing(saver) -> None:
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("x"))
    before = (await graph.aget_state(cfg("x"))).values
    with pytest.raises(ValueError, match="onto itself"):
        await saver.acopy_thread("x", "x")
    assert (await graph.aget_state(cfg("x"))).values == before
    assert (await saver.aget_thread("x")).message_count == len(before["messages"])


async def test_copy_thread_onto_existing_thread_is_refused(saver) -> None:
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("a"))
    await graph.ainvoke({"messages": [human(1)]}, cfg("b"))
    b_before = (await graph.aget_state(cfg("b"))).values
    with pytest.raises(ValueError, match="already holds checkpoints"):
        await saver.acopy_thread("a", "b")
    assert (await graph.aget_state(cfg("b"))).values == b_before


async def test_copy_thread_onto_a_thread_row_without_checkpoints(saver) -> None:
    """A target that is only a row (a title set ahead of the first turn) holds nothing to lose."""
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("a"))
    await saver.aupdate_thread("fresh", title="set before any turn")
    await saver.acopy_thread("a", "fresh")
    assert (await graph.aget_state(cfg("fresh"))).values == (await graph.aget_state(cfg("a"))).values


# -- ids the store cannot keep -------------------------------------------------------------------

BAD_IDS = {
    "nul": "a\x00b",
    "too-long": "é" * (MAX_ID_BYTES // 2 + 1),  # 1,026 bytes of UTF-8 in 513 characters
    "surrogate": "a\ud800",
}


@pytest.mark.parametrize("field", ["thread_id", "checkpoint_ns"])
@pytest.mark.parametrize("bad", list(BAD_IDS), ids=list(BAD_IDS))
async def test_bad_ids_are_refused_before_anything_is_written(saver, store_url, field, bad) -> None:
    bad_id = BAD_IDS[bad]
    config = cfg("ok") | {"configurable": {**cfg("ok")["configurable"], field: bad_id}}
    cp = checkpoint_with({"messages": [HumanMessage("hi", id="m1")], "n": 1})
    rows = count_rows(store_url)
    with pytest.raises(ValueError, match=field):
        await saver.aput(config, cp, {"source": "input", "step": -1}, {"messages": "1", "n": "1"})
    written = {"configurable": {**config["configurable"], "checkpoint_id": cp["id"]}}
    with pytest.raises(ValueError, match=field):
        await saver.aput_writes(written, [("n", 2)], "task-1")
    with pytest.raises(ValueError, match=field):
        await saver.aget_tuple(config)
    with pytest.raises(ValueError, match=field):
        [t async for t in saver.alist(config)]
    with pytest.raises(ValueError, match=field):
        await saver.aget_delta_channel_history(config=config, channels=["messages"])
    if field == "thread_id":
        for call in (
            lambda: saver.adelete_thread(bad_id),
            lambda: saver.acopy_thread(bad_id, "ok"),
            lambda: saver.acopy_thread("ok", bad_id),
            lambda: saver.aprune([bad_id]),
            lambda: saver.aget_thread(bad_id),
            lambda: saver.aupdate_thread(bad_id, title="t"),
            lambda: saver.atool_calls(bad_id),
        ):
            with pytest.raises(ValueError, match="thread_id"):
                await call()
    assert count_rows(store_url) == rows


async def test_ids_at_the_limit_round_trip(saver) -> None:
    """The documented limit is what both backends keep and index (PostgreSQL's btree tops out ~2.7 kB)."""
    # Random text: PostgreSQL compresses index entries, so repeated characters would prove nothing.
    thread_id = secrets.token_hex(MAX_ID_BYTES // 2)
    ns = secrets.token_hex(MAX_ID_BYTES // 2)
    task_id = secrets.token_hex(MAX_KEY_BYTES // 2)
    cp = checkpoint_with({"messages": [HumanMessage("at the limit", id="m1")], "n": 1})
    cp["id"] = secrets.token_hex(MAX_KEY_BYTES // 2)
    stored = await saver.aput(
        cfg(thread_id, checkpoint_ns=ns), cp, {"source": "input", "step": -1}, {"messages": "1", "n": "1"}
    )
    await saver.aput_writes(stored, [("n", 2)], task_id)
    tup = await saver.aget_tuple(cfg(thread_id, checkpoint_ns=ns))
    assert tup.checkpoint["channel_values"]["messages"][0].content == "at the limit"
    assert tup.pending_writes == [(task_id, "n", 2)]
    with pytest.raises(ValueError, match="task_id"):
        await saver.aput_writes(stored, [("n", 3)], task_id + "k")


@pytest.mark.parametrize(("metadata", "title", "says"), [
    ({"a": "x\x00y"}, None, "metadata.a contains a NUL character"),
    ({"a": {"b": ["ok", "x\x00"]}}, None, "metadata.a.b[1] contains a NUL character"),
    ({"a\x00": 1}, None, "metadata has a key 'a\\x00' that contains a NUL character"),
    ({}, "title\x00", "metadata.title contains a NUL character"),
    ({"a": "\ud800"}, None, "metadata.a is not valid Unicode (a lone surrogate)"),
    ({"a": [1.5, float("nan")]}, None, "metadata.a[1] is nan, not a finite number"),
], ids=["value", "nested", "key", "title", "surrogate", "nan"])
async def test_thread_metadata_no_backend_can_keep_is_refused_alike(saver, store_url, metadata, title, says) -> None:
    """A NUL in a thread's metadata was stored by SQLite and MySQL and was PostgreSQL's DataError (its jsonb
    holds no NUL): every backend now refuses it before the row is touched, an existing row as a new one."""
    await saver.aupdate_thread("kept", metadata={"k": "v"})
    rows = count_rows(store_url)
    for thread_id in ("kept", "new"):
        with pytest.raises(UnstorableId, match=re.escape(says)):
            await saver.aupdate_thread(thread_id, metadata=metadata, title=title)
    assert count_rows(store_url) == rows
    assert (await saver.aget_thread("kept")).metadata == {"k": "v"}
    assert await saver.aget_thread("new") is None


async def test_a_nul_in_a_checkpoint_metadata_key_is_kept_alike(saver) -> None:
    """A checkpoint's metadata keeps a key holding a NUL on every backend (encoded, see encoding.py), and
    the thread's metadata, which such a put seeds, leaves it out: PostgreSQL's jsonb refused the seed, so
    the put (a run's step) failed there and was stored by SQLite and MySQL."""
    cp = checkpoint_with({"messages": [HumanMessage("hi", id="m1")]})
    config = cfg("t") | {"metadata": {"k\x00": "v", "user_id": "u"}}
    await saver.aput(config, cp, {"source": "input", "step": -1, "w\x00": 1}, {"messages": "1"})
    stored = (await saver.aget_tuple(cfg("t"))).metadata
    assert stored == {"source": "input", "step": -1, "w\x00": 1, "k\x00": "v", "user_id": "u"}
    assert (await saver.aget_thread("t")).metadata == {"user_id": "u"}


# -- crafted item references ---------------------------------------------------------------------


def craft(url: str, sql: str, *params: Any) -> None:
    raw_sql(url, sql.replace("?", ph(url)), params)


async def stored_turn(saver, thread_id: str = "victim") -> str:
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg(thread_id))
    return (await saver.aget_tuple(cfg(thread_id))).config["configurable"]["checkpoint_id"]


CRAFTED_RANGES = {
    "ten-million": "[[1, 10000000]]",
    "not-a-list": '{"a": 1}',
    "not-numbers": '[[1, "x"]]',
    "reversed": "[[3, 1]]",
    "zero": "[[0, 1]]",
}


@pytest.mark.parametrize("crafted", list(CRAFTED_RANGES), ids=list(CRAFTED_RANGES))
async def test_crafted_item_ranges_fail_fast_and_clearly(saver, store_url, crafted) -> None:
    head = await stored_turn(saver)
    tamper_value(store_url, "messages", CRAFTED_RANGES[crafted], thread_id="victim")
    saver.items.clear()  # as a fresh process reads it
    with pytest.raises(CorruptRowError, match=r"corrupt stored row \(thread 'victim', checkpoint '") as exc:
        await saver.aget_tuple(cfg("victim"))
    assert "channel 'messages'" in str(exc.value)
    with pytest.raises(CorruptRowError):
        [t async for t in saver.alist(cfg("victim"))]
    with pytest.raises(CorruptRowError):
        await saver.aget_tuple(cfg("victim", checkpoint_id=head))
    rows = count_rows(store_url)
    with pytest.raises(CorruptRowError, match="thread 'victim'"):
        await saver.aprune(["victim"])  # nothing is collected on the strength of a corrupt row
    assert count_rows(store_url) == rows


async def test_crafted_range_in_a_pending_write(saver, store_url) -> None:
    head = await stored_turn(saver)
    if dialect_of(store_url) == "postgresql":  # writes packed per task (migration 007)
        craft(
            store_url,
            "INSERT INTO task_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, writes)"
            " VALUES (?, '', ?, 'task', '', ?)",
            "victim",
            head,
            '[[0, "messages", "items", "[[1, 10000000]]", null]]',
        )
    else:
        craft(
            store_url,
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path, kind, value)"
            " VALUES (?, '', ?, 'task', 0, 'messages', '', 'items', ?)",
            "victim",
            head,
            "[[1, 10000000]]",
        )
    saver.items.clear()
    with pytest.raises(CorruptRowError, match=f"checkpoint '{head}', write to 'messages'"):
        await saver.aget_tuple(cfg("victim"))


async def test_a_reference_to_a_deleted_item_names_the_thread(saver, store_url) -> None:
    await stored_turn(saver)
    # PostgreSQL keeps a thread's newest items in `item_tail` (`items` is a view over it and the pages).
    table = "item_tail" if store_url.startswith("postgres") else "items"
    craft(store_url, f"DELETE FROM {table} WHERE thread_id = ? AND item_no = 2", "victim")
    saver.items.clear()
    with pytest.raises(CorruptRowError, match=r"thread 'victim'.*items \[2\] are referenced but not stored"):
        await saver.aget_tuple(cfg("victim"))


async def test_repeated_items_still_round_trip(saver) -> None:
    """A list may hold one item many times (ranges then repeat): the bounds must not refuse it."""
    same = {"task": "check stock", "done": False}
    cp = checkpoint_with({"todos": [same, dict(same), dict(same)], "messages": [HumanMessage("a", id="m1")]})
    await saver.aput(cfg("dup"), cp, {"source": "input", "step": -1}, {"todos": "1", "messages": "1"})
    saver.items.clear()
    tup = await saver.aget_tuple(cfg("dup"))
    assert tup.checkpoint["channel_values"]["todos"] == [same, same, same]
