"""`orecast serve` with the standard variables of LangSmith and OpenTelemetry set: the traces leave the
process (to loopback stand-ins for the collectors, no network), carry the run's ids, and neither a
collector that answers nor one that is gone changes what a run does. The LangSmith key is never logged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from tests.service.conftest import free_port, say, wait_for_serve
from tests.service.recorder import Received, Recorder

SECRET = "lsv2_pt_0123456789abcdef_secret"
pytestmark = pytest.mark.slow


def serve(tmp_path: Path, **env: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    full = {
        **os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "LANGSMITH_TRACING": "true",
        "LANGSMITH_API_KEY": SECRET, "OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_EXPORTER_OTLP_TIMEOUT": "2",
        **env,
    }
    for name in ("ORECAST_API_KEYS", "OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED"):
        full.pop(name, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "orecast.cli.main", "serve", "--port", str(port),
         "--database-url", f"sqlite:///{tmp_path / 'orecast.sqlite3'}"],
        env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    wait_for_serve(proc, url, 90)
    return proc, url


def stop(proc: subprocess.Popen[str]) -> str:
    """Stop the service (its exporters flush on the way out); what it logged."""
    proc.terminate()
    out, err = proc.communicate(timeout=60)
    return out + err


async def price_run(url: str) -> tuple[str, str, dict]:
    client = get_client(url=url)
    thread_id = (await client.threads.create())["thread_id"]
    run = await client.runs.create(thread_id, "orecast", input=say("铁矿石现在多少钱？"))
    await client.runs.join(thread_id, run["run_id"])
    finished = await client.runs.get(thread_id, run["run_id"])
    return thread_id, run["run_id"], finished


def langsmith_runs(received: list[Received]) -> dict[str, dict]:
    """The runs LangSmith's client posted (multipart: a part per run and per field of it), by id."""
    runs: dict[str, dict] = {}
    for request in received:
        if request.path != "/runs/multipart":
            continue
        boundary = request.headers["Content-Type"].split("boundary=")[1].encode()
        for part in request.body.split(b"--" + boundary):
            head, _, body = part.partition(b"\r\n\r\n")
            if b'name="' not in head:
                continue
            name = head.split(b'name="')[1].split(b'"')[0].decode()
            kind, run_id, *field_name = name.split(".")
            value = json.loads(body.rstrip(b"\r\n"))
            run = runs.setdefault(run_id, {})
            if field_name:
                run[field_name[0]] = value
            else:
                run.update(value)
    return runs


@pytest.fixture
def collectors() -> Iterator[tuple[Recorder, Recorder]]:
    langsmith, otlp = Recorder.start(), Recorder.start()
    yield langsmith, otlp
    langsmith.stop()
    otlp.stop()


async def test_traces_reach_langsmith_and_otlp(tmp_path: Path, collectors) -> None:
    langsmith, otlp = collectors
    proc, url = serve(tmp_path, LANGSMITH_ENDPOINT=langsmith.url, OTEL_EXPORTER_OTLP_ENDPOINT=otlp.url)
    try:
        thread_id, run_id, finished = await price_run(url)
        assert finished["status"] == "success"
        deadline = time.monotonic() + 30
        while run_id not in langsmith_runs(langsmith.received) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        logged = stop(proc)

    # LangSmith: the run is the trace's root, under the graph's name, filed with the run's ids
    root = langsmith_runs(langsmith.received)[run_id]
    assert root["name"] == "orecast" and root.get("parent_run_id") is None
    metadata = root["extra"]["metadata"]
    assert metadata["thread_id"] == thread_id and metadata["run_id"] == run_id
    assert metadata["assistant_id"] == finished["assistant_id"] and metadata["graph_id"] == "orecast"
    assert any(r.headers.get("x-api-key") == SECRET for r in langsmith.received)  # LangSmith's own client

    # OTLP/HTTP: protobuf spans of this run, flushed at the latest when the service stops
    spans = b"".join(r.body for r in otlp.received if r.path == "/v1/traces")
    for text in (thread_id, run_id, "checkpoint put", "node tools", "SQL INSERT"):
        assert text.encode() in spans, text

    assert SECRET not in logged


async def test_collectors_gone_change_nothing(tmp_path: Path) -> None:
    gone = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    proc, url = serve(tmp_path, LANGSMITH_ENDPOINT=gone, OTEL_EXPORTER_OTLP_ENDPOINT=gone)
    try:
        _, _, finished = await price_run(url)
        assert finished["status"] == "success"
    finally:
        started = time.monotonic()
        logged = stop(proc)
    assert proc.returncode is not None and time.monotonic() - started < 45
    assert SECRET not in logged
