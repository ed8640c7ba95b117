"""`/threads/{id}/runs/crons` and `/runs/crons…`: create, update, delete, search and count crons.

Under API keys a cron is its creator's (another user gets 404, as for a missing one); under custom
auth the `crons` handlers decide (`create`, `read`, `update`, `delete`, `search`), a filter being one
on the cron's metadata. Its runs run as its creator (see `cron_scheduler.py`).
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Response

from orecast.service.assistants import graph_assistant_id
from orecast.service.auth import Principal, User, require_user
from orecast.service.context import Services, Svc
from orecast.service.crons import (
    CronRecord,
    check_schedule,
    next_date,
    require_cron_id,
    stored,
)
from orecast.service.custom_auth import matches
from orecast.service.errors import NotFound
from orecast.service.schemas import (
    CronCount,
    CronCreate,
    CronSearch,
    CronUpdate,
    paginated,
    selected,
)
from orecast.service.threads import json_contains

router = APIRouter(tags=["crons"], dependencies=[Depends(require_user)])


def _utc(when: datetime) -> datetime:
    """A time the SDK sent without a zone (`datetime.isoformat()` of a naive one) is taken as UTC."""
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def _first_date(schedule: str, timezone: str | None, end_time: str | None, now: datetime) -> str | None:
    """The next firing after `now`; None once it would be past `end_time`: the cron is over."""
    first = stored(next_date(schedule, timezone, now))
    return first if end_time is None or first <= end_time else None


def _auth_user(user: Principal) -> dict[str, Any] | None:
    """Custom auth: who the cron's runs run as (its creator, as langgraph-api runs them). Stored, so only
    the user's identity and permissions: never a token the authenticate handler returned with them."""
    if user.access is None:
        return None
    return {"user": user.access.user.identity_only(), "permissions": list(user.access.permissions)}


async def _create(svc: Services, user: Principal, body: CronCreate, thread_id: str | None) -> dict[str, Any]:
    check_schedule(body.schedule, body.timezone)
    await svc.webhooks.check(body.webhook)
    cron_id = str(uuid.uuid4())
    end_time = stored(_utc(body.end_time)) if body.end_time else None
    payload = body.model_dump(mode="json", exclude_unset=True, exclude_none=True)
    value: dict[str, Any] = {
        "cron_id": cron_id, "thread_id": thread_id, "assistant_id": body.assistant_id,
        "schedule": body.schedule, "end_time": end_time, "metadata": dict(body.metadata or {}),
        "payload": payload,
    }
    await user.authorize("crons", "create", value)  # it may add to `metadata`
    assistant = await svc.assistants.for_run(body.assistant_id, user)
    if thread_id is not None:  # the thread must be the caller's to read (custom auth: its handler)
        await svc.threads.info(thread_id, user)
    payload["assistant_id"] = assistant["assistant_id"]
    if value["metadata"]:
        payload["metadata"] = value["metadata"]
    config = payload.setdefault("config", {})
    config["configurable"] = {**(config.get("configurable") or {}), "cron_id": cron_id}
    now = datetime.now(UTC)
    cron = CronRecord(
        cron_id=cron_id,
        assistant_id=assistant["assistant_id"],
        thread_id=thread_id,
        owner=user.user_id,
        auth_user=_auth_user(user),
        schedule=body.schedule,
        timezone=body.timezone,
        end_time=end_time,
        next_run_date=_first_date(body.schedule, body.timezone, end_time, now),
        payload=payload,
        metadata=value["metadata"],
        # only a stateless cron's runs have a thread of their own to delete or keep
        on_run_completed=None if thread_id is not None else body.on_run_completed or "delete",
        enabled=body.enabled,
        created_at=stored(now),
        updated_at=stored(now),
    )
    await svc.crons.insert(cron)
    return cron.public()


async def _visible(svc: Services, user: Principal, cron_id: str, action: str, value: dict[str, Any]) -> CronRecord:
    """The cron, if `user` may do `action` on it; else 404, as for a missing one."""
    require_cron_id(cron_id)
    filt = await user.authorize("crons", action, value)
    cron = await svc.crons.get(cron_id)
    if cron is None or not user.may_see(cron.owner) or not matches(cron.metadata, filt):
        raise NotFound(f"cron {cron_id} not found")
    return cron


