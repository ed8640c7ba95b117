"""Assistant versions (`assistants.get_versions`, `set_latest`, an update adding a version) and
`runs.create_batch`, through the SDK, as langgraph-api answers them."""

from __future__ import annotations

import uuid

import httpx
import pytest
from langgraph_sdk.errors import NotFoundError

from orecast.service.assistants import Assistants
from orecast.service.auth import Principal
from orecast.service.db import open_db
from orecast.service.graphs import GraphRegistry, ServedGraph
from tests.checkpoint.conftest import raw_sql
from tests.service.conftest import ECHO, Server, say
from tests.service.echo_graph import graph

MARK = {"sqlit": "?", "postg": "%s", "mysql": "%s"}  # each driver's placeholder


def last_reply(values: dict) -> str:
    return values["messages"][-1]["content"]


async def test_each_update_is_a_version_and_set_latest_brings_one_back(client) -> None:
    created = await client.assistants.create(ECHO, name="loud", context={"prefix": "v1", "shout": True}, metadata={"m": 1})
    aid = created["assistant_id"]
    assert created["version"] == 1 and created["config"] == {"configurable": {"prefix": "v1", "shout": True}}
    second = await client.assistants.update(aid, name="quiet", config={"configurable": {"shout": False}}, metadata={"n": 2})
    third = await client.assistants.update(aid, context={"prefix": "v3"})
    assert (second["version"], third["version"]) == (2, 3)
    assert second["context"] == {"shout": False} and third["config"] == {"configurable": {"prefix": "v3"}}

    versions = await client.assistants.get_versions(aid)
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert set(versions[0]) == {"assistant_id", "version", "graph_id", "config", "context", "metadata",
                                "created_at", "name", "description"}
    assert [v["name"] for v in versions] == ["quiet", "quiet", "loud"]
    assert versions[2]["metadata"] == {"m": 1} and versions[1]["metadata"] == {"m": 1, "n": 2}
    assert [v["version"] for v in await client.assistants.get_versions(aid, limit=1, offset=1)] == [2]
    assert [v["version"] for v in await client.assistants.get_versions(aid, metadata={"n": 2})] == [3, 2]

    tid = (await client.threads.create())["thread_id"]
    assert last_reply(await client.runs.wait(tid, aid, input=say("hi"))) == "v3: hi"
    back = await client.assistants.set_latest(aid, 1)
    assert back == await client.assistants.get(aid)
    assert (back["version"], back["name"], back["metadata"]) == (1, "loud", {"m": 1})
    assert back["config"] == {"configurable": {"prefix": "v1", "shout": True}}
    assert back["context"] == {"prefix": "v1", "shout": True}
    assert back["updated_at"] > third["updated_at"]
    assert last_reply(await client.runs.wait(tid, aid, input=say("hi"))) == "v1: HI", "a run uses version 1 again"
    assert [v["version"] for v in await client.assistants.get_versions(aid)] == [3, 2, 1], "no version is lost"

    fourth = await client.assistants.update(aid, name="after")
    assert fourth["version"] == 4 and fourth["context"] == back["context"], "numbered after the highest"


async def test_context_and_configurable_are_kept_in_step(client, server: Server) -> None:
    """As langgraph-api: either fills the other, an update with one replaces both, both at once is a 400."""
    made = await client.assistants.create(ECHO, config={"configurable": {"x": 1}, "tags": ["t"]})
    assert made["context"] == {"x": 1}
    updated = await client.assistants.update(made["assistant_id"], context={"y": 2})
    assert updated["config"] == {"configurable": {"y": 2}} and updated["context"] == {"y": 2}
    kept = await client.assistants.update(made["assistant_id"], config={}, name="renamed")
    assert kept["config"] == updated["config"] and kept["context"] == {"y": 2}
    async with httpx.AsyncClient(base_url=server.url) as http:
        count = (await http.post("/assistants/count", json={})).json()
        both = {"graph_id": ECHO, "config": {"configurable": {"x": 1}}, "context": {"y": 2}}
        refused = await http.post("/assistants", json=both)
        assert refused.status_code == 400 and "either context or config.configurable" in refused.json()["detail"]
        assert (await http.post("/assistants/count", json={})).json() == count
        patched = await http.patch(f"/assistants/{made['assistant_id']}", json=both)
        assert patched.status_code == 400 and (await client.assistants.get(made["assistant_id"]))["version"] == 3


