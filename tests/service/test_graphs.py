"""Serving outside graphs: `--config langgraph.json` (paths relative to the file) and bad specs; and
`orecast serve` itself, as a subprocess: with no arguments (the analyst on the default SQLite file),
with its `ORECAST_*` / `PORT` environment, and with a langgraph.json of a file graph and a factory."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from orecast.service.graphs import GraphLoadError, graphs_from_config, parse_graph_option
from tests.checkpoint.conftest import raw_sql
from tests.service.conftest import (
    ECHO_FILE,
    Server,
    free_port,
    new_pg_schema,
    say,
    settings_for,
    wait_for_serve,
)

QUESTION = "铁矿石价格最近走势如何？"
# A child keeps these two of our settings: the analyst's charts and reports go to the test's folders.
KEPT_SETTINGS = ("ORECAST_CHARTS_DIR", "ORECAST_REPORTS_DIR")


def test_graph_options_and_config_files(tmp_path: Path) -> None:
    assert parse_graph_option("a=pkg.mod:graph") == ("a", "pkg.mod:graph")
    for bad in ("nonsense", "=x:y", "a=pkg.mod"):
        with pytest.raises(GraphLoadError):
            parse_graph_option(bad)
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"graphs": {"mine": "./graphs/g.py:graph", "pkg": "pkg.mod:make"}}))
    assert graphs_from_config(config) == {
        "mine": f"{(tmp_path / 'graphs' / 'g.py').resolve()}:graph",
        "pkg": "pkg.mod:make",
    }
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(GraphLoadError):
        graphs_from_config(tmp_path / "broken.json")


async def test_serves_the_graphs_of_a_langgraph_json(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "agent.py").write_text(Path(ECHO_FILE).read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "langgraph.json").write_text(json.dumps({"graphs": {"agent": "./agent.py:graph"}}))
    settings = settings_for(
        f"sqlite:///{tmp_path / 'db.sqlite3'}", analyst=False, graphs={},
        config_file=str(folder / "langgraph.json"),
    )
    server = Server.start(settings)
    try:
        client = server.client()
        assert [a["graph_id"] for a in await client.assistants.search()] == ["agent"]
        out = await client.runs.wait(None, "agent", input=say("from json"))
        assert out["messages"][-1]["content"] == "echo: from json"
    finally:
        server.stop()


def serve_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of an `orecast serve` child as on a fresh machine, as the Makefile's `run` sets
    it: its own XDG data and cache folders under `home`, no model key, none of our `ORECAST_*`
    settings; `PORT` a free port; then `extra`."""
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(("DEEPSEEK_", "OPENAI_", "ORECAST_")) or k in KEPT_SETTINGS
    }
    env.pop("CHECKPOINT_DB", None)
    env.update(
        PYTHONPATH=os.pathsep.join(sys.path), XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "data" / "cache"), PORT=str(free_port()),
    )
    env.update(extra)
    return env


