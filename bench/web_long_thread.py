"""The web page on a long conversation: what opening it and one more answer cost.

    python -m bench.web_long_thread --db /tmp/long.sqlite3 [--questions 60] [--web-dir DIR] [--runs 1]

Serves `orecast serve` (offline analyst, the tests' settings) on a random port 18000–28999 with the
SQLite file `--db`; when the file does not exist yet it is made first, with `--questions` questions
of the analyst (the page's three example questions in turn) in one thread. `--web-dir` serves
another build of the page (e.g. an older commit's `src/orecast/service/static`, to compare); the
database is copied first, so each run starts from the same conversation. Then, in /usr/bin/chromium
(Playwright):

- open `#/thread/<id>`: time until the first message is visible, until the newest question can be
  edited (its checkpoint known: the history is in), and the history requests made meanwhile (the
  opening's own, `/history/shared`, counted as a history request);
- ask one more question: time from Enter to the answer's end (Send back, answer shown) and to the
  page being idle again (1 s without requests), the page's long tasks (over 50 ms) meanwhile, and
  each `/history` and `/state` request: checkpoints read, bytes decoded and on the wire (gzip), and
  the server's time to first byte.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from langgraph_sdk import get_sync_client
from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
QUESTIONS = ["铁矿石价格未来6个月预测，画图", "2020年以来铁矿石价格走势", "比较各种预测方法的回测误差"]
TIMEOUT_MS = 120_000
# The page's tasks over 50 ms (the main thread busy), while the answer streams and after.
WATCH_LONG_TASKS = """window.longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.longTasks.push(e.duration); })
  .observe({ type: "longtask", buffered: true });"""


def free_port() -> int:
    for _ in range(100):
        port = random.randint(18000, 28999)
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return port
    raise RuntimeError("no free port in 18000–28999")


def serve(db: Path, work: Path, web_dir: str | None) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "ORECAST_DATABASE_URL": f"sqlite:///{db}",
        "ORECAST_MODEL": "offline",
        "ORECAST_API_KEYS": "",
        "ORECAST_CHARTS_DIR": str(work / "charts"),
        "ORECAST_REPORTS_DIR": str(work / "reports"),
    }
    if web_dir:
        env["ORECAST_WEB_DIR"] = web_dir
    exe = Path(sys.executable).with_name("orecast")
    proc = subprocess.Popen([str(exe), "serve", "--port", str(port)], env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, url
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("orecast serve did not start")


def build_conversation(url: str, questions: int) -> str:
    client = get_sync_client(url=url, api_key=None)
    thread_id = client.threads.create(metadata={"title": f"{questions} questions"})["thread_id"]
    for i in range(questions):
        question = {"type": "human", "content": QUESTIONS[i % len(QUESTIONS)]}
        client.runs.wait(thread_id, "orecast", input={"messages": [question]})
    return thread_id


class Requests:
    """The `/history` and `/state` requests the page makes. Their bodies are not read from the browser
    (Chromium drops a 56 MB one from its cache): each is sent again once the page is idle, when the
    server answers it the same, for the checkpoints and the decoded bytes."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: list[Any] = []

    def on_finished(self, request: Any) -> None:
        path = request.url.split("?")[0]
        if path.endswith(("/history", "/history/shared", "/state")):
            self.seen.append(request)

    def take(self) -> list[dict[str, Any]]:
        taken, self.seen = self.seen, []
        return [self.describe(request) for request in taken]

    def describe(self, request: Any) -> dict[str, Any]:
        path = request.url.split("?")[0]
        timing = request.timing
        if request.method == "POST":
            again = httpx.post(request.url, content=request.post_data or "{}", headers={"content-type": "application/json"}, timeout=120)
        else:
            again = httpx.get(request.url, timeout=120)
        states = again.json()
        if path.endswith("/history/shared"):  # the opening's read: each message once (encode.History)
            states = states["states"]
        return {
            "kind": "history" if path.endswith("/history/shared") else path.rsplit("/", 1)[1],
            "asked": json.loads(request.post_data or "{}"),
            "checkpoints": len(states) if isinstance(states, list) else 1,
            "bytes": len(again.content),
            "wire": request.sizes()["responseBodySize"],
            "server_ms": round(timing["responseStart"] - timing["requestStart"]),
            "total_ms": round(timing["responseEnd"]),
        }


