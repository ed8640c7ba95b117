"""`/threads/{thread_id}/reports[/{name}]`: the Markdown reports `export_report` wrote for a thread.

A file is handed out only when all of these hold: the caller may read the thread (404 otherwise, as
for every thread resource); the thread's own tool-call audit (every branch) has a finished
`export_report` call whose result names this file; the file is a direct child of the analyst's
reports folder; and its header names this thread. So a name cannot walk out of the folder, and one
thread cannot fetch another's report: not with a fake tool result planted by a state update, and not
after another thread's export overwrote a file of the same name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse

from orecast.agent.reports import REPORT_TOOL
from orecast.agent.settings import AgentSettings
from orecast.service.auth import User, require_user
from orecast.service.context import Services, Svc
from orecast.service.errors import NotFound

_HEAD_BYTES = 4096

router = APIRouter(prefix="/threads", tags=["reports"], dependencies=[Depends(require_user)])


def reports_dir(svc: Services) -> Path:
    """Where the analyst writes reports: the same settings `build_agent` got (`ORECAST_REPORTS_DIR`)."""
    return AgentSettings.from_env(model=svc.settings.model).reports_dir.resolve()


def _is_report(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("report"), str)


def _result(value: Any) -> dict[str, Any] | None:
    """The tool's JSON. When a reviewer edited the call, the middleware put a notice before it
    (one that quotes the executed arguments), so the JSON is the text from the start of a line
    to the end."""
    if not isinstance(value, str):
        return value if _is_report(value) else None
    for start in [0] + [i + 1 for i, char in enumerate(value) if char == "\n"]:
        if not value.startswith("{", start):
            continue
        try:
            parsed = json.loads(value[start:])
        except ValueError:
            continue
        if _is_report(parsed):
            return parsed
    return None


def _written_for(path: Path, thread_id: str) -> bool:
    """`render` puts the thread id in the report's first lines."""
    try:
        with path.open("rb") as file:
            head = file.read(_HEAD_BYTES)
    except OSError:
        return False
    return f"thread `{thread_id}`".encode() in head


async def thread_reports(svc: Services, thread_id: str, user: Any) -> list[dict[str, Any]]:
    """The reports of the thread that still exist in the reports folder, oldest first, by name."""
    await svc.threads.info(thread_id, user)
    root = reports_dir(svc)
    found: dict[str, dict[str, Any]] = {}
    for call in await svc.saver.atool_calls(thread_id):
        result = _result(call.result) if call.tool == REPORT_TOOL and call.status == "success" else None
        if result is None:
            continue
        path = Path(result["report"]).resolve()
        if path.parent != root or not _written_for(path, thread_id):
            continue
        found[path.name] = {
            "name": path.name,
            "title": result.get("title"),
            "bytes": path.stat().st_size,
            "url": f"/threads/{quote(thread_id)}/reports/{quote(path.name)}",
        }
    return list(found.values())


@router.get("/{thread_id}/reports")
async def list_reports(thread_id: str, svc: Svc, user: User) -> list[dict[str, Any]]:
    return await thread_reports(svc, thread_id, user)


@router.get("/{thread_id}/reports/{name}")
async def download(thread_id: str, name: str, svc: Svc, user: User) -> FileResponse:
    for report in await thread_reports(svc, thread_id, user):
        if report["name"] == name:
            return FileResponse(
                reports_dir(svc) / name,
                media_type="text/markdown; charset=utf-8",
                filename=name,
                headers={"Cache-Control": "no-store"},
            )
    raise NotFound(f"thread {thread_id} has no report {name!r}")
