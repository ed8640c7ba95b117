"""One router per Agent Server resource; paths as the LangGraph SDKs call them."""

from __future__ import annotations

from orecast.service.routes import (
    assistants,
    chat,
    crons,
    ops,
    page,
    reports,
    runs,
    store,
    system,
    threads,
)

# `runs` first: Starlette tries routes in order, and a run is the request the service answers most
# (its paths are no other router's); `page` last: its catch-all answers only what no API route does
ROUTERS = [
    runs.router, crons.router, system.router, assistants.router, threads.router, store.router, chat.router,
    reports.router, ops.router, page.router,
]
TAGS = [
    {"name": "system", "description": "Health and server info"},
    {"name": "assistants", "description": "Served graphs and their configurations"},
    {"name": "threads", "description": "Conversations, their state and history"},
    {"name": "runs", "description": "Runs of a graph on a thread (or stateless), streamed over SSE"},
    {"name": "crons", "description": "Runs started on a schedule"},
    {"name": "store", "description": "Long-term memory items across threads"},
    {"name": "chat", "description": "The original simple chat endpoints"},
    {"name": "reports", "description": "Reports the analyst exported, to download"},
    {"name": "ops", "description": "The operations view's figures (admins)"},
]
