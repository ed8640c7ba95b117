"""LangGraph custom auth (`langgraph.json` `auth.path`) through the SDK: authenticate, filters by metadata,
metadata injection, a denied action, and a store handler rewriting the namespace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError, PermissionDeniedError

from tests.service.conftest import ECHO, ECHO_FILE, Server, say, settings_for

AUTH_FILE = Path(__file__).with_name("custom_auth_fixture.py")


@pytest.fixture(scope="module")
def auth_server(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    config = tmp_path_factory.mktemp("cfg") / "langgraph.json"
    config.write_text(json.dumps({"graphs": {ECHO: f"{ECHO_FILE}:graph"}, "auth": {"path": f"{AUTH_FILE}:auth"}}))
    running = Server.start(settings_for(db_url, graphs={}, analyst=False, config_file=str(config)))
    yield running
    running.stop()


def as_user(server: Server, token: str) -> LangGraphClient:
    return get_client(url=server.url, headers={"Authorization": f"Bearer {token}"})


def test_authenticate_refuses_unknown_tokens(auth_server: Server) -> None:
    for headers in ({}, {"Authorization": "Bearer nope"}):
        answer = httpx.post(f"{auth_server.url}/threads/search", json={}, headers=headers)
        assert answer.status_code == 401 and answer.json()["message"] == "unknown token"
    assert httpx.get(f"{auth_server.url}/ok").status_code == 200


async def test_threads_and_runs_follow_the_handlers(auth_server: Server) -> None:
    alice, bob = as_user(auth_server, "tok-alice"), as_user(auth_server, "tok-bob")
    mine = await alice.threads.create(metadata={"topic": "ore", "owner": "mallory"})
    tid = mine["thread_id"]
    assert mine["metadata"] == {"topic": "ore", "owner": "alice"}, "the handler stamps the owner"
    with pytest.raises(NotFoundError):
        await bob.threads.get(tid)
    with pytest.raises(httpx.HTTPStatusError) as refused:
        await bob.runs.wait(tid, ECHO, input=say("hi"))
    assert refused.value.response.status_code == 404
    assert tid not in {t["thread_id"] for t in await bob.threads.search(limit=100)}
    assert tid in {t["thread_id"] for t in await alice.threads.search(limit=100)}

    await alice.runs.wait(tid, ECHO, input=say("hi"), metadata={"why": "test"})
    run = (await alice.runs.list(tid))[0]
    assert run["metadata"]["owner"] == "alice" and run["metadata"]["why"] == "test"
    with pytest.raises(NotFoundError):
        await bob.runs.list(tid)
    with pytest.raises(NotFoundError):
        await bob.threads.get_state(tid)

    shared = (await alice.threads.create(metadata={"shared_with": ["bob", "carol"]}))["thread_id"]
    assert (await bob.threads.get(shared))["metadata"]["owner"] == "alice", "read: owner or shared ($contains)"
    seen = {t["thread_id"] for t in await bob.threads.search(limit=100)}
    assert shared in seen and tid not in seen
    assert await bob.threads.count() == len(seen)
    with pytest.raises(NotFoundError):
        await bob.threads.update(shared, metadata={"x": 1})  # update: the owner filter only


async def test_permissions_deny_and_filters_limit_delete(auth_server: Server) -> None:
    alice, bob = as_user(auth_server, "tok-alice"), as_user(auth_server, "tok-bob")
    bobs = (await bob.threads.create())["thread_id"]
    with pytest.raises(PermissionDeniedError):
        await bob.threads.delete(bobs)  # no `write` permission: the handler returns False → 403
    assert (await bob.threads.get(bobs))["thread_id"] == bobs, "a denied delete deletes nothing"
    with pytest.raises(NotFoundError):
        await alice.threads.delete(bobs)  # allowed to delete, but only her own
    alices = (await alice.threads.create())["thread_id"]
    await alice.threads.delete(alices)
    with pytest.raises(NotFoundError):
        await alice.threads.get(alices)


async def test_assistants_and_store(auth_server: Server) -> None:
    alice, bob = as_user(auth_server, "tok-alice"), as_user(auth_server, "tok-bob")
    made = await alice.assistants.create(ECHO, name="alice's echo")
    assert made["metadata"]["owner"] == "alice"
    with pytest.raises(NotFoundError):
        await bob.assistants.get(made["assistant_id"])
    assert made["assistant_id"] in {a["assistant_id"] for a in await alice.assistants.search(limit=100)}
    assert made["assistant_id"] not in {a["assistant_id"] for a in await bob.assistants.search(limit=100)}
    tid = (await bob.threads.create())["thread_id"]
    assert (await bob.runs.wait(tid, ECHO, input=say("x")))["messages"][-1]["content"] == "echo: x", (
        "a served graph's own assistant is open to every user"
    )

    await alice.store.put_item(["notes"], "k", {"v": 1})
    item = await alice.store.get_item(["notes"], "k")
    assert item["value"] == {"v": 1} and item["namespace"] == ["alice", "notes"]
    assert await bob.store.get_item(["notes"], "k") is None
    assert (await bob.store.search_items(["notes"]))["items"] == []


def test_the_admin_permission_opens_the_operations_view(auth_server: Server) -> None:
    def stats(token: str) -> httpx.Response:
        return httpx.get(f"{auth_server.url}/ops/stats", headers={"Authorization": f"Bearer {token}"}, timeout=60)

    assert stats("tok-bob").status_code == 403 and stats("tok-alice").status_code == 403
    answer = stats("tok-carol")
    assert answer.status_code == 200 and len(answer.json()["growth"]) == 14
