"""The analyst's `/memories/` through the service: a note taken in one thread is recalled in
another, kept in LangGraph's store on the service's database (SQLite, PostgreSQL), shown by the
user's own `/store` calls, and never seen by another user."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from tests.service.conftest import Server, new_pg_schema, say, settings_for

KEYS = "alice:key-alice,bob:key-bob"
NOTE = "我关注62%品位的CFR青岛价格"
AUTH_FILE = Path(__file__).with_name("custom_auth_fixture.py")


async def ask(client: LangGraphClient, text: str, **config: object) -> str:
    """The analyst's answer to `text` in a new thread."""
    tid = (await client.threads.create())["thread_id"]
    values = await client.runs.wait(tid, "orecast", input=say(text), config=config or None)
    assert isinstance(values, dict)
    return values["messages"][-1]["content"]


async def test_a_note_is_recalled_in_another_thread(client: LangGraphClient) -> None:
    assert NOTE in await ask(client, f"记住：{NOTE}")
    assert NOTE in await ask(client, "你记得我的偏好吗？")
    found = await client.store.search_items(["memories"])
    assert [(i["namespace"], i["key"]) for i in found["items"]] == [(["memories"], "/preferences.md")]
    assert found["items"][0]["value"]["content"] == f"- {NOTE}\n"


@pytest.fixture(scope="module")
def secured(request: pytest.FixtureRequest, db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with API keys on a database of its own (the `db_url` one's kind)."""
    if db_url.startswith("sqlite"):
        url = f"sqlite:///{tmp_path_factory.mktemp('memories') / 'orecast.sqlite3'}"
    else:
        url = new_pg_schema(request.getfixturevalue("postgres_url"))
    running = Server.start(settings_for(url, api_keys=KEYS))
    yield running
    running.stop()


async def test_memories_are_the_users_own(secured: Server) -> None:
    alice, bob = secured.client("key-alice"), secured.client("key-bob")
    assert NOTE in await ask(alice, f"记住：{NOTE}")
    assert NOTE in await ask(alice, "你记得我的偏好吗？")
    assert NOTE not in await ask(bob, "你记得我的偏好吗？")
    # naming alice in the run's config changes nothing: only the server says who runs
    assert NOTE not in await ask(bob, "你记得我的偏好吗？", configurable={"user_id": "alice"})
    mine = await alice.store.search_items(["memories"])
    assert [i["key"] for i in mine["items"]] == ["/preferences.md"]
    assert NOTE in mine["items"][0]["value"]["content"]
    assert (await bob.store.search_items(["memories"]))["items"] == []


@pytest.fixture(scope="module")
def custom_auth(request: pytest.FixtureRequest, db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The analyst under LangGraph custom auth whose store handler roots each user at their identity."""
    folder = tmp_path_factory.mktemp("memories-auth")
    config = folder / "langgraph.json"
    config.write_text(json.dumps({"graphs": {}, "auth": {"path": f"{AUTH_FILE}:auth"}}))
    if db_url.startswith("sqlite"):
        url = f"sqlite:///{folder / 'orecast.sqlite3'}"
    else:
        url = new_pg_schema(request.getfixturevalue("postgres_url"))
    running = Server.start(settings_for(url, graphs={}, config_file=str(config)))
    yield running
    running.stop()


async def test_memories_under_custom_auth(custom_auth: Server) -> None:
    alice = get_client(url=custom_auth.url, headers={"Authorization": "Bearer tok-alice"})
    bob = get_client(url=custom_auth.url, headers={"Authorization": "Bearer tok-bob"})
    assert NOTE in await ask(alice, f"记住：{NOTE}")
    assert NOTE not in await ask(bob, "你记得我的偏好吗？")
    # a client's own user_id is dropped: bob's note goes to bob's memories, not to "alice"'s
    await ask(bob, "remember: I follow rebar", configurable={"user_id": "alice"})
    assert "I follow rebar" not in await ask(alice, "What do you remember about me?")
    mine = await bob.store.search_items(["memories"])  # the handler roots it at ("bob", "memories")
    assert [i["value"]["content"] for i in mine["items"]] == ["- I follow rebar\n"]
