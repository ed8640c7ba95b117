"""Store items through the SDK, the simple chat endpoints, /ok /health /info /docs."""

from __future__ import annotations

import httpx


async def test_store_items_search_namespaces(client) -> None:
    await client.store.put_item(["notes", "alice"], "k1", {"text": "iron ore", "n": 1})
    await client.store.put_item(["notes", "alice"], "k2", {"text": "coal", "n": 2})
    await client.store.put_item(["notes", "bob"], "k1", {"text": "steel", "n": 3})
    item = await client.store.get_item(["notes", "alice"], "k1")
    assert item["namespace"] == ["notes", "alice"] and item["value"] == {"text": "iron ore", "n": 1}
    found = await client.store.search_items(["notes"], filter={"n": 2})
    assert [(i["namespace"], i["key"]) for i in found["items"]] == [(["notes", "alice"], "k2")]
    assert len((await client.store.search_items(["notes"], limit=10))["items"]) == 3
    spaces = await client.store.list_namespaces(prefix=["notes"])
    assert sorted(spaces["namespaces"]) == [["notes", "alice"], ["notes", "bob"]]
    assert (await client.store.list_namespaces(prefix=["notes"], max_depth=1))["namespaces"] == [["notes"]]
    await client.store.delete_item(["notes", "alice"], "k1")
    assert await client.store.get_item(["notes", "alice"], "k1") is None, "a missing item is null, as langgraph-api"


async def test_chat_endpoints_keep_the_thread(server) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        first = await http.post("/agent/api/chat", json={"message": "铁矿石现在多少钱？"})
        assert first.status_code == 200, first.text
        body = first.json()
        assert body["thread_id"] and "US$" in body["reply"] or "美元" in body["reply"]
        again = await http.post(
            "/agent/api/chat", json={"message": "螺纹钢现在多少钱？", "thread_id": body["thread_id"]}
        )
        assert again.json()["thread_id"] == body["thread_id"]
        state = (await http.get(f"/threads/{body['thread_id']}/state")).json()
        humans = [m["content"] for m in state["values"]["messages"] if m["type"] == "human"]
        assert humans == ["铁矿石现在多少钱？", "螺纹钢现在多少钱？"]

        events: list[tuple[str, str]] = []
        async with http.stream("POST", "/agent/api/chat/stream", json={"message": "铁矿石现在多少钱？"}) as res:
            assert res.headers["content-type"].startswith("text/event-stream")
            event = None
            async for line in res.aiter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event:
                    events.append((event, line[6:]))
        kinds = [e for e, _ in events]
        assert kinds.count("token") > 3 and kinds[-1] == "done"
        import json

        done = json.loads(events[-1][1])
        assert done["thread_id"] and done["reply"]
        assert "".join(json.loads(d)["text"] for e, d in events if e == "token").strip() in done["reply"]


async def test_system_endpoints(server) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.get("/ok")).json() == {"ok": True}
        assert (await http.get("/health")).json() == {"status": "ok", "database": "ok"}
        info = (await http.get("/info")).json()
        assert "orecast" in info["graphs"] and info["flags"]["crons"] is True
        assert (await http.get("/docs")).status_code == 200
        spec = (await http.get("/openapi.json")).json()
        assert "/threads/{thread_id}/runs/stream" in spec["paths"]
