"""`/threads/{id}/runs…` and stateless `/runs…`: create, stream, wait, join, cancel, delete."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, Query, Request, Response
from fastapi.responses import JSONResponse

from orecast.service.auth import User, require_user
from orecast.service.context import Services, Svc
from orecast.service.encode import jsonable
from orecast.service.errors import Invalid, NotFound
from orecast.service.runs.prepare import may_use_run, start_run, visible_run
from orecast.service.runs.records import ACTIVE, TERMINAL, RunRecord
from orecast.service.runs.recover import graph_of
from orecast.service.schemas import MAX_OFFSET, CancelMany, RunCreate, RunField, selected
from orecast.service.sse import HEARTBEAT, format_encoded, format_event, sse_response

router = APIRouter(tags=["runs"], dependencies=[Depends(require_user)])
HEARTBEAT_SECONDS = 10.0
# How far behind this replica's clock another replica's may be when it stamps a run's `created_at`.
CLOCK_SKEW = timedelta(seconds=5)
NO_RUNS_TO_CANCEL = "no matching runs to cancel: they are over, deleted, already cancelled or not yours"


def _location(run: RunRecord, temporary: bool) -> str:
    return f"/runs/{run.run_id}" if temporary else f"/threads/{run.thread_id}/runs/{run.run_id}"


async def _follow(svc: Services, run_id: str, after: int) -> AsyncIterator[tuple[int, str, bytes] | None]:
    """The run's (id, event, JSON of its data) after event `after` until it ends; None when a heartbeat
    is due."""
    events = svc.runs.events(run_id)
    # a run driven by another process (or long finished) is read from the database
    follower = (events.follow(after) if events else svc.runs.follow_remote(run_id, after)).__aiter__()
    while True:
        try:
            yield await asyncio.wait_for(follower.__anext__(), HEARTBEAT_SECONDS)
        except TimeoutError:
            yield None
        except StopAsyncIteration:
            return


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
    after = int(last_event_id) if last_event_id and last_event_id.isdigit() else 0
    finished = False
    try:
        async for item in _follow(svc, run_id, after):
            if item is None:
                yield HEARTBEAT
            elif wanted(item[1]):
                yield format_encoded(item[1], item[2], str(item[0]))
        finished = True
    finally:
        if not finished and cancel_on_disconnect:
            svc.runs.abandon(run_id, "client disconnected")


async def _thread_stream(svc: Services, thread_id: str, modes: set[str]) -> AsyncIterator[bytes]:
    """The thread's runs from now on, one after the other, until the client leaves or the thread is
    deleted, as langgraph-api's thread stream: `run_modes` sends every event of the runs, `lifecycle`
    only their start (`metadata`) and a `metadata {"status": "run_done"}` after each.

    Runs are found by looking at the table every poll; a run that started and ended between two looks
    is still sent (its events are replayed), so each look takes every run created since the stream
    opened, less a margin for replicas whose clocks run behind, that was not over when it opened."""
    everything = "run_modes" in modes
    lifecycle = everything or "lifecycle" in modes  # `state_update` alone: nothing here sends one
    since = (datetime.now(UTC) - CLOCK_SKEW).isoformat()
    seen = {run_id for run_id, status in await svc.repo.stream_runs(thread_id, since) if status not in ACTIVE}
    idle = 0.0
    while True:
        fresh = [run_id for run_id, _ in await svc.repo.stream_runs(thread_id, since) if run_id not in seen]
        for run_id in fresh:
            seen.add(run_id)
            async for item in _follow(svc, run_id, 0):
                if item is None:
                    yield HEARTBEAT
                elif everything or (lifecycle and item[1] == "metadata"):
                    yield format_encoded(item[1], item[2])
            if lifecycle:
                yield format_event("metadata", {"status": "run_done", "run_id": run_id})
        if not fresh and await svc.saver.aget_thread(thread_id) is None:
            return  # deleted: no run can come any more
        idle = 0.0 if fresh else idle + svc.runs.poll_seconds
        if idle >= HEARTBEAT_SECONDS:
            idle = 0.0
            yield HEARTBEAT
        await asyncio.sleep(svc.runs.poll_seconds)


async def _stream_response(svc: Services, user: User, body: RunCreate, thread_id: str | None) -> Response:
    run, temporary = await start_run(svc, user, body, thread_id)
    on_disconnect = body.on_disconnect or "continue"  # langgraph-api's default
    location = _location(run, temporary)
    return sse_response(
        _stream(svc, run.run_id, None, on_disconnect == "cancel"),
        {"Location": f"{location}/stream", "Content-Location": location},
    )


def _join_headers(run: RunRecord) -> dict[str, str]:
    """langgraph-api's headers on an answer that is a run's output (wait, join, cancel with wait);
    a stateless run's too name its (temporary) thread."""
    location = _location(run, False)
    return {"Location": f"{location}/join", "Content-Location": location}


