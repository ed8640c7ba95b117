"""Long-term memory: the analyst's files under `/memories/` live in LangGraph's store, one folder
per user, so they outlive the thread (what a user prefers, asked in one conversation, is known in
the next); every other path stays in the thread's state, as deepagents keeps it by default.
"""

from __future__ import annotations

from typing import Any

from deepagents.backends import CompositeBackend, StateBackend, StoreBackend
from langgraph.config import get_config

MEMORIES = "/memories/"
NAMESPACE = "memories"
# API keys: the root the service's /store routes hide under each user (routes/store.py), so the
# user's own `/store` calls see their memories under the namespace ["memories"].
USERS = "users"
# Who runs the graph, as the service puts it in `configurable` (API keys: user_id; LangGraph
# custom auth: langgraph_auth_user_id). Only the server may set these (runs/prepare.py drops a
# client's own), or one user could name another and read their memories.
IDENTITY_KEYS = ("user_id", "langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions")


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


def analyst_backend() -> CompositeBackend:
    """`/memories/` in the graph's store (found at run time, so the graph's own store is used),
    everything else in the thread's state."""
    return CompositeBackend(
        default=StateBackend(), routes={MEMORIES: StoreBackend(namespace=memory_namespace)}
    )
