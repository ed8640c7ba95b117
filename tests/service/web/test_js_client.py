"""The requests the official JS client (`@langchain/langgraph-sdk` 1.15, as `useStream` and the page
make them) answered as the client expects: bodies, query strings and headers copied from the client's
sources (dist/client/{threads,runs}/index.js, dist/react/stream.lgp.js), sent through a real server.

The JS client drops `undefined` fields from its JSON and sends booleans in query strings as "0"/"1";
it reads the run id from `Content-Location` with the pattern below, and re-joins with
`Last-Event-ID: -1` to replay a run from its first event.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from tests.service.conftest import Server

pytestmark = pytest.mark.slow

RUN_METADATA = re.compile(r"(/threads/(?P<thread_id>.+))?/runs/(?P<run_id>.+)")  # REGEX_RUN_METADATA
MODES = ["values", "messages-tuple", "updates", "custom"]


def human(text: str) -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": text}]}


def use_stream_body(**extra: Any) -> dict[str, Any]:
    """What `useStream().submit()` posts to `runs/stream` (fields the client leaves undefined dropped)."""
    return {
        "stream_mode": MODES, "stream_subgraphs": True, "stream_resumable": True,
        "assistant_id": "orecast", "on_disconnect": "continue", "config": {"recursion_limit": 100},
        **extra,
    }


def sse(response: httpx.Response) -> list[tuple[str, str | None, Any]]:
    """(event, id, data) of an SSE body, as the client's SSEDecoder reads it."""
    events = []
    for block in response.text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line and not line.startswith(":"):
                key, _, value = line.partition(":")
                fields[key] = value.removeprefix(" ")
        if "event" in fields:
            events.append((fields["event"], fields.get("id"), json.loads(fields.get("data", "null"))))
    return events


@pytest.fixture
def http(web_server: Server) -> httpx.Client:
    with httpx.Client(base_url=web_server.url, timeout=60) as client:
        yield client


