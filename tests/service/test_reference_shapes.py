"""What `bench/api_diff.py` found different from `langgraph dev` (langgraph-api 0.16.7), pinned: the
headers, status codes and bodies a client of the Agent Server relies on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from langgraph_sdk.errors import NotFoundError

from tests.service.conftest import ECHO, Server, held, say


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
