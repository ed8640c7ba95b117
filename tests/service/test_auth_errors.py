"""API keys (401; another user's resources are 404 everywhere), bad input (422, 413), restart, `orecast serve`."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from langgraph_sdk.errors import NotFoundError
from typer.testing import CliRunner

from orecast.checkpoint.filters import MAX_FILTER_CONDITIONS
from orecast.cli.main import app as cli
from tests.service.conftest import (
    ECHO,
    Server,
    free_port,
    new_pg_schema,
    say,
    settings_for,
    wait_for_serve,
)

KEYS = "alice:key-alice,bob:key-bob,root:key-root:admin"


def new_database(db_url: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """An empty database of `db_url`'s kind (SQLite or PostgreSQL), for a server of its own."""
    if db_url.startswith("sqlite"):
        return f"sqlite:///{tmp_path_factory.mktemp('own') / 'orecast.sqlite3'}"
    return new_pg_schema(request.getfixturevalue("postgres_url"))


@pytest.fixture(scope="module")
def secured(db_url: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    url = new_database(db_url, request, tmp_path_factory)
    running = Server.start(
        settings_for(url, api_keys=KEYS, max_body_bytes=20_000, cors_origins="https://ui.example")
    )
    yield running
    running.stop()


def test_missing_or_unknown_key_is_401(secured: Server) -> None:
    with httpx.Client(base_url=secured.url) as http:
        for path in ("/threads/search", "/assistants/search", "/runs/wait", "/store/items/search"):
            res = http.post(path, json={})
            assert res.status_code == 401, path
            assert res.json()["error"] == "unauthorized"
        assert http.post("/threads", json={}, headers={"x-api-key": "nope"}).status_code == 401
        assert http.post("/threads", json={}, headers={"Authorization": "Bearer key-bob"}).status_code == 200
        assert http.get("/ok").status_code == 200 and http.get("/health").status_code == 200
        # /metrics is behind the same keys as the API (any user's)
        assert http.get("/metrics").status_code == 401
        scraped = http.get("/metrics", headers={"Authorization": "Bearer key-bob"})
        assert scraped.status_code == 200 and "orecast_http_requests_total" in scraped.text


async def test_another_users_resources_are_404_everywhere(secured: Server) -> None:
    alice, bob, root = (secured.client(k) for k in ("key-alice", "key-bob", "key-root"))
    tid = (await alice.threads.create(metadata={"who": "alice"}))["thread_id"]
    run = await alice.runs.create(tid, ECHO, input=say("secret"))
    await alice.runs.join(tid, run["run_id"])
    state = await alice.threads.get_state(tid)
    cid = state["checkpoint"]["checkpoint_id"]

    calls = [
        bob.threads.get(tid),
        bob.threads.update(tid, metadata={"x": 1}),
        bob.threads.get_state(tid),
        bob.threads.get_state(tid, checkpoint_id=cid),
        bob.threads.update_state(tid, {"messages": []}, as_node="echo"),
        bob.threads.get_history(tid),
        bob.threads.copy(tid),
        bob.threads.delete(tid),
        bob.runs.get(tid, run["run_id"]),
        bob.runs.list(tid),
        bob.runs.delete(tid, run["run_id"]),
        bob.runs.cancel(tid, run["run_id"]),
    ]
    for call in calls:
        with pytest.raises(NotFoundError):
            await call
    for call in (bob.runs.join(tid, run["run_id"]), bob.runs.wait(tid, ECHO, input=say("x"))):
        with pytest.raises(httpx.HTTPStatusError) as hidden:
            await call
        assert hidden.value.response.status_code == 404
    with pytest.raises(NotFoundError):
        async for _ in bob.runs.join_stream(tid, run["run_id"]):
            pass
    assert tid not in {t["thread_id"] for t in await bob.threads.search(limit=100)}
    assert await bob.threads.count(metadata={"who": "alice"}) == 0
    assert [t["thread_id"] for t in await alice.threads.search(metadata={"who": "alice"})] == [tid]
    assert (await root.threads.get(tid))["thread_id"] == tid, "an admin sees every thread"
    # metadata cannot claim another owner
    await bob.threads.update((await bob.threads.create())["thread_id"], metadata={"owner": "alice"})
    assert await alice.threads.count() == 1

    await alice.store.put_item(["mem"], "fact", {"likes": "ore"})
    assert await bob.store.get_item(["mem"], "fact") is None, "another user's item is not there for bob"
    assert (await bob.store.search_items(["mem"]))["items"] == []
    assert (await alice.store.get_item(["mem"], "fact"))["value"] == {"likes": "ore"}


async def _snapshot(client, tid: str) -> tuple:
    """What is stored for a thread: its row, its checkpoints and its runs (`client`: an admin's, who
    sees every user's runs)."""
    thread = await client.threads.get(tid)
    history = await client.threads.get_history(tid, limit=1000)
    runs = await client.runs.list(tid, limit=100)
    return (
        thread["status"], thread["metadata"], thread["values"],
        [h["checkpoint"]["checkpoint_id"] for h in history],
        [(r["run_id"], r["status"]) for r in runs],
    )


async def test_another_users_thread_refuses_runs_streams_chat_and_reports(secured: Server) -> None:
    """Every other route on another user's thread answers 404 as for a missing thread, and stores nothing."""
    alice, bob, root = (secured.client(k) for k in ("key-alice", "key-bob", "key-root"))
    # a thread of the analyst with an exported report, so the report routes have something to hide
    tid = (await alice.threads.create())["thread_id"]
    await alice.runs.wait(tid, "orecast", input=say("铁矿石现在多少钱？"))
    asked = await alice.runs.wait(tid, "orecast", input=say("导出报告"))
    assert asked["__interrupt__"]
    await alice.runs.wait(tid, "orecast", command={"resume": {"decisions": [{"type": "approve"}]}})
    as_alice, as_bob = ({"x-api-key": k} for k in ("key-alice", "key-bob"))
    with httpx.Client(base_url=secured.url, timeout=60) as http:
        (report,) = http.get(f"/threads/{tid}/reports", headers=as_alice).json()
        assert http.get(report["url"], headers=as_alice).status_code == 200
    cid = (await alice.threads.get_state(tid))["checkpoint"]["checkpoint_id"]
    before = await _snapshot(root, tid)

    for call in (
        bob.runs.create(tid, "orecast", input=say("mine now")),
        bob.runs.create(tid, "orecast", input=say("mine now"), if_not_exists="create"),
        bob.threads.get_state(tid, checkpoint={"checkpoint_id": cid, "checkpoint_ns": ""}),
        bob.runs.cancel_many(thread_id=tid),
    ):
        with pytest.raises(NotFoundError):
            await call
    for stream in (
        bob.runs.stream(tid, "orecast", input=say("mine now"), stream_mode="values"),
        await bob.threads.join_stream(tid),  # a coroutine that returns the stream
    ):
        with pytest.raises(NotFoundError):
            async for _ in stream:
                pass
    with httpx.Client(base_url=secured.url, headers=as_bob, timeout=60) as http:
        answers = {
            "history": http.get(f"/threads/{tid}/history"),
            "state at": http.post(f"/threads/{tid}/state/checkpoint", json={"checkpoint": {"checkpoint_id": cid}}),
            "chat": http.post("/agent/api/chat", json={"message": "mine now", "thread_id": tid}),
            "chat stream": http.post("/agent/api/chat/stream", json={"message": "mine now", "thread_id": tid}),
            "reports": http.get(f"/threads/{tid}/reports"),
            "report": http.get(report["url"]),
        }
        for name, res in answers.items():
            assert res.status_code == 404, (name, res.status_code, res.text)
            assert res.json()["error"] == "not_found", name
        missing = http.get("/threads/00000000-0000-4000-8000-000000000000/reports")
        assert answers["reports"].json()["message"] == missing.json()["message"].replace(
            "00000000-0000-4000-8000-000000000000", tid
        ), "another user's thread reads as a missing one"
    assert await _snapshot(root, tid) == before, "the refused calls changed nothing"

    # cancel_many: bob cannot stop alice's running run, by thread, by id or by status
    slow_tid = (await alice.threads.create())["thread_id"]
    slow = await alice.runs.create(slow_tid, ECHO, input=say("slow", delay=2))
    with pytest.raises(NotFoundError):
        await bob.runs.cancel_many(thread_id=slow_tid)
    with pytest.raises(NotFoundError):
        await bob.runs.cancel_many(run_ids=[slow["run_id"]])
    await bob.runs.cancel_many(status="all")
    joined = await alice.runs.join(slow_tid, slow["run_id"])
    assert [m["content"] for m in joined["messages"]] == ["slow", "echo: slow"]
    assert (await alice.runs.get(slow_tid, slow["run_id"]))["status"] == "success"


def test_cors_only_for_configured_origins(secured: Server, server: Server) -> None:
    preflight = {"Origin": "https://ui.example", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "x-api-key,content-type"}
    res = httpx.options(f"{secured.url}/threads", headers=preflight)
    assert res.status_code == 200 and res.headers["access-control-allow-origin"] == "https://ui.example"
    res = httpx.post(f"{secured.url}/threads", json={},
                     headers={"Origin": "https://ui.example", "x-api-key": "key-alice"})
    assert "Content-Location" in res.headers["access-control-expose-headers"]
    page = httpx.post(f"{secured.url}/assistants/search", json={"limit": 1},
                      headers={"Origin": "https://ui.example", "x-api-key": "key-alice"})
    exposed = {h.strip().lower() for h in page.headers["access-control-expose-headers"].split(",")}
    assert {"x-pagination-total", "x-pagination-next"} <= exposed, "a page in a browser reads its next offset"
    other = httpx.options(f"{secured.url}/threads", headers={**preflight, "Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers
    off = httpx.options(f"{server.url}/threads", headers=preflight)
    assert "access-control-allow-origin" not in off.headers, "CORS is off by default"


def test_bad_input_is_422_with_field_and_413_when_too_large(secured: Server) -> None:
    headers = {"x-api-key": "key-alice"}
    with httpx.Client(base_url=secured.url, headers=headers) as http:
        tid = http.post("/threads", json={}).json()["thread_id"]
        before = http.get(f"/threads/{tid}/history").json()
        res = http.post(f"/threads/{tid}/runs", json={"assistant_id": ECHO, "stream_mode": "bogus"})
        assert res.status_code == 422
        body = res.json()
        assert body["error"] == "invalid" and body["details"][0]["field"] == "stream_mode"
        assert "stream_mode" in body["message"]
        res = http.post("/threads/search", json={"limit": -1})
        assert res.status_code == 422 and res.json()["details"][0]["field"] == "limit"
        assert http.post("/threads", content=b"{not json", headers={"content-type": "application/json"}).status_code == 422
        big = {"assistant_id": ECHO, "input": say("x" * 30_000)}
        res = http.post(f"/threads/{tid}/runs/wait", json=big)
        assert res.status_code == 413 and res.json()["error"] == "too_large"
        assert http.get(f"/threads/{tid}/history").json() == before, "a rejected request stores nothing"
        assert http.get("/threads/nope").status_code == 404
        assert http.get(f"/threads/{tid}/runs/nope").status_code == 404
        assert http.post(f"/threads/{tid}/runs", json={"assistant_id": "nope"}).status_code == 404
        res = http.post("/agent/api/chat", json={"message": ""})
        assert res.status_code == 422 and res.json()["details"][0]["field"] == "message"


async def test_restart_loses_nothing(db_url, request, tmp_path_factory) -> None:
    url = new_database(db_url, request, tmp_path_factory)
    first = Server.start(settings_for(url))
    client = first.client()
    tid = (await client.threads.create(metadata={"keep": True}))["thread_id"]
    await client.runs.wait(tid, ECHO, input=say("before restart"))
    paused = await client.runs.wait(tid, ECHO, input=say("ask", ask=True))
    assert paused["__interrupt__"]
    await client.store.put_item(["n"], "k", {"v": 1})
    mine = await client.assistants.create(ECHO, name="kept")
    runs_before = await client.runs.list(tid)
    first.stop()

    second = Server.start(settings_for(url))
    try:
        client = second.client()
        thread = await client.threads.get(tid)
        assert thread["status"] == "interrupted" and thread["metadata"]["keep"] is True
        assert [r["run_id"] for r in await client.runs.list(tid)] == [r["run_id"] for r in runs_before]
        assert (await client.store.get_item(["n"], "k"))["value"] == {"v": 1}
        assert (await client.assistants.get(mine["assistant_id"]))["name"] == "kept"
        done = await client.runs.wait(tid, ECHO, command={"resume": "ok"})
        assert [m["content"] for m in done["messages"]] == [
            "before restart", "echo: before restart", "ask", "echo: ask (ok)"
        ]
    finally:
        second.stop()


def test_serve_refuses_a_public_host_without_keys_and_a_bad_graph() -> None:
    runner = CliRunner()
    refused = runner.invoke(cli, ["serve", "--host", "0.0.0.0"], env={"ORECAST_API_KEYS": ""})
    assert refused.exit_code == 2 and "ORECAST_API_KEYS" in refused.stderr
    bad = runner.invoke(cli, ["serve", "--graph", "nonsense"])
    assert bad.exit_code == 2 and bad.stderr.startswith("error:")


@pytest.mark.slow
def test_serve_command_serves_an_outside_graph(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "ORECAST_MODEL": "offline"}
    env.pop("ORECAST_API_KEYS", None)
    cmd = [sys.executable, "-m", "orecast.cli.main", "serve"]
    port = free_port()
    url = f"sqlite:///{tmp_path / 'serve.sqlite3'}"
    proc = subprocess.Popen(
        [*cmd, "--port", str(port), "--database-url", url, "--no-analyst",
         "--graph", f"{ECHO}=tests.service.echo_graph:graph"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_for_serve(proc, f"http://127.0.0.1:{port}", 120)
        out = httpx.post(
            f"http://127.0.0.1:{port}/runs/wait", json={"assistant_id": ECHO, "input": say("cli")}, timeout=30
        ).json()
        assert out["messages"][-1]["content"] == "echo: cli"
        assert httpx.get(f"http://127.0.0.1:{port}/info").json()["graphs"] == [ECHO]
    finally:
        proc.terminate()
        proc.wait(30)


def test_taken_thread_id_answers_alike_for_everyone(secured: Server) -> None:
    """Thread ids are global: creating one says it is taken (409), in the same words whoever holds it,
    without touching or describing the thread; a chosen id must be a UUID, so nobody can probe for one."""
    alice, bob = ({"x-api-key": k} for k in ("key-alice", "key-bob"))
    with httpx.Client(base_url=secured.url) as http:
        tid = http.post("/threads", json={"metadata": {"who": "alice"}}, headers=alice).json()["thread_id"]
        own = http.post("/threads", json={"thread_id": tid}, headers=alice)
        answers = [
            http.post("/threads", json={"thread_id": tid, "if_exists": how, "metadata": {"who": "bob"}}, headers=bob)
            for how in ("raise", "do_nothing")
        ]
        assert own.status_code == 409 and all(a.status_code == 409 and a.json() == own.json() for a in answers)
        assert http.get(f"/threads/{tid}", headers=alice).json()["metadata"] == {"who": "alice"}
        guess = http.post("/threads", json={"thread_id": "alice-chat-1"}, headers=bob)
        assert guess.status_code == 422 and guess.json()["message"] == "thread_id: must be a UUID when auth is on"
        run = http.post(
            "/threads/alice-chat-2/runs/wait",
            json={"assistant_id": ECHO, "input": say("x"), "if_not_exists": "create"}, headers=bob,
        )
        assert run.status_code == 422


def test_the_filter_cap_counts_the_users_conditions_not_the_owner_the_server_adds(secured: Server) -> None:
    """A user's filter of exactly MAX_FILTER_CONDITIONS is taken under API keys too (the owner condition the
    server adds made it 101 and a 422), one more is refused, and the owner still scopes the search."""
    full = {f"k{i}": i for i in range(MAX_FILTER_CONDITIONS)}
    with httpx.Client(base_url=secured.url, timeout=30) as http:
        alice, bob = {"x-api-key": "key-alice"}, {"x-api-key": "key-bob"}
        made = http.post("/threads", json={"metadata": full}, headers=alice).json()["thread_id"]
        http.post("/threads", json={"metadata": full}, headers=bob).raise_for_status()
        for path in ("/threads/search", "/threads/count"):
            answer = http.post(path, json={"metadata": full}, headers=alice)
            assert answer.status_code == 200, answer.text
            found = answer.json()
            assert found == 1 if path.endswith("count") else [t["thread_id"] for t in found] == [made]
            over = http.post(path, json={"metadata": {**full, "one_more": 1}}, headers=alice)
            assert over.status_code == 422, over.text
            assert f"at most {MAX_FILTER_CONDITIONS} conditions, not {MAX_FILTER_CONDITIONS + 1}" in over.json()["message"]
