"""`/store`: LangGraph's `BaseStore` over HTTP. With API keys, each user's items live under their own
namespace root (`users/<id>/…`, hidden from them), so one user never reads another's. Under custom
auth the `store` handlers decide instead, and may rewrite the namespace (as langgraph-api lets them)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Response
from langgraph.store.base import Item

from orecast.agent.memories import USERS
from orecast.service.auth import Principal, User, require_user
from orecast.service.context import Svc
from orecast.service.custom_auth import AuthHandlerError
from orecast.service.errors import Invalid
from orecast.service.schemas import StoreDelete, StoreNamespaces, StorePut, StoreSearch

router = APIRouter(prefix="/store", tags=["store"], dependencies=[Depends(require_user)])


def _root(user: Principal) -> tuple[str, ...]:
    return () if user.user_id is None else (USERS, user.user_id)


def _inner(user: Principal, namespace: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    if any(not label or "." in label for label in namespace):
        raise Invalid("namespace: labels must be non-empty and contain no '.'")
    return (*_root(user), *namespace)


async def _authorized(user: Principal, action: str, value: dict[str, Any]) -> list[str]:
    """The namespace after the custom-auth `store` handler saw the request (it may change it)."""
    value["namespace"] = tuple(value["namespace"])
    if await user.authorize("store", action, value) is not None:
        raise AuthHandlerError("a store auth handler can allow, deny or change the namespace, not filter")
    return list(value["namespace"])


def _outer(user: Principal, namespace: tuple[str, ...]) -> list[str]:
    return list(namespace[len(_root(user)) :])


def _item(user: Principal, item: Item) -> dict[str, Any]:
    data = item.dict()
    data["namespace"] = _outer(user, item.namespace)
    if hasattr(item, "score"):
        data["score"] = item.score
    return data


@router.put("/items", status_code=204)
async def put_item(body: StorePut, svc: Svc, user: User) -> Response:
    value = {"namespace": body.namespace, "key": body.key, "value": body.value, "index": body.index}
    namespace = await _authorized(user, "put", value)
    if not namespace:
        raise Invalid("namespace: must not be empty")
    await svc.store.aput(
        _inner(user, namespace), body.key, body.value,
        index=body.index if body.index is not None else None, ttl=body.ttl,
    )
    return Response(status_code=204)


@router.get("/items")
async def get_item(
    svc: Svc, user: User, key: str, namespace: str = Query(""), refresh_ttl: bool | None = None
) -> dict[str, Any] | None:
    """The item, or `null` when there is none (as langgraph-api: the SDKs' `get_item` returns None)."""
    labels = await _authorized(user, "get", {"namespace": [p for p in namespace.split(".") if p], "key": key})
    item = await svc.store.aget(_inner(user, labels), key, refresh_ttl=refresh_ttl)
    return None if item is None else _item(user, item)


@router.delete("/items", status_code=204)
async def delete_item(body: StoreDelete, svc: Svc, user: User) -> Response:
    namespace = await _authorized(user, "delete", {"namespace": body.namespace, "key": body.key})
    await svc.store.adelete(_inner(user, namespace), body.key)
    return Response(status_code=204)


@router.post("/items/search")
async def search_items(body: StoreSearch, svc: Svc, user: User) -> dict[str, Any]:
    value = {"namespace": body.namespace_prefix, "filter": body.filter, "limit": body.limit,
             "offset": body.offset, "query": body.query}
    prefix = await _authorized(user, "search", value)
    items = await svc.store.asearch(
        _inner(user, prefix), query=body.query, filter=body.filter,
        limit=body.limit, offset=body.offset, refresh_ttl=body.refresh_ttl,
    )
    return {"items": [_item(user, i) for i in items]}


@router.post("/namespaces")
async def list_namespaces(body: StoreNamespaces, svc: Svc, user: User) -> dict[str, Any]:
    value = {"namespace": body.prefix or [], "suffix": body.suffix, "max_depth": body.max_depth,
             "limit": body.limit, "offset": body.offset}
    prefix = await _authorized(user, "list_namespaces", value)
    root = _root(user)
    depth = body.max_depth + len(root) if body.max_depth else None
    found = await svc.store.alist_namespaces(
        prefix=_inner(user, prefix), suffix=tuple(body.suffix) if body.suffix else None,
        max_depth=depth, limit=body.limit, offset=body.offset,
    )
    return {"namespaces": [_outer(user, ns) for ns in found]}