async def _wait_response(svc: Services, user: User, body: RunCreate, thread_id: str | None) -> Response:
    run, _ = await start_run(svc, user, body, thread_id)
    await svc.runs.finished(run.run_id)
    output = svc.runs.output_json(run.run_id)
    return Response(output or b"null", media_type="application/json", headers=_join_headers(run))


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


def _created(run: RunRecord) -> dict[str, Any]:
    """A run just created as langgraph-api answers it: `pending` (its worker has not picked it up yet),
    even when this process claimed it at its admission; a read of the run then shows `running`."""
    return {**run.public(), "status": "pending"}


@router.post("/threads/{thread_id}/runs")
async def create_run(thread_id: str, body: RunCreate, svc: Svc, user: User) -> JSONResponse:
    run, temporary = await start_run(svc, user, body, thread_id)
    return JSONResponse(_created(run), headers={"Content-Location": _location(run, temporary)})


@router.post("/runs")
async def create_stateless(body: RunCreate, svc: Svc, user: User) -> JSONResponse:
    run, temporary = await start_run(svc, user, body, None)
    return JSONResponse(_created(run), headers={"Content-Location": _location(run, temporary)})


@router.post("/runs/batch")
async def create_batch(body: Annotated[list[RunCreate], Body(min_length=1)], svc: Svc, user: User) -> list[dict[str, Any]]:
    """`runs.batch` (as langgraph-api's `POST /runs/batch`): stateless background runs, one per item.
    Every item's assistant and webhook are checked before the first run starts, so a batch naming an
    unknown assistant or a refused webhook starts nothing."""
    for item in body:
        await svc.assistants.for_run(item.assistant_id, user)
        await svc.webhooks.check(item.webhook)
    return [_created((await start_run(svc, user, item, None))[0]) for item in body]


@router.get("/threads/{thread_id}/runs")
async def list_runs(
    thread_id: str, svc: Svc, user: User, limit: int = Query(10, ge=1, le=1000),
    offset: int = Query(0, ge=0, le=MAX_OFFSET), status: str | None = None,
    select: list[RunField] | None = Query(None),
) -> list[dict[str, Any]]:
    """The thread's runs, newest first; `select` (repeated in the query, as the SDKs send it) keeps
    only those fields."""
    await svc.threads.info(thread_id, user, "search", {"thread_id": thread_id, "metadata": {}})
    runs = await svc.repo.list(thread_id, status, limit, offset)
    return selected([r.public() for r in runs if user.may_see(r.owner)], select)


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


async def _output(svc: Services, user: User, run: RunRecord) -> Any:
    """The run's output once it is over: what it returned here, else (run elsewhere, or long ago) its
    thread's values, as langgraph-api's join answers."""
    await svc.runs.wait(run.run_id)
    output = svc.runs.output(run.run_id)
    if output is not None:
        return output
    return (await svc.threads.public(await svc.threads.info(run.thread_id, user)))["values"]


@router.get("/threads/{thread_id}/runs/{run_id}/join")
async def join_run(thread_id: str, run_id: str, svc: Svc, user: User) -> Response:
    run = await visible_run(svc, user, thread_id, run_id)
    return JSONResponse(jsonable(await _output(svc, user, run)), headers=_join_headers(run))


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
    run = await visible_run(svc, user, thread_id, run_id)
    location = _location(run, False)
    headers = {"Location": f"{location}/stream", "Content-Location": location}
    if run.status in TERMINAL and last_event_id is None:
        # as langgraph-api: joining a finished run without a Last-Event-ID sends nothing; with one,
        # the events after it are replayed (kept for resumable runs, and for a while in memory)
        return sse_response(_nothing(), headers)
    return sse_response(_stream(svc, run_id, last_event_id, cancel_on_disconnect, _wanted(stream_mode)), headers)


