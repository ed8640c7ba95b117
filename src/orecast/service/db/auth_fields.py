"""Service-table migration 6, in Python (the same on every dialect): the custom-auth users that runs and
crons stored before they kept only who the user is lose every other field.

A run's row kept `kwargs.config.configurable.langgraph_auth_user`, and a cron's `auth_user.user`, as the
authenticate handler returned it: with a token for a service it calls, say, which `runs.get` then
answered to readers. Rows written since keep `STORED_FIELDS` only (`User.identity_only`); this strips
the older ones alike. Rows are read a page at a time (after the last id read: the memory a page takes,
whatever the table's size) and written back only if they held more, so that a second pass (a start
after a crash during this one) changes nothing. The JSON is rewritten as the service writes it.
"""

from __future__ import annotations

import json
from typing import Any

from orecast.service.custom_auth import stored_fields
from orecast.service.db.connection import Tx

PAGE = 500
# `LIKE` a parameter: a `%` in the statement would be a placeholder for PostgreSQL's and MySQL's drivers
SELECT_RUNS = "SELECT run_id, kwargs FROM service_runs WHERE run_id > ? AND kwargs LIKE ? ORDER BY run_id LIMIT ?"
UPDATE_RUN = "UPDATE service_runs SET kwargs = ? WHERE run_id = ?"
SELECT_CRONS = """SELECT cron_id, auth_user FROM service_crons WHERE cron_id > ? AND auth_user IS NOT NULL
ORDER BY cron_id LIMIT ?"""
UPDATE_CRON = "UPDATE service_crons SET auth_user = ? WHERE cron_id = ?"
HAS_RUN_USER = '%"langgraph_auth_user"%'


def identity_only(user: Any) -> Any:
    """A stored user's fields without those beyond its identity and permissions (anything else as is)."""
    return stored_fields(user) if isinstance(user, dict) else user


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def run_kwargs_stripped(text: str) -> str | None:
    """A run's stored kwargs with its user's identity only; None if they hold no more than that."""
    kwargs = json.loads(text)
    config = kwargs.get("config") if isinstance(kwargs, dict) else None
    configurable = config.get("configurable") if isinstance(config, dict) else None
    if not isinstance(configurable, dict) or not isinstance(configurable.get("langgraph_auth_user"), dict):
        return None
    user = configurable["langgraph_auth_user"]
    if user == identity_only(user):
        return None
    configurable["langgraph_auth_user"] = identity_only(user)
    return _dumps(kwargs)


def cron_user_stripped(text: str) -> str | None:
    """A cron's stored `{user, permissions}` with the user's identity only; None if it holds no more."""
    auth_user = json.loads(text)
    if not isinstance(auth_user, dict) or not isinstance(auth_user.get("user"), dict):
        return None
    if auth_user["user"] == identity_only(auth_user["user"]):
        return None
    return _dumps({**auth_user, "user": identity_only(auth_user["user"])})


async def keep_identity_only(tx: Tx) -> None:
    """Strip every stored run's and cron's user to its identity and permissions (in `tx`)."""
    after = ""
    while rows := await tx.fetchall(SELECT_RUNS, (after, HAS_RUN_USER, PAGE)):
        for run_id, kwargs in rows:
            if (stripped := run_kwargs_stripped(kwargs)) is not None:
                await tx.execute(UPDATE_RUN, (stripped, run_id))
        after = rows[-1][0]
    after = ""
    while rows := await tx.fetchall(SELECT_CRONS, (after, PAGE)):
        for cron_id, auth_user in rows:
            if (stripped := cron_user_stripped(auth_user)) is not None:
                await tx.execute(UPDATE_CRON, (stripped, cron_id))
        after = rows[-1][0]
