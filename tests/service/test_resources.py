"""Assistants, threads, state and history through the official SDK, on SQLite and PostgreSQL."""

from __future__ import annotations

import httpx
import pytest
from langgraph_sdk.errors import ConflictError, NotFoundError

from orecast.checkpoint import open_checkpointer
from tests.checkpoint.conftest import raw_sql
from tests.service.conftest import ECHO, say


async def test_assistants_one_per_graph_and_configurations(client) -> None:
    found = await client.assistants.search(limit=100)
    by_graph = {a["graph_id"]: a for a in found if a["metadata"].get("created_by") == "system"}
    assert {"orecast", ECHO} <= set(by_graph)
    echo = await client.assistants.get(by_graph[ECHO]["assistant_id"])
    assert echo["name"] == ECHO and echo["version"] == 1
    assert await client.assistants.count(graph_id=ECHO) >= 1
    drawing = await client.assistants.get_graph(ECHO)
    assert {n["id"] for n in drawing["nodes"]} >= {"echo", "__start__"}
    schemas = await client.assistants.get_schemas(ECHO)
    assert schemas["graph_id"] == ECHO and "messages" in schemas["input_schema"]["properties"]

    mine = await client.assistants.create(ECHO, config={"tags": ["t"]}, metadata={"team": "ore"}, name="mine")
    assert mine["graph_id"] == ECHO and mine["config"] == {"tags": ["t"]}
    with pytest.raises(ConflictError):
        await client.assistants.create(ECHO, assistant_id=mine["assistant_id"])
    same = await client.assistants.create(ECHO, assistant_id=mine["assistant_id"], if_exists="do_nothing")
    assert same["assistant_id"] == mine["assistant_id"]
    updated = await client.assistants.update(mine["assistant_id"], name="renamed", metadata={"x": 1})
    assert updated["name"] == "renamed" and updated["version"] == 2
    assert updated["metadata"] == {"team": "ore", "x": 1}
    assert [a["assistant_id"] for a in await client.assistants.search(metadata={"team": "ore"})] == [
        mine["assistant_id"]
    ]
    await client.assistants.delete(mine["assistant_id"])
    with pytest.raises(NotFoundError):
        await client.assistants.get(mine["assistant_id"])
    with pytest.raises(NotFoundError):
        await client.assistants.create("no-such-graph")


async def test_a_run_uses_its_assistant_as_the_database_has_it(client, db_url) -> None:
    """A run on an existing thread takes its assistant from the process's memory, and its admission
    checks that the row did not change: a change made elsewhere (another process; here plain SQL) is
    used from the next run on, and an assistant deleted elsewhere is a 404."""
    aid = (await client.assistants.create(ECHO, config={"configurable": {"tone": "a"}}))["assistant_id"]
    tid = (await client.threads.create())["thread_id"]

    async def tone(text: str) -> str:
        run = await client.runs.create(tid, aid, input=say(text))
        await client.runs.join(tid, run["run_id"])
        return run["kwargs"]["config"]["configurable"]["tone"]

    assert [await tone("one"), await tone("two")] == ["a", "a"]
    mark = "?" if db_url.startswith("sqlite") else "%s"
    raw_sql(
        db_url,
        f"UPDATE service_assistants SET config = {mark}, version = version + 1, updated_at = {mark} "
        f"WHERE assistant_id = {mark}",
        ('{"configurable": {"tone": "b"}}', "2099-01-01T00:00:00+00:00", aid),
    )
    assert await tone("three") == "b"
    raw_sql(db_url, f"DELETE FROM service_assistants WHERE assistant_id = {mark}", (aid,))
    with pytest.raises(NotFoundError):
        await client.runs.create(tid, aid, input=say("four"))
    assert [m["content"] for m in (await client.threads.get(tid))["values"]["messages"]][-1] == "echo: three"


async def test_a_run_on_a_thread_deleted_elsewhere_is_a_404(client, db_url) -> None:
    """A run on a thread the process has seen takes the thread's row from memory; its admission checks
    that the row is still there, as read: a thread deleted by another process (here, another saver on
    the same database) is a 404, not a run that brings it back."""
    tid = (await client.threads.create())["thread_id"]
    for text in ("one", "two"):  # after its first run the thread is remembered
        await client.runs.wait(tid, ECHO, input=say(text))
    async with open_checkpointer(db_url) as elsewhere:
        await elsewhere.adelete_thread(tid)
    with pytest.raises(NotFoundError):
        await client.runs.create(tid, ECHO, input=say("three"))
    with pytest.raises(NotFoundError):
        await client.threads.get(tid)


