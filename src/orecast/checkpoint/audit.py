"""Tool-call audit: which tools a conversation called, with what arguments, and what came back.

Read from the `tool_calls` view (migration 002), which joins each call in an AI message with the
tool message answering it — plain SQL over the stored JSON, so the same audit works in `psql` or
`sqlite3` without orecast.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from orecast.checkpoint.core import SaverCore
from orecast.checkpoint.ids import check_id


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call and its result (`status` "pending" while no result is stored)."""

    item_no: int
    call_id: str | None
    tool: str
    args: dict[str, Any]
    result: Any
    status: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class AuditMixin(SaverCore):
    async def atool_calls(self, thread_id: str) -> list[ToolCallRecord]:
        """Every tool call of the thread (all namespaces, subagents included), in conversation order."""
        thread_id = check_id(thread_id, "thread_id")
        async with self._read() as db:
            rows = await db.fetchall(self.q.SELECT_TOOL_CALLS, (thread_id,))
        return [
            ToolCallRecord(
                item_no=item_no,
                call_id=call_id,
                tool=tool,
                args=self.codec.loads(args) if args is not None else {},
                result=self.codec.loads(result) if result is not None else None,
                status=status,
            )
            for item_no, call_id, tool, args, result, status in rows
        ]
