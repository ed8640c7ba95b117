"""Diff two Agent Server implementations route by route: the same calls, compared as a client sees them.

    python -m bench.api_diff REFERENCE_URL CANDIDATE_URL [--graph echo] [--only PREFIX] [--json OUT]

Both servers must serve `tests/service/echo_graph.py:graph` under the name given by `--graph` (e.g.
`langgraph dev` with a langgraph.json naming it, and `orecast serve --config` on the same file). The
script runs one scenario against each server: every route the `langgraph-sdk` clients call (assistants,
threads, state and history, runs with stream/wait/join/join_stream/cancel, stateless runs, the store,
/info), plus the error cases (404, 409, 422). For each step it compares what a client can notice:

* the status code;
* `content-type`, and `location` / `content-location` with ids replaced by `{id}`;
* the JSON body's shape: key sets and value types, recursively (a UUID, a timestamp and a plain
  string are different types; list lengths are not compared, only the shape of their items);
* for SSE: the sequence of event names, whether events carry an `id:`, and each event's data shape;
* for a run's webhook: the shape of what the server POSTed to a receiver the script runs on this machine
  (both servers must let webhooks call loopback: `langgraph dev` with
  `"webhooks": {"url": {"disable_loopback": false, "require_https": false}}` in its langgraph.json,
  orecast with `ORECAST_WEBHOOK_ALLOW_PRIVATE=true`).

It prints one line per differing step and exits 1 when any step differs. Differences orecast makes on
purpose (docs/service.md, "Differences from langgraph dev") are listed in `DELIBERATE` with their reason
and reported apart; `--strict` counts them too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
ANY_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
Ctx = dict[str, Any]

# (step name pattern, difference pattern, why): orecast's deliberate differences, see docs/service.md
DELIBERATE: list[tuple[str, str, str]] = [
    (r"^threads.get include=ttl$", r"^\$\.ttl: extra$",
     "?include=ttl shows the thread's TTL as the Agent Server documents it; langgraph dev's in-memory runtime ignores it"),
    (r"", r"^\$\.(error|message|details): extra$", "error bodies add a code and per-field details to `detail`"),
    (r"", r"^SSE id: lines differ$", "every event carries an id, so any stream can resume (not only resumable runs)"),
    (r"", r"metadata\.(langgraph_\w+|run_attempt|created_by|user_id|thread_id|who|more|r): missing$",
     "checkpoint and stream metadata carry the graph's own keys, not the server's bookkeeping"),
    (r"", r"configurable\.(langgraph_auth_\w+|langgraph_request_id|__\w+__|user_id): missing$",
     "no request bookkeeping in a run's config without auth"),
    (r"", r"\$\[?\]?\.?langsmith_session_name: missing$", "no LangSmith"),
    (r"", r"event messages \$\[\]\.(langgraph_\w+|run_attempt|created_by|who|more): missing$",
     "message metadata: the graph's, without the server's bookkeeping or the thread's metadata"),
    (r"", r"configurable\.__pregel_\w+: missing$", "LangGraph's internal keys stay out of a run's kwargs"),
    (r"^runs.cancel$", r"^\$\.\w+: extra$", "cancel with wait answers the thread's values as join does"),
    (r"unknown checkpoint \(404\)", r"^status 200 vs 404$", "an unknown checkpoint is a 404 (issue 7)"),
    (r"", r"cancel_reason: extra$", "a run says why it was cancelled"),
    (r"", r"\.(metadata\.(created_by|who|more|graph_id|assistant_id|r|user_id))|metadata\.r: extra", "run metadata is the caller's"),
    (r"", r"\$\.interrupts: extra$|\$\.error: extra$|\$\.values: extra$", "a thread always has interrupts/error"),
    (r"", r"config\.configurable: missing$", "a thread's config is empty"),
    (r"", r"\$\.interrupts\.[0-9a-f-]+: (missing|extra)$", "interrupt ids are task ids"),
    (r"", r"__interrupt__\[\]\.response_schema: missing$", "no response schema for interrupts"),
    (r"", r"event debug \$\.payload\.(parent_)?checkpoint: missing$", "debug checkpoint events: config only"),
    (r"", r"\$\.checkpoint\.checkpoint_ns: extra$", "the checkpoint object names its namespace"),
    (r"get_schemas", r"", "JSON schemas from pydantic without langgraph-api's defaults"),
    (r"by graph name", r"^status 422 vs 200$", "a served graph's name is accepted as its assistant id everywhere"),
    (r"bad id \(422\)", r"^status 422 vs 200$", "without auth any thread id is accepted (the CLI names threads)"),
    (r"^runs.join unknown", r"", "joining an unknown run is a 404, not a 200 with an error body"),
    (r"^threads.get busy$", r"^\$\.values\.hold: extra$",
     "a busy thread's values are its newest checkpoint's; langgraph-api keeps those of its last finished run until the run ends"),
    (r"^webhook stateless$", r"^\$\.values: null vs object$",
     "a stateless run's webhook carries its final values; langgraph dev sends null (its thread is gone)"),
    (r"^crons.create seconds field", r"^status 200 vs 422$",
     "a schedule has the 5 standard fields; a 6th (croniter's seconds) would fire at every poll"),
]


def shape(value: Any) -> Any:
    """The type tree of a JSON value."""
    if isinstance(value, dict):  # a map keyed by ids: its keys are not field names
        return {("{uuid}" if UUID_RE.match(k) else k): shape(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [shape(v) for v in value]
        merged: Any = None
        for item in items:
            merged = _merge(merged, item)
        return ["list", merged]
    if isinstance(value, str):
        if UUID_RE.match(value):
            return "uuid"
        if ISO_RE.match(value):
            return "datetime"
        return "str"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else type(value).__name__


def _merge(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _merge(a.get(k), b.get(k)) for k in {**a, **b}}
    return a


def diff_shapes(ref: Any, ours: Any, path: str = "$") -> list[str]:
    """Where two type trees differ, as readable lines."""
    if isinstance(ref, dict) and isinstance(ours, dict):
        out = [f"{path}.{k}: missing" for k in ref if k not in ours]
        out += [f"{path}.{k}: extra" for k in ours if k not in ref]
        for k in ref:
            if k in ours:
                out += diff_shapes(ref[k], ours[k], f"{path}.{k}")
        return out
    if isinstance(ref, list) and isinstance(ours, list):
        if ref[1] is None or ours[1] is None:
            return []  # an empty list on either side: nothing to compare
        return diff_shapes(ref[1], ours[1], f"{path}[]")
    if ref != ours:
        return [f"{path}: {_brief(ref)} vs {_brief(ours)}"]
    return []


def _brief(s: Any) -> str:
    if isinstance(s, dict):
        return "object"
    if isinstance(s, list):
        return "list"
    return str(s)


@dataclass
class Observed:
    """What a client sees of one response."""

    status: int
    headers: dict[str, str]
    body: Any = None
    events: list[tuple[str, bool, Any]] = field(default_factory=list)  # (name, has id, data)


def parse_sse(text: str) -> list[tuple[str, bool, Any]]:
    events = []
    for block in re.split(r"\r?\n\r?\n", text):
        name, data, has_id = "message", [], False
        lines = [line for line in block.splitlines() if line and not line.startswith(":")]
        if not lines:
            continue
        for line in lines:
            key, _, val = line.partition(":")
            val = val[1:] if val.startswith(" ") else val
            if key == "event":
                name = val
            elif key == "data":
                data.append(val)
            elif key == "id":
                has_id = True
        raw = "\n".join(data)
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw
        events.append((name, has_id, parsed))
    return events


def observe(resp: httpx.Response) -> Observed:
    headers = {}
    for name in ("content-type", "location", "content-location", "x-pagination-next"):
        if name in resp.headers:
            headers[name] = ANY_UUID.sub("{id}", resp.headers[name].split(";")[0].strip())
    obs = Observed(resp.status_code, headers)
    if headers.get("content-type") == "text/event-stream":
        obs.events = parse_sse(resp.text)
    elif resp.content:
        try:
            obs.body = resp.json()
        except ValueError:
            obs.body = resp.text
    return obs


class Receiver:
    """Records what webhooks POST, by path, for the `HOOK` steps."""

    def __init__(self) -> None:
        self.posts: dict[str, Any] = {}
        posts = self.posts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802  # http.server's name
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                posts[self.path] = {"content-type": self.headers.get("content-type"), "body": json.loads(body)}
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def wait(self, path: str, seconds: float = 20) -> httpx.Response:
        """What was POSTed to `path`, as a response (504 if nothing came)."""
        deadline = time.monotonic() + seconds
        while path not in self.posts and time.monotonic() < deadline:
            time.sleep(0.05)
        post = self.posts.get(path)
        if post is None:
            return httpx.Response(504, json={"detail": f"no webhook POST to {path}"})
        return httpx.Response(200, json=post["body"], headers={"content-type": post["content-type"]})


@cache
def receiver() -> Receiver:
    return Receiver()


@dataclass
class Step:
    name: str
    method: str  # HOOK: what the run's webhook POSTed to `path` (under the context's `hook`)
    path: str  # formatted with the context
    body: Any = None
    params: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    after: Callable[[Ctx, Observed], None] | None = None
    before: Callable[[Ctx], None] | None = None
    stream: bool = False  # read an SSE body until it ends
    body_shape: bool = True  # compare the body's shape (off where it depends on timing)
    read_for: float | None = None  # a stream that does not end by itself: read this long, then drop it
    release: str | None = None  # a stream step: `_release` this hold once its first bytes came


def _fmt(value: Any, ctx: Ctx) -> Any:
    if isinstance(value, str):
        return value.format(**ctx)
    if isinstance(value, dict):
        return {k: _fmt(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [_fmt(v, ctx) for v in value]
    return value


def say(text: str, **extra: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}], **extra}


def _put(key: str, getter: Callable[[Observed], Any]) -> Callable[[Ctx, Observed], None]:
    def after(ctx: Ctx, obs: Observed) -> None:
        ctx[key] = getter(obs)

    return after


def _sleep(seconds: float) -> Callable[[Ctx], None]:
    return lambda ctx: time.sleep(seconds)


def _hold(key: str) -> Callable[[Ctx], None]:
    """A new file, its path in the context under `key`: the echo graph's `hold` keeps a run going while
    it exists. A run the next steps need running ends when the scenario is done with it (`_release`),
    not after a fixed delay the steps could outlast on a loaded machine."""

    def before(ctx: Ctx) -> None:
        with tempfile.NamedTemporaryFile(prefix="api-diff-hold-", delete=False) as flag:
            ctx[key] = flag.name

    return before


def _release(key: str) -> Callable[[Ctx], None]:
    def before(ctx: Ctx) -> None:
        with contextlib.suppress(FileNotFoundError, KeyError):
            os.unlink(ctx[key])

    return before


def scenario(graph: str) -> list[Step]:
    """Every SDK route once, plus the error cases, in an order that gives each step what it needs."""
    a = "{assistant_id}"
    t = "/threads/{thread_id}"
    return [
        Step("info", "GET", "/info", body_shape=False),
        Step("ok", "GET", "/ok", body_shape=False),
        Step("openapi", "GET", "/openapi.json", body_shape=False),
        # assistants
        Step("assistants.search", "POST", "/assistants/search", {"graph_id": graph, "limit": 10},
             after=_put("assistant_id", lambda o: o.body[0]["assistant_id"])),
        Step("assistants.search select", "POST", "/assistants/search",
             {"graph_id": graph, "select": ["assistant_id", "name"]}),
        Step("assistants.count", "POST", "/assistants/count", {"graph_id": graph}),
        Step("assistants.get", "GET", f"/assistants/{a}"),
        Step("assistants.get by graph name", "GET", f"/assistants/{graph}"),
        Step("assistants.get_graph", "GET", f"/assistants/{a}/graph"),
        Step("assistants.get_graph xray", "GET", f"/assistants/{a}/graph", params={"xray": "true"}),
        Step("assistants.get_schemas", "GET", f"/assistants/{a}/schemas"),
        Step("assistants.get_subgraphs", "GET", f"/assistants/{a}/subgraphs"),
        Step("assistants.get_subgraphs namespace", "GET", f"/assistants/{a}/subgraphs/inner", params={"recurse": "true"}),
        Step("assistants.search page", "POST", "/assistants/search", {"limit": 1}),
        Step("assistants.create", "POST", "/assistants",
             {"graph_id": graph, "name": "diff", "config": {"configurable": {"x": 1}}, "metadata": {"m": 1}},
             after=_put("new_assistant", lambda o: o.body["assistant_id"])),
        Step("assistants.create again (409)", "POST", "/assistants",
             {"graph_id": graph, "assistant_id": "{new_assistant}"}),
        Step("assistants.create do_nothing", "POST", "/assistants",
             {"graph_id": graph, "assistant_id": "{new_assistant}", "if_exists": "do_nothing"}),
        Step("assistants.update", "PATCH", "/assistants/{new_assistant}", {"metadata": {"n": 2}, "name": "diff2"}),
        Step("assistants.get_versions", "POST", "/assistants/{new_assistant}/versions", {}),
        Step("assistants.set_latest", "POST", "/assistants/{new_assistant}/latest", {"version": 1}),
        Step("assistants.delete", "DELETE", "/assistants/{new_assistant}"),
        Step("assistants.get deleted (404)", "GET", "/assistants/{new_assistant}"),
        Step("assistants.get unknown (404)", "GET", "/assistants/{unknown}"),
        Step("assistants.create unknown graph (404)", "POST", "/assistants", {"graph_id": "no-such-graph"}),
        Step("assistants.create bad body (422)", "POST", "/assistants", {"graph_id": 5, "config": "x"}),
        # threads
        Step("threads.create", "POST", "/threads", {"metadata": {"who": "diff"}},
             after=_put("thread_id", lambda o: o.body["thread_id"])),
        Step("threads.create with id", "POST", "/threads", {"thread_id": "{fixed}", "metadata": {"k": "v"}}),
        Step("threads.create existing (409)", "POST", "/threads", {"thread_id": "{fixed}"}),
        Step("threads.create do_nothing", "POST", "/threads", {"thread_id": "{fixed}", "if_exists": "do_nothing"}),
        Step("threads.create bad id (422)", "POST", "/threads", {"thread_id": "not-a-uuid"}),
        Step("threads.create bad body (422)", "POST", "/threads", {"metadata": "x"}),
        Step("threads.create with ttl", "POST", "/threads", {"ttl": {"strategy": "delete", "ttl": 60}},
             after=_put("ttl_thread", lambda o: o.body["thread_id"])),
        Step("threads.get include=ttl", "GET", "/threads/{ttl_thread}", params={"include": "ttl"}),
        Step("threads.update ttl", "PATCH", "/threads/{ttl_thread}",
             {"metadata": {}, "ttl": {"strategy": "keep_latest", "ttl": 30}}),
        Step("threads.create bad ttl (422)", "POST", "/threads", {"ttl": {"strategy": "archive", "ttl": 5}}),
        Step("threads.get new", "GET", t),
        Step("threads.get unknown (404)", "GET", "/threads/{unknown}"),
        Step("threads.update", "PATCH", t, {"metadata": {"more": 1}}),
        Step("threads.update unknown (404)", "PATCH", "/threads/{unknown}", {"metadata": {}}),
        Step("threads.get_state empty", "GET", f"{t}/state"),
        Step("threads.get_history empty", "POST", f"{t}/history", {"limit": 5}),
        # runs on a thread
        Step("runs.wait", "POST", f"{t}/runs/wait", {"assistant_id": graph, "input": say("hello")}),
        Step("threads.get after run", "GET", t),
        Step("runs.stream values", "POST", f"{t}/runs/stream",
             {"assistant_id": graph, "input": say("two"), "stream_mode": "values"}, stream=True),
        Step("runs.stream updates+custom", "POST", f"{t}/runs/stream",
             {"assistant_id": graph, "input": say("three"), "stream_mode": ["updates", "custom"]}, stream=True),
        Step("runs.stream messages-tuple", "POST", f"{t}/runs/stream",
             {"assistant_id": graph, "input": say("four"), "stream_mode": "messages-tuple"}, stream=True),
        Step("runs.stream messages", "POST", f"{t}/runs/stream",
             {"assistant_id": graph, "input": say("five"), "stream_mode": "messages"}, stream=True),
        Step("runs.stream debug", "POST", f"{t}/runs/stream",
             {"assistant_id": graph, "input": say("six"), "stream_mode": "debug"}, stream=True),
        Step("runs.stream tasks+checkpoints", "POST", f"{t}/runs/stream",
             {"assistant_id": graph, "input": say("seven"), "stream_mode": ["tasks", "checkpoints"]}, stream=True),
        Step("runs.stream subgraphs", "POST", f"{t}/runs/stream",
             {"assistant_id": graph, "input": say("eight"), "stream_mode": ["updates"], "stream_subgraphs": True},
             stream=True),
        Step("runs.create", "POST", f"{t}/runs", {"assistant_id": graph, "input": say("bg"), "metadata": {"r": 1}},
             after=_put("run_id", lambda o: o.body["run_id"])),
        Step("runs.join", "GET", f"{t}/runs/{{run_id}}/join"),
        Step("runs.get", "GET", f"{t}/runs/{{run_id}}"),
        Step("runs.list", "GET", f"{t}/runs", params={"limit": 3}),
        Step("runs.list select", "GET", f"{t}/runs", params={"limit": 3, "select": ["run_id", "status"]}),
        Step("runs.join_stream finished", "GET", f"{t}/runs/{{run_id}}/stream", stream=True),
        Step("runs.create resumable", "POST", f"{t}/runs",
             {"assistant_id": graph, "input": say("bg2"), "stream_resumable": True, "stream_mode": ["values"]},
             after=_put("run2", lambda o: o.body["run_id"])),
        Step("runs.join resumable", "GET", f"{t}/runs/{{run2}}/join"),
        Step("runs.join_stream resumable finished", "GET", f"{t}/runs/{{run2}}/stream", stream=True),
        Step("runs.get unknown (404)", "GET", f"{t}/runs/{{unknown}}"),
        Step("runs.join unknown (404)", "GET", f"{t}/runs/{{unknown}}/join"),
        Step("runs.wait unknown assistant (404)", "POST", f"{t}/runs/wait", {"assistant_id": "{unknown}", "input": {}}),
        Step("runs.wait no assistant (422)", "POST", f"{t}/runs/wait", {"input": {}}),
        Step("runs.wait bad stream_mode (422)", "POST", f"{t}/runs/wait",
             {"assistant_id": graph, "input": {}, "stream_mode": "nope"}),
        Step("runs.wait unknown thread (404)", "POST", "/threads/{unknown}/runs/wait", {"assistant_id": graph, "input": {}}),
        Step("runs.wait if_not_exists create", "POST", "/threads/{fresh}/runs/wait",
             {"assistant_id": graph, "input": say("new"), "if_not_exists": "create"}),
        # webhooks, each run on a thread of its own (a failed run leaves `fail` in its thread's state)
        Step("runs.wait webhook", "POST", "/threads/{hook_thread}/runs/wait",
             {"assistant_id": graph, "input": say("hooked"), "if_not_exists": "create", "webhook": "{hook}/success?k=1"}),
        Step("webhook success", "HOOK", "/success?k=1"),
        Step("runs.wait webhook error", "POST", "/threads/{hook_error}/runs/wait",
             {"assistant_id": graph, "input": say("boom", fail=True), "if_not_exists": "create",
              "webhook": "{hook}/error"}),
        Step("webhook error", "HOOK", "/error"),
        Step("runs.create webhook held", "POST", "/threads/{hook_cancel}/runs",
             {"assistant_id": graph, "input": say("slow", hold="{hook_hold}"), "if_not_exists": "create",
              "webhook": "{hook}/interrupted"},
             before=_hold("hook_hold"), after=_put("hook_run", lambda o: o.body["run_id"])),
        Step("runs.cancel webhook held", "POST", "/threads/{hook_cancel}/runs/{hook_run}/cancel",
             params={"wait": "true"}, before=_sleep(1.5), body_shape=False),  # langgraph dev: until its queue starts it
        Step("webhook interrupted", "HOOK", "/interrupted", before=_release("hook_hold")),
        Step("stateless runs.wait webhook", "POST", "/runs/wait",
             {"assistant_id": graph, "input": say("nobody"), "webhook": "{hook}/stateless"}),
        Step("webhook stateless", "HOOK", "/stateless"),
        Step("stateless runs.wait webhook blocked (422)", "POST", "/runs/wait",
             {"assistant_id": graph, "input": say("x"), "webhook": "http://169.254.169.254/latest"}),
        # busy thread: reject, enqueue, cancel
        Step("runs.create slow", "POST", f"{t}/runs", {"assistant_id": graph, "input": say("slow", hold="{hold}")},
             before=_hold("hold"), after=_put("slow", lambda o: o.body["run_id"])),
        Step("threads.get busy", "GET", t, before=_sleep(1.0)),  # langgraph dev's queue starts a run in up to ~1 s
        Step("runs.create reject (409)", "POST", f"{t}/runs",
             {"assistant_id": graph, "input": say("x"), "multitask_strategy": "reject"}),
        Step("runs.create enqueue", "POST", f"{t}/runs",
             {"assistant_id": graph, "input": say("queued"), "multitask_strategy": "enqueue"},
             after=_put("queued", lambda o: o.body["run_id"])),
        Step("runs.get pending", "GET", f"{t}/runs/{{queued}}"),
        Step("runs.cancel", "POST", f"{t}/runs/{{slow}}/cancel", params={"wait": "true"}),
        Step("runs.get cancelled", "GET", f"{t}/runs/{{slow}}", before=_release("hold")),
        Step("runs.join queued", "GET", f"{t}/runs/{{queued}}/join"),
        Step("runs.cancel finished (404)", "POST", f"{t}/runs/{{queued}}/cancel"),
        Step("runs.create slow 2", "POST", f"{t}/runs", {"assistant_id": graph, "input": say("slow", hold="{hold2}")},
             before=_hold("hold2"),
             after=_put("slow2", lambda o: o.body["run_id"])),
        Step("threads.join_stream", "GET", f"{t}/stream", stream=True, body_shape=False, read_for=2.5,
             release="hold2"),
        Step("runs.cancel_many status with thread (422)", "POST", "/runs/cancel",
             {"thread_id": "{thread_id}", "status": "all"}, before=_release("hold2")),
        Step("runs.create slow 3", "POST", f"{t}/runs", {"assistant_id": graph, "input": say("slow", delay=5)},
             after=_put("slow3", lambda o: o.body["run_id"])),
        Step("runs.cancel_many", "POST", "/runs/cancel", {"thread_id": "{thread_id}", "run_ids": ["{slow3}"]}),
        Step("runs.delete", "DELETE", f"{t}/runs/{{run_id}}"),
        Step("runs.delete again (404)", "DELETE", f"{t}/runs/{{run_id}}"),
        # interrupts
        Step("runs.wait interrupt", "POST", f"{t}/runs/wait", {"assistant_id": graph, "input": say("ask", ask=True)}),
        Step("threads.get interrupted", "GET", t),
        Step("threads.get_state interrupted", "GET", f"{t}/state"),
        Step("runs.wait resume", "POST", f"{t}/runs/wait", {"assistant_id": graph, "command": {"resume": "yes"}}),
        # state and history
        Step("threads.get_state", "GET", f"{t}/state", after=_put("checkpoint_id", lambda o: o.body["checkpoint"]["checkpoint_id"])),
        Step("threads.get_state subgraphs", "GET", f"{t}/state", params={"subgraphs": "true"}),
        Step("threads.get_state at checkpoint", "GET", f"{t}/state/{{checkpoint_id}}"),
        Step("threads.get_state checkpoint object", "POST", f"{t}/state/checkpoint",
             {"checkpoint": {"checkpoint_id": "{checkpoint_id}"}}),
        Step("threads.get_state unknown checkpoint (404)", "GET", f"{t}/state/{{unknown}}"),
        Step("threads.get_history", "POST", f"{t}/history", {"limit": 3}),
        Step("threads.get_history GET", "GET", f"{t}/history", params={"limit": 2}),
        Step("threads.get_history before", "POST", f"{t}/history",
             {"limit": 2, "before": {"configurable": {"checkpoint_id": "{checkpoint_id}"}}}),
        Step("threads.get_history metadata", "POST", f"{t}/history", {"limit": 2, "metadata": {"source": "loop"}}),
        Step("threads.update_state", "POST", f"{t}/state", {"values": say("edited"), "as_node": "echo"}),
        Step("threads.update_state fork", "POST", f"{t}/state",
             {"values": {"ask": False}, "checkpoint_id": "{checkpoint_id}"}),
        Step("threads.update_state bad node (4xx)", "POST", f"{t}/state", {"values": {}, "as_node": "nope"}),
        Step("runs.wait from checkpoint", "POST", f"{t}/runs/wait",
             {"assistant_id": graph, "input": say("fork"), "checkpoint_id": "{checkpoint_id}"}),
        # thread lists
        Step("threads.search", "POST", "/threads/search", {"metadata": {"who": "diff"}, "limit": 5}),
        Step("threads.search status", "POST", "/threads/search", {"status": "idle", "limit": 2}),
        Step("threads.search ids", "POST", "/threads/search", {"ids": ["{thread_id}"]}),
        Step("threads.search sort", "POST", "/threads/search",
             {"limit": 2, "offset": 0, "sort_by": "created_at", "sort_order": "asc"}),
        Step("threads.search select", "POST", "/threads/search", {"ids": ["{thread_id}"], "select": ["thread_id", "status"]}),
        Step("threads.search page", "POST", "/threads/search", {"limit": 1}),
        Step("threads.search extract", "POST", "/threads/search",
             {"ids": ["{thread_id}"], "select": ["thread_id"], "extract": {"last": "values.messages[-1].content"}}),
        Step("threads.search bad extract (422)", "POST", "/threads/search", {"extract": {"x": "nowhere.a"}}),
        Step("threads.create supersteps", "POST", "/threads",
             {"metadata": {"graph_id": graph}, "supersteps": [{"updates": [{"values": say("pre"), "as_node": "echo"}]}]},
             after=_put("superstep_thread", lambda o: o.body["thread_id"])),
        Step("threads.prune", "POST", "/threads/prune", {"thread_ids": ["{superstep_thread}"]}),
        Step("threads.search bad status (422)", "POST", "/threads/search", {"status": "sleepy"}),
        Step("threads.count", "POST", "/threads/count", {"metadata": {"who": "diff"}}),
        Step("threads.copy", "POST", f"{t}/copy", after=_put("copy_id", lambda o: o.body["thread_id"])),
        Step("threads.get copy", "GET", "/threads/{copy_id}"),
        # stateless runs
        Step("stateless runs.wait", "POST", "/runs/wait", {"assistant_id": graph, "input": say("nobody")}),
        Step("stateless runs.stream", "POST", "/runs/stream",
             {"assistant_id": graph, "input": say("nobody"), "stream_mode": ["values"]}, stream=True),
        Step("stateless runs.create", "POST", "/runs", {"assistant_id": graph, "input": say("bg")},
             after=_put("stateless_run", lambda o: o.body["run_id"])),
        Step("runs.batch", "POST", "/runs/batch", [{"assistant_id": graph, "input": say("b1")}]),
        # store
        Step("store.put", "PUT", "/store/items", {"namespace": ["diff", "a"], "key": "k1", "value": {"v": 1}}),
        Step("store.get", "GET", "/store/items", params={"namespace": "diff.a", "key": "k1"}),
        Step("store.get missing", "GET", "/store/items", params={"namespace": "diff.a", "key": "nope"}),
        Step("store.search", "POST", "/store/items/search", {"namespace_prefix": ["diff"], "limit": 5}),
        Step("store.list_namespaces", "POST", "/store/namespaces", {"prefix": ["diff"], "limit": 5}),
        Step("store.put bad (422)", "PUT", "/store/items", {"namespace": "diff", "key": 1}),
        Step("store.delete", "DELETE", "/store/items", {"namespace": ["diff", "a"], "key": "k1"}),
        # crons (the SDK's client.crons); schedules that do not fire while the diff runs
        Step("crons.create_for_thread", "POST", f"{t}/runs/crons",
             {"assistant_id": graph, "schedule": "0 8 * * 1-5", "input": say("cron"), "metadata": {"who": "diff"}},
             after=_put("cron_id", lambda o: o.body["cron_id"])),
        Step("crons.create", "POST", "/runs/crons",
             {"assistant_id": graph, "schedule": "0 0 1 1 *", "input": say("cron"), "on_run_completed": "keep",
              "end_time": "2030-01-01T00:00:00+00:00"},
             after=_put("stateless_cron", lambda o: o.body["cron_id"])),
        Step("crons.create bad schedule (422)", "POST", "/runs/crons", {"assistant_id": graph, "schedule": "nope"}),
        Step("crons.create unknown thread (404)", "POST", "/threads/{unknown}/runs/crons",
             {"assistant_id": graph, "schedule": "0 8 * * *"}),
        Step("crons.create unknown assistant (404)", "POST", "/runs/crons",
             {"assistant_id": "{unknown}", "schedule": "0 8 * * *"}),
        Step("crons.get", "GET", "/runs/crons/{cron_id}"),
        Step("crons.search", "POST", "/runs/crons/search", {}),
        Step("crons.search thread", "POST", "/runs/crons/search", {"thread_id": "{thread_id}"}),
        Step("crons.search select", "POST", "/runs/crons/search", {"select": ["cron_id", "schedule", "next_run_date"]}),
        Step("crons.search sort", "POST", "/runs/crons/search",
             {"sort_by": "next_run_date", "sort_order": "asc", "limit": 1, "offset": 1}),
        Step("crons.search bad sort (422)", "POST", "/runs/crons/search", {"sort_by": "bogus"}),
        Step("crons.count", "POST", "/runs/crons/count", {}),
        Step("crons.count thread", "POST", "/runs/crons/count", {"thread_id": "{thread_id}"}),
        Step("crons.update", "PATCH", "/runs/crons/{cron_id}",
             {"schedule": "0 9 * * *", "enabled": False, "metadata": {"n": 1}}),
        Step("crons.update bad schedule (422)", "PATCH", "/runs/crons/{cron_id}", {"schedule": "nope"}),
        Step("crons.update unknown (404)", "PATCH", "/runs/crons/{unknown}", {"schedule": "0 9 * * *"}),
        # last: langgraph dev accepts it (a 6th field is seconds to croniter), which would change the lists above
        Step("crons.create seconds field (422)", "POST", "/runs/crons",
             {"assistant_id": graph, "schedule": "* * * * * *"}),
        Step("crons.delete", "DELETE", "/runs/crons/{cron_id}"),
        Step("crons.delete stateless", "DELETE", "/runs/crons/{stateless_cron}"),
        Step("crons.delete again (404)", "DELETE", "/runs/crons/{cron_id}"),
        Step("crons.delete bad id (422)", "DELETE", "/runs/crons/not-a-uuid"),
        # deletes
        Step("threads.delete copy", "DELETE", "/threads/{copy_id}"),
        Step("threads.delete", "DELETE", t),
        Step("threads.delete again (404)", "DELETE", t),
        Step("threads.get deleted (404)", "GET", t),
        Step("unknown route (404)", "GET", "/no/such/route"),
    ]


def _send(http: httpx.Client, step: Step, path: str, kwargs: dict[str, Any], ctx: Ctx) -> httpx.Response:
    if step.method == "HOOK":
        return receiver().wait(ctx["hook"].removeprefix(receiver().url) + path)
    if step.read_for is None:
        return http.request(step.method, path, **kwargs)
    chunks: list[bytes] = []
    deadline = time.monotonic() + step.read_for
    with http.stream(step.method, path, timeout=step.read_for, **kwargs) as resp:
        try:
            for chunk in resp.iter_raw():
                chunks.append(chunk)
                if step.release is not None:  # the stream follows the held run: it may end now
                    _release(step.release)(ctx)
                if time.monotonic() > deadline:
                    break
        except httpx.ReadTimeout:
            pass
    return httpx.Response(resp.status_code, headers=resp.headers, content=b"".join(chunks))


def run(base: str, steps: list[Step], timeout: float = 30, progress: bool = False) -> dict[str, Observed]:
    ctx: Ctx = {"unknown": str(uuid.uuid4()), "fixed": str(uuid.uuid4()), "fresh": str(uuid.uuid4()),
                "hook": f"{receiver().url}/{uuid.uuid4().hex}", "hook_thread": str(uuid.uuid4()),
                "hook_error": str(uuid.uuid4()), "hook_cancel": str(uuid.uuid4())}
    seen: dict[str, Observed] = {}
    with httpx.Client(base_url=base, timeout=timeout) as http:
        for step in steps:
            if step.before:
                step.before(ctx)
            try:
                kwargs: dict[str, Any] = {"params": step.params, "headers": step.headers}
                if step.body is not None:
                    kwargs["content"] = json.dumps(_fmt(step.body, ctx))
                    kwargs["headers"] = {"content-type": "application/json", **(step.headers or {})}
                resp = _send(http, step, _fmt(step.path, ctx), kwargs, ctx)
            except (httpx.HTTPError, KeyError) as exc:
                seen[step.name] = Observed(-1, {}, f"{type(exc).__name__}: {exc}")
                continue
            obs = observe(resp)
            seen[step.name] = obs
            if progress:
                print(f"  {base} {obs.status} {step.name}", file=sys.stderr)
            if step.after and 200 <= obs.status < 300:
                try:
                    step.after(ctx, obs)
                except (KeyError, IndexError, TypeError):
                    pass
    return seen


def compare(step: Step, ref: Observed, ours: Observed) -> list[str]:
    out = []
    if ref.status != ours.status:
        out.append(f"status {ref.status} vs {ours.status}")
    for name in sorted(set(ref.headers) | set(ours.headers)):
        if ref.headers.get(name) != ours.headers.get(name):
            out.append(f"header {name}: {ref.headers.get(name)} vs {ours.headers.get(name)}")
    if ref.events or ours.events:
        ref_names = [e[0] for e in ref.events]
        our_names = [e[0] for e in ours.events]
        if ref_names != our_names:
            out.append(f"events {ref_names} vs {our_names}")
        if any(e[1] for e in ref.events) != any(e[1] for e in ours.events):
            out.append("SSE id: lines differ")
        ref_first = {e[0]: e[2] for e in reversed(ref.events)}
        our_first = {e[0]: e[2] for e in reversed(ours.events)}
        for name in ref_first:
            if name in our_first:
                out += [f"event {name} {d}" for d in diff_shapes(shape(ref_first[name]), shape(our_first[name]))]
    elif step.body_shape and ref.status == ours.status:
        out += diff_shapes(shape(ref.body), shape(ours.body))
    return out


def _deliberate(step: str, line: str) -> bool:
    return any(re.search(s, step) and re.search(d, line) for s, d, _ in DELIBERATE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference")
    parser.add_argument("candidate")
    parser.add_argument("--graph", default="echo")
    parser.add_argument("--only", default="", help="run only the steps whose name starts with this")
    parser.add_argument("--json", help="write both sides' observations here")
    parser.add_argument("--verbose", "-v", action="store_true", help="print the bodies of differing steps")
    parser.add_argument("--strict", action="store_true", help="count the deliberate differences too")
    args = parser.parse_args(argv)
    steps = scenario(args.graph)
    ref = run(args.reference, steps, progress=args.verbose)
    ours = run(args.candidate, steps, progress=args.verbose)
    differing, deliberate = 0, 0
    for step in steps:
        if args.only and not step.name.startswith(args.only):
            continue
        lines = compare(step, ref[step.name], ours[step.name])
        if not args.strict:
            kept = [line for line in lines if not _deliberate(step.name, line)]
            deliberate += len(lines) - len(kept)
            lines = kept
        if lines:
            differing += 1
            print(f"✗ {step.method} {step.path}  [{step.name}]")
            for line in lines:
                print(f"    {line}")
            if args.verbose:
                print(f"    ref:  {json.dumps(ref[step.name].body or ref[step.name].events, default=str)[:600]}")
                print(f"    ours: {json.dumps(ours[step.name].body or ours[step.name].events, default=str)[:600]}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({n: {"ref": vars(ref[n]), "ours": vars(ours[n])} for n in ref}, fh, default=str, indent=1)
    print(f"{len(steps)} steps, {differing} differ ({deliberate} deliberate differences not shown)")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