async def test_thread_lifecycle_search_count_copy(client) -> None:
    thread = await client.threads.create(metadata={"topic": "ore", "n": 1})
    tid = thread["thread_id"]
    assert thread["status"] == "idle" and thread["values"] is None and thread["metadata"]["topic"] == "ore"
    with pytest.raises(ConflictError):
        await client.threads.create(thread_id=tid)
    again = await client.threads.create(thread_id=tid, if_exists="do_nothing")
    assert again["thread_id"] == tid

    updated = await client.threads.update(tid, metadata={"n": 2, "extra": True})
    assert updated["metadata"] == {"topic": "ore", "n": 2, "extra": True}
    await client.runs.wait(tid, ECHO, input=say("hello"))
    got = await client.threads.get(tid)
    assert [m["content"] for m in got["values"]["messages"]] == ["hello", "echo: hello"]
    assert got["status"] == "idle"

    found = await client.threads.search(metadata={"topic": "ore", "extra": True})
    assert [t["thread_id"] for t in found] == [tid]
    assert found[0]["values"]["messages"][-1]["content"] == "echo: hello"
    assert await client.threads.count(metadata={"topic": "ore", "extra": True}) == 1
    assert [t["thread_id"] for t in await client.threads.search(ids=[tid])] == [tid]
    idle = await client.threads.search(status="idle", metadata={"topic": "ore"}, limit=100)
    assert tid in {t["thread_id"] for t in idle}

    copy = await client.threads.copy(tid)
    assert copy["thread_id"] != tid
    copied = await client.threads.get_state(copy["thread_id"])
    assert [m["content"] for m in copied["values"]["messages"]] == ["hello", "echo: hello"]

    await client.threads.delete(tid)
    with pytest.raises(NotFoundError):
        await client.threads.get(tid)
    with pytest.raises(NotFoundError):
        await client.threads.get_state(tid)
    left = await client.threads.search(metadata={"topic": "ore", "extra": True})
    assert [t["thread_id"] for t in left] == [copy["thread_id"]], "the copy keeps the metadata"


async def test_state_history_update_and_fork_from_old_checkpoint(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, ECHO, input=say("one"))
    await client.runs.wait(tid, ECHO, input=say("two"))
    state = await client.threads.get_state(tid)
    assert [m["content"] for m in state["values"]["messages"]][-1] == "echo: two"
    assert state["next"] == [] and state["checkpoint"]["thread_id"] == tid

    history = await client.threads.get_history(tid, limit=100)
    assert history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
    assert len(await client.threads.get_history(tid, limit=2)) == 2
    inputs = await client.threads.get_history(tid, limit=100, metadata={"source": "input"})
    assert len(inputs) == 2 and all(h["metadata"]["source"] == "input" for h in inputs)
    before = await client.threads.get_history(tid, limit=100, before=history[1]["checkpoint"])
    assert [h["checkpoint"]["checkpoint_id"] for h in before] == [
        h["checkpoint"]["checkpoint_id"] for h in history[2:]
    ]
    # as the JS SDK types it (a config), and as a bare id: the page pages its history with these
    as_config = {"configurable": {"checkpoint_id": history[1]["checkpoint"]["checkpoint_id"]}}
    for form in (as_config, history[1]["checkpoint"]["checkpoint_id"]):
        paged = await client.threads.get_history(tid, limit=2, before=form)
        assert [h["checkpoint"]["checkpoint_id"] for h in paged] == [
            h["checkpoint"]["checkpoint_id"] for h in history[2:4]
        ], form

    # the checkpoint after the first turn: state by id, then a new branch from it
    after_one = next(
        h for h in history
        if [m["content"] for m in h["values"].get("messages", [])] == ["one", "echo: one"]
    )
    old_id = after_one["checkpoint"]["checkpoint_id"]
    old = await client.threads.get_state(tid, checkpoint_id=old_id)
    assert old["checkpoint"]["checkpoint_id"] == old_id
    by_body = await client.threads.get_state(tid, checkpoint={"checkpoint_id": old_id, "checkpoint_ns": ""})
    assert by_body["values"] == old["values"]
    forked = await client.runs.wait(tid, ECHO, input=say("three"), checkpoint_id=old_id)
    assert [m["content"] for m in forked["messages"]] == ["one", "echo: one", "three", "echo: three"]
    head = await client.threads.get_state(tid)
    assert head["parent_checkpoint"] is not None
    assert len(await client.threads.get_history(tid, limit=100)) > len(history)

    # update_state as a node, and as a fork of the old checkpoint
    written = await client.threads.update_state(
        tid, {"messages": [{"type": "ai", "content": "edited"}]}, as_node="echo"
    )
    assert (await client.threads.get_state(tid))["values"]["messages"][-1]["content"] == "edited"
    assert written["checkpoint"]["checkpoint_id"]
    fork = await client.threads.update_state(
        tid, {"messages": [{"type": "ai", "content": "alt"}]}, as_node="echo", checkpoint_id=old_id
    )
    branch = await client.threads.get_state(tid, checkpoint_id=fork["checkpoint"]["checkpoint_id"])
    assert [m["content"] for m in branch["values"]["messages"]] == ["one", "echo: one", "alt"]

    with pytest.raises(NotFoundError):
        await client.threads.get_state(tid, checkpoint_id="1f000000-0000-6000-8000-000000000000")
    with pytest.raises(httpx.HTTPStatusError) as missing:  # runs.wait raises httpx's own error
        await client.runs.wait(tid, ECHO, input=say("x"), checkpoint_id="1f000000-0000-6000-8000-000000000000")
    assert missing.value.response.status_code == 404
