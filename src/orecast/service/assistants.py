"""Assistants: one per served graph (id = uuid5 of the graph id, as LangGraph does) plus stored configurations."""

from __future__ import annotations

import functools
import json
import uuid
from typing import Any

from orecast.service.auth import Principal
from orecast.service.custom_auth import matches
from orecast.service.db import Db
from orecast.service.db.connection import now_iso
from orecast.service.errors import Conflict, Forbidden, NotFound, ServiceError
from orecast.service.graphs import GraphRegistry
from orecast.service.threads import json_contains

# LangGraph's namespace for graph-derived assistant ids, so ids match `langgraph dev`'s.
NAMESPACE_GRAPH = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
SYSTEM = {"created_by": "system"}

COLUMNS = """assistant_id, graph_id, name, description, config, context, metadata, version, owner,
    created_at, updated_at"""
SELECT_ONE = f"SELECT {COLUMNS} FROM service_assistants WHERE assistant_id = ?"
SELECT_ALL = f"SELECT {COLUMNS} FROM service_assistants ORDER BY created_at, assistant_id"
INSERT = f"""INSERT INTO service_assistants ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
ON CONFLICT (assistant_id) DO NOTHING"""
INSERT_MYSQL = f"""INSERT INTO service_assistants ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
ON DUPLICATE KEY UPDATE assistant_id = assistant_id"""
UPDATE = """UPDATE service_assistants SET graph_id = ?, name = ?, description = ?, config = ?, context = ?,
    metadata = ?, version = ?, updated_at = ? WHERE assistant_id = ?"""
# taken first by an update: the row's lock orders concurrent updates, so each reads the versions
# the one before it added and numbers its own after them
TOUCH = "UPDATE service_assistants SET updated_at = ? WHERE assistant_id = ?"
DELETE = "DELETE FROM service_assistants WHERE assistant_id = ?"

VERSION_COLUMNS = "assistant_id, version, graph_id, name, description, config, context, metadata, created_at"
INSERT_VERSION = f"INSERT INTO service_assistant_versions ({VERSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
SELECT_NEXT_VERSION = "SELECT COALESCE(MAX(version), 0) + 1 FROM service_assistant_versions WHERE assistant_id = ?"
SELECT_VERSION = f"SELECT {VERSION_COLUMNS} FROM service_assistant_versions WHERE assistant_id = ? AND version = ?"
SELECT_VERSIONS = f"""SELECT {VERSION_COLUMNS} FROM service_assistant_versions WHERE assistant_id = ?
    ORDER BY version DESC"""
DELETE_VERSIONS = "DELETE FROM service_assistant_versions WHERE assistant_id = ?"


@functools.lru_cache(maxsize=256)  # a uuid5 (a SHA-1) per call; a run asks two or three times
def graph_assistant_id(graph_id: str) -> str:
    return str(uuid.uuid5(NAMESPACE_GRAPH, graph_id))


def _row(row: tuple[Any, ...]) -> dict[str, Any]:
    (assistant_id, graph_id, name, description, config, context, metadata, version, owner,
     created_at, updated_at) = row
    return {
        "assistant_id": assistant_id,
        "graph_id": graph_id,
        "name": name,
        "description": description,
        "config": json.loads(config),
        "context": json.loads(context),
        "metadata": json.loads(metadata),
        "version": version,
        "created_at": created_at,
        "updated_at": updated_at,
        "_owner": owner,
    }


