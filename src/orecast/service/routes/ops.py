"""`/ops/*`: the operations view's figures (the web page's Operations view, `orecast db stats` in a
terminal). Admins only when auth is on; with no auth configured the one local user is the admin."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends

from orecast.checkpoint.growth import store_growth
from orecast.checkpoint.stats import store_stats
from orecast.service.auth import User, require_admin
from orecast.service.context import Svc

router = APIRouter(prefix="/ops", tags=["ops"])


@router.get("/access")
async def access(user: User) -> dict[str, Any]:
    """Whether the caller may open the operations view: the page asks once, to show the way in."""
    return {"user_id": user.user_id, "admin": user.is_admin}


@router.get("/stats", dependencies=[Depends(require_admin)])
async def stats(svc: Svc) -> dict[str, Any]:
    """`store_stats` (threads, turns, tool ranking, recent failures, table sizes, the last sweep) plus
    `growth` per day."""
    now = datetime.now(UTC)
    out = (await store_stats(svc.saver, now=now)).to_dict()
    out["growth"] = [day.to_dict() for day in await store_growth(svc.saver, now=now)]
    return out
