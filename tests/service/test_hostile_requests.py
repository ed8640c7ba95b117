"""Requests a hostile or clumsy client sends, through the real service on SQLite and PostgreSQL: each is
refused with a 4xx and the service's one JSON error shape, never a 500 (which also closed the
client's connection), and the service goes on answering."""

from __future__ import annotations

import httpx
import pytest

from tests.service.conftest import Server

ZERO = "00000000-0000-0000-0000-000000000000"
JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(("method", "path", "body", "says"), [
    # an offset past a 64-bit integer: SQLite's OverflowError
    ("POST", "/threads/search", {"offset": 10**20}, "offset: Input should be less than or equal to"),
    ("POST", "/store/items/search", {"namespace_prefix": ["a"], "offset": 10**20}, "offset: Input should be"),
    ("POST", "/assistants/search", {"offset": 10**20}, "offset: Input should be"),
    ("GET", f"/threads/{ZERO}/runs?offset=100000000000000000000", None, "offset: Input should be"),
    ("GET", f"/threads/{ZERO}/runs?limit=-1", None, "limit: Input should be greater than or equal to 1"),
    ("GET", f"/threads/{ZERO}/history?limit=-1", None, "limit: Input should be greater than or equal to 1"),
    # a TTL past what a timedelta holds: its OverflowError; a negative item TTL was taken
    ("POST", "/threads", {"ttl": {"strategy": "delete", "ttl": 1e300}}, "ttl.ttl: Input should be less than"),
    ("PUT", "/store/items", {"namespace": ["a"], "key": "k", "value": {}, "ttl": 1e300}, "ttl: Input should be"),
    ("PUT", "/store/items", {"namespace": ["a"], "key": "k", "value": {}, "ttl": -5}, "ttl: Input should be greater"),
    # ids the store cannot keep: its ValueError was a 500
    ("GET", "/threads/a%00b", None, "thread_id 'a\\x00b' contains a NUL character"),
    ("POST", "/threads", {"thread_id": "a\x00b"}, "thread_id 'a\\x00b' contains a NUL character"),
    ("DELETE", "/threads/a%00b", None, "contains a NUL character"),
    # JSON nested past Python's recursion limit, an integer past its digit limit: FastAPI's 400 "http_error"
    ("POST", "/threads", b'{"metadata": {"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}", "body: invalid JSON (nested"),
    ("POST", "/threads", b'{"metadata": {"a": ' + b"9" * 5000 + b"}}", "body: invalid JSON (nested too deeply, or a number"),
    # a filter of more conditions than SQLite runs: its "Expression tree is too large" (PostgreSQL answered)
    ("POST", "/threads/search", {"metadata": {f"k{i}": i for i in range(5000)}},
     "a metadata filter holds at most 100 conditions, not 5000"),
    # a config LangGraph cannot merge or use: a 500 for every run with it (or its assistant's)
    ("POST", "/runs/wait", {"assistant_id": "echo", "config": {"configurable": [1]}},
     "config: config.configurable must be an object"),
    ("POST", "/assistants", {"graph_id": "echo", "config": {"tags": [1]}}, "config: config.tags must be a list of strings"),
    ("POST", "/runs/crons", {"assistant_id": "echo", "schedule": "0 0 1 1 *", "config": {"recursion_limit": "9"}},
     "config: config.recursion_limit must be an integer"),
    # JSON's lone "\ud800": a UnicodeEncodeError when stored
    ("POST", "/threads", b'{"metadata": {"a": "\\ud800"}}', "lone surrogate"),
])
def test_a_bad_request_is_a_4xx_not_a_500(server: Server, method: str, path: str, body, says: str) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        content = body if isinstance(body, bytes) else None
        answer = http.request(method, path, content=content, json=None if content else body, headers=JSON)
        assert 400 <= answer.status_code < 500, (answer.status_code, answer.text)
        error = answer.json()
        assert error["error"] == "invalid" and says in error["message"], error
        assert http.get("/ok").json() == {"ok": True}


NUL = "x\x00y"
SAY = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(("method", "path", "body", "says"), [
    ("POST", "/threads", {"metadata": {"a": NUL}}, "metadata.a contains a NUL character"),
    ("POST", "/threads", {"metadata": {"a": {"b": ["ok", NUL]}}}, "metadata.a.b[1] contains a NUL character"),
    ("POST", "/threads", {"metadata": {NUL: 1}}, "metadata has a key 'x\\x00y' that contains a NUL character"),
    ("PATCH", "/threads/{thread}", {"metadata": {"a": NUL}}, "metadata.a contains a NUL character"),
    ("POST", "/threads/search", {"metadata": {"a": NUL}}, "metadata.a contains a NUL character"),
    ("POST", "/threads/count", {"metadata": {"a": NUL}}, "metadata.a contains a NUL character"),
    ("POST", "/threads/{thread}/history", {"metadata": {"a": NUL}}, "metadata.a contains a NUL character"),
    ("POST", "/threads/{thread}/runs", {"assistant_id": "echo", "input": SAY, "metadata": {"a": NUL}}, "metadata.a"),
    ("POST", "/threads/{thread}/runs/wait", {"assistant_id": "echo", "input": SAY, "metadata": {NUL: 1}}, "a key"),
    ("POST", "/runs/wait", {"assistant_id": "echo", "input": SAY, "metadata": {"a": NUL}}, "metadata.a"),
    ("POST", "/threads/{thread}/runs/crons", {"assistant_id": "echo", "schedule": "0 0 1 1 *", "metadata": {"a": NUL}},
     "metadata.a"),
    ("POST", "/assistants", {"graph_id": "echo", "name": NUL}, "name contains a NUL character"),
    ("POST", "/assistants", {"graph_id": "echo", "metadata": {"a": NUL}}, "metadata.a contains a NUL character"),
    ("PUT", "/store/items", {"namespace": ["nul"], "key": "k", "value": {"v": NUL}}, "value.v contains a NUL character"),
    # JSON has no NaN nor Infinity (Python's json reads them): PostgreSQL's 500, SQLite's malformed JSON later
    ("POST", "/threads", b'{"metadata": {"a": NaN}}', "metadata.a is nan, not a finite number"),
    ("PATCH", "/threads/{thread}", b'{"metadata": {"a": {"b": Infinity}}}', "metadata.a.b is inf, not a finite number"),
    ("POST", "/runs/wait", b'{"assistant_id": "echo", "metadata": {"a": NaN}}', "metadata.a is nan"),
    ("PUT", "/store/items", b'{"namespace": ["nul"], "key": "k", "value": {"v": -Infinity}}', "value.v is -inf"),
    # JSON's lone "\ud800" (no UTF-8 text holds it) in a nested value
    ("POST", "/threads", b'{"metadata": {"a": ["\\ud800"]}}', "metadata.a[0] is not valid Unicode (a lone surrogate)"),
])
def test_text_no_store_can_keep_is_a_422_on_every_database_and_nothing_is_stored(
    server: Server, method: str, path: str, body, says: str
) -> None:
    """A NUL character in metadata (a thread's, a run's, a cron's, an assistant's), a name or a store value
    was stored by SQLite and MySQL and refused by PostgreSQL (its text and jsonb hold none): the same
    request now has the same answer everywhere, a 422 before anything is stored."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        thread = http.post("/threads", json={"metadata": {"kept": "as is"}}).json()["thread_id"]
        before = {
            "threads": http.post("/threads/count", json={}).json(),
            "assistants": http.post("/assistants/count", json={}).json(),
            "crons": http.post("/runs/crons/count", json={}).json(),
        }
        url = path.format(thread=thread)
        if isinstance(body, bytes):
            answer = http.request(method, url, content=body, headers=JSON)
        else:
            answer = http.request(method, url, json=body)
        assert answer.status_code == 422, (answer.status_code, answer.text)
        assert answer.json()["error"] == "invalid" and says in answer.json()["message"], answer.json()
        assert "which the store cannot keep" in answer.json()["message"]
        assert {
            "threads": http.post("/threads/count", json={}).json(),
            "assistants": http.post("/assistants/count", json={}).json(),
            "crons": http.post("/runs/crons/count", json={}).json(),
        } == before
        assert http.get(f"/threads/{thread}").json()["metadata"] == {"kept": "as is"}
        assert http.get(f"/threads/{thread}/runs").json() == []
        assert http.get("/store/items", params={"namespace": "nul", "key": "k"}).json() is None
        assert http.get("/ok").json() == {"ok": True}


def test_a_bad_history_filter_is_a_422(server: Server) -> None:
    """A history filter the store cannot match alike on every dialect (a key with a quote) raised the
    store's ValueError in the middle of the walk: a 500, which also closed the client's connection."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        thread = http.post("/threads", json={}).json()["thread_id"]
        answer = http.post(f"/threads/{thread}/history", json={"metadata": {'a"b': 1}})
        assert answer.status_code == 422, (answer.status_code, answer.text)
        assert answer.json()["message"] == "invalid metadata filter key 'a\"b': use letters, digits, '_', '.' or '-'"


@pytest.mark.parametrize(("after", "says"), [
    (b"1e300", "after_seconds: Input should be less than or equal to 31622400"),
    (b"31622401", "after_seconds: Input should be less than or equal to 31622400"),
    (b"Infinity", "after_seconds: Input should be a finite number"),
    (b"NaN", "after_seconds: Input should be a finite number"),
    (b"-1", "after_seconds: Input should be greater than or equal to 0"),
])
def test_an_absurd_after_seconds_is_a_422_and_starts_no_run(server: Server, after: bytes, says: str) -> None:
    """1e300 (or Infinity) seconds was taken: the run stayed pending for ever, and every later run of its
    thread queued behind it. Each way a run is created refuses it before anything is stored."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        thread_id = http.post("/threads", json={}).json()["thread_id"]
        threads = http.post("/threads/count", json={}).json()
        body = b'{"assistant_id": "echo", "input": {"messages": []}, "after_seconds": %s}' % after
        for path in (f"/threads/{thread_id}/runs", f"/threads/{thread_id}/runs/wait",
                     f"/threads/{thread_id}/runs/stream", "/runs", "/runs/wait", "/runs/stream"):
            answer = http.post(path, content=body, headers=JSON)
            assert answer.status_code == 422, (path, answer.status_code, answer.text)
            assert answer.json()["error"] == "invalid" and answer.json()["message"] == says, answer.json()
        batch = http.post("/runs/batch", content=b"[" + body + b"]", headers=JSON)
        assert batch.status_code == 422 and says.split(": ", 1)[1] in batch.json()["message"], batch.text
        assert http.get(f"/threads/{thread_id}/runs").json() == []
        assert http.post("/threads/count", json={}).json() == threads  # no stateless run's thread either
        # a year is still taken (and the run can be cancelled while it waits)
        run = http.post(f"/threads/{thread_id}/runs", json={"assistant_id": "echo", "input": {}, "after_seconds": 31622400})
        assert run.status_code == 200, run.text
        http.post(f"/threads/{thread_id}/runs/{run.json()['run_id']}/cancel")


@pytest.mark.parametrize("bad_input", [{"messages": 5}, {"messages": [{"role": "alien", "content": "x"}]}])
def test_a_run_input_the_graph_refused_leaves_its_thread_listed_and_usable(server: Server, bad_input: dict) -> None:
    """A run's input its reducer refused stays a pending write of the thread's head checkpoint, applied
    again by every read of its state: reading the thread, copying it, and every search that listed it
    (the page's conversation list) was a 500. The thread is listed with `values` null and why in
    `error`; its state is a 409 saying why; its next run goes on."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        thread = http.post("/threads", json={"metadata": {"poisoned": True}}).json()["thread_id"]
        run = http.post(f"/threads/{thread}/runs/wait", json={"assistant_id": "echo", "input": bad_input})
        assert run.status_code == 200 and "__error__" in run.json(), run.text
        got = http.get(f"/threads/{thread}")
        assert got.status_code == 200, got.text
        assert got.json()["values"] is None and "the thread's state cannot be read" in got.json()["error"]
        listed = http.post("/threads/search", json={"metadata": {"poisoned": True}, "limit": 100})
        assert listed.status_code == 200 and thread in [t["thread_id"] for t in listed.json()], listed.text
        found = http.post("/threads/search", json={"values": {"messages": []}, "limit": 100})
        assert found.status_code == 200, found.text
        assert http.post(f"/threads/{thread}/copy").status_code == 200
        state = http.get(f"/threads/{thread}/state")
        assert state.status_code == 409 and state.json()["message"].startswith("the thread's state cannot be read: ")
        again = http.post(f"/threads/{thread}/runs/wait", json={"assistant_id": "echo", "input": SAY})
        assert again.json()["messages"][-1]["content"] == "echo: hi", again.text
        assert http.get(f"/threads/{thread}").json()["error"] is None
