"""LangGraph custom auth: a `langgraph_sdk.Auth` named by `langgraph.json` `auth.path` (or `--auth`).

Its `@auth.authenticate` handler turns each request into a user; its `@auth.on…` handlers then decide,
per resource and action, as langgraph-api does: None or True allows, False answers 403, a dict is a
metadata filter the resource must match (404 otherwise; searches return only matches), and a handler
may change the request's `value` in place (`metadata` of a created thread, run or assistant, a store
`namespace`). The most specific handler wins: (resource, action), (resource, *), (*, action), (*, *).
With custom auth the built-in API-key owners are off: the handlers are the access control.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from langgraph_sdk import Auth

from orecast.service.errors import ServiceError

Filter = dict[str, Any]
_MISSING = object()
STORED_FIELDS = ("identity", "display_name", "is_authenticated", "permissions")


def stored_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields of a user that are stored with a run or a cron (`STORED_FIELDS`), none other."""
    return {k: fields[k] for k in STORED_FIELDS if k in fields}


class AuthDenied(ServiceError):
    """An auth handler refused the request (its status: 401 from authenticate, 403 from a handler)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = {401: "unauthorized", 403: "forbidden", 404: "not_found"}.get(status, "auth_error")


class AuthHandlerError(ServiceError):
    """An auth handler returned something LangGraph does not define."""

    status, code = 500, "auth_handler_error"


class User(Mapping[str, Any]):
    """The authenticated user as handlers see it (`ctx.user`): `identity`, `display_name`,
    `is_authenticated`, `permissions`, and every field the authenticate handler returned."""

    def __init__(self, fields: Mapping[str, Any]) -> None:
        self._fields = {"is_authenticated": True, "display_name": fields["identity"], **fields}

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._fields[name]
        except KeyError as exc:
            raise AttributeError(name) from exc

    def dict(self) -> dict[str, Any]:
        return dict(self._fields)

    def identity_only(self) -> dict[str, Any]:
        """What is stored of the user with a run: who it is and what it may do, none of the other fields
        the authenticate handler returned (a token for a service it calls, say)."""
        return stored_fields(self._fields)


def _user(result: Any) -> User:
    """What an authenticate handler may return (a string, a dict with `identity`, an object) as a `User`."""
    if isinstance(result, str):
        return User({"identity": result})
    if isinstance(result, Mapping) and isinstance(result.get("identity"), str):
        return User(result)
    identity = getattr(result, "identity", None)
    if isinstance(identity, str):
        fields = {k: getattr(result, k) for k in ("display_name", "is_authenticated", "permissions") if hasattr(result, k)}
        return User({**fields, "identity": identity})
    raise AuthHandlerError("the authenticate handler must return a string or a user with a string `identity`")


def _check_one(have: Any, cond: Any) -> bool:
    if not isinstance(cond, Mapping):
        return have == cond
    for op, want in cond.items():
        if op == "$eq":
            ok = have == want
        elif op == "$contains":
            wanted = want if isinstance(want, list) else [want]
            ok = isinstance(have, list) and all(w in have for w in wanted)
        else:
            raise AuthHandlerError(f"auth filter operator {op!r} is not supported ($eq, $contains, $or, $and)")
        if not ok:
            return False
    return True


def matches(metadata: Mapping[str, Any], filt: Filter | None) -> bool:
    """Whether `metadata` satisfies an auth handler's filter (LangGraph's filter language)."""
    for key, cond in (filt or {}).items():
        if key in ("$or", "$and"):
            if not isinstance(cond, list):
                raise AuthHandlerError(f"auth filter {key} wants a list of filters")
            results = (matches(metadata, group) for group in cond)
            if not (any(results) if key == "$or" else all(results)):
                return False
        elif not _check_one(metadata.get(key, _MISSING), cond):
            return False
    return True


def equalities(filt: Filter | None) -> dict[str, Any]:
    """The plain `key == value` part of a filter, which a metadata search can do in SQL."""
    found = {}
    for key, cond in (filt or {}).items():
        if key.startswith("$"):
            continue
        if not isinstance(cond, Mapping):
            found[key] = cond
        elif set(cond) == {"$eq"}:
            found[key] = cond["$eq"]
    return found


@dataclass(frozen=True)
class Access:
    """One caller authenticated by custom auth; `authorize` runs the matching on-handler."""

    auth: Auth
    user: User
    permissions: tuple[str, ...]

    async def authorize(self, resource: str, action: str, value: dict[str, Any]) -> Filter | None:
        handler = _handler(self.auth, resource, action)
        if handler is None:
            return None
        ctx = Auth.types.AuthContext(
            user=self.user, permissions=list(self.permissions), resource=resource, action=action  # type: ignore[arg-type]  # names checked by the callers
        )
        try:
            result = await handler(ctx=ctx, value=value)
        except Auth.exceptions.HTTPException as exc:
            raise AuthDenied(exc.status_code, str(exc.detail)) from exc
        except AssertionError as exc:  # langgraph-api answers a failed assert in a handler with 403
            raise AuthDenied(403, str(exc) or "forbidden") from exc
        if result is None or result is True:
            return None
        if result is False:
            raise AuthDenied(403, "forbidden")
        if not isinstance(result, dict):
            raise AuthHandlerError(f"an auth handler returned {type(result).__name__}; expected a filter, None or a bool")
        return result


def _handler(auth: Auth, resource: str, action: str) -> Any:
    for key in ((resource, action), (resource, "*"), ("*", action), ("*", "*")):
        if key in auth._handlers:
            return auth._handlers[key][-1]
    return auth._global_handlers[-1] if auth._global_handlers else None


def _arguments(request: Request, wanted: Mapping[str, inspect.Parameter]) -> dict[str, Any]:
    available = {
        "request": lambda: request,
        "authorization": lambda: request.headers.get("authorization"),
        "headers": lambda: {k.lower(): v for k, v in request.scope.get("headers", [])},
        "path": lambda: request.url.path,
        "method": lambda: request.method,
        "query_params": lambda: request.query_params,
        "path_params": lambda: request.path_params,
        "scope": lambda: request.scope,
        "scopes": lambda: [],
    }
    return {name: available[name]() for name in wanted if name in available}


class CustomAuth:
    """A loaded `Auth` object: `authenticate(request)` → `Access`."""

    def __init__(self, auth: Auth) -> None:
        if not isinstance(auth, Auth):
            raise TypeError(f"auth.path names a {type(auth).__name__}, not a langgraph_sdk.Auth")
        self.auth = auth
        authenticate = auth._authenticate_handler
        self._params = inspect.signature(authenticate).parameters if authenticate else {}

    async def authenticate(self, request: Request) -> Access:
        handler = self.auth._authenticate_handler
        if handler is None:  # no authenticate handler: every caller is one anonymous user
            return Access(self.auth, User({"identity": "anonymous", "is_authenticated": False}), ())
        try:
            result = await handler(**_arguments(request, self._params))
        except Auth.exceptions.HTTPException as exc:
            raise AuthDenied(exc.status_code, str(exc.detail)) from exc
        except AssertionError as exc:
            raise AuthDenied(401, str(exc) or "unauthorized") from exc
        permissions: Any = ()
        if isinstance(result, tuple) and len(result) == 2:
            permissions, result = result
        user = _user(result)
        permissions = permissions or user.get("permissions") or ()
        return Access(self.auth, user, tuple(permissions))
