"""One router per Agent Server resource; paths as the LangGraph SDKs call them."""

from __future__ import annotations

from orecast.service.routes import assistants, chat, runs, store, system, threads

ROUTERS = [system.router, assistants.router, threads.router, runs.router, store.router, chat.router]
TAGS = [
    {"name": "system", "description": "Health and server info"},
    {"name": "assistants", "description": "Served graphs and their configurations"},
    {"name": "threads", "description": "Conversations, their state and history"},
    {"name": "runs", "description": "Runs of a graph on a thread (or stateless), streamed over SSE"},
    {"name": "store", "description": "Long-term memory items across threads"},
    {"name": "chat", "description": "The original simple chat endpoints"},
]
