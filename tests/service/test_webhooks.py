"""Run webhooks against a real HTTP receiver on this machine: what is POSTed when a run ends (as
langgraph-api posts it), retries and failures that never reach the client, and the addresses refused."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from orecast.service.webhooks import WebhookPolicy, Webhooks
from tests.service.conftest import ECHO, Server, free_port, held, say, settings_for
from tests.service.test_crons import make_due


class Receiver:
    """An HTTP server recording every POST; `/fail…` answers 500, `/slow…` answers after 3 s,
    `/redirect…` redirects to a metadata address."""

    def __init__(self) -> None:
        self.posts: list[dict] = []
        received = self.posts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802  # http.server's name
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                received.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body)})
                if self.path.startswith("/slow"):
                    time.sleep(3)
                if self.path.startswith("/redirect"):  # to a metadata address, which is never called
                    self.send_response(307)
                    self.send_header("Location", "http://169.254.169.254/latest/meta-data")
                else:
                    self.send_response(500 if self.path.startswith("/fail") else 200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def to(self, path: str) -> list[dict]:
        return [p for p in self.posts if p["path"] == path]

    async def wait_for(self, path: str, count: int = 1, seconds: float = 20) -> list[dict]:
        deadline = time.monotonic() + seconds
        while len(self.to(path)) < count:
            assert time.monotonic() < deadline, f"{count} POST(s) to {path} expected, got {self.posts}"
            await asyncio.sleep(0.05)
        return self.to(path)


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.server.shutdown()


@pytest.fixture(scope="module")
def hooks_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('hooks') / 'o.sqlite3'}"


@pytest.fixture(scope="module")
def open_server(hooks_db: str) -> Iterator[Server]:
    """A service that lets webhooks call this machine (ORECAST_WEBHOOK_ALLOW_PRIVATE)."""
    running = Server.start(settings_for(hooks_db, webhook_allow_private=True, cron_poll_seconds=0.05))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def strict_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A service with the default policy: no loopback or private-network webhooks."""
    running = Server.start(settings_for(f"sqlite:///{tmp_path_factory.mktemp('strict') / 'o.sqlite3'}"))
    yield running
    running.stop()


def contents(values: dict) -> list[str]:
    return [m["content"] for m in values["messages"]]


async def test_a_finished_run_is_posted_to_its_webhook(open_server: Server, receiver: Receiver) -> None:
    client = open_server.client()
    tid = (await client.threads.create())["thread_id"]
    hook = f"{receiver.url}/done?token=s3cret"
    waited = await client.runs.wait(tid, ECHO, input=say("hi"), webhook=hook, metadata={"m": 1})
    [post] = await receiver.wait_for("/done?token=s3cret")
    body = post["body"]
    assert post["headers"]["Content-Type"] == "application/json"
    [run] = await client.runs.list(tid)
    assert body["run_id"] == run["run_id"] and body["thread_id"] == tid and body["status"] == "success"
    assert body["metadata"] == {"m": 1} and body["kwargs"]["webhook"] == hook
    assert contents(body["values"]) == contents(waited) == ["hi", "echo: hi"]
    assert body["run_started_at"] <= body["run_ended_at"] <= body["webhook_sent_at"] and "error" not in body


