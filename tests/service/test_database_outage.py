"""The service while its database is down and after it is back: 503s with a reason at once, then every
call works again and nothing stored before is lost (PostgreSQL and MariaDB, each a throwaway server of
the test's own that it kills and starts again)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.checkpoint import throwaway_mysql
from tests.checkpoint.throwaway_mysql import ThrowawayMariadb
from tests.checkpoint.throwaway_pg import ThrowawayServer
from tests.service.conftest import ECHO, Server, say, settings_for

pytestmark = pytest.mark.slow


@pytest.fixture(params=["postgres", "mysql"])
def database(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "mysql" and not throwaway_mysql.available():
        pytest.skip("no mariadbd here to start a throwaway MariaDB")
    server = ThrowawayServer() if request.param == "postgres" else ThrowawayMariadb()
    try:
        server.start()
        yield server
    finally:
        server.remove()


def contents(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages]


async def test_an_outage_is_a_503_at_once_and_then_forgotten(database: Any) -> None:
    service = Server.start(settings_for(database.url))
    try:
        client = service.client()
        thread_id = (await client.threads.create(metadata={"kept": True}))["thread_id"]
        await client.runs.wait(thread_id, ECHO, input=say("before"))
        database.stop()

        async with httpx.AsyncClient(base_url=service.url, timeout=60) as http:
            down = {
                "thread": lambda: http.get(f"/threads/{thread_id}"),
                "state": lambda: http.get(f"/threads/{thread_id}/state"),
                "run": lambda: http.post(f"/threads/{thread_id}/runs/wait",
                                         json={"assistant_id": ECHO, "input": say("while down")}),
                "chat": lambda: http.post("/agent/api/chat", json={"message": "while down"}),
            }
            for name, call in down.items():
                started = time.monotonic()
                response = await call()
                assert response.status_code == 503, (name, response.text)
                body = response.json()
                assert body["error"] == "database_unavailable", (name, body)
                assert body["detail"].startswith("database unavailable:"), (name, body)
                assert response.headers["retry-after"] == "5"
                assert time.monotonic() - started < 6, name
            health = await http.get("/health")
            assert health.status_code == 503 and health.json()["detail"].startswith("database unavailable:")

            database.start()
            # More calls than either pool holds connections: not one may fail on a connection the
            # restart left dead.
            for _ in range(8):
                assert (await http.get(f"/threads/{thread_id}")).status_code == 200
            assert (await http.get("/health")).json() == {"status": "ok", "database": "ok"}

        thread = await client.threads.get(thread_id)
        assert thread["metadata"]["kept"] is True and thread["status"] == "idle"
        done = await client.runs.wait(thread_id, ECHO, input=say("after"))
        assert contents(done["messages"]) == ["before", "echo: before", "after", "echo: after"]
    finally:
        service.stop()
