"""LangGraph's own tests (from the installed version's sdist) pass with our savers, but the known two.

Default mode on both backends, sync and async savers; LANGGRAPH_STRICT_MSGPACK=true on SQLite only,
to stay within the time budget of `make test` (see docs/checkpoint.md, "LangGraph's own tests").
"""

from __future__ import annotations

import os

import pytest

from tests.checkpoint.langgraph_suite import suite
from tests.pg_server import ensure as ensure_postgres


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize(("backends", "strict"), [("sqlite,postgres", False), ("sqlite", True)])
def test_langgraph_suite_passes(backends: str, strict: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if "postgres" in backends:
        monkeypatch.setenv("ORECAST_TEST_PG_URL", os.environ.get("ORECAST_TEST_PG_URL") or ensure_postgres())
    outcome = suite.run(backends, strict=strict)
    assert outcome.passed > 0
    assert outcome.unexpected == []
