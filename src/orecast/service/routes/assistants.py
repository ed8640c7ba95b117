"""`/assistants`: one per served graph, plus configurations of them."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Response

from orecast.service.assistants import public
from orecast.service.auth import User, require_user
from orecast.service.context import Svc
from orecast.service.errors import NotFound
from orecast.service.graphs import graph_drawing, graph_schemas
from orecast.service.schemas import (
    AssistantCreate,
    AssistantLatest,
    AssistantSearch,
    AssistantUpdate,
    AssistantVersions,
    paginated,
    selected,
)

router = APIRouter(prefix="/assistants", tags=["assistants"], dependencies=[Depends(require_user)])


@router.post("/search")
async def search(body: AssistantSearch, svc: Svc, user: User, response: Response) -> list[dict[str, Any]]:
    found = await svc.assistants.search(body.model_dump(exclude_none=True, exclude={"select"}), user, lookahead=1)
    page, headers = paginated([public(a) for a in found], body.offset, body.limit)
    response.headers.update(headers)
    return selected(page, body.select)


@router.post("/count")
async def count(body: AssistantSearch, svc: Svc, user: User) -> int:
    query = body.model_dump(exclude_none=True) | {"limit": 1_000_000, "offset": 0}
    return len(await svc.assistants.search(query, user))


@router.post("")
async def create(body: AssistantCreate, svc: Svc, user: User) -> dict[str, Any]:
    return public(await svc.assistants.create(body.model_dump(exclude_none=True), user))


@router.get("/{assistant_id}")
async def get(assistant_id: str, svc: Svc, user: User) -> dict[str, Any]:
    return public(await svc.assistants.get(assistant_id, user))


@router.patch("/{assistant_id}")
async def update(assistant_id: str, body: AssistantUpdate, svc: Svc, user: User) -> dict[str, Any]:
    return public(await svc.assistants.update(assistant_id, body.model_dump(exclude_none=True), user))


@router.post("/{assistant_id}/versions")
async def get_versions(assistant_id: str, body: AssistantVersions, svc: Svc, user: User) -> list[dict[str, Any]]:
    return await svc.assistants.versions(assistant_id, body.model_dump(exclude_none=True), user)


@router.post("/{assistant_id}/latest")
async def set_latest(assistant_id: str, body: AssistantLatest, svc: Svc, user: User) -> dict[str, Any]:
    return public(await svc.assistants.set_latest(assistant_id, body.version, user))


@router.delete("/{assistant_id}", status_code=204)
async def delete(assistant_id: str, svc: Svc, user: User) -> Response:
    await svc.assistants.delete(assistant_id, user)
    return Response(status_code=204)


def _served(svc: Svc, assistant: dict[str, Any]):  # noqa: ANN202  # ServedGraph
    served = svc.graphs.get(assistant["graph_id"])
    if served is None:
        raise NotFound(f"graph {assistant['graph_id']} is not served")
    return served


@router.get("/{assistant_id}/graph")
async def get_graph(assistant_id: str, svc: Svc, user: User, xray: bool | int = False) -> dict[str, Any]:
    return graph_drawing(_served(svc, await svc.assistants.get(assistant_id, user)), xray)


@router.get("/{assistant_id}/schemas")
async def get_schemas(assistant_id: str, svc: Svc, user: User) -> dict[str, Any]:
    return graph_schemas(_served(svc, await svc.assistants.get(assistant_id, user)))


@router.get("/{assistant_id}/subgraphs")
async def get_subgraphs(assistant_id: str, svc: Svc, user: User, recurse: bool = False) -> dict[str, Any]:
    return await _subgraphs(svc, user, assistant_id, None, recurse)


@router.get("/{assistant_id}/subgraphs/{namespace}")
async def get_subgraphs_in(
    assistant_id: str, namespace: str, svc: Svc, user: User, recurse: bool = False
) -> dict[str, Any]:
    """`assistants.get_subgraphs(namespace=…)`: the subgraphs under that namespace only."""
    return await _subgraphs(svc, user, assistant_id, namespace, recurse)


async def _subgraphs(svc: Svc, user: User, assistant_id: str, namespace: str | None, recurse: bool) -> dict[str, Any]:
    served = _served(svc, await svc.assistants.get(assistant_id, user))
    return {
        ns: graph_schemas(type(served)(ns, sub, served.spec))
        async for ns, sub in served.graph.aget_subgraphs(namespace=namespace, recurse=recurse)
    }
