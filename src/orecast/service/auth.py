"""Who is calling. API keys (`ORECAST_API_KEYS="alice:KEY1,bob:KEY2:admin"`, Bearer or `x-api-key`), or
LangGraph custom auth (`custom_auth.py`), or nobody configured: the one local user.

Under API keys resources carry their creator's id and another user's resource answers 404, as a
missing one does; under custom auth the `Auth` object's handlers decide instead.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request

from orecast.service.custom_auth import Access, Filter
from orecast.service.errors import Forbidden, Unauthorized


@dataclass(frozen=True)
class Principal:
    """Who is calling: `user_id` (None: the one local user, or custom auth, where nothing is owned by
    id); `admin` sees everything; `access` is set under custom auth, whose handlers decide."""

    user_id: str | None
    admin: bool = False
    access: Access | None = None

    @property
    def is_admin(self) -> bool:
        """An admin key, the local user (no auth configured), or custom auth granting "admin"."""
        return self.admin or (self.access is not None and "admin" in self.access.permissions)

    def may_see(self, owner: str | None) -> bool:
        return self.admin or self.access is not None or owner is None or owner == self.user_id

    async def authorize(self, resource: str, action: str, value: dict[str, Any]) -> Filter | None:
        """The custom-auth handler's filter for this request (it may edit `value`); None: no filter."""
        return None if self.access is None else await self.access.authorize(resource, action, value)


@dataclass(frozen=True)
class ApiKeys:
    """The configured keys; empty means auth is off."""

    keys: tuple[tuple[str, Principal], ...] = ()

    @classmethod
    def parse(cls, spec: str) -> ApiKeys:
        """Parse `user:KEY[:admin],…`; raises ValueError on a malformed entry (the key is never echoed)."""
        keys = []
        for n, entry in enumerate(e.strip() for e in spec.split(",") if e.strip()):
            parts = entry.split(":")
            if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
                raise ValueError(f"ORECAST_API_KEYS entry {n + 1} is not user:KEY[:admin]")
            if len(parts) == 3 and parts[2] != "admin":
                raise ValueError(f"ORECAST_API_KEYS entry {n + 1}: the third part can only be 'admin'")
            keys.append((parts[1], Principal(parts[0], admin=len(parts) == 3)))
        return cls(tuple(keys))

    @property
    def enabled(self) -> bool:
        return bool(self.keys)

    def principal(self, user_id: str) -> Principal | None:
        """The configured user `user_id` (None: not, or no longer, configured)."""
        return next((p for _, p in self.keys if p.user_id == user_id), None)

    def lookup(self, presented: str) -> Principal | None:
        found = None
        for key, principal in self.keys:
            # compare_digest on every key so the time taken says nothing about which one matched
            if hmac.compare_digest(key.encode(), presented.encode()):
                found = principal
        return found


def presented_key(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.headers.get("x-api-key")


async def require_user(request: Request) -> Principal:
    if request.app.state.custom_auth is not None:
        return Principal(None, access=await request.app.state.custom_auth.authenticate(request))
    keys: ApiKeys = request.app.state.api_keys
    if not keys.enabled:
        return Principal(None, admin=True)
    presented = presented_key(request)
    if not presented:
        raise Unauthorized("an API key is required (Authorization: Bearer KEY or x-api-key)")
    principal = keys.lookup(presented)
    if principal is None:
        raise Unauthorized("unknown API key")
    return principal


async def require_admin(request: Request) -> Principal:
    """The caller, who must be an admin: 401 without a valid key, 403 for any other user."""
    principal = await require_user(request)
    if not principal.is_admin:
        raise Forbidden("this needs an admin key")
    return principal


User = Annotated[Principal, Depends(require_user)]
Admin = Annotated[Principal, Depends(require_admin)]
