"""Threads: rows of the checkpoint store's threads table, their state through the graph, their owner.

Under API keys the owner is kept in the thread's metadata under `owner` (as LangGraph's own auth
does), so a user's search is one indexed metadata filter; callers cannot set or change it. Under
custom auth that key is the handlers' to use, and each call asks them (`Principal.authorize`).
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import aclosing
from datetime import datetime, timedelta
from typing import Any

from langgraph.errors import InvalidUpdateError
from langgraph.pregel import Pregel
from langgraph.types import StateUpdate

from orecast.checkpoint import OrecastCheckpointer, ThreadInfo
from orecast.checkpoint.errors import StoreError
from orecast.checkpoint.filters import check_metadata_filter
from orecast.checkpoint.ids import UnstorableId, checkpoint_time, new_thread_id
from orecast.checkpoint.sweep import TtlPolicy, set_thread_ttl, thread_ttl
from orecast.service.auth import Principal
from orecast.service.custom_auth import Filter, equalities, matches
from orecast.service.encode import History, checkpoint_of, jsonable, thread_state
from orecast.service.errors import Conflict, Invalid, NotFound, ServiceError
from orecast.service.graphs import GraphRegistry
from orecast.service.runs.execute import command_of

OWNER = "owner"
KNOWN_MAX = 10_000  # threads remembered for runs; past that the memory starts afresh
_SCAN_PAGE = 100  # rows read per query while a search filters on more than SQL can
# `sort_by` of LangGraph's SDK (`ThreadSortBy`) → the threads table's column it orders by
SORT_BY = {
    "thread_id": "thread_id",
    "status": "status",
    "created_at": "created_at",
    "updated_at": "updated_at",
    "state_updated_at": "head_checkpoint_id",  # checkpoint ids sort by time (checkpoint/threads.py)
}


def require_uuid_id(thread_id: str, user: Principal) -> None:
    """With auth on, a caller-chosen thread id must be a UUID (langgraph-api takes nothing else).

    Thread ids are one namespace for all users, so creating one must say when an id is taken (409),
    whoever holds it; only an unguessable id makes that answer worthless to anyone not already
    holding the id. Without auth there is one user and any id is fine.
    """
    if user.user_id is None and user.access is None:
        return
    try:
        uuid.UUID(thread_id)
    except ValueError:
        raise Invalid("thread_id: must be a UUID when auth is on") from None


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: as Python's `==`, except that `true` is not `1` (nor `false` `0`)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def json_contains(document: Any, wanted: Any) -> bool:
    """Whether `document` contains `wanted` as a metadata filter matches (PostgreSQL's `@>`, as a
    thread search does in SQL): objects by their keys, recursively; a list holds each wanted element;
    scalars are equal as JSON (`true` is not `1`)."""
    if isinstance(wanted, Mapping):
        return isinstance(document, Mapping) and all(
            k in document and json_contains(document[k], v) for k, v in wanted.items()
        )
    if isinstance(wanted, list):
        return isinstance(document, list) and all(any(json_contains(d, w) for d in document) for w in wanted)
    return same_json(document, wanted)


def extract_path(thread: Mapping[str, Any], path: str) -> Any:
    """The value at `path` in a public thread (`values.messages[-1].content`), or None where it does
    not lead anywhere, as langgraph-api's search `extract` answers."""
    current: Any = thread
    for part in re.split(r"\.|\[", path):
        if current is None:
            return None
        if part.endswith("]"):
            try:
                current = current[int(part[:-1])] if isinstance(current, list) else None
            except (ValueError, IndexError):
                return None
        elif part:
            current = current.get(part) if isinstance(current, Mapping) else None
    return current



class StateUnreadable(Conflict):
    """The graph cannot build the thread's state from what is stored. A run's input its reducer refused
    (`{"messages": 5}`, a message of an unknown role) stays a pending write of the head checkpoint, and
    every read applies it again: each read of the thread was a 500, and so was every search listing
    it (the page's conversation list too). The thread can still be run from an earlier checkpoint,
    updated (`update_state`) or deleted."""


