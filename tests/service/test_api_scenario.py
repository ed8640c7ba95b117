"""Every route of `bench/api_diff.py`'s scenario (the routes the SDKs call) against our real server: no
call fails with a 5xx or a dropped connection, and each error case answers the status its name gives
(langgraph-api's, except where docs/service.md says we differ on purpose)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from bench.api_diff import run, scenario

from tests.service.conftest import ECHO, Server, settings_for

# error cases where orecast answers differently from langgraph-api on purpose (docs/service.md)
OURS = {"threads.create bad id (422)": 200, "threads.update_state bad node (4xx)": 400}


@pytest.fixture(scope="module")
def sqlite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    url = f"sqlite:///{tmp_path_factory.mktemp('scenario') / 'o.sqlite3'}"
    running = Server.start(settings_for(url, webhook_allow_private=True))  # the webhooks' receiver is local
    yield running
    running.stop()


def test_every_sdk_route_answers(sqlite_server: Server) -> None:
    steps = scenario(ECHO)
    seen = run(sqlite_server.url, steps)
    broken = {name: (o.status, o.body) for name, o in seen.items() if o.status == -1 or o.status >= 500}
    assert not broken
    for step in steps:
        status = seen[step.name].status
        named = re.search(r"\((\d{3})\)$", step.name)
        if step.name in OURS:
            assert status == OURS[step.name], step.name
        elif named:
            assert status == int(named.group(1)), (step.name, seen[step.name].body)
        else:
            assert 200 <= status < 300, (step.name, status, seen[step.name].body)
    streamed = [e[0] for e in seen["runs.stream messages"].events]
    assert streamed == ["metadata", "messages/metadata", "messages/complete"]
    assert seen["threads.join_stream"].events[0][0] == "metadata"
