"""Service-table migration 6 (db/auth_fields.py) on SQLite, PostgreSQL and MariaDB: runs and crons stored
before they kept only their custom-auth user's identity lose every other field of it (a token), a page
of rows at a time; rows that hold nothing more are left byte for byte; a second pass changes nothing."""

from __future__ import annotations

import json

import pytest

from orecast.service.db import auth_fields, open_db
from orecast.service.db.connection import _python_steps
from tests.checkpoint.conftest import raw_sql

NOW = "2026-01-02T03:04:05.000000+00:00"
# as the authenticate handler returned it, and as runs and crons stored it before
OLD_USER = {"identity": "alice", "display_name": "爱丽丝", "is_authenticated": True, "permissions": ["write"],
            "upstream_token": "alice-upstream-secret", "email": "alice@example.com"}
KEPT = {"identity": "alice", "display_name": "爱丽丝", "is_authenticated": True, "permissions": ["write"]}


def _run_kwargs(user: dict | None) -> str:
    configurable = {"thread_id": "t", "graph_id": "echo"}
    if user is not None:
        configurable |= {"langgraph_auth_user": user, "langgraph_auth_user_id": user["identity"]}
    kwargs = {"input": {"messages": [{"role": "user", "content": "铁矿"}]}, "config": {"configurable": configurable},
              "stream_mode": ["values"], "temporary": False}
    return json.dumps(kwargs, ensure_ascii=False)


def _insert(url: str) -> dict[str, str]:
    """Rows the old way (and others): run id → its stored kwargs."""
    mark = "?" if url.startswith("sqlite") else "%s"
    runs = {f"r{n}": _run_kwargs(OLD_USER) for n in range(5)}  # more than a page (3 in the test)
    runs |= {"r-none": _run_kwargs(None), "r-new": _run_kwargs(KEPT), "r-odd": '{"config": [1, 2]}'}
    for run_id, kwargs in runs.items():
        raw_sql(url, f"INSERT INTO service_runs (run_id, thread_id, assistant_id, status, metadata, kwargs, "
                     f"multitask_strategy, created_at, updated_at) VALUES ({', '.join([mark] * 9)})",
                (run_id, f"t-{run_id}", "a", "success", "{}", kwargs, "reject", NOW, NOW))
    for cron_id, auth_user in (("c-old", {"user": OLD_USER, "permissions": ["write"]}), ("c-none", None),
                               ("c-new", {"user": KEPT, "permissions": ["write"]})):
        raw_sql(url, f"INSERT INTO service_crons (cron_id, assistant_id, auth_user, schedule, payload, "
                     f"created_at, updated_at) VALUES ({', '.join([mark] * 7)})",
                (cron_id, "a", None if auth_user is None else json.dumps(auth_user, ensure_ascii=False),
                 "* * * * *", "{}", NOW, NOW))
    return runs


def _stored(url: str) -> tuple[dict[str, str], dict[str, str | None]]:
    runs = dict(raw_sql(url, "SELECT run_id, kwargs FROM service_runs"))
    crons = dict(raw_sql(url, "SELECT cron_id, auth_user FROM service_crons"))
    return runs, crons


async def _migrate_again_from(url: str, version: int) -> None:
    """Migration `version`'s step again, as the migrator runs it, on rows inserted since: the later
    migrations (a column added, say) stay as they are, so the migrator itself cannot be run back."""
    async with open_db(url) as db, db.transaction() as tx:
        await _python_steps()[version](tx)


async def test_old_runs_and_crons_keep_their_users_identity_only(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_db(store_url):  # every migration: the tables as they are
        pass
    before = _insert(store_url)
    monkeypatch.setattr(auth_fields, "PAGE", 3)
    await _migrate_again_from(store_url, 6)

    runs, crons = _stored(store_url)
    assert "secret" not in json.dumps([runs, crons]) and "alice@example.com" not in json.dumps([runs, crons])
    for n in range(5):
        kwargs = json.loads(runs[f"r{n}"])
        assert kwargs["config"]["configurable"]["langgraph_auth_user"] == KEPT  # `true` still true
        assert kwargs == json.loads(_run_kwargs(KEPT)), "nothing else of the run changed"
    for untouched in ("r-none", "r-new", "r-odd"):
        assert runs[untouched] == before[untouched]
    assert json.loads(crons["c-old"]) == {"user": KEPT, "permissions": ["write"]}
    assert crons["c-none"] is None
    assert json.loads(crons["c-new"]) == {"user": KEPT, "permissions": ["write"]}
    assert [v for (v,) in raw_sql(store_url, "SELECT version FROM service_migrations WHERE version = 6")] == [6]

    await _migrate_again_from(store_url, 6)  # a second pass (a start after a crash during the first)
    assert _stored(store_url) == (runs, crons)