def settle(page: Any, quiet_ms: int = 1000) -> None:
    """Wait until the page made no request for `quiet_ms`."""
    last = {"at": time.monotonic()}
    page.on("request", lambda _: last.update(at=time.monotonic()))
    while time.monotonic() - last["at"] < quiet_ms / 1000:
        page.wait_for_timeout(100)


def measure(url: str, thread_id: str, browser: Any) -> dict[str, Any]:
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    requests = Requests(url)
    page.on("requestfinished", requests.on_finished)
    page.add_init_script(WATCH_LONG_TASKS)
    human = page.locator('[data-testid="message"][data-role="human"]')
    start = time.monotonic()
    page.goto(f"{url}/#/thread/{thread_id}")
    human.first.wait_for()
    first_visible = time.monotonic() - start
    human.last.get_by_test_id("edit-button").wait_for(state="attached")
    editable = time.monotonic() - start
    settle(page)
    opening = requests.take()

    page.get_by_test_id("composer-input").fill("one more: " + QUESTIONS[0])
    page.evaluate("window.longTasks = []")
    start = time.monotonic()
    page.get_by_test_id("composer-input").press("Enter")
    page.get_by_test_id("stop-button").wait_for()
    page.get_by_test_id("send-button").wait_for()
    answered = time.monotonic() - start
    human.last.get_by_test_id("edit-button").wait_for(state="attached")
    settle(page)
    idle = time.monotonic() - start - 1.0
    answer = requests.take()
    busy = page.evaluate("window.longTasks")
    context.close()
    return {
        "open": {"first_message_s": round(first_visible, 2), "history_in_s": round(editable, 2), "requests": opening},
        "answer": {
            "answered_s": round(answered, 2), "idle_s": round(idle, 2), "requests": answer,
            "long_tasks": len(busy), "long_tasks_s": round(sum(busy) / 1000, 2), "longest_s": round(max(busy, default=0) / 1000, 2),
        },
    }


def summary(requests: list[dict[str, Any]]) -> str:
    history = [r for r in requests if r["kind"] == "history"]
    return (
        f"{len(history)} history requests, {sum(r['checkpoints'] for r in history)} checkpoints, "
        f"{sum(r['bytes'] for r in history) / 1e6:.2f} MB ({sum(r['wire'] for r in history) / 1e6:.2f} MB on the wire), "
        f"server {sum(r['server_ms'] for r in history)} ms; "
        f"{len(requests) - len(history)} state requests, {sum(r['bytes'] for r in requests if r['kind'] == 'state') / 1e6:.2f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--web-dir", default=None)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="orecast-web-bench-"))
    if not args.db.exists():
        proc, url = serve(args.db, work, None)
        try:
            thread_id = build_conversation(url, args.questions)
        finally:
            proc.terminate()
            proc.wait(30)
        args.db.with_suffix(".thread").write_text(thread_id)
    thread_id = args.db.with_suffix(".thread").read_text().strip()
    for run in range(args.runs):
        db = work / f"run{run}.sqlite3"
        for suffix in ("", "-wal", "-shm"):  # a WAL the server did not fold back is part of the database
            if Path(f"{args.db}{suffix}").exists():
                shutil.copy(f"{args.db}{suffix}", f"{db}{suffix}")
        proc, url = serve(db, work, args.web_dir)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                result = measure(url, thread_id, browser)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(30)
        opened, answered = result["open"], result["answer"]
        print(f"run {run}: open: first message {opened['first_message_s']} s, history in {opened['history_in_s']} s; "
              + summary(opened["requests"]))
        print(f"run {run}: answer: {answered['answered_s']} s to Send, idle {answered['idle_s']} s, "
              f"page busy {answered['long_tasks_s']} s in {answered['long_tasks']} long tasks "
              f"(longest {answered['longest_s']} s); " + summary(answered["requests"]))
        print(json.dumps(result))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
