"""LangGraph's suite starts as soon as its test is collected (or, when `-k`, `-m` … may still deselect
it, once collection ends), in the background, so its minutes of waiting
(LangGraph's tests sleep, the databases commit) overlap the rest of our suite; its test only waits.

A plugin that tests/conftest.py names, not a conftest of this folder: under pytest-xdist the controller
loads only the top conftest, and it is the controller that starts the runs, once, when the first worker
has collected (every worker collects). A thread of the controller waits for them and writes their
outcomes to a file, whose path every worker gets in `workerinput`; the worker that runs the test reads it
and runs the unexpected failures again, as a run without xdist does: when the test runs, last, on a
machine that the rest of the suite no longer loads (several of LangGraph's tests time their steps).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

from tests.checkpoint.langgraph_suite import suite
from tests.pg_server import ensure as ensure_postgres

# Default mode on each backend and strict mode on SQLite, each in a process of its own.
RUNS = (("sqlite", False), ("postgres", False), ("sqlite", True))
# Below our own tests' priority: several of those time a real terminal or a real server.
NICE = 5
TEST_NAME = "test_langgraph_suite_passes"
OUTCOMES_FILE = "langgraph_suite_outcomes"  # the key in `workerinput`
RUNNING = pytest.StashKey[dict[tuple[str, bool], suite.Run]]()
HANDOFF = pytest.StashKey[Path]()
WAITER = pytest.StashKey[threading.Thread]()

Outcomes = dict[tuple[str, bool], suite.Outcome]


def start_runs() -> dict[tuple[str, bool], suite.Run]:
    os.environ.setdefault("ORECAST_TEST_PG_URL", ensure_postgres())
    root = suite.prepare()
    return {(backends, strict): suite.start(backends, strict=strict, root=root, nice=NICE)
            for backends, strict in RUNS}


def outcomes(config: pytest.Config) -> Outcomes:
    """The runs' outcomes, once they have all ended."""
    if hasattr(config, "workerinput"):
        return _handed_over(Path(config.workerinput[OUTCOMES_FILE]))
    runs = config.stash.get(RUNNING, None) or start_runs()
    return {key: run.outcome() for key, run in runs.items()}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The suite's test goes last: it waits while every other test runs."""
    items.sort(key=lambda item: item.name == TEST_NAME)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Start the runs as soon as their test is collected, not once every test is (the rest of the
    collection takes a minute on a busy machine): when no option can deselect it afterwards."""
    config = item.config
    if item.name != TEST_NAME or RUNNING in config.stash or not _kept_once_collected(config):
        return
    if hasattr(config, "workerinput") or config.option.collectonly:
        return
    config.stash[RUNNING] = start_runs()


def _kept_once_collected(config: pytest.Config) -> bool:
    return not (
        config.option.keyword
        or config.option.markexpr
        or config.getoption("deselect", None)
        or config.getoption("lf", False)
        or config.getoption("failedfirst", False)
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    # Not in a worker of pytest-xdist: its controller starts them (below).
    if hasattr(session.config, "workerinput") or session.config.option.collectonly:
        return
    if RUNNING not in session.config.stash and any(item.name == TEST_NAME for item in session.items):
        session.config.stash[RUNNING] = start_runs()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    config = node.config
    if HANDOFF not in config.stash:
        config.stash[HANDOFF] = Path(tempfile.mkdtemp(prefix="orecast-lgsuite-")) / "outcomes.json"
    node.workerinput[OUTCOMES_FILE] = str(config.stash[HANDOFF])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    config = node.config
    if RUNNING in config.stash or not any(nodeid.endswith(f"::{TEST_NAME}") for nodeid in ids):
        return
    handoff = config.stash[HANDOFF]
    try:
        runs = config.stash[RUNNING] = start_runs()
    except Exception:  # the test reports it; the rest of the suite still runs
        config.stash[RUNNING] = {}
        _write(handoff, {"error": traceback.format_exc()})
        return
    waiter = config.stash[WAITER] = threading.Thread(target=_hand_over, args=(runs, handoff), daemon=True)
    waiter.start()


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    for run in config.stash.get(RUNNING, {}).values():
        run.stop()
    if WAITER in config.stash:
        config.stash[WAITER].join()
    if HANDOFF in config.stash:
        shutil.rmtree(config.stash[HANDOFF].parent, ignore_errors=True)


def _hand_over(runs: dict[tuple[str, bool], suite.Run], handoff: Path) -> None:
    try:
        payload: dict[str, Any] = {"outcomes": [
            [str(run.root), backends, strict, dataclasses.asdict(run.wait())]
            for (backends, strict), run in runs.items()
        ]}
    except Exception:
        payload = {"error": traceback.format_exc()}
    _write(handoff, payload)


def _write(handoff: Path, payload: dict[str, Any]) -> None:
    """All at once: the reader takes the file as soon as it exists."""
    partial = handoff.with_suffix(".partial")
    partial.write_text(json.dumps(payload), encoding="utf-8")
    partial.replace(handoff)


def _handed_over(handoff: Path) -> Outcomes:
    while not handoff.exists():
        time.sleep(1)
    payload = json.loads(handoff.read_text(encoding="utf-8"))
    if "error" in payload:
        raise RuntimeError(f"LangGraph's suite, in the controller of pytest-xdist:\n{payload['error']}")
    return {
        (backends, strict): suite.retried(suite.Outcome(**fields), Path(root), backends, strict, NICE)
        for root, backends, strict, fields in payload["outcomes"]
    }
