"""LangGraph's own tests (from the installed version's sdist) pass with our savers, but the known two.

Default mode on both backends, sync and async savers; LANGGRAPH_STRICT_MSGPACK=true on SQLite only,
to stay within the time budget of `make test` (see docs/checkpoint.md, "LangGraph's own tests").
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.checkpoint.langgraph_suite import suite
from tests.pg_server import ensure as ensure_postgres

RUNS = [("sqlite,postgres", False), ("sqlite", True)]


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_langgraph_suite_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORECAST_TEST_PG_URL", os.environ.get("ORECAST_TEST_PG_URL") or ensure_postgres())
    root = suite.prepare()
    # The two runs mostly wait (LangGraph's tests sleep, the databases commit): side by side they take
    # little longer than one.
    with ThreadPoolExecutor(len(RUNS)) as pool:
        runs = {
            (backends, strict): pool.submit(suite.run, backends, strict=strict, root=root)
            for backends, strict in RUNS
        }
    for (backends, strict), future in runs.items():
        outcome = future.result()
        assert outcome.passed > 0, (backends, strict)
        assert outcome.unexpected == [], (backends, strict)