@contextmanager
def serving(env: dict[str, str], *args: str, cwd: Path) -> Iterator[tuple[subprocess.Popen, str]]:
    """`orecast serve ARGS` on `env["PORT"]`, until it answers; killed at the end if still alive."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "orecast.cli.main", "serve", *args],
        env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        url = f"http://127.0.0.1:{env['PORT']}"
        wait_for_serve(proc, url, 120)
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)


def stop(proc: subprocess.Popen, how: signal.Signals) -> tuple[int, str]:
    """Send `how` and wait for the process to end: its exit code and its stderr."""
    proc.send_signal(how)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


async def ask(client, tid: str, assistant: str, text: str) -> dict:
    return await asyncio.wait_for(client.runs.wait(tid, assistant, input=say(text)), 180)


def checkpoints_of_thread(db_url: str, tid: str) -> int:
    mark = "?" if db_url.startswith("sqlite") else "%s"
    return raw_sql(db_url, f"SELECT COUNT(*) FROM checkpoints WHERE thread_id = {mark}", (tid,))[0][0]


@pytest.mark.slow
async def test_serve_without_arguments_is_the_offline_analyst_on_the_default_sqlite_file(tmp_path: Path) -> None:
    """`make run`: no argument, no model key; a restart on the same data folder keeps the thread."""
    env = serve_env(tmp_path)
    with serving(env, cwd=tmp_path) as (proc, url):
        client = get_client(url=url)
        assert [a["graph_id"] for a in await client.assistants.search()] == ["orecast"]
        tid = (await client.threads.create())["thread_id"]
        out = await ask(client, tid, "orecast", QUESTION)
        answer = out["messages"][-1]
        assert answer["type"] == "ai" and "铁矿石" in answer["content"], answer
        before = await client.threads.get(tid)
        history = await client.threads.get_history(tid, limit=1000)
        assert before["values"]["messages"][0]["content"] == QUESTION and history
        code, err = stop(proc, signal.SIGINT)
        assert code == 0 and "Traceback" not in err, err

    database = tmp_path / "data" / "orecast" / "orecast.sqlite3"  # default_sqlite_path() under XDG_DATA_HOME
    assert database.is_file()
    assert checkpoints_of_thread(f"sqlite:///{database}", tid) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"], "nothing written to the current folder"

    with serving(env, cwd=tmp_path) as (proc, url):
        again = get_client(url=url)
        thread = await again.threads.get(tid)
        assert thread["status"] == "idle" and thread["values"] == before["values"]
        assert thread["values"]["messages"][-1]["content"] == answer["content"]
        assert await again.threads.get_history(tid, limit=1000) == history, "every checkpoint is still there"
        code, err = stop(proc, signal.SIGTERM)
        # uvicorn shuts down gracefully, then re-raises SIGTERM: the process ends by that signal
        assert code in (0, -signal.SIGTERM) and "Traceback" not in err, err


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_serve_honours_orecast_database_url_and_orecast_model(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """With a DeepSeek key in the environment (whose server is a closed port), `ORECAST_MODEL=offline`
    still picks the offline analyst, and the thread lands in `ORECAST_DATABASE_URL`."""
    if backend == "sqlite":
        db_url = f"sqlite:///{tmp_path / 'elsewhere' / 'x.sqlite3'}"
    else:
        db_url = new_pg_schema(request.getfixturevalue("postgres_url"))
    env = serve_env(
        tmp_path, ORECAST_DATABASE_URL=db_url, ORECAST_MODEL="offline",
        DEEPSEEK_API_KEY="not-a-key", DEEPSEEK_API_BASE=f"http://127.0.0.1:{free_port()}/v1",
    )
    with serving(env, cwd=tmp_path) as (proc, url):
        client = get_client(url=url)
        tid = (await client.threads.create())["thread_id"]
        answer = (await ask(client, tid, "orecast", QUESTION))["messages"][-1]
        assert answer["type"] == "ai" and "铁矿石" in answer["content"], answer
        assert stop(proc, signal.SIGINT)[0] == 0
    assert checkpoints_of_thread(db_url, tid) > 0
    assert not (tmp_path / "data" / "orecast").exists(), "the default SQLite file was not opened"


FACTORY = """
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph


