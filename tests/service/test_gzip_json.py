"""A thread's history, which repeats every checkpoint's messages, goes gzipped to a client that takes
gzip once it is big (the page reads 500 checkpoints after every answer); small ones, and any to a
client that does not take gzip, go as they were. On SQLite and PostgreSQL."""

from __future__ import annotations

import httpx

from tests.service.conftest import ECHO, Server


async def a_thread(client, updates: int) -> str:
    tid = (await client.threads.create(metadata={"graph_id": ECHO}))["thread_id"]
    for i in range(updates):
        said = [
            {"type": "human", "content": f"{i}.{j} " + "铁矿石" * 300, "id": f"m{i}.{j}"}
            for j in range(5)
        ]
        await client.threads.update_state(tid, {"messages": said}, as_node="echo")
    return tid


async def test_a_big_history_is_gzipped_for_a_client_that_takes_it(client, server: Server) -> None:
    tid = await a_thread(client, updates=12)
    url = f"{server.url}/threads/{tid}/history"
    async with httpx.AsyncClient() as http:
        gzipped = await http.post(url, json={"limit": 500}, headers={"Accept-Encoding": "gzip"})
        plain = await http.post(url, json={"limit": 500}, headers={"Accept-Encoding": "identity"})
        by_get = await http.get(url, params={"limit": 500}, headers={"Accept-Encoding": "gzip"})
    assert gzipped.status_code == plain.status_code == 200
    assert gzipped.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    assert gzipped.headers["vary"] == plain.headers["vary"] == "Accept-Encoding"
    assert gzipped.json() == plain.json() == by_get.json()
    assert len(gzipped.json()) == 12  # a checkpoint per update
    assert by_get.headers["content-encoding"] == "gzip"
    # measured: 1.2 MB as JSON, 31 kB gzipped
    assert int(gzipped.headers["content-length"]) * 10 < len(plain.content)


async def test_a_small_history_goes_as_it_is(client, server: Server) -> None:
    tid = await a_thread(client, updates=1)
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{server.url}/threads/{tid}/history", json={}, headers={"Accept-Encoding": "gzip"}
        )
    assert answer.status_code == 200 and "content-encoding" not in answer.headers
    assert len(answer.json()) == 1
