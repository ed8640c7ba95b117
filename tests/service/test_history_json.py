"""A thread's history answer is serialised once, straight to bytes, each message object's JSON made
once however many checkpoints hold it; it is the JSON the service answered before (each checkpoint's
`thread_state`, FastAPI's encoder, its JSONResponse) for every kind of state: messages of each type,
tool calls, interrupts, a subgraph's task, a task's error, metadata, datetimes, bytes, non-str keys.
The states come from a real graph (tests/service/history_graph.py) through the service and its saver,
on SQLite and PostgreSQL; the earlier encoding is computed here from the same checkpoints."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from langchain_core.messages import BaseMessage
from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot

from orecast.checkpoint import open_checkpointer
from orecast.service.encode import SHARED_MESSAGE, History, thread_state
from tests.service.conftest import Server, settings_for
from tests.service.history_graph import graph as history_graph

GRAPH = "history"


@pytest.fixture(scope="module")
def server(db_url: str) -> Iterator[Server]:
    running = Server.start(settings_for(db_url, graphs={GRAPH: "tests.service.history_graph:graph"}))
    yield running
    running.stop()


def earlier(states: Any) -> Any:
    """What the service answered before for `states` (`thread_state`s), as parsed JSON."""
    return json.loads(JSONResponse(jsonable_encoder(states)).body)


async def a_conversation(client) -> str:
    """A thread with two turns: the first interrupted in the subgraph and resumed, the second failed."""
    tid = (await client.threads.create(metadata={"graph_id": GRAPH}))["thread_id"]
    said = {"messages": [{"type": "human", "content": "price?", "id": "q1", "additional_kwargs": {"k": [1]}}], "ask": True}
    asked = await client.runs.wait(tid, GRAPH, input=said)
    assert asked["__interrupt__"][0]["value"]["question"] == "publish?"
    await client.runs.wait(tid, GRAPH, command={"resume": "yes"})
    again = {"messages": [{"type": "human", "content": "again", "id": "q2"}], "ask": False, "fail": True}
    await client.runs.wait(tid, GRAPH, input=again, raise_error=False)
    return tid


async def test_the_history_answer_is_the_earlier_json_for_every_kind_of_state(
    client, server: Server, db_url: str
) -> None:
    tid = await a_conversation(client)
    url = f"{server.url}/threads/{tid}/history"
    async with httpx.AsyncClient(timeout=60) as http:
        posted = await http.post(url, json={"limit": 500}, headers={"Accept-Encoding": "gzip"})
        got = await http.get(url, params={"limit": 500}, headers={"Accept-Encoding": "identity"})
        state = await http.get(f"{server.url}/threads/{tid}/state", params={"subgraphs": "true"})
    assert posted.status_code == got.status_code == state.status_code == 200
    answer = posted.json()
    assert got.json() == answer

    async with open_checkpointer(db_url) as saver:
        graph: Pregel = history_graph.copy(update={"checkpointer": saver})
        config = {"configurable": {"thread_id": tid}}
        snapshots = [s async for s in graph.aget_state_history(config, limit=500)]
        interrupted = next(s for s in snapshots if s.interrupts)
        expanded = await graph.aget_state(interrupted.config, subgraphs=True)
        newest = await graph.aget_state(config, subgraphs=True)
    assert answer == earlier([thread_state(s) for s in snapshots])
    assert state.json() == earlier(thread_state(newest))

    # what the comparison covered, as the page reads it
    assert len(answer) == len(snapshots) >= 8
    last = answer[0]
    types = [m["type"] for m in last["values"]["messages"]]
    assert {"human", "system", "ai", "tool", "chat", "function"} <= set(types)
    call = next(m for m in last["values"]["messages"] if m["type"] == "ai" and m["tool_calls"])
    assert call["tool_calls"][0]["args"] == {"grade": "62% Fe", "months": 6}
    assert call["usage_metadata"]["total_tokens"] == 18
    extra = last["values"]["extra"]
    assert extra["at"] == "2026-03-04T05:06:07.890123+00:00" and extra["day"] == "2026-03-04"
    assert extra["raw"] == "AP9vcmU=" and extra["7"] == "seven" and extra["2.5"] == "two and a half"
    assert extra["cargo"] == {"port": "Qingdao", "tonnes": 170000.0} and extra["grade"] == "lump"
    assert extra["quote"] == {"price": 105.5, "at": "2026-03-04T05:06:07.890123Z"}
    assert extra["nan"] is None and extra["pair"] == [1, "a"] and extra["grades"] == ["fines"]
    assert last["tasks"][0]["error"] and "asked to fail" in last["tasks"][0]["error"]
    paused = next(s for s in answer if s["interrupts"])
    assert paused["interrupts"][0]["value"] == {"question": "publish?", "when": "2026-03-04T00:00:00+00:00"}
    assert paused["tasks"][0]["name"] == "inner" and paused["tasks"][0]["checkpoint"]["checkpoint_ns"]
    assert paused["metadata"]["source"] == "loop" and paused["metadata"]["step"] >= 1 and paused["created_at"]

    # a subgraph's state inside a task (`subgraphs=true`) goes through the same encoding
    assert isinstance(expanded.tasks[0].state, StateSnapshot)
    nested = History()
    nested.add(expanded)
    assert json.loads(nested.json()) == earlier([thread_state(expanded)])


async def test_each_message_object_is_serialised_once_per_answer(
    client, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tid = await a_conversation(client)
    async with open_checkpointer(db_url) as saver:
        graph: Pregel = history_graph.copy(update={"checkpointer": saver})
        snapshots = [s async for s in graph.aget_state_history({"configurable": {"thread_id": tid}}, limit=500)]
    held = [m for s in snapshots for m in s.values.get("messages", [])]
    distinct = {id(m) for m in held}
    assert len(held) > 2 * len(distinct)  # the saver hands out one object per stored message

    dumped: list[int] = []
    model_dump = BaseMessage.model_dump

    def counted(self: BaseMessage, *args: Any, **kwargs: Any) -> dict[str, Any]:
        dumped.append(id(self))
        return model_dump(self, *args, **kwargs)

    monkeypatch.setattr(BaseMessage, "model_dump", counted)
    history = History()
    for snapshot in snapshots:
        history.add(snapshot)
    body = history.json()
    assert sorted(dumped) == sorted(distinct)
    monkeypatch.undo()
    assert json.loads(body) == earlier([thread_state(s) for s in snapshots])


def put_back(shared: dict[str, Any]) -> Any:
    """The shared form's states with each stand-in replaced by its message, as the page does
    (web/src/lib/sharedHistory.ts)."""

    def put(value: Any) -> Any:
        if isinstance(value, list):
            return [put(v) for v in value]
        if isinstance(value, dict):
            if list(value) == [SHARED_MESSAGE]:
                return shared["messages"][value[SHARED_MESSAGE]]
            return {k: put(v) for k, v in value.items()}
        return value

    return put(shared["states"])


async def test_the_shared_form_holds_each_message_once_and_puts_back_to_the_history(
    client, server: Server
) -> None:
    tid = await a_conversation(client)
    async with httpx.AsyncClient(timeout=60) as http:
        whole = await http.post(f"{server.url}/threads/{tid}/history", json={"limit": 500})
        shared = await http.post(f"{server.url}/threads/{tid}/history/shared", json={"limit": 500})
        page = await http.post(f"{server.url}/threads/{tid}/history/shared", json={"limit": 2})
        missing = await http.post(f"{server.url}/threads/{tid}x/history/shared", json={"limit": 5})
    assert whole.status_code == shared.status_code == page.status_code == 200
    answer = shared.json()
    assert put_back(answer) == whole.json()
    held = [m for s in whole.json() for m in s["values"].get("messages", [])]
    assert len(answer["messages"]) == len({m["id"] for m in held}) < len(held)
    assert put_back(page.json()) == whole.json()[:2]
    assert missing.status_code == 404