def _version_row(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of `service_assistant_versions` as the SDK's `AssistantVersion`."""
    assistant_id, version, graph_id, name, description, config, context, metadata, created_at = row
    return {
        "assistant_id": assistant_id,
        "version": version,
        "graph_id": graph_id,
        "config": json.loads(config),
        "context": json.loads(context),
        "metadata": json.loads(metadata),
        "created_at": created_at,
        "name": name,
        "description": description,
    }


def public(assistant: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in assistant.items() if not k.startswith("_")}


def _config_and_context(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The config and context a create or update gives, kept in step as langgraph-api keeps them: the
    config's `configurable` is the context when one is given, and a context alone becomes the config's
    `configurable`; both at once is a 400."""
    config, context = dict(body.get("config") or {}), body.get("context")
    configurable = config.get("configurable")
    if configurable and context:
        raise ServiceError(
            "give either context or config.configurable, not both: context replaces configurable since LangGraph 0.6"
        )
    if configurable:
        return config, dict(configurable)
    if context:
        config["configurable"] = context
    return config, context


KNOWN_MAX = 1024  # assistants remembered for runs; past that the memory starts afresh


def version_of(assistant: dict[str, Any]) -> tuple[Any, Any]:
    """What tells one state of an assistant's row from another: `version` counts updates, and
    `updated_at` tells a row deleted and created again (its version starts at 1 again)."""
    return assistant["version"], assistant["updated_at"]


class Assistants:
    def __init__(self, db: Db, graphs: GraphRegistry) -> None:
        self.db = db
        self.graphs = graphs
        # Rows read for runs, by the id a run named (a graph's name or an assistant id). A run on an
        # existing thread uses the row from here without a read; its admission checks, in the
        # statement it runs anyway, that the row still has this `version_of` (another process may
        # have changed it), and the run starts again with a fresh read if not (`Stale`).
        self._known: dict[str, tuple[Any, ...]] = {}

    async def seed(self) -> None:
        """One system assistant per served graph, named after it."""
        for graph_id in self.graphs.ids():
            await self._insert(graph_assistant_id(graph_id), graph_id, graph_id, None, {}, {}, SYSTEM, None)

    async def _insert(
        self,
        assistant_id: str,
        graph_id: str,
        name: str,
        description: str | None,
        config: dict[str, Any],
        context: dict[str, Any],
        metadata: dict[str, Any],
        owner: str | None,
    ) -> bool:
        now = now_iso()
        fields = (json.dumps(config), json.dumps(context), json.dumps(metadata, ensure_ascii=False))
        async with self.db.transaction() as tx:
            changed = await tx.execute(
                INSERT_MYSQL if self.db.dialect == "mysql" else INSERT,
                (assistant_id, graph_id, name, description, *fields, owner, now, now),
            )
            if changed == 1:
                await tx.execute(INSERT_VERSION, (assistant_id, 1, graph_id, name, description, *fields, now))
        return changed == 1

    async def get(
        self, assistant_id: str, user: Principal, action: str = "read", value: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """By id, or by graph id (as the SDK allows `assistant_id="agent"`); 404 if not visible or the
        custom-auth handler for `action` filters it out."""
        filt = await user.authorize("assistants", action, value if value is not None else {"assistant_id": assistant_id})
        found = await self._find(assistant_id, user)
        if not matches(found["metadata"], filt):
            raise NotFound(f"assistant {assistant_id} not found")
        return found

    async def for_run(self, assistant_id: str, user: Principal, *, remembered: bool = False) -> dict[str, Any]:
        """The assistant a run uses: a served graph's own is open to all, as in langgraph-api; another
        one needs its `read` handler's consent. `remembered`: the row may come from memory — only
        for a caller whose admission checks its `version_of` (see `_known`)."""
        row = self._known.get(assistant_id) if remembered else None
        if row is None:
            row = await self._read(assistant_id)
            if row is not None:
                if len(self._known) >= KNOWN_MAX:
                    self._known.clear()
                self._known[assistant_id] = row
        found = self._visible(row, assistant_id, user)
        if found["assistant_id"] == graph_assistant_id(found["graph_id"]):
            return found
        filt = await user.authorize("assistants", "read", {"assistant_id": found["assistant_id"]})
        if not matches(found["metadata"], filt):
            raise NotFound(f"assistant {found['assistant_id']} not found")
        return found

    def forget(self, assistant_id: str) -> None:
        """Read the assistant `assistant_id` names again for its next run (it changed)."""
        self._known.pop(assistant_id, None)

    async def _find(self, assistant_id: str, user: Principal) -> dict[str, Any]:
        return self._visible(await self._read(assistant_id), assistant_id, user)

    def _visible(self, row: tuple[Any, ...] | None, assistant_id: str, user: Principal) -> dict[str, Any]:
        """The row as an assistant (its JSON parsed afresh: the caller may change what it gets), if
        `user` may see it and its graph is served here."""
        if row is None or not user.may_see(row[8]) or row[1] not in self.graphs:
            raise NotFound(f"assistant {assistant_id} not found")
        return _row(row)

    async def _read(self, assistant_id: str) -> tuple[Any, ...] | None:
        # a served graph's name (what most clients send) names its system assistant: one lookup
        key = graph_assistant_id(assistant_id) if assistant_id in self.graphs else assistant_id
        async with self.db.read() as tx:
            row = await tx.fetchone(SELECT_ONE, (key,))
            if row is None and key != assistant_id:
                row = await tx.fetchone(SELECT_ONE, (assistant_id,))
        return row

    async def create(self, body: dict[str, Any], user: Principal) -> dict[str, Any]:
        graph_id = body["graph_id"]
        if graph_id not in self.graphs:
            raise NotFound(f"graph {graph_id} is not served here (served: {', '.join(self.graphs.ids())})")
        assistant_id = body.get("assistant_id") or str(uuid.uuid4())
        value = {**body, "assistant_id": assistant_id, "metadata": dict(body.get("metadata") or {})}
        await user.authorize("assistants", "create", value)
        config, context = _config_and_context(body)
        created = await self._insert(
            assistant_id, graph_id, body.get("name") or "Untitled", body.get("description"),
            config, context or {}, value["metadata"], user.user_id,
        )
        if not created and body.get("if_exists", "raise") == "raise":
            raise Conflict(f"assistant {assistant_id} already exists")
        return await self.get(assistant_id, user)

    async def update(self, assistant_id: str, body: dict[str, Any], user: Principal) -> dict[str, Any]:
        value = {**body, "assistant_id": assistant_id, "metadata": dict(body.get("metadata") or {})}
        current = await self.get(assistant_id, user, "update", value)
        self._check_writable(current, user)
        graph_id = body.get("graph_id") or current["graph_id"]
        if graph_id not in self.graphs:
            raise NotFound(f"graph {graph_id} is not served here")
        merged = {**current["metadata"], **value["metadata"]}
        config, context = _config_and_context(body)
        assistant_id, now = current["assistant_id"], now_iso()
        name = body.get("name") or current["name"]
        description = body.get("description") if body.get("description") is not None else current["description"]
        fields = (
            json.dumps(config or current["config"]),  # as langgraph-api: an empty config keeps the current one
            json.dumps(context if context is not None else current["context"]),
            json.dumps(merged, ensure_ascii=False),
        )
        # as langgraph-api: each update is a new version, numbered after the highest one (after a
        # `set_latest` back to 1 of 3 versions, the next update is 4)
        async with self.db.transaction() as tx:
            if not await tx.execute(TOUCH, (now, assistant_id)):
                raise NotFound(f"assistant {assistant_id} not found")
            version = (await tx.fetchone(SELECT_NEXT_VERSION, (assistant_id,)))[0]
            await tx.execute(INSERT_VERSION, (assistant_id, version, graph_id, name, description, *fields, now))
            await tx.execute(UPDATE, (graph_id, name, description, *fields, version, now, assistant_id))
        return await self.get(assistant_id, user)

    async def versions(self, assistant_id: str, body: dict[str, Any], user: Principal) -> list[dict[str, Any]]:
        """`assistants.get_versions`: newest first, those whose metadata contains `metadata`; 404 when
        none is left (as langgraph-api answers)."""
        filt = await user.authorize("assistants", "read", {"assistant_id": assistant_id})
        found = await self._find(assistant_id, user)
        async with self.db.read() as tx:
            rows = await tx.fetchall(SELECT_VERSIONS, (found["assistant_id"],))
        wanted = body.get("metadata") or {}
        kept = [v for v in map(_version_row, rows) if json_contains(v["metadata"], wanted) and matches(v["metadata"], filt)]
        offset, limit = int(body.get("offset") or 0), int(body.get("limit") or 10)
        if not kept[offset : offset + limit]:
            raise NotFound(f"assistant {assistant_id} has no such versions")
        return kept[offset : offset + limit]

    async def set_latest(self, assistant_id: str, version: int, user: Principal) -> dict[str, Any]:
        """`assistants.set_latest`: the assistant becomes its version `version` again (what runs use)."""
        current = await self.get(assistant_id, user, "update", {"assistant_id": assistant_id, "version": version})
        self._check_writable(current, user)
        async with self.db.transaction() as tx:
            row = await tx.fetchone(SELECT_VERSION, (current["assistant_id"], version))
            if row is None:
                raise NotFound(f"version {version} of assistant {assistant_id} not found")
            chosen = _version_row(row)
            if chosen["graph_id"] not in self.graphs:
                raise NotFound(f"graph {chosen['graph_id']} of version {version} is not served here")
            # the whole version, its context too (langgraph dev's in-memory runtime keeps the newer
            # context): a run then sees the assistant as it was
            await tx.execute(UPDATE, (
                chosen["graph_id"], chosen["name"], chosen["description"], row[5], row[6], row[7], version,
                now_iso(), current["assistant_id"],
            ))
        return await self.get(current["assistant_id"], user)

    async def delete(self, assistant_id: str, user: Principal) -> None:
        current = await self.get(assistant_id, user, "delete")
        self._check_writable(current, user)
        async with self.db.transaction() as tx:
            await tx.execute(DELETE, (current["assistant_id"],))
            await tx.execute(DELETE_VERSIONS, (current["assistant_id"],))

    @staticmethod
    def _check_writable(assistant: dict[str, Any], user: Principal) -> None:
        if assistant["assistant_id"] == graph_assistant_id(assistant["graph_id"]) and not user.admin:
            raise Forbidden("the assistants of served graphs can only be changed by an admin")

    async def search(self, body: dict[str, Any], user: Principal, lookahead: int = 0) -> list[dict[str, Any]]:
        """The page `body` asks for, sorted as langgraph-api does (`created_at` and descending unless
        told otherwise), with `lookahead` more items after it (to tell whether a next page exists)."""
        filt = await user.authorize(
            "assistants", "search",
            {"graph_id": body.get("graph_id"), "metadata": body.get("metadata") or {},
             "limit": body.get("limit"), "offset": body.get("offset")},
        )
        async with self.db.read() as tx:
            rows = await tx.fetchall(SELECT_ALL)
        found = []
        for row in rows:
            item = _row(row)
            if not user.may_see(item["_owner"]) or item["graph_id"] not in self.graphs:
                continue
            if not matches(item["metadata"], filt):
                continue
            if body.get("graph_id") and item["graph_id"] != body["graph_id"]:
                continue
            if body.get("name") and body["name"].lower() not in item["name"].lower():
                continue
            if not json_contains(item["metadata"], body.get("metadata") or {}):  # as a thread search
                continue
            found.append(item)
        sort_by = body.get("sort_by") or "created_at"
        found.sort(key=lambda a: (str(a.get(sort_by, "")), a["assistant_id"]),
                   reverse=(body.get("sort_order") or "desc") == "desc")
        offset, limit = int(body.get("offset") or 0), int(body.get("limit") or 10)
        return found[offset : offset + limit + lookahead]