async def _matching(svc: Services, user: Principal, body: CronCount, sort_by: str, sort_order: str) -> list[CronRecord]:
    """The crons `user` may see that match `body`, sorted. Metadata is matched here, not in SQL:
    crons are few, and this keeps one statement for every dialect."""
    value = body.model_dump(exclude_none=True)
    filt = await user.authorize("crons", "search", value)
    equal: dict[str, Any] = {}
    if body.assistant_id:  # a served graph's name stands for its assistant, as everywhere
        served = svc.graphs.get(body.assistant_id)
        equal["assistant_id"] = graph_assistant_id(body.assistant_id) if served else body.assistant_id
    if body.thread_id:
        equal["thread_id"] = body.thread_id
    if body.enabled is not None:
        equal["enabled"] = int(body.enabled)
    if not user.admin and user.user_id is not None:
        equal["owner"] = user.user_id
    wanted = body.metadata or {}
    return [
        cron for cron in await svc.crons.select(equal, sort_by, sort_order)
        if json_contains(cron.metadata, wanted)
        and matches(cron.metadata, filt)
    ]


@router.post("/threads/{thread_id}/runs/crons")
async def create_for_thread(thread_id: str, body: CronCreate, svc: Svc, user: User) -> dict[str, Any]:
    return await _create(svc, user, body, thread_id)


@router.post("/runs/crons")
async def create(body: CronCreate, svc: Svc, user: User) -> dict[str, Any]:
    return await _create(svc, user, body, None)


@router.post("/runs/crons/search")
async def search(body: CronSearch, svc: Svc, user: User, response: Response) -> list[dict[str, Any]]:
    found = await _matching(svc, user, body, body.sort_by or "created_at", body.sort_order or "desc")
    page, headers = paginated([c.public() for c in found[body.offset : body.offset + body.limit + 1]],
                              body.offset, body.limit)
    response.headers.update(headers)
    return selected(page, body.select)


@router.post("/runs/crons/count")
async def count(body: CronCount, svc: Svc, user: User) -> int:
    return len(await _matching(svc, user, body, "cron_id", "asc"))


@router.get("/runs/crons/{cron_id}")
async def get(cron_id: str, svc: Svc, user: User) -> dict[str, Any]:
    """One cron, as langgraph-api answers `GET /runs/crons/{id}`."""
    return (await _visible(svc, user, cron_id, "read", {"cron_id": cron_id})).public()


@router.patch("/runs/crons/{cron_id}")
async def update(cron_id: str, body: CronUpdate, svc: Svc, user: User) -> dict[str, Any]:
    given = body.model_dump(mode="json", exclude_unset=True)
    cron = await _visible(svc, user, cron_id, "update", {"cron_id": cron_id, **given})
    schedule = body.schedule or cron.schedule
    timezone = given["timezone"] if "timezone" in given else cron.timezone
    check_schedule(schedule, timezone)
    await svc.webhooks.check(body.webhook)
    end_time = cron.end_time
    if "end_time" in given:
        end_time = stored(_utc(body.end_time)) if body.end_time else None
    enabled = cron.enabled if body.enabled is None else body.enabled
    now = datetime.now(UTC)
    next_run_date = cron.next_run_date
    if given.keys() & {"schedule", "timezone", "end_time", "enabled"}:  # the dates start again from now
        next_run_date = _first_date(schedule, timezone, end_time, now)
    # as langgraph-api: the payload takes what is given, the cron's metadata merges it
    payload = {**cron.payload, **{k: v for k, v in given.items() if v is not None}}
    metadata = {**cron.metadata, **(body.metadata or {})}
    config = payload.setdefault("config", {})
    config["configurable"] = {**(config.get("configurable") or {}), "cron_id": cron_id}
    on_run_completed = cron.on_run_completed
    if cron.thread_id is None and body.on_run_completed is not None:
        on_run_completed = body.on_run_completed
    changed = replace(
        cron, schedule=schedule, timezone=timezone, end_time=end_time, next_run_date=next_run_date,
        payload=payload, metadata=metadata, on_run_completed=on_run_completed, enabled=enabled,
        updated_at=stored(now),
    )
    await svc.crons.update(changed)
    return changed.public()


@router.delete("/runs/crons/{cron_id}", status_code=204)
async def delete(cron_id: str, svc: Svc, user: User) -> Response:
    await _visible(svc, user, cron_id, "delete", {"cron_id": cron_id})
    await svc.crons.delete(cron_id)
    return Response(status_code=204)
