"""The threads table's row as the saver returns it, and the search request."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal

ThreadStatus = Literal["idle", "busy", "interrupted", "error"]
THREAD_STATUSES: tuple[str, ...] = ("idle", "busy", "interrupted", "error")
SortOrder = Literal["asc", "desc"]
SortBy = Literal["updated_at", "created_at", "thread_id"]


@dataclass(frozen=True)
class ThreadInfo:
    """One conversation, as kept in the threads table (maintained in the same transaction as `put`)."""

    thread_id: str
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]
    status: str
    head_checkpoint_id: str | None
    checkpoint_count: int
    message_count: int
    preview: str | None

    @property
    def title(self) -> str | None:
        title = self.metadata.get("title")
        return title if isinstance(title, str) else None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        data["updated_at"] = self.updated_at.isoformat()
        data["title"] = self.title
        return data


def check_search(status: str | None, sort_by: str, sort_order: str, limit: int, offset: int) -> None:
    if status is not None and status not in THREAD_STATUSES:
        raise ValueError(f"unknown thread status {status!r}; expected one of {', '.join(THREAD_STATUSES)}")
    if sort_by not in ("updated_at", "created_at", "thread_id"):
        raise ValueError(f"cannot sort threads by {sort_by!r}")
    if sort_order not in ("asc", "desc"):
        raise ValueError(f"sort order must be 'asc' or 'desc', not {sort_order!r}")
    if limit < 0 or offset < 0:
        raise ValueError("limit and offset must not be negative")
