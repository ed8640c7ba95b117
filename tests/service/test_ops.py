"""`/ops/access` and `/ops/stats`: admins only under API keys (401 without a key, 403 for a user),
the local user without auth; the figures after a real conversation of the offline analyst, on SQLite
and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from tests.service.conftest import Server, say, settings_for

KEYS = "alice:key-alice,root:key-root:admin"
STATS_KEYS = {"at", "dialect", "threads", "messages", "active_threads", "turns", "tools", "tables", "bytes",
              "notes", "growth", "sweep"}


@pytest.fixture(scope="module")
def secured(db_url: str) -> Iterator[Server]:
    running = Server.start(settings_for(db_url, api_keys=KEYS))
    yield running
    running.stop()


def get(server: Server, path: str, key: str | None = None) -> httpx.Response:
    headers = {"x-api-key": key} if key else {}
    return httpx.get(server.url + path, headers=headers, timeout=60)


def test_only_admins_see_the_figures(secured: Server) -> None:
    for key in (None, "wrong"):
        res = get(secured, "/ops/stats", key)
        assert res.status_code == 401 and res.json()["error"] == "unauthorized"
    res = get(secured, "/ops/stats", "key-alice")
    assert res.status_code == 403
    assert res.json() == {"detail": "this needs an admin key", "error": "forbidden",
                          "message": "this needs an admin key", "details": None}
    assert get(secured, "/ops/access", "key-alice").json() == {"user_id": "alice", "admin": False}
    assert get(secured, "/ops/access", "key-root").json() == {"user_id": "root", "admin": True}
    assert get(secured, "/ops/access").status_code == 401
    assert get(secured, "/ops/stats", "key-root").status_code == 200


async def test_figures_after_a_conversation(secured: Server, db_url: str) -> None:
    alice = secured.client("key-alice")
    tid = (await alice.threads.create())["thread_id"]
    await alice.runs.wait(tid, "orecast", input=say("铁矿石现在多少钱？"))
    await alice.runs.wait(tid, "orecast", input=say("Chart iron ore since 2020"))

    res = get(secured, "/ops/stats", "key-root")
    assert res.status_code == 200
    stats = res.json()
    assert STATS_KEYS <= set(stats)
    assert stats["dialect"] == ("sqlite" if db_url.startswith("sqlite") else "postgresql")
    assert datetime.fromisoformat(stats["at"]).tzinfo is not None
    assert stats["threads"] >= 1 and stats["active_threads"]["24h"] >= 1
    assert stats["turns"]["24h"] >= 2
    tools = {t["tool"]: t for t in stats["tools"]}
    assert tools, "the analyst called tools"
    for tool in tools.values():
        assert tool["calls"] >= 1 and 0 <= tool["error_rate"] <= 1
        for field in ("p50_ms", "p95_ms"):  # the timed audit adds these; null until a call is timed
            assert tool.get(field) is None or tool[field] >= 0
    assert isinstance(stats.get("recent_failures", []), list)
    assert stats["tables"]["checkpoints"]["rows"] > 0
    growth = stats["growth"]
    assert len(growth) == 14 and growth[-1]["day"] == datetime.now(UTC).date().isoformat()
    assert growth[-1]["checkpoints"] > 0 and growth[-1]["turns"] >= 2 and growth[-1]["bytes"] > 0
    assert stats["sweep"] is None or {"last_run_at", "last_status"} <= set(stats["sweep"])


def test_without_auth_the_local_user_is_admin(tmp_path_factory: pytest.TempPathFactory) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('ops-open') / 'orecast.sqlite3'}"
    running = Server.start(settings_for(url))
    try:
        assert get(running, "/ops/access").json() == {"user_id": None, "admin": True}
        res = get(running, "/ops/stats")
        assert res.status_code == 200 and res.json()["threads"] == 0
        assert [d["checkpoints"] for d in res.json()["growth"]] == [0] * 14
    finally:
        running.stop()
