"""A small `langgraph_sdk.Auth` for the custom-auth tests, shaped like LangGraph's own docs: tokens name
users; every resource is stamped with its owner and filtered by it; threads can be shared with others
(`shared_with`, read and searched with `$contains`); deleting needs the `write` permission; each user's
store items live under their identity."""

from __future__ import annotations

from langgraph_sdk import Auth

USERS = {
    # a field beyond identity and permissions, which a graph may use but no run row may keep
    "tok-alice": {"identity": "alice", "permissions": ["write"], "upstream_token": "alice-upstream-secret"},
    "tok-bob": {"identity": "bob", "permissions": []},
    "tok-carol": {"identity": "carol", "permissions": ["admin"]},  # may open the operations view
}

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    token = (authorization or "").removeprefix("Bearer ")
    if token not in USERS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
    return USERS[token]  # type: ignore[return-value]  # identity and permissions


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict) -> dict:
    mine = {"owner": ctx.user.identity}
    if isinstance(value.get("metadata"), dict):
        value["metadata"].update(mine)
    return mine


@auth.on.threads.read
@auth.on.threads.search
async def owner_or_shared(ctx: Auth.types.AuthContext, value: dict) -> dict:
    me = ctx.user.identity
    return {"$or": [{"owner": me}, {"shared_with": {"$contains": me}}]}


@auth.on.threads.delete
async def writers_delete(ctx: Auth.types.AuthContext, value: dict) -> dict | bool:
    if "write" not in ctx.permissions:
        return False
    return {"owner": ctx.user.identity}


@auth.on.store
async def own_namespace(ctx: Auth.types.AuthContext, value: dict) -> None:
    value["namespace"] = (ctx.user.identity, *value["namespace"])
