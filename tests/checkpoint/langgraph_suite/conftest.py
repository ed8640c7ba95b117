"""LangGraph's suite starts as soon as collection ends, in the background, so its minutes of waiting
(LangGraph's tests sleep, the databases commit) overlap the rest of our suite; its test only waits."""

from __future__ import annotations

import os

import pytest

from tests.checkpoint.langgraph_suite import suite
from tests.pg_server import ensure as ensure_postgres

# Default mode on each backend and strict mode on SQLite, each in a process of its own.
RUNS = (("sqlite", False), ("postgres", False), ("sqlite", True))
# Below our own tests' priority: several of those time a real terminal or a real server.
NICE = 5
RUNNING = pytest.StashKey[dict[tuple[str, bool], suite.Run]]()


def start_runs() -> dict[tuple[str, bool], suite.Run]:
    os.environ.setdefault("ORECAST_TEST_PG_URL", ensure_postgres())
    root = suite.prepare()
    return {(backends, strict): suite.start(backends, strict=strict, root=root, nice=NICE)
            for backends, strict in RUNS}


def _is_suite(item: pytest.Item) -> bool:
    return item.name == "test_langgraph_suite_passes"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The suite's test goes last: it waits while every other test runs."""
    items.sort(key=_is_suite)


def pytest_collection_finish(session: pytest.Session) -> None:
    if not session.config.option.collectonly and any(map(_is_suite, session.items)):
        session.config.stash[RUNNING] = start_runs()


def pytest_sessionfinish(session: pytest.Session) -> None:
    for run in session.config.stash.get(RUNNING, {}).values():
        run.stop()
