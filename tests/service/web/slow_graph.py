"""A graph that takes its time (for Stop and reload-mid-run in the page): it answers `slow: <text>`
after `SECONDS`, token by token, so a browser can act while the run is going. Served as `orecast`
by the module that needs it; the analyst answers in well under a second, too fast to stop.

A question starting with `TOOL` calls a tool (`held_tool`) that waits for `GATE`, then answers
`after tool`: a tool call that is running when the test looks (durations, reloads).

A question `fail while <path>` makes the run fail for real (an exception in the node) as long as
that file exists, and answers at once when it is gone: an error the page can show and Retry.

`GATE` (the graph runs in the tests' process): while a test keeps it closed, a run stops after its
`slow…` tokens and answers only once it is open again, so the test acts on a run that is surely
still running, however slow the machine (a 4 s run could end before a loaded browser clicked Stop or
reloaded). Open by default."""

from __future__ import annotations

import asyncio
import threading
import uuid
from pathlib import Path
from typing import Annotated

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

SECONDS = 4.0
STEPS = 10
FAIL_WHILE = "fail while "
TOOL = "tool "
GATE = threading.Event()
GATE.set()


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


async def answer(state: State) -> dict:
    last = state["messages"][-1] if state.get("messages") else None
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(content="after tool")]}
    text = last.content if last is not None else ""
    if isinstance(text, str) and text.startswith(TOOL):
        call = {"name": "held_tool", "args": {"question": text}, "id": f"call_{uuid.uuid4().hex[:12]}"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}
    if isinstance(text, str) and text.startswith(FAIL_WHILE):
        flag = Path(text.removeprefix(FAIL_WHILE))
        if flag.exists():
            raise RuntimeError(f"the test made this run fail: {flag.name} exists")
        return {"messages": [AIMessage(content=f"recovered: {flag.name}")]}
    words = [f"slow{i}" for i in range(STEPS)] + [f"answer: {text}"]
    model = GenericFakeChatModel(messages=iter([AIMessage(content=" ".join(words))]))
    chunks = []
    async for chunk in model.astream(state["messages"]):
        chunks.append(chunk)
        if chunk.content.strip():
            await asyncio.sleep(SECONDS / STEPS)
        if chunk.content.strip() == f"slow{STEPS - 1}":
            while not GATE.is_set():
                await asyncio.sleep(0.02)
    reply = chunks[0]
    for chunk in chunks[1:]:
        reply = reply + chunk
    return {"messages": [AIMessage(content=reply.content, id=reply.id)]}


async def held_tool(state: State) -> dict:
    call = state["messages"][-1].tool_calls[0]
    while not GATE.is_set():
        await asyncio.sleep(0.02)
    return {"messages": [ToolMessage(content="held result", tool_call_id=call["id"], name=call["name"])]}


def after_answer(state: State) -> str:
    last = state["messages"][-1]
    return "held_tool" if isinstance(last, AIMessage) and last.tool_calls else END


builder = StateGraph(State)
builder.add_node("answer", answer)
builder.add_node("held_tool", held_tool)
builder.add_edge(START, "answer")
builder.add_conditional_edges("answer", after_answer, ["held_tool", END])
builder.add_edge("held_tool", "answer")
graph = builder.compile()
