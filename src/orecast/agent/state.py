"""The analyst's own state: the reports a thread exported, and the state schema version with its upcasters.

`reports` is a channel of the analyst's state (deepagents' state plus this middleware's). Version 1
kept a report as its path; version 2 keeps a record (path, title, sections, figures, revision), so
a thread can list its reports without reading files. `ANALYST_STATE` upgrades version-1 threads on
every read; `orecast db migrate-state` rewrites them once.

Bump `ANALYST_STATE.version` whenever a channel value changes shape, with an upcaster for each
channel that changed: see docs/checkpoint.md, "State upcasting".
"""

from __future__ import annotations

import json
import operator
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, NotRequired, TypedDict

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from orecast.agent.reports import REPORT_TOOL
from orecast.checkpoint.upcast import StateSchema


class ReportRecord(TypedDict):
    """A report exported in the thread (state version 2)."""

    path: str
    title: str
    sections: int
    figures: int
    revision: int  # 1 for a new file, n when the thread wrote the same file for the n-th time


class ReportsState(AgentState):
    reports: NotRequired[Annotated[list[ReportRecord], operator.add]]


def reports_1_to_2(reports: list[Any]) -> list[Any]:
    """Version 1 kept a report as its path: a record with what the path tells (a record passes)."""
    upgraded: list[Any] = []
    for entry in reports:
        if isinstance(entry, str):
            same = sum(1 for earlier in upgraded if earlier["path"] == entry)
            entry = {"path": entry, "title": Path(entry).stem, "sections": 0, "figures": 0, "revision": same + 1}
        upgraded.append(entry)
    return upgraded


ANALYST_STATE = StateSchema(version=2, upcasters={(1, "reports"): reports_1_to_2})


def report_record(result: str, earlier: list[ReportRecord]) -> ReportRecord | None:
    """The record of an `export_report` result (its JSON), or None for an error or a rejection."""
    try:
        payload = json.loads(result)
    except (TypeError, ValueError):
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("report"), str):
        return None
    path = payload["report"]
    return {
        "path": path,
        "title": str(payload.get("title", "")),
        "sections": int(payload.get("sections", 0)),
        "figures": int(payload.get("figures", 0)),
        "revision": 1 + sum(1 for r in earlier if r["path"] == path),
    }


class ReportsMiddleware(AgentMiddleware[ReportsState]):
    """Records each exported report in the thread's `reports` channel, next to the tool's answer."""

    state_schema = ReportsState

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        return _recorded(request, handler(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        return _recorded(request, await handler(request))


def _recorded(request: ToolCallRequest, result: ToolMessage | Command[Any]) -> ToolMessage | Command[Any]:
    if request.tool_call["name"] != REPORT_TOOL or not isinstance(result, ToolMessage) or result.status == "error":
        return result
    record = report_record(result.text, list(request.state.get("reports", [])))
    if record is None:
        return result
    return Command(update={"messages": [result], "reports": [record]})
