"""`/threads/{id}/runs…` and stateless `/runs…`: create, stream, wait, join, cancel, delete."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import JSONResponse

from orecast.service.auth import User, require_user
from orecast.service.context import Services, Svc
from orecast.service.errors import Invalid, NotFound
from orecast.service.runs.prepare import may_use_run, start_run, visible_run
from orecast.service.runs.records import ACTIVE, RunRecord
from orecast.service.schemas import CancelMany, RunCreate
from orecast.service.sse import HEARTBEAT, format_event, sse_response

router = APIRouter(tags=["runs"], dependencies=[Depends(require_user)])
HEARTBEAT_SECONDS = 10.0


def _location(run: RunRecord, temporary: bool) -> str:
    return f"/runs/{run.run_id}" if temporary else f"/threads/{run.thread_id}/runs/{run.run_id}"


def _wanted(modes: list[str] | None) -> Callable[[str], bool]:
    """Which events a join asked for (`stream_mode`, repeated in the query as the SDKs send it):
    `messages-tuple` is the `messages` event, `messages` the `messages/…` ones, a subgraph's event
    `mode|ns` counts as its mode; `metadata` and `error` always pass. No modes: everything (the
    Python SDK sends an empty `stream_mode=` when it has none)."""
    modes = [m for m in modes or [] if m]
    if not modes:
        return lambda event: True
    wanted = {"messages" if m == "messages-tuple" else m for m in modes} | {"metadata", "error"}
    if "messages" in modes:
        wanted |= {"messages/partial", "messages/complete", "messages/metadata"}
    return lambda event: event.split("|", 1)[0] in wanted


async def _stream(
    svc: Services, run_id: str, last_event_id: str | None, cancel_on_disconnect: bool,
    wanted: Callable[[str], bool] | None = None,
) -> AsyncIterator[bytes]:
    """The run's events as SSE (after `last_event_id`), with heartbeats; cancel it if the client leaves."""
    wanted = wanted or _wanted(None)
    events = svc.runs.events(run_id)
    after = int(last_event_id) if last_event_id and last_event_id.isdigit() else 0
    finished = False
    try:
        # a run driven by another process (or long finished) is read from the database
        follower = (events.follow(after) if events else svc.runs.follow_remote(run_id, after)).__aiter__()
        while True:
            try:
                event_id, event, data = await asyncio.wait_for(follower.__anext__(), HEARTBEAT_SECONDS)
            except TimeoutError:
                yield HEARTBEAT
                continue
            except StopAsyncIteration:
                finished = True
                return
            if wanted(event):
                yield format_event(event, data, str(event_id))
    finally:
        if not finished and cancel_on_disconnect:
            svc.runs.abandon(run_id, "client disconnected")


async def _stream_response(svc: Services, user: User, body: RunCreate, thread_id: str | None) -> Response:
    run, temporary = await start_run(svc, user, body, thread_id)
    on_disconnect = body.on_disconnect or "continue"  # langgraph-api's default
    location = _location(run, temporary)
    return sse_response(
        _stream(svc, run.run_id, None, on_disconnect == "cancel"),
        {"Location": f"{location}/stream", "Content-Location": location},
    )


async def _wait_response(svc: Services, user: User, body: RunCreate, thread_id: str | None) -> Response:
    run, temporary = await start_run(svc, user, body, thread_id)
    await svc.runs.finished(run.run_id)
    output = svc.runs.output(run.run_id)
    return JSONResponse(output, headers={"Content-Location": _location(run, temporary)})


@router.post("/threads/{thread_id}/runs/stream")
async def stream_run(thread_id: str, body: RunCreate, svc: Svc, user: User) -> Response:
    return await _stream_response(svc, user, body, thread_id)


@router.post("/runs/stream")
async def stream_stateless(body: RunCreate, svc: Svc, user: User) -> Response:
    return await _stream_response(svc, user, body, None)


@router.post("/threads/{thread_id}/runs/wait")
async def wait_run(thread_id: str, body: RunCreate, svc: Svc, user: User) -> Response:
    return await _wait_response(svc, user, body, thread_id)


@router.post("/runs/wait")
async def wait_stateless(body: RunCreate, svc: Svc, user: User) -> Response:
    return await _wait_response(svc, user, body, None)


@router.post("/threads/{thread_id}/runs")
async def create_run(thread_id: str, body: RunCreate, svc: Svc, user: User) -> JSONResponse:
    run, temporary = await start_run(svc, user, body, thread_id)
    return JSONResponse(run.public(), headers={"Content-Location": _location(run, temporary)})


