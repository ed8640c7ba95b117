"""What `bench/api_diff.py` found different from `langgraph dev` (langgraph-api 0.16.7), pinned: the
headers, status codes and bodies a client of the Agent Server relies on."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import httpx
import pytest
from langgraph_sdk.errors import NotFoundError

from tests.service.conftest import ECHO, NESTED, Server, held, say


def contents(values: dict) -> list[str]:
    return [m["content"] for m in values["messages"]]


async def test_wait_and_join_name_the_run_in_their_headers(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        tid = (await http.post("/threads", json={})).json()["thread_id"]
        waited = await http.post(f"/threads/{tid}/runs/wait", json={"assistant_id": ECHO, "input": say("hi")})
        run_path = waited.headers["content-location"]
        assert run_path.startswith(f"/threads/{tid}/runs/") and waited.headers["location"] == f"{run_path}/join"
        joined = await http.get(f"{run_path}/join")
        assert joined.headers["location"] == f"{run_path}/join" and joined.headers["content-location"] == run_path
        assert contents(joined.json()) == ["hi", "echo: hi"]
        stateless = await http.post("/runs/wait", json={"assistant_id": ECHO, "input": say("x")})
        assert stateless.headers["location"].endswith("/join") and "/threads/" in stateless.headers["location"]


async def test_errors_carry_langgraph_api_detail(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        missing = await http.get("/threads/00000000-0000-4000-8000-000000000000")
        assert missing.status_code == 404
        body = missing.json()
        assert body["detail"] == body["message"] and body["error"] == "not_found"
        bad = await http.post("/threads/search", json={"status": "sleepy"})
        assert bad.status_code == 422 and "status" in bad.json()["detail"]
        broken = await http.post("/threads", content=b"{nope", headers={"content-type": "application/json"})
        assert broken.status_code == 422 and broken.json()["detail"].startswith("body: invalid JSON")


async def test_cancel_answers_as_langgraph_api(client, server: Server) -> None:
    tid = (await client.threads.create())["thread_id"]
    slow = await client.runs.create(tid, ECHO, input=say("slow", delay=30))
    async with httpx.AsyncClient(base_url=server.url) as http:
        path = f"/threads/{tid}/runs/{slow['run_id']}"
        cancelled = await http.post(f"{path}/cancel", params={"wait": "true"})
        assert cancelled.status_code == 200 and cancelled.headers["location"] == f"{path}/join"
        assert (await client.runs.get(tid, slow["run_id"]))["status"] == "interrupted"
        again = await http.post(f"{path}/cancel")
        assert again.status_code == 404 and "no matching runs" in again.json()["detail"]
        mixed = await http.post("/runs/cancel", json={"thread_id": tid, "status": "pending"})
        assert mixed.status_code == 422, "status cancels by status alone, as langgraph-api"
    with pytest.raises(NotFoundError):
        await client.runs.cancel_many(thread_id=tid, run_ids=[slow["run_id"]])


async def test_a_finished_run_joined_without_an_event_id_sends_nothing(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(tid, ECHO, input=say("done"), stream_mode=["values"])
    await client.runs.join(tid, run["run_id"])
    assert [p async for p in client.runs.join_stream(tid, run["run_id"])] == []
    rest = [p.event async for p in client.runs.join_stream(tid, run["run_id"], last_event_id="1")]
    assert rest == ["values", "values"], "after an id the rest is replayed"


async def test_thread_stream_follows_the_runs_of_a_thread(client, tmp_path: Path) -> None:
    tid = (await client.threads.create())["thread_id"]
    seen: list[tuple[str, object]] = []

    async def follow() -> None:
        async for part in await client.threads.join_stream(tid):
            seen.append((part.event, part.data))
            if part.event == "metadata" and part.data.get("status") == "run_done":
                return

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0.3)  # most often joined before the run starts; else it joins the running run
    hold = held(tmp_path)  # the run lasts until the stream follows it, however slow the machine
    run = await client.runs.create(tid, ECHO, input=say("watched", hold=str(hold)), stream_mode=["values", "custom"])
    for _ in range(3000):
        if seen or follower.done():
            break
        await asyncio.sleep(0.02)
    hold.unlink()
    await asyncio.wait_for(follower, 60)
    names = [name for name, _ in seen]
    assert names[0] == "metadata" and seen[0][1]["run_id"] == run["run_id"]
    assert "custom" in names and names.count("values") >= 1
    assert seen[-1] == ("metadata", {"status": "run_done", "run_id": run["run_id"]})


async def test_thread_stream_sends_every_run_however_short(client, tmp_path: Path) -> None:
    """Runs that start and end between two of the stream's looks at the table are sent too (it used to
    send one or two of five quick runs)."""
    tid = (await client.threads.create())["thread_id"]
    done: list[str] = []

    async def follow() -> None:
        async for part in await client.threads.join_stream(tid, stream_mode="lifecycle"):
            if part.event == "metadata" and part.data.get("status") == "run_done":
                done.append(part.data["run_id"])
                if len(done) == 6:
                    return

    follower = asyncio.create_task(follow())
    hold = held(tmp_path)  # a first run that lasts until the stream has sent it: the stream is open then
    first = await client.runs.create(tid, ECHO, input=say("first", hold=str(hold)))
    for _ in range(3000):
        if (await client.runs.get(tid, first["run_id"]))["status"] == "running":
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.5)  # the stream has looked at the table and follows the running run
    hold.unlink()
    await client.runs.join(tid, first["run_id"])
    quick = [(await client.runs.create(tid, ECHO, input=say(f"quick {i}")))["run_id"] for i in range(5)]
    for run_id in quick:
        await client.runs.join(tid, run_id)
    await asyncio.wait_for(follower, 60)
    assert done == [first["run_id"], *quick]


async def test_thread_stream_ends_when_the_thread_is_deleted(client) -> None:
    tid = (await client.threads.create())["thread_id"]

    async def follow() -> list[str]:
        return [part.event async for part in await client.threads.join_stream(tid)]

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0.5)
    await client.threads.delete(tid)
    assert await asyncio.wait_for(follower, 10) == []


async def test_messages_mode_sends_a_whole_message_as_complete(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    parts = [p async for p in client.runs.stream(tid, ECHO, input=say("m"), stream_mode="messages")]
    names = [p.event for p in parts]
    assert names == ["metadata", "messages/metadata", "messages/complete"]
    assert parts[-1].data[0]["content"] == "echo: m"


async def test_small_shapes(client, server: Server) -> None:
    tid = (await client.threads.create(metadata={"shape": "yes"}))["thread_id"]
    assert (await client.threads.get(tid))["values"] is None, "no checkpoint: no values"
    empty = await client.threads.get_state(tid)
    assert empty["checkpoint"] is None and empty["metadata"] is None
    assert await client.threads.search(metadata={"shape": "yes"}, select=["thread_id"]) == [{"thread_id": tid}]
    found = await client.assistants.search(graph_id=ECHO, select=["assistant_id", "name"])
    assert found and set(found[0]) == {"assistant_id", "name"}
    assert await client.store.get_item(["nothing"], "here") is None
    await client.runs.wait(tid, ECHO, input=say("x"))
    async with httpx.AsyncClient(base_url=server.url) as http:
        bad = await http.post(f"/threads/{tid}/state", json={"values": {}, "as_node": "nope"})
    assert bad.status_code == 400 and "nope" in bad.json()["detail"]
    run = (await client.runs.list(tid))[0]
    assert run["kwargs"]["stream_mode"] == ["values"] and run["kwargs"]["input"] == say("x")
    assert {"config", "context", "command", "resumable", "durability"} <= set(run["kwargs"])
    drawing = await client.assistants.get_graph(ECHO)
    assert all("id" not in (node.get("data") or {}) for node in drawing["nodes"])


async def test_searches_page_with_langgraph_api_headers(client, server: Server) -> None:
    """The SDK reads `X-Pagination-Next` as the next page's offset; searches list the newest first."""
    team = uuid.uuid4().hex
    made = [(await client.assistants.create(ECHO, metadata={"team": team}, name=f"a{i}"))["assistant_id"]
            for i in range(3)]
    first = await client.assistants.search(metadata={"team": team}, limit=2, response_format="object")
    assert [a["assistant_id"] for a in first["assistants"]] == made[:0:-1] and first["next"] == "2"
    last = await client.assistants.search(metadata={"team": team}, limit=2, offset=2, response_format="object")
    assert [a["assistant_id"] for a in last["assistants"]] == made[:1] and last["next"] is None
    by_name = await client.assistants.search(metadata={"team": team}, sort_by="name")
    assert [a["name"] for a in by_name] == ["a2", "a1", "a0"], "a sort_by without sort_order: descending"
    for _ in range(3):
        await client.threads.create(metadata={"team": team})
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = await http.post("/threads/search", json={"metadata": {"team": team}, "limit": 2})
        assert len(page.json()) == 2
        assert page.headers["x-pagination-next"] == "2" and page.headers["x-pagination-total"] == "3"
        rest = await http.post("/threads/search", json={"metadata": {"team": team}, "limit": 2, "offset": 2})
        assert len(rest.json()) == 1 and "x-pagination-next" not in rest.headers
        assert rest.headers["x-pagination-total"] == "3"
        crons = await http.post("/runs/crons/search", json={"limit": 1000})
        assert crons.headers["x-pagination-total"] == str(len(crons.json()))