def replying(prefix: str) -> StateGraph:
    def reply(state: MessagesState) -> dict:
        return {"messages": [AIMessage(content=prefix + state["messages"][-1].content)]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    return builder


def make_graph(config: RunnableConfig):
    assert isinstance(config, dict), config
    return replying("made: ").compile()


def make_builder():
    return replying("built: ")
"""


@pytest.mark.slow
async def test_serve_config_serves_a_file_graph_and_a_factory(tmp_path: Path) -> None:
    """`orecast serve --config langgraph.json`: `./agent.py:graph` relative to the file, and factories,
    called for each run: one with a `config` argument (as LangGraph's "rebuild graph at runtime"
    factories) returning a compiled graph, one without arguments returning a `StateGraph`."""
    folder = tmp_path / "project"
    (folder / "graphs").mkdir(parents=True)
    (folder / "agent.py").write_text(Path(ECHO_FILE).read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "graphs" / "factory.py").write_text(FACTORY, encoding="utf-8")
    (folder / "langgraph.json").write_text(json.dumps({
        "dependencies": ["."], "graphs": {
            "agent": "./agent.py:graph", "made": "./graphs/factory.py:make_graph",
            "built": {"path": "./graphs/factory.py:make_builder", "description": "a StateGraph, compiled here"},
        },
    }))
    env = serve_env(tmp_path)
    args = ("--config", str(folder / "langgraph.json"), "--no-analyst",
            "--database-url", f"sqlite:///{tmp_path / 'db.sqlite3'}")
    with serving(env, *args, cwd=tmp_path) as (proc, url):
        client = get_client(url=url)
        assert sorted(a["graph_id"] for a in await client.assistants.search()) == ["agent", "built", "made"]
        for assistant, reply in (("agent", "echo: hi"), ("made", "made: hi"), ("built", "built: hi")):
            tid = (await client.threads.create())["thread_id"]
            assert (await ask(client, tid, assistant, "hi"))["messages"][-1]["content"] == reply
            state = await client.threads.get_state(tid)
            assert [m["content"] for m in state["values"]["messages"]] == ["hi", reply], "checkpointed"
        assert stop(proc, signal.SIGINT)[0] == 0


# FACTORY's `replying`, and factories as LangGraph's Agent Server also takes them. Each context
# factory logs when it opens and closes, and for which thread ("-": the graph built at startup).
FACTORIES = FACTORY + """
import contextlib
from dataclasses import dataclass
from pathlib import Path

from langgraph_sdk.runtime import ServerRuntime

LOG = Path(__file__).with_name("log")


def log(line):
    with LOG.open("a") as f:
        f.write(line + "\\n")


async def make_async(config):
    return replying(config["configurable"].get("tone", "plain") + ": ").compile()


@contextlib.asynccontextmanager
async def make_in_async_context(config):
    thread = config.get("configurable", {}).get("thread_id", "-")
    log(f"open {thread}")
    try:
        yield replying("async cm: ").compile()
    finally:
        log(f"close {thread}")


@contextlib.contextmanager
def make_in_context():
    yield replying("cm: ")
    log("close cm")


@dataclass
class Tone:
    tone: str = "calm"


def toned(prefix):
    builder = StateGraph(MessagesState, context_schema=Tone)
    builder.add_node("reply", lambda state, runtime: {"messages": [
        AIMessage(content=prefix + runtime.context.tone + ": " + state["messages"][-1].content)]})
    builder.add_edge(START, "reply")
    return builder


async def make_for_runtime(runtime: ServerRuntime[Tone]):
    if ert := runtime.execution_runtime:
        log(f"run {runtime.access_context} {ert.context} {type(runtime.store).__name__}")
        return toned("run, ")
    log(f"read {runtime.access_context}")
    return toned("read, ")
"""


async def test_factories_build_each_run_its_graph(tmp_path: Path) -> None:
    """Factories as LangGraph's Agent Server takes them: called for each run with its config (so a run
    can get a graph of its own), async or a context manager (sync or async) yielding the graph, which
    stays open for the run and is closed after it; the graph built at startup (with an empty config)
    answers outside runs, and is closed with the service."""
    (tmp_path / "factories.py").write_text(FACTORIES, encoding="utf-8")
    graphs = {name: f"{tmp_path / 'factories.py'}:{attr}" for name, attr in (
        ("a", "make_async"), ("acm", "make_in_async_context"), ("cm", "make_in_context"),
        ("rt", "make_for_runtime"))}
    server = Server.start(settings_for(f"sqlite:///{tmp_path / 'db.sqlite3'}", analyst=False, graphs=graphs))
    log = tmp_path / "log"
    try:
        client = server.client()
        assert sorted(log.read_text().splitlines()) == ["open -", "read assistants.read"]
        log.write_text("")
        runs = (("a", {"configurable": {"tone": "loud"}}, "loud: hi"), ("a", None, "plain: hi"),
                ("acm", None, "async cm: hi"), ("cm", None, "cm: hi"))
        threads = []
        for assistant, config, reply in runs:
            tid = (await client.threads.create())["thread_id"]
            threads.append(tid)
            out = await client.runs.wait(tid, assistant, input=say("hi"), config=config)
            assert out["messages"][-1]["content"] == reply
            state = await client.threads.get_state(tid)
            assert [m["content"] for m in state["values"]["messages"]] == ["hi", reply], "checkpointed"
        assert log.read_text().splitlines() == [f"open {threads[2]}", f"close {threads[2]}", "close cm"]
        # a ServerRuntime: for a run, its context as given (as langgraph-api: a dict, `{}` when the run
        # has none, which the graph's nodes see as its context schema's defaults) and the store
        for context, reply, seen in (({"tone": "loud"}, "run, loud: hi", "{'tone': 'loud'}"),
                                     (None, "run, calm: hi", "{}")):
            tid = (await client.threads.create())["thread_id"]
            out = await client.runs.wait(tid, "rt", input=say("hi"), context=context)
            assert out["messages"][-1]["content"] == reply
            assert log.read_text().splitlines()[-1] == f"run threads.create_run {seen} AsyncSqliteStore"
        # a factory that fails for a run fails that run, as its graph would
        run = await client.runs.create(threads[0], "a", input=say("again"), config={"configurable": {"tone": 1}})
        out = await client.runs.join(threads[0], run["run_id"])
        assert out["__error__"]["error"] == "TypeError"
        assert (await client.runs.get(threads[0], run["run_id"]))["status"] == "error"
        assert len((await client.threads.get_state(threads[0]))["values"]["messages"]) == 2, "nothing written"
    finally:
        server.stop()
    # the startup graphs' contexts close with the service, the last opened first
    assert log.read_text().splitlines()[-2:] == ["close cm", "close -"]
