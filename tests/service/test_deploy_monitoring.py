"""deploy/prometheus/alerts.yml and deploy/grafana/orecast.json against the real /metrics: every metric
they name is one the service exposes after a real run, and promtool (Debian's `prometheus` package,
installed by `make test` when it may) accepts the rules, passes their unit tests and parses every
dashboard query."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.service.conftest import Server, say, settings_for

DEPLOY = Path(__file__).parents[2] / "deploy"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
ALERT_TESTS = DEPLOY / "prometheus" / "alerts_test.yml"
DASHBOARD = DEPLOY / "grafana" / "orecast.json"
METRIC = re.compile(r"\borecast_[a-z0-9_]+\b")
# Exposed by the retention sweep's own metrics, not by a run: present once a sweep ran.
NOT_FROM_A_RUN = {"orecast_sweep_last_success_timestamp_seconds"}
promtool = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(promtool is None, reason="promtool not installed (Debian package prometheus)")


def alert_rules() -> list[dict]:
    return [rule for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]


def dashboard_queries() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel.get("targets", [])]


@pytest.fixture(scope="module")
def exposed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[set[str]]:
    """The sample names of a scrape after a real analyst run with tool calls, on SQLite."""
    url = f"sqlite:///{tmp_path_factory.mktemp('deploy') / 'orecast.sqlite3'}"
    server = Server.start(settings_for(url, metrics_database_seconds=0))
    try:
        with httpx.Client(base_url=server.url, timeout=120) as http:
            tid = http.post("/threads", json={}).json()["thread_id"]
            res = http.post(f"/threads/{tid}/runs/wait", json={"assistant_id": "orecast", "input": say("铁矿石现在多少钱？")})
            assert res.status_code == 200
            text = http.get("/metrics").text
    finally:
        server.stop()
    yield {sample.name for family in text_string_to_metric_families(text) for sample in family.samples}


def test_every_alert_names_exposed_metrics(exposed: set[str]) -> None:
    rules = alert_rules()
    assert {rule["alert"] for rule in rules} >= {
        "OrecastToolErrorRate", "OrecastRunFailures", "OrecastHttpLatencyHigh", "OrecastRunLatencyHigh",
        "OrecastDatabaseGrowth", "OrecastSweepNotRunning",
    }
    for rule in rules:
        names = set(METRIC.findall(rule["expr"]))
        assert names, rule["alert"]
        missing = names - exposed - NOT_FROM_A_RUN
        assert not missing, f"{rule['alert']} names metrics /metrics does not expose: {missing}"
        assert rule["labels"]["severity"] in ("warning", "critical")
        assert rule["annotations"]["summary"]


def test_every_dashboard_query_names_exposed_metrics(exposed: set[str]) -> None:
    queries = dashboard_queries()
    assert len(queries) >= 15
    for query in queries:
        names = set(METRIC.findall(query))
        assert names, query
        assert not names - exposed - NOT_FROM_A_RUN, query
    panels = json.loads(DASHBOARD.read_text())["panels"]
    assert len({panel["id"] for panel in panels}) == len(panels)


def test_a_misspelt_metric_is_caught(exposed: set[str]) -> None:
    """The check above can fail: a name one letter off is not exposed."""
    assert "orecast_tool_calls_total" in exposed and "orecast_tool_call_total" not in exposed


@needs_promtool
def test_promtool_accepts_the_rules() -> None:
    result = subprocess.run([promtool, "check", "rules", str(ALERTS)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alert_rules())} rules found" in result.stdout


@needs_promtool
def test_promtool_unit_tests_of_the_alerts() -> None:
    result = subprocess.run(
        [promtool, "test", "rules", ALERT_TESTS.name], cwd=ALERT_TESTS.parent, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@needs_promtool
def test_promtool_parses_every_dashboard_query(tmp_path: Path) -> None:
    """Each query as a recording rule: promtool checks its PromQL."""
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"orecast:dashboard_{i}", "expr": query} for i, query in enumerate(dashboard_queries())
    ]}]}
    file = tmp_path / "dashboard_rules.yml"
    file.write_text(yaml.safe_dump(rules))
    result = subprocess.run([promtool, "check", "rules", str(file)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