async def test_runs_list_select(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, ECHO, input=say("x"))
    assert [set(r) for r in await client.runs.list(tid, select=["run_id", "status"])] == [{"run_id", "status"}]


async def test_thread_search_extract(client, server: Server) -> None:
    team = uuid.uuid4().hex
    tid = (await client.threads.create(metadata={"team": team, "deep": {"k": [1, 2]}}))["thread_id"]
    await client.runs.wait(tid, ECHO, input=say("hello"))
    found = await client.threads.search(
        metadata={"team": team}, select=["thread_id"],
        extract={"last": "values.messages[-1].content", "k": "metadata.deep.k[0]", "none": "values.nope[3]"},
    )
    assert found == [{"thread_id": tid, "extracted": {"last": "echo: hello", "k": 1, "none": None}}]
    async with httpx.AsyncClient(base_url=server.url) as http:
        for bad in ({"x": "thread_id"}, {"status": "values.a"}, {"1x": "values.a"}):
            answer = await http.post("/threads/search", json={"extract": bad})
            assert answer.status_code == 422 and "extract" in answer.json()["detail"], bad


async def test_thread_created_with_supersteps(client, server: Server) -> None:
    made = await client.threads.create(
        graph_id=ECHO,
        supersteps=[{"updates": [{"values": say("asked before"), "as_node": "echo"}]},
                    {"updates": [{"values": {"messages": [{"role": "ai", "content": "answered"}]}, "as_node": "echo"}]}],
    )
    assert [m["content"] for m in made["values"]["messages"]] == ["asked before", "answered"]
    state = await client.threads.get_state(made["thread_id"])
    assert state["next"] == [] and state["metadata"]["source"] == "update" and state["metadata"]["step"] == 1
    tid = str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=server.url) as http:
        bad = await http.post("/threads", json={
            "thread_id": tid, "metadata": {"graph_id": ECHO},
            "supersteps": [{"updates": [{"values": {}, "as_node": "nope"}]}]})
        assert bad.status_code == 400 and "nope" in bad.json()["detail"]
    with pytest.raises(NotFoundError):  # the rejected request left no thread behind
        await client.threads.get(tid)


