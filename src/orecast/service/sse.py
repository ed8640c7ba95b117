"""Server-sent events in the framing the LangGraph SDKs parse: `event:`, `data:` (JSON), `id:`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from fastapi.responses import StreamingResponse

from orecast.service.encode import dumps

HEARTBEAT = b": heartbeat\n\n"


def format_event(event: str, data: Any, event_id: str | None = None) -> bytes:
    return format_encoded(event, dumps(data), event_id)


def format_encoded(event: str, data: bytes, event_id: str | None = None) -> bytes:
    """An event whose data is JSON already."""
    tail = f"id: {event_id}\n\n".encode() if event_id is not None else b"\n"
    return f"event: {event}\ndata: ".encode() + data + b"\n" + tail


def sse_response(
    body: AsyncIterator[bytes], headers: Mapping[str, str] | None = None
) -> StreamingResponse:
    return StreamingResponse(
        body,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no", **(headers or {})},
    )
