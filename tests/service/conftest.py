"""A real orecast service on a free loopback port (uvicorn in a thread), on SQLite and on PostgreSQL."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
import uvicorn
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from orecast.service import ServiceSettings, create_app
from tests.pg_server import with_search_path

ECHO = "echo"
NESTED = "nested"
ECHO_FILE = str(Path(__file__).with_name("echo_graph.py"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_serve(db_url: str, graphs: dict[str, str], **env: str) -> tuple[subprocess.Popen, str]:
    """`orecast serve` of `graphs` (name → spec), without the analyst, in its own process on `db_url`
    with `env` added to its environment: the process and its URL once it answers."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **env}
    environment.pop("ORECAST_API_KEYS", None)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "orecast.cli.main", "serve", "--port", str(port), "--database-url", db_url,
         "--no-analyst", *(f"--graph={name}={spec}" for name, spec in graphs.items())],
        env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    wait_for_serve(proc, url, 90)
    return proc, url


def wait_for_serve(proc: subprocess.Popen, url: str, seconds: float) -> None:
    """Wait until the `orecast serve` process `proc` answers `url/ok`; fail with its stderr if it
    dies or does not answer within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(f"{url}/ok").status_code == 200:
                return
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()  # a live process's stderr never ends: read it once it is gone
            pytest.fail(f"orecast serve did not start: {proc.communicate()[1]}")
        time.sleep(0.2)


@dataclass
class Server:
    """One running service; `stop()` runs its lifespan's shutdown as a real stop would."""

    url: str
    server: uvicorn.Server
    thread: threading.Thread

    @classmethod
    def start(cls, settings: ServiceSettings, port: int | None = None, **app_options: object) -> Server:
        port = port or free_port()
        app = create_app(settings, **app_options)  # type: ignore[arg-type]  # create_app's keywords
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 60
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the service did not start")
            time.sleep(0.02)
        return cls(f"http://127.0.0.1:{port}", server, thread)

    def client(self, api_key: str | None = None) -> LangGraphClient:
        return get_client(url=self.url, api_key=api_key, headers=None)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def settings_for(url: str, **overrides: object) -> ServiceSettings:
    values: dict[str, object] = {
        "database_url": url, "model": "offline", "graphs": {ECHO: f"{ECHO_FILE}:graph", NESTED: "tests.service.echo_graph:nested"}, "api_keys": "",
        "cancel_poll_seconds": 0.05,
    }
    values.update(overrides)
    return ServiceSettings(**values)  # type: ignore[arg-type]  # field names above


@pytest.fixture(scope="session", autouse=True)
def _agent_dirs(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The analyst writes charts and reports under a temporary folder, not the repository."""
    root = tmp_path_factory.mktemp("agent")
    os.environ["ORECAST_CHARTS_DIR"] = str(root / "charts")
    os.environ["ORECAST_REPORTS_DIR"] = str(root / "reports")
    os.environ.pop("ORECAST_API_KEYS", None)


def new_pg_schema(postgres_url: str) -> str:
    schema = f"s_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return with_search_path(postgres_url, schema)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('svc') / 'orecast.sqlite3'}"
    return new_pg_schema(request.getfixturevalue("postgres_url"))


@pytest.fixture(scope="module")
def server(db_url: str) -> Iterator[Server]:
    running = Server.start(settings_for(db_url))
    yield running
    running.stop()


@pytest.fixture
def client(server: Server) -> LangGraphClient:
    return server.client()


def say(text: str, **extra: object) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": text}], **extra}


def held(folder: Path) -> Path:
    """A new file under `folder`: a run of the echo graph given its path as `hold` goes on while it
    exists, so a test ends the run (deleting the file) when it is done looking at it running; a run of
    a fixed length could end first on a loaded machine."""
    flag = folder / f"hold-{uuid.uuid4().hex}"
    flag.touch()
    return flag
