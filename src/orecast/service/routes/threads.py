"""`/threads`: create, read, search, copy, state, history."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request, Response

from orecast.service.auth import User, require_user
from orecast.service.context import Services, Svc
from orecast.service.errors import NotFound
from orecast.service.gzip_json import json_answer
from orecast.service.runs.queries import DELETE_THREAD_SERVICE_ROWS
from orecast.service.schemas import (
    HistoryQuery,
    StateAt,
    StateUpdate,
    ThreadCount,
    ThreadCreate,
    ThreadPrune,
    ThreadSearch,
    ThreadUpdate,
    paginated,
    selected,
)
from orecast.service.threads import extract_path

router = APIRouter(prefix="/threads", tags=["threads"], dependencies=[Depends(require_user)])


@router.post("")
async def create(body: ThreadCreate, svc: Svc, user: User) -> dict[str, Any]:
    info = await svc.threads.create(
        user, thread_id=body.thread_id, metadata=body.metadata, if_exists=body.if_exists,
        ttl=body.ttl.model_dump() if body.ttl else None,
        supersteps=[s.model_dump() for s in body.supersteps] if body.supersteps else None,
    )
    return await svc.threads.public(info)


@router.post("/search")
async def search(body: ThreadSearch, svc: Svc, user: User, response: Response) -> list[dict[str, Any]]:
    """The page of matches (`values` too is matched before `limit`/`offset` cut the page)."""
    found, headers = paginated(await svc.threads.search(user, body.model_dump(), lookahead=1), body.offset, body.limit)
    response.headers.update(headers)
    threads = [await svc.threads.public(t) for t in found]
    page = selected(threads, body.select)
    if body.extract:
        for thread, item in zip(threads, page, strict=True):
            item["extracted"] = {alias: extract_path(thread, path) for alias, path in body.extract.items()}
    return page


@router.post("/count")
async def count(body: ThreadCount, svc: Svc, user: User) -> int:
    return await svc.threads.count(user, body.model_dump())


@router.get("/{thread_id}")
async def get(thread_id: str, svc: Svc, user: User, include: str | None = None) -> dict[str, Any]:
    """`?include=ttl` adds the thread's TTL (`{strategy, ttl_minutes, expires_at}`) when one applies."""
    thread = await svc.threads.public(await svc.threads.info(thread_id, user))
    if "ttl" in (include or "").split(",") and (ttl := await svc.threads.ttl(thread_id)) is not None:
        thread["ttl"] = ttl
    return thread


@router.patch("/{thread_id}")
async def update(thread_id: str, body: ThreadUpdate, svc: Svc, user: User) -> dict[str, Any]:
    info = await svc.threads.update(
        thread_id, user, body.metadata, body.ttl.model_dump() if body.ttl else None
    )
    return await svc.threads.public(info)


@router.delete("/{thread_id}", status_code=204)
async def delete(thread_id: str, svc: Svc, user: User) -> Response:
    await svc.threads.info(thread_id, user, "delete")
    await _delete_thread(svc, thread_id)
    return Response(status_code=204)


async def _delete_thread(svc: Services, thread_id: str) -> None:
    """The thread, its checkpoints and its runs, once its running runs have stopped."""
    for run_id, _ in await svc.repo.select_ids(
        thread_id=thread_id, run_ids=None, statuses=("pending", "running")
    ):
        run = await svc.repo.require(run_id)
        await svc.repo.request_cancel(run, "interrupt", "thread deleted")
        await svc.runs.cancel_local(run_id, "interrupt")
        await svc.runs.wait(run_id)
    # its runs, their events and its crons in the thread's own delete transaction: a crash between
    # two transactions left runs of a thread that was gone
    await svc.saver.adelete_thread(thread_id, also=DELETE_THREAD_SERVICE_ROWS)


@router.post("/prune")
async def prune(body: ThreadPrune, svc: Svc, user: User) -> dict[str, int]:
    """`threads.prune`: delete these threads (`delete`), or all but each one's latest checkpoint
    (`keep_latest`); threads that do not exist or are not the caller's are skipped, as langgraph-api."""
    pruned = 0
    for thread_id in dict.fromkeys(body.thread_ids):
        try:
            await svc.threads.info(thread_id, user, "delete")
        except NotFound:
            continue
        if body.strategy == "delete":
            await _delete_thread(svc, thread_id)
        else:
            await svc.saver.aprune([thread_id], strategy="keep_latest")
        pruned += 1
    return {"pruned_count": pruned}


@router.post("/{thread_id}/copy")
async def copy(thread_id: str, svc: Svc, user: User) -> dict[str, Any]:
    return await svc.threads.public(await svc.threads.copy(thread_id, user))


@router.get("/{thread_id}/state")
async def get_state(thread_id: str, svc: Svc, user: User, subgraphs: bool = False) -> dict[str, Any]:
    return await svc.threads.state(thread_id, user, None, subgraphs)


@router.post("/{thread_id}/state/checkpoint")
async def get_state_at(thread_id: str, body: StateAt, svc: Svc, user: User) -> dict[str, Any]:
    return await svc.threads.state(thread_id, user, body.checkpoint.model_dump(), body.subgraphs)


@router.get("/{thread_id}/state/{checkpoint_id}")
async def get_state_by_id(
    thread_id: str, checkpoint_id: str, svc: Svc, user: User, subgraphs: bool = False
) -> dict[str, Any]:
    return await svc.threads.state(thread_id, user, {"checkpoint_id": checkpoint_id}, subgraphs)


@router.post("/{thread_id}/state")
async def update_state(thread_id: str, body: StateUpdate, svc: Svc, user: User) -> dict[str, Any]:
    checkpoint = body.checkpoint.model_dump() if body.checkpoint else None
    if body.checkpoint_id:
        checkpoint = {**(checkpoint or {}), "checkpoint_id": body.checkpoint_id}
    return await svc.threads.update_state(thread_id, user, body.values, body.as_node, checkpoint)


# (gzipped when big: every checkpoint repeats the messages before it, see gzip_json.py)
@router.post("/{thread_id}/history", response_model=list[dict[str, Any]])
async def history(thread_id: str, body: HistoryQuery, svc: Svc, user: User, request: Request) -> Response:
    query = body.model_dump(exclude_none=True)
    return await json_answer(request, await svc.threads.history(thread_id, user, query))


# orecast's own form of the same read, for the page: each message once, and in the states a stand-in
# for it (`encode.History`, shared). A long conversation's 500 checkpoints are 3.6 MB of JSON, not 153.
@router.post("/{thread_id}/history/shared", response_model=dict[str, list[Any]])
async def shared_history(thread_id: str, body: HistoryQuery, svc: Svc, user: User, request: Request) -> Response:
    query = body.model_dump(exclude_none=True)
    return await json_answer(request, await svc.threads.history(thread_id, user, query, shared=True))


@router.get("/{thread_id}/history", response_model=list[dict[str, Any]])
async def history_get(
    thread_id: str, svc: Svc, user: User, request: Request, limit: int = Query(10, ge=1, le=1000)
) -> Response:
    # bounded as the POST form's (a negative limit read the whole history)
    return await json_answer(request, await svc.threads.history(thread_id, user, {"limit": limit}))