async def test_subgraphs_by_namespace(client) -> None:
    assert set(await client.assistants.get_subgraphs(NESTED, namespace="inner")) == {"inner"}
    assert await client.assistants.get_subgraphs(NESTED, namespace="nope") == {}
    assert set(await client.assistants.get_subgraphs(NESTED, recurse=True)) == {"inner"}


async def test_threads_prune(client) -> None:
    kept, gone = [(await client.threads.create())["thread_id"] for _ in range(2)]
    for tid in (kept, gone):
        await client.runs.wait(tid, ECHO, input=say("one"))
        await client.runs.wait(tid, ECHO, input=say("two"))
    assert len(await client.threads.get_history(kept, limit=100)) > 1
    pruned = await client.threads.prune([kept, str(uuid.uuid4())], strategy="keep_latest")
    assert pruned == {"pruned_count": 1}, "an unknown thread is skipped"
    history = await client.threads.get_history(kept, limit=100)
    assert len(history) == 1 and contents(history[0]["values"])[-1] == "echo: two"
    assert await client.threads.prune([gone]) == {"pruned_count": 1}
    with pytest.raises(NotFoundError):
        await client.threads.get(gone)


async def test_debug_checkpoint_events_name_their_checkpoints(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    parts = [p async for p in client.runs.stream(tid, ECHO, input=say("d"), stream_mode="debug")]
    checkpoints = [p.data["payload"] for p in parts if p.event == "debug" and p.data["type"] == "checkpoint"]
    assert checkpoints
    for payload in checkpoints:
        assert payload["checkpoint"] == {"thread_id": tid, "checkpoint_ns": "",
                                         "checkpoint_id": payload["config"]["configurable"]["checkpoint_id"]}
    assert checkpoints[0]["parent_checkpoint"] is None
    assert checkpoints[-1]["parent_checkpoint"]["checkpoint_id"] == checkpoints[-2]["checkpoint"]["checkpoint_id"]
    head = await client.threads.get_state(tid)
    assert checkpoints[-1]["checkpoint"] == head["checkpoint"]


async def test_after_seconds_starts_the_run_later(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    started = time.monotonic()
    run = await client.runs.create(tid, ECHO, input=say("later"), after_seconds=2)
    await asyncio.sleep(0.5)
    assert (await client.threads.get(tid))["status"] == "busy"
    assert (await client.threads.get_state(tid))["values"] == {}, "the graph has not started yet"
    joined = await client.runs.join(tid, run["run_id"])
    assert time.monotonic() - started >= 2 and contents(joined) == ["later", "echo: later"]
    waiting = await client.runs.create(tid, ECHO, input=say("never"), after_seconds=60)
    await client.runs.cancel(tid, waiting["run_id"], wait=True)
    assert (await client.runs.get(tid, waiting["run_id"]))["status"] == "interrupted"
    assert contents((await client.threads.get(tid))["values"]) == ["later", "echo: later"]


async def test_metadata_filters_match_alike_for_assistants_threads_and_crons(client) -> None:
    """A metadata filter is JSON containment everywhere, as a thread search's (PostgreSQL's `@>`, which
    langgraph-api's searches use): nested objects by their keys, lists by their elements."""
    team = uuid.uuid4().hex
    meta = {"team": team, "nested": {"a": 1, "b": 2}, "tags": ["x", "y"], "on": True}
    await client.assistants.create(ECHO, metadata=meta)
    await client.threads.create(metadata=meta)
    cron = await client.crons.create(ECHO, schedule="0 0 1 1 *", metadata=meta)
    for wanted, found in (({"nested": {"a": 1}}, 1), ({"tags": ["y"]}, 1), ({"nested": {"a": 2}}, 0),
                          ({"tags": ["z"]}, 0), ({"on": 1}, 0), ({"on": True}, 1)):
        query = {"team": team, **wanted}
        counts = (await client.assistants.count(metadata=query), await client.threads.count(metadata=query),
                  len(await client.crons.search(metadata=query)))
        assert counts == (found, found, found), wanted
    await client.crons.delete(cron["cron_id"])


async def test_an_unknown_select_field_is_a_422(client, server: Server) -> None:
    tid = (await client.threads.create())["thread_id"]
    async with httpx.AsyncClient(base_url=server.url) as http:
        answers = [
            await http.post("/threads/search", json={"select": ["thread_id", "nope"]}),
            await http.post("/assistants/search", json={"select": ["nope"]}),
            await http.post("/runs/crons/search", json={"select": ["nope"]}),
            await http.get(f"/threads/{tid}/runs", params={"select": ["run_id", "nope"]}),
        ]
        assert [a.status_code for a in answers] == [422] * 4
        assert all(a.json()["detail"].startswith("select.") for a in answers), [a.json()["detail"] for a in answers]
        fine = await http.post("/threads/search", json={"ids": [tid], "select": ["thread_id", "state_updated_at"]})
        assert fine.status_code == 200 and set(fine.json()[0]) == {"thread_id", "state_updated_at"}
