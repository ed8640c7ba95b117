"""LangGraph's own tests (from the installed version's sdist) pass with our savers, but the known two.

Default mode on both backends, sync and async savers; LANGGRAPH_STRICT_MSGPACK=true on SQLite only,
to stay within the time budget of `make test` (see docs/checkpoint.md, "LangGraph's own tests"). The
runs start when collection ends (`background.py`); this test waits for them.
"""

from __future__ import annotations

import pytest

from tests.checkpoint.langgraph_suite.background import outcomes


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_langgraph_suite_passes(request: pytest.FixtureRequest) -> None:
    for (backends, strict), outcome in outcomes(request.config).items():
        assert outcome.passed > 0, (backends, strict)
        assert outcome.unexpected == [], (backends, strict)
