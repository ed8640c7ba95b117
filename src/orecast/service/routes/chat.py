"""The original system's simple endpoints, kept for its callers: one message in, the analyst's reply out.

A thread id is created and returned when none is given, so a conversation's memory is never silently lost.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
from fastapi import APIRouter, Depends, Response

from orecast.agent import AGENT_NAME
from orecast.checkpoint.ids import new_thread_id
from orecast.service.auth import Principal, User, require_user
from orecast.service.context import Services, Svc
from orecast.service.errors import RunFailed
from orecast.service.runs.prepare import start_run
from orecast.service.schemas import ChatReply, ChatRequest, RunCreate
from orecast.service.sse import format_event, sse_response

router = APIRouter(prefix="/agent/api", tags=["chat"], dependencies=[Depends(require_user)])


def _assistant(svc: Services) -> str:
    if AGENT_NAME in svc.graphs:
        return AGENT_NAME
    return svc.graphs.ids()[0]


async def _start(svc: Services, user: Principal, body: ChatRequest, modes: list[str]) -> tuple[str, str]:
    thread_id = body.thread_id
    if thread_id is not None and await svc.saver.aget_thread(thread_id) is not None:
        await svc.threads.info(thread_id, user)  # 404 for another user's thread
    run_body = RunCreate(
        assistant_id=_assistant(svc),
        input={"messages": [{"role": "user", "content": body.message}]},
        stream_mode=modes,  # type: ignore[arg-type]  # literal modes below
        if_not_exists="create",
        multitask_strategy="enqueue",
        on_completion="keep",
    )
    run, _ = await start_run(svc, user, run_body, thread_id or new_thread_id())
    return run.run_id, run.thread_id


def _last_reply(values: object) -> str:
    messages = values.get("messages") if isinstance(values, dict) else None
    for message in reversed(messages or []):
        if isinstance(message, dict) and message.get("type") == "ai" and message.get("content"):
            content = message["content"]
            if isinstance(content, str):
                return content
            return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@router.post("/chat")
async def chat(body: ChatRequest, svc: Svc, user: User) -> ChatReply:
    run_id, thread_id = await _start(svc, user, body, ["values"])
    await svc.runs.wait(run_id)
    output = svc.runs.output(run_id)
    if isinstance(output, dict) and "__error__" in output:
        failure = output["__error__"]
        raise RunFailed(f"{failure['error']}: {failure['message']}", {"thread_id": thread_id})
    return ChatReply(reply=_last_reply(output), thread_id=thread_id)


async def _tokens(svc: Services, run_id: str, thread_id: str) -> AsyncIterator[bytes]:
    events = svc.runs.events(run_id)
    assert events is not None
    async for _, event, encoded in events.follow():
        data = orjson.loads(encoded)
        if event == "messages":
            chunk, metadata = data
            if chunk.get("type") in ("AIMessageChunk", "ai") and isinstance(chunk.get("content"), str):
                if metadata.get("langgraph_checkpoint_ns", "").count("|") == 0 and chunk["content"]:
                    yield format_event("token", {"text": chunk["content"]})
        elif event == "error":
            yield format_event("error", data)
    output = svc.runs.output(run_id)
    yield format_event("done", {"thread_id": thread_id, "reply": _last_reply(output)})


@router.post("/chat/stream")
async def chat_stream(body: ChatRequest, svc: Svc, user: User) -> Response:
    run_id, thread_id = await _start(svc, user, body, ["messages-tuple"])
    return sse_response(_tokens(svc, run_id, thread_id), {"X-Thread-Id": thread_id})
