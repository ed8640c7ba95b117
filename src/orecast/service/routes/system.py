"""`/ok`, `/health` (checks the database), `/info` (probed by agent-chat-ui and the JS SDK) and
`/metrics` (Prometheus; behind the same auth as the API)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from orecast.checkpoint.errors import StoreError
from orecast.service.auth import User
from orecast.service.context import Svc
from orecast.service.errors import error_body

router = APIRouter(tags=["system"])


@router.get("/ok")
async def ok() -> dict[str, bool]:
    return {"ok": True}


@router.get("/health", response_model=None)
async def health(svc: Svc) -> dict[str, str] | JSONResponse:
    try:
        await svc.db.ping()
        await svc.saver.aget_thread("__health__")
    except Exception as exc:  # any failure of the database is exactly what this reports
        # The store's errors are one line without secrets; anything else is named by its type only.
        reason = str(exc) if isinstance(exc, StoreError) else f"database unavailable: {type(exc).__name__}"
        body = error_body("unavailable", reason)
        return JSONResponse(body, 503)
    return {"status": "ok", "database": "ok"}


@router.get("/info")
async def info(svc: Svc) -> dict[str, Any]:
    return {
        "version": "0.1.0",
        "server": "orecast",
        "graphs": svc.graphs.ids(),
        "flags": {"assistants": True, "crons": True, "langsmith": False},
    }


@router.get("/metrics", response_class=Response)
async def metrics(svc: Svc, user: User) -> Response:
    return Response(await svc.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