async def test_a_failed_or_cancelled_run_is_posted_too(open_server: Server, receiver: Receiver, tmp_path: Path) -> None:
    client = open_server.client()
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, ECHO, input=say("boom", fail=True), webhook=f"{receiver.url}/errored", raise_error=False)
    [failed] = await receiver.wait_for("/errored")
    assert failed["body"]["status"] == "error"
    assert failed["body"]["error"] == {"error": "RuntimeError", "message": "asked to fail on 'boom'"}
    assert contents(failed["body"]["values"]) == ["boom"], "the values as the run left them"

    for action, status in (("interrupt", "interrupted"), ("rollback", "rollback")):
        flag = held(tmp_path)
        tid = (await client.threads.create())["thread_id"]
        run = await client.runs.create(tid, ECHO, input=say("slow", hold=str(flag)), webhook=f"{receiver.url}/{action}")
        while (await client.threads.get_state(tid))["values"] == {}:  # the graph has started
            await asyncio.sleep(0.05)
        await client.runs.cancel(tid, run["run_id"], wait=True, action=action)
        flag.unlink()
        [cancelled] = await receiver.wait_for(f"/{action}")
        assert cancelled["body"]["status"] == status and cancelled["body"]["run_id"] == run["run_id"]
        kind = "UserRollback" if action == "rollback" else "UserInterrupt"
        assert cancelled["body"]["error"]["error"] == kind
        values = cancelled["body"]["values"]
        assert values is None if action == "rollback" else contents(values) == ["slow"]


async def test_a_run_cancelled_before_it_started_calls_no_webhook(open_server: Server, receiver: Receiver, tmp_path: Path) -> None:
    client = open_server.client()
    tid = (await client.threads.create())["thread_id"]
    flag = held(tmp_path)
    first = await client.runs.create(tid, ECHO, input=say("slow", hold=str(flag)))
    queued = await client.runs.create(tid, ECHO, input=say("queued"), webhook=f"{receiver.url}/never")
    await client.runs.cancel(tid, queued["run_id"])
    flag.unlink()
    await client.runs.join(tid, first["run_id"])
    await asyncio.sleep(0.5)
    assert receiver.to("/never") == [] and (await client.runs.get(tid, queued["run_id"]))["status"] == "interrupted"


