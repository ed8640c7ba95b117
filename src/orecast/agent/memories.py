"""Long-term memory: the analyst's files under `/memories/` live in LangGraph's store, one folder
per user, so they outlive the thread (what a user prefers, asked in one conversation, is known in
the next); every other path stays in the thread's state, as deepagents keeps it by default.
"""

from __future__ import annotations

from typing import Any

from deepagents.backends import CompositeBackend, StateBackend, StoreBackend
from deepagents.backends.protocol import EditResult, WriteResult
from langgraph.config import get_config

from orecast.checkpoint.ids import UnstorableId, check_document

MEMORIES = "/memories/"
NAMESPACE = "memories"
# API keys: the root the service's /store routes hide under each user (routes/store.py), so the
# user's own `/store` calls see their memories under the namespace ["memories"].
USERS = "users"
# Who runs the graph, as the service puts it in `configurable` (API keys: user_id; LangGraph
# custom auth: langgraph_auth_user_id). Only the server may set these (runs/prepare.py drops a
# client's own), or one user could name another and read their memories.
IDENTITY_KEYS = (
    "user_id",
    "langgraph_auth_user",
    "langgraph_auth_user_id",
    "langgraph_auth_permissions",
)


def memory_namespace(_runtime: Any = None) -> tuple[str, ...]:
    """The store namespace of the running user's memories (a deepagents `StoreBackend` factory):
    ("users", id, "memories") under API keys; (identity, "memories") under custom auth, the root
    LangGraph's docs give each user in a `store` handler; ("memories",) for the one local user."""
    configurable = get_config().get("configurable") or {}
    if user := configurable.get("user_id"):
        return (USERS, str(user), NAMESPACE)
    if identity := configurable.get("langgraph_auth_user_id"):
        return (str(identity), NAMESPACE)
    return (NAMESPACE,)


class CheckedStoreBackend(StoreBackend):
    """deepagents' `StoreBackend` that refuses, as the service's `/store` routes do (a 422 there), a
    file the store cannot keep alike on every backend: a NUL character or a lone surrogate (SQLite
    kept the NUL and PostgreSQL's jsonb failed the run), or a NaN. The model is told why, as a tool
    error it can act on, and nothing is written."""

    def _convert_file_data_to_store_value(self, file_data: Any) -> dict[str, Any]:
        value = super()._convert_file_data_to_store_value(file_data)
        for field, item in value.items():
            check_document(item, f"its {field}")
        return value

    def write(self, file_path: str, content: str) -> WriteResult:
        try:
            return super().write(file_path, content)
        except UnstorableId as exc:
            return WriteResult(error=_refused(file_path, exc))

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        try:
            return await super().awrite(file_path, content)
        except UnstorableId as exc:
            return WriteResult(error=_refused(file_path, exc))

    def edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:  # noqa: FBT001, FBT002
        try:
            return super().edit(file_path, old_string, new_string, replace_all)
        except UnstorableId as exc:
            return EditResult(error=_refused(file_path, exc))

    async def aedit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,  # noqa: FBT001, FBT002
    ) -> EditResult:
        try:
            return await super().aedit(file_path, old_string, new_string, replace_all)
        except UnstorableId as exc:
            return EditResult(error=_refused(file_path, exc))


def _refused(file_path: str, exc: UnstorableId) -> str:
    return f"Error: {MEMORIES.rstrip('/')}{file_path} was not saved: {exc}"


def analyst_backend() -> CompositeBackend:
    """`/memories/` in the graph's store (found at run time, so the graph's own store is used),
    everything else in the thread's state."""
    return CompositeBackend(
        default=StateBackend(), routes={MEMORIES: CheckedStoreBackend(namespace=memory_namespace)}
    )