@router.get("/threads/{thread_id}/stream")
async def join_thread_stream(
    thread_id: str, svc: Svc, user: User, stream_mode: list[str] | None = Query(None),
    last_event_id: str | None = Header(None, alias="Last-Event-ID"),
) -> Response:
    """`threads.join_stream`: the events of the thread's runs as they run (a `Last-Event-ID` is
    accepted and ignored: events carry no ids here, each run numbers its own)."""
    await svc.threads.info(thread_id, user)
    modes = set(stream_mode or ["run_modes"])
    unknown = modes - {"run_modes", "lifecycle", "state_update"}
    if unknown:
        raise Invalid(f"stream_mode: unknown thread stream mode {sorted(unknown)[0]!r}")
    return sse_response(_thread_stream(svc, thread_id, modes))


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield  # an async generator that ends at once


async def _cancel(svc: Services, run: RunRecord, action: str) -> None:
    await svc.repo.request_cancel(run, action, f"cancelled ({action})")
    await svc.runs.cancel_local(run.run_id, action)
    if run.status == "pending" and not svc.runs.knows(run.run_id):
        # Its process settles its thread's status when it sees the cancel; if that process died, nobody
        # would, and the thread, busy from the run's admission, stayed so.
        served = svc.graphs.get(graph_of(run))
        now = await svc.repo.get(run.run_id)
        if served is not None and now is not None and now.status not in ACTIVE:
            await svc.runs.settle(now, served.graph)


@router.post("/threads/{thread_id}/runs/{run_id}/cancel")
async def cancel_run(
    thread_id: str, run_id: str, svc: Svc, user: User, request: Request,
    wait: bool = False, action: str = "interrupt",
) -> Response:
    if action not in ("interrupt", "rollback"):
        raise Invalid(f"action: must be 'interrupt' or 'rollback', not {action!r}")
    run = await visible_run(svc, user, thread_id, run_id, "update")
    if run.status not in ACTIVE or run.cancel_action is not None:
        raise NotFound(NO_RUNS_TO_CANCEL)
    await _cancel(svc, run, action)
    if wait:  # as langgraph-api: the run's output once it stopped
        return JSONResponse(jsonable(await _output(svc, user, run)), headers=_join_headers(run))
    return Response(status_code=202)


@router.post("/runs/cancel", status_code=204)
async def cancel_many(body: CancelMany, svc: Svc, user: User, action: str = "interrupt") -> Response:
    if action not in ("interrupt", "rollback"):
        raise Invalid(f"action: must be 'interrupt' or 'rollback', not {action!r}")
    statuses = {"pending": ("pending",), "running": ("running",)}.get(body.status or "all", ACTIVE)
    if body.status and (body.thread_id or body.run_ids):
        raise Invalid("status cancels every run with that status: give it without thread_id and run_ids")
    if body.thread_id:
        await svc.threads.info(body.thread_id, user, "update")
    elif not body.run_ids and not body.status:
        raise Invalid("thread_id, run_ids or status is required")
    cancelled = 0
    for run_id, _ in await svc.repo.select_ids(
        thread_id=body.thread_id, run_ids=body.run_ids, statuses=statuses
    ):
        run = await svc.repo.get(run_id)
        if run is not None and run.cancel_action is None and await may_use_run(svc, user, run, "update"):
            await _cancel(svc, run, action)
            cancelled += 1
    if not cancelled and not body.status:
        raise NotFound(NO_RUNS_TO_CANCEL)
    return Response(status_code=204)


@router.get("/runs/{run_id}")
async def get_stateless(run_id: str, svc: Svc, user: User) -> dict[str, Any]:
    run = await svc.repo.get(run_id)
    if run is None or not await may_use_run(svc, user, run, "read"):
        raise NotFound(f"run {run_id} not found")
    return run.public()