def stream(http: httpx.Client, tid: str, body: dict[str, Any]) -> tuple[httpx.Response, list[Any]]:
    answer = http.post(f"/threads/{tid}/runs/stream", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/event-stream")
    return answer, sse(answer)


def test_submit_history_and_fork_as_use_stream_does(http: httpx.Client) -> None:
    thread = http.post("/threads", json={"metadata": {"title": "js"}}).json()
    tid = thread["thread_id"]
    answer, events = stream(http, tid, use_stream_body(input=human("What is the latest iron ore price?"),
                                                      multitask_strategy="rollback"))
    match = RUN_METADATA.search(answer.headers["content-location"])
    assert match and match["thread_id"] == tid
    names = [e[0] for e in events]
    assert names[0] == "metadata" and events[0][2]["run_id"] == match["run_id"]
    assert {"values", "messages", "updates"} <= set(names) and "error" not in names
    chunk, meta = next(e[2] for e in events if e[0] == "messages")
    assert chunk["type"] in ("AIMessageChunk", "ai") and "langgraph_node" in meta
    # what useStream reads back: the head state and the history (newest first) with its links
    state = http.get(f"/threads/{tid}/state").json()
    assert state["checkpoint"]["thread_id"] == tid and state["next"] == []
    history = http.post(f"/threads/{tid}/history", json={"limit": 10}).json()
    assert history[0]["checkpoint"] == state["checkpoint"]
    assert history[0]["parent_checkpoint"]["checkpoint_id"] == history[1]["checkpoint"]["checkpoint_id"]
    older = http.post(f"/threads/{tid}/history", json={"limit": 3, "before": history[1]["checkpoint"]}).json()
    assert [s["checkpoint"] for s in older] == [s["checkpoint"] for s in history[2:5]]
    every = http.post(f"/threads/{tid}/history", json={"limit": 1000, "checkpoint": {"checkpoint_ns": ""}})
    assert len(every.json()) >= len(history)
    # an edited first question: a run from the checkpoint before it (thread_id removed, as useStream does)
    first = next(s for s in reversed(history) if s["next"] == ["__start__"])
    fork = {k: v for k, v in first["checkpoint"].items() if k != "thread_id"}
    _, events = stream(http, tid, use_stream_body(input=human("What is the latest rebar price?"), checkpoint=fork))
    values = [e[2] for e in events if e[0] == "values"][-1]
    assert [m["content"] for m in values["messages"] if m["type"] == "human"] == ["What is the latest rebar price?"]
    branched = http.post(f"/threads/{tid}/history", json={"limit": 100}).json()
    parents = [s["parent_checkpoint"]["checkpoint_id"] for s in branched if s["parent_checkpoint"]]
    assert parents.count(first["checkpoint"]["checkpoint_id"]) == 2  # two children: two branches


def test_approval_resume_and_thread_calls(http: httpx.Client) -> None:
    tid = http.post("/threads", json={}).json()["thread_id"]
    stream(http, tid, use_stream_body(input=human("What is the latest iron ore price?")))
    _, events = stream(http, tid, use_stream_body(input=human("Export a report")))
    interrupted = [e[2] for e in events if e[0] == "values"][-1]
    (pending,) = interrupted["__interrupt__"]
    assert pending["value"]["action_requests"][0]["name"] == "export_report"
    thread = http.get(f"/threads/{tid}").json()
    assert thread["status"] == "interrupted" and thread["interrupts"]
    _, events = stream(http, tid, use_stream_body(command={"resume": {"decisions": [{"type": "approve"}]}}))
    tool = [m for m in [e[2] for e in events if e[0] == "values"][-1]["messages"] if m["type"] == "tool"][-1]
    assert tool["name"] == "export_report" and "report" in json.loads(tool["content"])
    # the sidebar's calls
    found = http.post("/threads/search", json={"limit": 200, "offset": 0, "sort_by": "updated_at", "sort_order": "desc"})
    assert tid in [t["thread_id"] for t in found.json()]
    renamed = http.patch(f"/threads/{tid}", json={"metadata": {"title": "renamed"}}).json()
    assert renamed["metadata"]["title"] == "renamed"
    assert http.delete(f"/threads/{tid}").status_code == 204
    assert http.get(f"/threads/{tid}").status_code == 404


def test_rejoin_cancel_and_running_lookup(http: httpx.Client) -> None:
    tid = http.post("/threads", json={}).json()["thread_id"]
    created = http.post(f"/threads/{tid}/runs", json={
        "input": human("How volatile was iron ore over the past year?"), "stream_mode": ["values", "messages-tuple"],
        "stream_resumable": True, "assistant_id": "orecast",
    })
    run = created.json()
    assert RUN_METADATA.search(created.headers["content-location"])["run_id"] == run["run_id"]
    # the page's lookup of a run it did not start
    running = http.get(f"/threads/{tid}/runs", params={"limit": 1, "offset": 0, "status": "running"}).json()
    assert [r["run_id"] for r in running] in ([run["run_id"]], [])  # [] when it already ended
    path = f"/threads/{tid}/runs/{run['run_id']}/stream"
    replay = sse(http.get(path, params={"cancel_on_disconnect": "0"}, headers={"Last-Event-ID": "-1"}))
    assert replay[0][0] == "metadata" and replay[-1][0] == "values"
    ids = [int(e[1]) for e in replay if e[1] is not None]
    assert ids == sorted(ids) and len(ids) == len(replay)
    later = sse(http.get(path, headers={"Last-Event-ID": str(ids[1])}))
    assert [int(e[1]) for e in later] == ids[2:]
    # joinStream's streamMode: repeated stream_mode params filter the replay (metadata always comes)
    only = sse(http.get(path, params=[("stream_mode", "values"), ("stream_mode", "messages-tuple")],
                        headers={"Last-Event-ID": "-1"}))
    assert {e[0] for e in only} == {"metadata", "values", "messages"}
    assert [e for e in replay if e[0] in ("metadata", "values", "messages")] == only
    empty = sse(http.get(path, params={"stream_mode": ""}, headers={"Last-Event-ID": "-1"}))
    assert empty == replay  # what the Python client sends when it names no mode
    values_only = sse(http.get(path, params={"stream_mode": "values"}, headers={"Last-Event-ID": "-1"}))
    assert {e[0] for e in values_only} == {"metadata", "values"}
    # useStream's stop: POST cancel with wait/action in the query; 202/204 carry no JSON body
    tid2 = http.post("/threads", json={}).json()["thread_id"]
    run2 = http.post(f"/threads/{tid2}/runs", json={"input": human("Chart iron ore since 2020"),
                                                     "assistant_id": "orecast"}).json()
    cancelled = http.post(f"/threads/{tid2}/runs/{run2['run_id']}/cancel", params={"wait": "0", "action": "interrupt"})
    assert cancelled.status_code in (202, 204) or cancelled.json() is not None
    http.get(f"/threads/{tid2}/runs/{run2['run_id']}/join")
    assert http.get(f"/threads/{tid2}/runs/{run2['run_id']}").json()["status"] in ("interrupted", "success")