@contextlib.contextmanager
def unreadable_state() -> Iterator[None]:
    """A state read's failure to apply what is stored as `StateUnreadable` (409); the store's own errors
    (unreachable, an id it cannot keep) stay as they are."""
    try:
        yield
    except (StoreError, UnstorableId):
        raise
    except (InvalidUpdateError, NotImplementedError, TypeError, ValueError, KeyError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise StateUnreadable(f"the thread's state cannot be read: {type(exc).__name__}: {first}") from exc


async def read_state(graph: Pregel, config: Any, subgraphs: bool = False) -> Any:
    with unreadable_state():
        return await graph.aget_state(config, subgraphs=subgraphs)

class Threads:
    def __init__(
        self, saver: OrecastCheckpointer, graphs: GraphRegistry, default_graph: str, *, reserve_owner: bool = True,
        ttl_policy: TtlPolicy | None = None,
    ) -> None:
        self.saver = saver
        self.ttl_policy = ttl_policy or TtlPolicy()
        self.graphs = graphs
        self.default_graph = default_graph
        self.reserve_owner = reserve_owner
        # Rows read for runs, by thread id. A run on a thread found here is prepared without a read;
        # its admission checks the store's `same_thread_condition` (the row still exists with this
        # metadata, which is all the run's checks look at), and the run starts again with a fresh
        # read if not (`Stale`).
        self._known: dict[str, ThreadInfo] = {}

    def known(self, thread_id: str) -> ThreadInfo | None:
        return self._known.get(thread_id)

    def remember(self, info: ThreadInfo) -> None:
        if len(self._known) >= KNOWN_MAX:
            self._known.clear()
        self._known[info.thread_id] = info

    def forget(self, thread_id: str) -> None:
        self._known.pop(thread_id, None)

    def _clean(self, metadata: Mapping[str, Any] | None) -> dict[str, Any]:
        if not self.reserve_owner:
            return dict(metadata or {})
        return {k: v for k, v in (metadata or {}).items() if k != OWNER}

    # -- rows ----------------------------------------------------------------------------------------

    async def info(
        self, thread_id: str, user: Principal, action: str = "read", value: dict[str, Any] | None = None
    ) -> ThreadInfo:
        """The thread, if `user` may do `action` on it (custom auth: its handler, given `value`); else 404."""
        value = value if value is not None else {"thread_id": thread_id}
        info = await self.saver.aget_thread(thread_id)
        if info is None:
            await user.authorize("threads", action, value)  # a handler's refusal comes first
            raise NotFound(f"thread {thread_id} not found")
        return await self.check(info, user, action, value)

    async def check(self, info: ThreadInfo, user: Principal, action: str, value: dict[str, Any]) -> ThreadInfo:
        """`info` (already read), if `user` may do `action` on it, as `info()` decides; else 404."""
        filt = await user.authorize("threads", action, value)
        if not user.may_see(info.metadata.get(OWNER)) or not matches(info.metadata, filt):
            raise NotFound(f"thread {info.thread_id} not found")
        return info

    def graph_for(self, info: ThreadInfo) -> Pregel:
        graph_id = info.metadata.get("graph_id")
        served = self.graphs.get(graph_id) if isinstance(graph_id, str) else None
        served = served or self.graphs.get(self.default_graph)
        assert served is not None
        return served.graph

    async def create(
        self,
        user: Principal,
        *,
        thread_id: str | None,
        metadata: Mapping[str, Any] | None,
        if_exists: str | None,
        ttl: Mapping[str, Any] | None = None,
        supersteps: Sequence[Mapping[str, Any]] | None = None,
    ) -> ThreadInfo:
        if thread_id is not None:
            require_uuid_id(thread_id, user)
        thread_id = thread_id or new_thread_id()
        value = {"thread_id": thread_id, "metadata": dict(metadata or {}), "if_exists": if_exists}
        filt = await user.authorize("threads", "create", value)
        existing = await self.saver.aget_thread(thread_id)
        if existing is not None:
            if if_exists == "do_nothing" and user.may_see(existing.metadata.get(OWNER)) and matches(existing.metadata, filt):
                return existing
            # the same answer whoever holds the id: it says the id is taken, nothing of the thread
            raise Conflict(f"thread {thread_id} already exists")
        info = await self._insert(user, thread_id, value["metadata"])
        await self._set_ttl(thread_id, ttl)
        if supersteps:
            try:
                await self._apply_supersteps(info, supersteps)
            except ServiceError:  # a rejected request leaves nothing behind
                await self.saver.adelete_thread(thread_id)
                raise
            info = await self.saver.aget_thread(thread_id) or info
        return info

    async def _apply_supersteps(self, info: ThreadInfo, supersteps: Sequence[Mapping[str, Any]]) -> None:
        """`threads.create(supersteps=…)`: each superstep's updates written at once, as if their
        `as_node` had returned them (LangGraph's `bulk_update_state`, as langgraph-api does)."""
        steps = [
            [StateUpdate(command_of(u["command"]) if u.get("command") else u.get("values"), u["as_node"])
             for u in step["updates"]]
            for step in supersteps
        ]
        try:
            await self.graph_for(info).abulk_update_state(self._config(info.thread_id, None), steps)
        except InvalidUpdateError as exc:  # an unknown node: 400, as update_state
            raise ServiceError(f"supersteps: {exc}") from exc
        except (ValueError, KeyError) as exc:
            raise Invalid(f"supersteps: {exc}") from exc

    async def _set_ttl(self, thread_id: str, ttl: Mapping[str, Any] | None) -> None:
        """The thread's own TTL (`{ttl: minutes, strategy}`), counted from its last activity."""
        if ttl is not None:
            await set_thread_ttl(self.saver, thread_id, timedelta(minutes=ttl["ttl"]), ttl["strategy"])

    async def ttl(self, thread_id: str) -> dict[str, Any] | None:
        """`{strategy, ttl_minutes, expires_at}` of the TTL that applies to the thread, if one does."""
        found = await thread_ttl(self.saver, thread_id, self.ttl_policy)
        return None if found is None else {**found, "expires_at": found["expires_at"].isoformat()}

    async def create_for_run(self, user: Principal, thread_id: str, metadata: Mapping[str, Any]) -> ThreadInfo:
        """The thread a run creates (stateless, or `if_not_exists='create'`), with the run's metadata as
        langgraph-api gives it; its `create_run` handler has already been asked."""
        existing = await self.saver.aget_thread(thread_id)
        if existing is not None:  # created meanwhile by another request: it must be the caller's
            return await self.info(thread_id, user)
        return await self._insert(user, thread_id, metadata)

    async def _insert(self, user: Principal, thread_id: str, metadata: Mapping[str, Any]) -> ThreadInfo:
        patch = self._clean(metadata)
        if user.user_id is not None:
            patch[OWNER] = user.user_id
        return await self.saver.aupdate_thread(thread_id, metadata=patch, status="idle")

    async def update(
        self, thread_id: str, user: Principal, metadata: Mapping[str, Any] | None,
        ttl: Mapping[str, Any] | None = None,
    ) -> ThreadInfo:
        value = {"thread_id": thread_id, "metadata": dict(metadata or {})}
        await self.info(thread_id, user, "update", value)
        info = await self.saver.aupdate_thread(thread_id, metadata=self._clean(value["metadata"]))
        await self._set_ttl(thread_id, ttl)
        return info

    async def copy(self, thread_id: str, user: Principal) -> ThreadInfo:
        await self.info(thread_id, user)
        target = new_thread_id()
        await user.authorize("threads", "create", {"thread_id": target})
        await self.saver.acopy_thread(thread_id, target)
        info = await self.saver.aget_thread(target)
        assert info is not None
        return info

    async def _search_filter(self, user: Principal, body: Mapping[str, Any]) -> tuple[dict[str, Any], Filter | None]:
        """(the store's `metadata` and `scope` that SQL filters on, the custom-auth filter; all must hold).
        `metadata` is what the user asked for (held to the store's cap on conditions); `scope`, what the
        service adds: the owner under API keys, a custom-auth handler's equalities."""
        value = {k: body.get(k) for k in ("metadata", "values", "status", "limit", "offset")}
        value["metadata"] = dict(value["metadata"] or {})
        filt = await user.authorize("threads", "search", value)
        scope = equalities(filt)
        if not user.admin and user.user_id is not None:
            scope[OWNER] = user.user_id
        return {"metadata": self._clean(value["metadata"]), "scope": scope}, filt

    async def search(self, user: Principal, body: Mapping[str, Any], lookahead: int = 0) -> list[ThreadInfo]:
        """The page `body` asks for, with `lookahead` more threads after it (to tell whether a next
        page exists)."""
        limit, offset = int(body.get("limit") or 10) + lookahead, int(body.get("offset") or 0)
        sort_by = body.get("sort_by") or "updated_at"
        if sort_by not in SORT_BY:
            raise Invalid(f"sort_by: cannot sort threads by {sort_by!r}")
        sql_filter, filt = await self._search_filter(user, body)
        values = body.get("values") or None
        if body.get("ids"):
            found = [t for i in body["ids"] if (t := await self.saver.aget_thread(i))]
            found = [t for t in found if user.may_see(t.metadata.get(OWNER)) and matches(t.metadata, filt)]
            if values:
                found = [t for t in found if await self._has_values(t, values)]
            return found[offset : offset + limit]
        rest = filt if filt and filt.keys() - equalities(filt).keys() else None
        query = {**sql_filter, "status": body.get("status"), "sort_by": SORT_BY[sort_by],
                 "sort_order": body.get("sort_order") or "desc"}
        try:
            if rest is None and values is None:
                return await self.saver.asearch_threads(**query, limit=limit, offset=offset)
            page: list[ThreadInfo] = []
            skipped = 0
            async with aclosing(self._scan(query, rest, values)) as found:
                async for info in found:  # the matches before the page are counted, not kept
                    if skipped < offset:
                        skipped += 1
                        continue
                    page.append(info)
                    if len(page) == limit:
                        break
            return page
        except ValueError as exc:
            raise Invalid(str(exc)) from exc

    async def count(self, user: Principal, body: Mapping[str, Any]) -> int:
        sql_filter, filt = await self._search_filter(user, body)
        rest = filt if filt and filt.keys() - equalities(filt).keys() else None
        values = body.get("values") or None
        try:
            if rest is None and values is None:
                return await self.saver.acount_threads(**sql_filter, status=body.get("status"))
            query = {**sql_filter, "status": body.get("status"), "sort_by": "thread_id", "sort_order": "asc"}
            found = 0
            async for _ in self._scan(query, rest, values):
                found += 1
            return found
        except ValueError as exc:
            raise Invalid(str(exc)) from exc

    async def _scan(
        self, query: dict[str, Any], filt: Filter | None, values: Mapping[str, Any] | None
    ) -> AsyncIterator[ThreadInfo]:
        """The threads SQL finds (`query`, in its order) that also match `filt` (operators SQL cannot
        express) and whose values hold `values`, read `_SCAN_PAGE` rows at a time."""
        start = 0
        while True:
            rows = await self.saver.asearch_threads(**query, limit=_SCAN_PAGE, offset=start)
            for info in rows:
                if (filt is None or matches(info.metadata, filt)) and (
                    values is None or await self._has_values(info, values)
                ):
                    yield info
            if len(rows) < _SCAN_PAGE:
                return
            start += _SCAN_PAGE

    async def _has_values(self, info: ThreadInfo, wanted: Mapping[str, Any]) -> bool:
        """Whether the thread's values (its head's state, as `public` shows them) hold each key of
        `wanted` with an equal value, as langgraph-api's `values` filter."""
        if info.head_checkpoint_id is None:
            return False
        try:
            snapshot = await read_state(self.graph_for(info), {"configurable": {"thread_id": info.thread_id}})
        except StateUnreadable:
            return False
        values = snapshot.values
        if not isinstance(values, Mapping):
            return False
        return all(k in values and same_json(jsonable(values[k]), v) for k, v in wanted.items())

    # -- the public shape -----------------------------------------------------------------------------

    @staticmethod
    def state_updated_at(info: ThreadInfo) -> datetime:
        """When the thread's state last changed: its head checkpoint's time (what `sort_by=
        state_updated_at` orders by), or its creation while it has no checkpoint."""
        if info.head_checkpoint_id is None:
            return info.created_at
        return checkpoint_time(info.head_checkpoint_id) or info.updated_at

    async def public(self, info: ThreadInfo, with_values: bool = True) -> dict[str, Any]:
        """The SDK's `Thread` (values and interrupts from the head checkpoint); one whose state cannot
        be read is still listed, with `values` null and why in `error`."""
        values: Any = None
        error: str | None = None
        interrupts: dict[str, list[dict[str, Any]]] = {}
        if with_values and info.head_checkpoint_id is not None:
            try:
                snapshot = await read_state(self.graph_for(info), {"configurable": {"thread_id": info.thread_id}})
            except StateUnreadable as exc:
                error = exc.message
            else:
                values = jsonable(snapshot.values)
                for task in snapshot.tasks:
                    if task.interrupts:
                        interrupts[task.id] = [{"value": jsonable(i.value), "id": i.id} for i in task.interrupts]
        return {
            "thread_id": info.thread_id,
            "created_at": info.created_at.isoformat(),
            "updated_at": info.updated_at.isoformat(),
            "state_updated_at": self.state_updated_at(info).isoformat(),
            "metadata": self._clean(info.metadata),
            "status": info.status,
            "config": {},
            "values": values,
            "interrupts": interrupts,
            "error": error,
        }

    # -- state ----------------------------------------------------------------------------------------

    @staticmethod
    def _config(thread_id: str, checkpoint: Mapping[str, Any] | None) -> dict[str, Any]:
        configurable: dict[str, Any] = {"thread_id": thread_id}
        for key in ("checkpoint_id", "checkpoint_ns", "checkpoint_map"):
            if checkpoint and checkpoint.get(key) is not None:
                configurable[key] = checkpoint[key]
        return {"configurable": configurable}

    async def require_checkpoint(self, thread_id: str, checkpoint: Mapping[str, Any] | None) -> None:
        """404 unless the thread has this checkpoint (no checkpoint named: nothing to check)."""
        if not checkpoint or not checkpoint.get("checkpoint_id"):
            return
        config = self._config(thread_id, {**checkpoint, "checkpoint_map": None})
        config["configurable"].setdefault("checkpoint_ns", "")
        if await self.saver.aget_tuple(config) is None:
            raise NotFound(f"checkpoint {checkpoint['checkpoint_id']} not found in thread {thread_id}")

    async def state(
        self, thread_id: str, user: Principal, checkpoint: Mapping[str, Any] | None, subgraphs: bool
    ) -> dict[str, Any]:
        info = await self.info(thread_id, user)
        await self.require_checkpoint(thread_id, checkpoint)
        snapshot = await read_state(self.graph_for(info), self._config(thread_id, checkpoint), subgraphs=subgraphs)
        if snapshot.created_at is None:  # no checkpoint yet: as langgraph-api, no checkpoint and no metadata
            return {**thread_state(snapshot), "checkpoint": None, "metadata": None}
        return thread_state(snapshot)

    async def update_state(
        self,
        thread_id: str,
        user: Principal,
        values: Any,
        as_node: str | None,
        checkpoint: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        info = await self.info(thread_id, user, "update", {"thread_id": thread_id, "values": values, "as_node": as_node})
        graph = self.graph_for(info)
        await self.require_checkpoint(thread_id, checkpoint)
        config = self._config(thread_id, checkpoint)
        try:
            new_config = await graph.aupdate_state(config, values, as_node=as_node)
        except InvalidUpdateError as exc:  # an unknown node: 400, as langgraph-api
            raise ServiceError(f"as_node: {exc}") from exc
        except (ValueError, KeyError) as exc:  # an ambiguous update: the caller's mistake
            raise Invalid(f"values: {exc}") from exc
        written = checkpoint_of(new_config)
        assert written is not None
        return {"checkpoint": written, "checkpoint_id": written["checkpoint_id"], "configurable": written}

    async def history(
        self, thread_id: str, user: Principal, body: Mapping[str, Any], *, shared: bool = False
    ) -> bytes:
        """The thread's checkpoints, newest first, as the JSON list of their `ThreadState`s (`shared`:
        with each message once, see `encode.History`)."""
        info = await self.info(thread_id, user)
        before = body.get("before")
        if isinstance(before, str):
            before = {"checkpoint_id": before}
        if body.get("metadata"):
            try:  # the store's own check, before the walk: its ValueError mid-walk was a 500
                check_metadata_filter(body["metadata"])
            except ValueError as exc:
                raise Invalid(str(exc)) from exc
        states = History(shared=shared)
        walk = self.graph_for(info).aget_state_history(
            self._config(thread_id, body.get("checkpoint")),
            filter=body.get("metadata") or None,
            before=self._config(thread_id, before) if before else None,
            limit=int(body.get("limit") or 10),
        )
        with unreadable_state():
            async for snapshot in walk:
                states.add(snapshot)
            return states.json()