async def test_a_failing_receiver_is_retried_and_never_holds_the_run(
    open_server: Server, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    client = open_server.client()
    caplog.set_level(logging.WARNING, "orecast.service.webhooks")
    started = time.monotonic()
    waited = await client.runs.wait(None, ECHO, input=say("x"), webhook=f"{receiver.url}/slow?key=1")
    assert contents(waited) == ["x", "echo: x"] and time.monotonic() - started < 3, "the receiver is slow, not the run"

    await client.runs.wait(None, ECHO, input=say("y"), webhook=f"{receiver.url}/fail?key=2")
    assert len(await receiver.wait_for("/fail?key=2", 3)) == 3, "a 500 is tried 3 times"
    dead = f"http://127.0.0.1:{free_port()}/gone?token=secret"  # nothing listens there
    waited = await client.runs.wait(None, ECHO, input=say("z"), webhook=dead)
    assert contents(waited) == ["z", "echo: z"]
    deadline = time.monotonic() + 20
    while "ConnectError" not in caplog.text or "HTTP 500" not in caplog.text:
        assert time.monotonic() < deadline, caplog.text
        await asyncio.sleep(0.1)
    assert "/fail failed after 3 attempt(s): HTTP 500" in caplog.text
    assert f"{dead.split('?')[0]} failed after 3 attempt(s): ConnectError" in caplog.text
    assert "secret" not in caplog.text and "key=" not in caplog.text, "query strings stay out of the logs"


async def test_a_private_address_is_refused_unless_allowed(
    strict_server: Server, open_server: Server, receiver: Receiver
) -> None:
    async with httpx.AsyncClient(base_url=strict_server.url) as http:
        tid = (await http.post("/threads", json={})).json()["thread_id"]
        for url, why in ((f"{receiver.url}/x", "127.0.0.1, a loopback address"),
                         ("http://localhost:8080/x", "host localhost is the local machine"),
                         ("http://10.1.2.3/x", "10.1.2.3, a private-network address"),
                         ("http://192.168.1.20:9000/x", "a private-network address"),
                         ("http://[::1]:9000/x", "::1, a loopback address")):
            for path, body in ((f"/threads/{tid}/runs", {"input": say("x")}), ("/runs/wait", {"input": say("x")}),
                               ("/runs/crons", {"schedule": "0 8 * * *"}),
                               ("/runs/batch", None)):
                payload = {"assistant_id": ECHO, "webhook": url, **(body or {})}
                refused = await http.post(path, json=[payload] if body is None else payload)
                assert refused.status_code == 422, (path, url, refused.text)
                answer = refused.json()
                assert why in answer["detail"] and "ORECAST_WEBHOOK_ALLOW_PRIVATE=true" in answer["detail"]
                assert answer["details"][0]["field"] == "webhook"
        assert (await http.get(f"/threads/{tid}/runs")).json() == []
        empty = await http.post("/runs/wait", json={"assistant_id": ECHO, "input": say("x"), "webhook": ""})
        assert empty.status_code == 422, "an empty webhook is refused, as langgraph-api refuses it"
        assert (await http.post("/runs/crons/count", json={})).json() == 0
    async with httpx.AsyncClient(base_url=open_server.url) as http:
        for url in ("http://169.254.169.254/latest/meta-data", "ftp://example.com/x", "http:///nohost",
                    "http://metadata.google.internal/x", "http://[::ffff:127.0.0.1]/x"):
            refused = await http.post("/runs", json={"assistant_id": ECHO, "webhook": url})
            assert refused.status_code == 422, (url, refused.text)
            assert refused.json()["details"][0]["field"] == "webhook"


async def test_a_cron_run_calls_the_crons_webhook(open_server: Server, receiver: Receiver, hooks_db: str) -> None:
    client = open_server.client()
    tid = (await client.threads.create())["thread_id"]
    path = f"/cron-{uuid.uuid4().hex}"
    cron = await client.crons.create_for_thread(tid, ECHO, schedule="0 0 1 1 *", input=say("tick"),
                                                webhook=f"{receiver.url}{path}")
    make_due(hooks_db, cron["cron_id"])
    [post] = await receiver.wait_for(path)
    [run] = await client.runs.list(tid)
    assert post["body"]["run_id"] == run["run_id"] and post["body"]["status"] == "success"
    assert contents(post["body"]["values"]) == ["tick", "echo: tick"]


async def test_each_delivery_checks_the_address_it_connects_to(receiver: Receiver, caplog: pytest.LogCaptureFixture) -> None:
    """The check at creation is not the only one: every request (every redirect too) is checked as it
    connects, so a host that resolves elsewhere by then, or a redirect inside, is not called."""
    caplog.set_level(logging.WARNING, "orecast.service.webhooks")
    strict = Webhooks(WebhookPolicy(allow_private=False), retry_seconds=0.01)
    await strict._deliver(f"{receiver.url}/moved?t=1", {"run_id": "r1"}, "r1")
    assert receiver.to("/moved?t=1") == []
    assert "r1 to http://127.0.0.1" in caplog.text and "failed after 1 attempt(s): host 127.0.0.1 is at 127.0.0.1, a loopback address" in caplog.text
    await strict.close()
    allowing = Webhooks(WebhookPolicy(allow_private=True), retry_seconds=0.01)
    await allowing._deliver(f"{receiver.url}/redirect?t=2", {"run_id": "r2"}, "r2")
    assert len(receiver.to("/redirect?t=2")) == 1, "the first hop is allowed, the redirect is not followed"
    assert "r2 to" in caplog.text and "failed after 1 attempt(s): host 169.254.169.254 is at 169.254.169.254" in caplog.text
    await allowing.close()


async def test_a_delivery_cut_by_a_stop_is_logged(tmp_path: Path, receiver: Receiver, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "orecast.service.webhooks")
    running = Server.start(settings_for(f"sqlite:///{tmp_path / 'o.sqlite3'}", webhook_allow_private=True))
    try:
        await running.client().runs.wait(None, ECHO, input=say("x"), webhook=f"{receiver.url}/slow-stop?t=1")
        await receiver.wait_for("/slow-stop?t=1")  # the receiver takes 3 s to answer
    finally:
        running.stop()
    assert "/slow-stop not delivered: the server stopped" in caplog.text and "t=1" not in caplog.text
