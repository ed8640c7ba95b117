"""`GET /metrics`: real requests and real runs through langgraph-sdk move the counters by what they did,
read back with Prometheus's own text parser."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.service.conftest import ECHO, Server, free_port, say, settings_for

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(url: str) -> Samples:
    res = httpx.get(f"{url}/metrics")
    assert res.status_code == 200 and res.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(res.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


async def test_counters_follow_requests_and_runs(server: Server, client) -> None:
    before = scrape(server.url)
    with httpx.Client(base_url=server.url) as http:
        for _ in range(3):
            assert http.get("/ok").status_code == 200
        assert http.get(f"/threads/{uuid.uuid4()}").status_code == 404
    tid = (await client.threads.create())["thread_id"]
    answer = await client.runs.wait(tid, "orecast", input=say("铁矿石现在多少钱？"))
    await client.runs.wait(tid, ECHO, input=say("hi"))
    assert len(await client.threads.get_history(tid, limit=3)) == 3
    after = scrape(server.url)

    # the route template, not the raw path, so one label value covers every thread
    assert moved(before, after, "orecast_http_requests_total", method="GET", route="/ok", status="200") == 3
    assert moved(
        before, after, "orecast_http_requests_total", method="GET", route="/threads/{thread_id}", status="404"
    ) == 1
    assert not any("route" in dict(labels) and dict(labels)["route"].count("-") >= 4 for _, labels in after)
    assert moved(before, after, "orecast_http_request_duration_seconds_count", method="GET", route="/ok") == 3
    # the first scrape is counted once it has answered
    assert moved(before, after, "orecast_http_requests_total", method="GET", route="/metrics", status="200") == 1

    assert moved(before, after, "orecast_runs_total", status="success") == 2
    assert moved(before, after, "orecast_run_duration_seconds_count", status="success") == 2
    assert value(after, "orecast_run_duration_seconds_sum", status="success") > 0
    # the echo graph has no model: only the analyst's run has a first token
    assert moved(before, after, "orecast_run_first_token_seconds_count") == 1

    tools = [m["name"] for m in answer["messages"] if m["type"] == "tool"]
    assert tools, "the analyst answers a price question with a tool"
    for tool in set(tools):
        assert moved(before, after, "orecast_tool_calls_total", tool=tool, status="success") == tools.count(tool)
        assert moved(
            before, after, "orecast_tool_call_duration_seconds_count", tool=tool, status="success"
        ) == tools.count(tool)

    # the runs' checkpoints, timed in the saver, by operation
    assert moved(before, after, "orecast_checkpoint_operation_duration_seconds_count", operation="list") >= 1
    for operation in ("put", "put_writes", "get_tuple"):
        assert moved(
            before, after, "orecast_checkpoint_operation_duration_seconds_count", operation=operation
        ) >= 2, operation
        assert value(after, "orecast_checkpoint_operation_duration_seconds_sum", operation=operation) > 0
    # the pool: every connection idle between requests, within its bound
    in_use = value(after, "orecast_database_pool_connections", state="in_use")
    idle = value(after, "orecast_database_pool_connections", state="idle")
    assert value(after, "orecast_database_pool_max_connections") >= in_use + idle >= 1

    # the database's figures are cached (30 s by default): the first scrape's stand
    assert value(after, "orecast_database_rows", table="threads") == value(
        before, "orecast_database_rows", table="threads"
    )


def test_database_gauges(db_url: str) -> None:
    """A second replica on the same database, reading the figures afresh on each scrape."""
    replica = Server.start(settings_for(db_url, metrics_database_seconds=0))
    try:
        before = scrape(replica.url)
        created = httpx.post(f"{replica.url}/threads", json={})
        assert created.status_code == 200
        # A run of its own stores items: this module's other tests may run in another xdist worker,
        # on another database.
        ran = httpx.post(f"{replica.url}/threads/{created.json()['thread_id']}/runs/wait",
                         json={"assistant_id": ECHO, "input": say("hi")}, timeout=60)
        assert ran.status_code == 200, ran.text
        after = scrape(replica.url)
    finally:
        replica.stop()
    # what `orecast db status` reports: rows per table, bytes per table and in all
    assert moved(before, after, "orecast_database_rows", table="threads") == 1
    assert value(after, "orecast_database_rows", table="items") > 0
    assert value(after, "orecast_database_table_bytes", table="items") > 0
    assert value(after, "orecast_database_bytes") > 0


async def test_failed_run_is_counted_as_error(server: Server, client) -> None:
    before = scrape(server.url)
    tid = (await client.threads.create())["thread_id"]
    # `delay` must be a number: the echo node's sleep raises on a string, so the run ends in error
    await client.runs.wait(tid, ECHO, input=say("x", delay="soon"), raise_error=False)
    after = scrape(server.url)
    assert moved(before, after, "orecast_runs_total", status="error") == 1
    assert moved(before, after, "orecast_runs_total", status="success") == 0


@pytest.mark.slow
def test_workers_share_their_counts(tmp_path: Path) -> None:
    """`orecast serve --workers 2` with PROMETHEUS_MULTIPROC_DIR: whichever worker answers a scrape
    reports every worker's requests."""
    metrics_dir = tmp_path / "prometheus"
    metrics_dir.mkdir()
    env = {
        **os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
    }
    env.pop("ORECAST_API_KEYS", None)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "orecast.cli.main", "serve", "--port", str(port), "--workers", "2",
         "--database-url", f"sqlite:///{tmp_path / 'orecast.sqlite3'}", "--no-analyst",
         "--graph", f"{ECHO}=tests.service.echo_graph:graph"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        pids: set[str] = set()
        while len(pids) < 2:  # both workers are up once each has written its files
            time.sleep(0.2)
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"{url}/ok")
            pids = {f.stem.rsplit("_", 1)[-1] for f in metrics_dir.glob("*.db")}
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"orecast serve did not start two workers: {proc.communicate()[1]}")
        before = scrape(url)
        with httpx.Client(base_url=url) as http:  # a new connection each time: both workers answer
            for _ in range(20):
                assert http.get("/ok", headers={"Connection": "close"}).status_code == 200
        after = scrape(url)
    finally:
        proc.terminate()
        proc.wait(30)
    assert moved(before, after, "orecast_http_requests_total", method="GET", route="/ok", status="200") == 20
    assert value(after, "orecast_database_rows", table="threads") == 0
    # each worker's SQLite writer, summed over the live workers
    assert value(after, "orecast_database_pool_max_connections") == 2