@router.post("/runs")
async def create_stateless(body: RunCreate, svc: Svc, user: User) -> JSONResponse:
    run, temporary = await start_run(svc, user, body, None)
    return JSONResponse(run.public(), headers={"Content-Location": _location(run, temporary)})


@router.get("/threads/{thread_id}/runs")
async def list_runs(
    thread_id: str, svc: Svc, user: User, limit: int = 10, offset: int = 0, status: str | None = None
) -> list[dict[str, Any]]:
    await svc.threads.info(thread_id, user, "search", {"thread_id": thread_id, "metadata": {}})
    runs = await svc.repo.list(thread_id, status, limit, offset)
    return [r.public() for r in runs if user.may_see(r.owner)]


@router.get("/threads/{thread_id}/runs/{run_id}")
async def get_run(thread_id: str, run_id: str, svc: Svc, user: User) -> dict[str, Any]:
    return (await visible_run(svc, user, thread_id, run_id)).public()


@router.delete("/threads/{thread_id}/runs/{run_id}", status_code=204)
async def delete_run(thread_id: str, run_id: str, svc: Svc, user: User) -> Response:
    run = await visible_run(svc, user, thread_id, run_id, "delete")
    if run.status in ACTIVE:
        await svc.repo.request_cancel(run, "interrupt", "deleted")
        await svc.runs.cancel_local(run_id, "interrupt")
        await svc.runs.wait(run_id)
    await svc.repo.delete(run_id)
    return Response(status_code=204)


@router.get("/threads/{thread_id}/runs/{run_id}/join")
async def join_run(thread_id: str, run_id: str, svc: Svc, user: User) -> Any:
    await visible_run(svc, user, thread_id, run_id)
    await svc.runs.wait(run_id)
    output = svc.runs.output(run_id)
    if output is not None:
        return output
    return (await svc.threads.public(await svc.threads.info(thread_id, user)))["values"]


@router.get("/threads/{thread_id}/runs/{run_id}/stream")
async def join_stream(
    thread_id: str,
    run_id: str,
    svc: Svc,
    user: User,
    cancel_on_disconnect: bool = False,
    last_event_id: str | None = Header(None, alias="Last-Event-ID"),
    stream_mode: list[str] | None = Query(None),
) -> Response:
    await visible_run(svc, user, thread_id, run_id)
    return sse_response(_stream(svc, run_id, last_event_id, cancel_on_disconnect, _wanted(stream_mode)))


async def _cancel(svc: Services, run: RunRecord, action: str) -> None:
    await svc.repo.request_cancel(run, action, f"cancelled ({action})")
    await svc.runs.cancel_local(run.run_id, action)


@router.post("/threads/{thread_id}/runs/{run_id}/cancel")
async def cancel_run(
    thread_id: str, run_id: str, svc: Svc, user: User, request: Request,
    wait: bool = False, action: str = "interrupt",
) -> Response:
    if action not in ("interrupt", "rollback"):
        raise Invalid(f"action: must be 'interrupt' or 'rollback', not {action!r}")
    run = await visible_run(svc, user, thread_id, run_id, "update")
    if run.status in ACTIVE:
        await _cancel(svc, run, action)
    if wait:
        await svc.runs.wait(run_id)
    return Response(status_code=202 if not wait else 204)


@router.post("/runs/cancel", status_code=204)
async def cancel_many(body: CancelMany, svc: Svc, user: User, action: str = "interrupt") -> Response:
    if action not in ("interrupt", "rollback"):
        raise Invalid(f"action: must be 'interrupt' or 'rollback', not {action!r}")
    statuses = {"pending": ("pending",), "running": ("running",)}.get(body.status or "all", ACTIVE)
    if body.thread_id:
        await svc.threads.info(body.thread_id, user, "update")
    elif not body.run_ids and not body.status:
        raise Invalid("thread_id, run_ids or status is required")
    for run_id, _ in await svc.repo.select_ids(
        thread_id=body.thread_id, run_ids=body.run_ids, statuses=statuses
    ):
        run = await svc.repo.get(run_id)
        if run is not None and await may_use_run(svc, user, run, "update"):
            await _cancel(svc, run, action)
    return Response(status_code=204)


@router.get("/runs/{run_id}")
async def get_stateless(run_id: str, svc: Svc, user: User) -> dict[str, Any]:
    run = await svc.repo.get(run_id)
    if run is None or not await may_use_run(svc, user, run, "read"):
        raise NotFound(f"run {run_id} not found")
    return run.public()