async def test_version_errors_and_delete(client, server: Server) -> None:
    aid = (await client.assistants.create(ECHO, name="v"))["assistant_id"]
    [system] = await client.assistants.get_versions(ECHO)
    assert system["version"] == 1 and system["metadata"] == {"created_by": "system"}
    with pytest.raises(NotFoundError):
        await client.assistants.set_latest(aid, 2)
    with pytest.raises(NotFoundError):
        await client.assistants.get_versions(str(uuid.uuid4()))
    with pytest.raises(NotFoundError):
        await client.assistants.set_latest(str(uuid.uuid4()), 1)
    with pytest.raises(NotFoundError):  # as langgraph-api: no version left by the filter is a 404
        await client.assistants.get_versions(aid, metadata={"nope": 1})
    async with httpx.AsyncClient(base_url=server.url) as http:
        for path, body in (("latest", {"version": "x"}), ("latest", {}), ("versions", {"limit": 0})):
            bad = await http.post(f"/assistants/{aid}/{path}", json=body)
            assert bad.status_code == 422, (path, body, bad.text)
    assert (await client.assistants.get(aid))["version"] == 1
    await client.assistants.delete(aid)
    with pytest.raises(NotFoundError):
        await client.assistants.get_versions(aid)
    again = await client.assistants.create(ECHO, assistant_id=aid, name="again")
    assert [v["name"] for v in await client.assistants.get_versions(again["assistant_id"])] == ["again"]


async def test_a_batch_starts_one_stateless_run_per_item(client, server: Server) -> None:
    marker = uuid.uuid4().hex
    runs = await client.runs.create_batch([
        {"assistant_id": ECHO, "input": say("one"), "on_completion": "keep", "metadata": {"batch": marker}},
        {"assistant_id": ECHO, "input": say("two"), "on_completion": "keep", "metadata": {"batch": marker}},
    ])
    assert len(runs) == 2 and len({r["thread_id"] for r in runs}) == 2
    for run, text in zip(runs, ("one", "two"), strict=True):
        assert run["metadata"] == {"batch": marker}
        assert last_reply(await client.runs.join(run["thread_id"], run["run_id"])) == f"echo: {text}"
    async with httpx.AsyncClient(base_url=server.url) as http:
        before = (await http.post("/threads/count", json={})).json()
        unknown = [{"assistant_id": ECHO, "input": say("x"), "on_completion": "keep"},
                   {"assistant_id": str(uuid.uuid4()), "input": say("y")}]
        assert (await http.post("/runs/batch", json=unknown)).status_code == 404
        assert (await http.post("/runs/batch", json=[])).status_code == 422
        assert (await http.post("/runs/batch", json={"assistant_id": ECHO})).status_code == 422
        assert (await http.post("/threads/count", json={})).json() == before, "a refused batch started nothing"


async def test_assistants_stored_before_versions_get_their_current_one(store_url: str) -> None:
    """Migration 4 makes each assistant already stored its current version, so `get_versions` lists it
    and the next update is numbered after it."""
    async with open_db(store_url):  # every migration, then back to a store of version 3 with an assistant
        pass
    raw_sql(store_url, "DROP TABLE service_assistant_versions")
    # and without migration 5 (run attempts)
    on_mysql = store_url.startswith("mysql")
    raw_sql(store_url, "DROP INDEX service_runs_active" + (" ON service_runs" if on_mysql else ""))
    raw_sql(store_url, "ALTER TABLE service_runs DROP COLUMN attempt")
    raw_sql(store_url, "ALTER TABLE service_runs DROP COLUMN driver")  # and migration 7's column
    raw_sql(store_url, "DROP INDEX service_runs_waiting" + (" ON service_runs" if on_mysql else ""))  # and 8's
    raw_sql(store_url, "ALTER TABLE service_runs DROP COLUMN delay_seconds")
    raw_sql(store_url, "ALTER TABLE service_runs DROP COLUMN lease")  # and 9's
    raw_sql(store_url, "DELETE FROM service_migrations WHERE version >= 4")
    now = "2026-01-02T03:04:05.000000+00:00"
    raw_sql(store_url, f"INSERT INTO service_assistants (assistant_id, graph_id, name, description, config, context, "
            f"metadata, version, owner, created_at, updated_at) VALUES ({', '.join([MARK[store_url[:5]]] * 11)})",
            ("a1", ECHO, "old", None, '{"configurable": {"shout": true}}', "{}", '{"k": 1}', 7, None, now, now))
    async with open_db(store_url) as db:
        assistants = Assistants(db, GraphRegistry({ECHO: ServedGraph(ECHO, graph, "echo")}))
        [version] = await assistants.versions("a1", {}, Principal(None))
        assert (version["version"], version["name"], version["metadata"]) == (7, "old", {"k": 1})
        assert version["config"] == {"configurable": {"shout": True}} and version["created_at"] == now
        assert (await assistants.update("a1", {"name": "new"}, Principal(None)))["version"] == 8
