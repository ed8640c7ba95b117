"""`make bench` keeps working: a quick run over every saver, official and ours, on real stores.

Only that the benchmark runs and measures is checked here; the targets are judged on full runs
(docs/benchmarks.md), never by timing tests.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import mysql_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_quick_bench_runs_every_saver(tmp_path: Path, postgres_url: str) -> None:
    out = tmp_path / "bench.json"
    env = {**os.environ, "ORECAST_TEST_PG_URL": postgres_url}
    done = subprocess.run(
        [sys.executable, "-m", "bench.run_bench", "--quick", "--no-baseline", "--json-out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    results = json.loads(out.read_text())
    savers = results["savers"]
    expected = ["official-sqlite", "official-postgres", "orecast-sqlite", "orecast-postgres"]
    if mysql_server.ensure() is not None:  # else the default run leaves them out
        expected += ["community-mysql", "orecast-mysql"]
    for name in expected:
        assert name in savers, sorted(savers)
        run = savers[name]
        assert run["messages"] == 4 * 30
        assert run["storage_bytes"] > 0
    # Linear vs quadratic shows even at 30 turns.
    assert savers["orecast-sqlite"]["storage_bytes"] * 5 < savers["official-sqlite"]["storage_bytes"]
    assert "| storage @30 turns |" in done.stdout
    growth = results["growth"]
    assert growth["rounds"] == 1 and len(growth["wall_ms"]) == 1
    # A saver's own time is its turn minus floor's (a median of 3 turns here): a burst of load on one
    # of them can put it below 0, so it is checked for being a number, the turns for being timed.
    assert math.isfinite(growth["savers"]["orecast-sqlite"]["early_ms"])
    assert all(ms > 0 for ms in growth["wall_ms"][0]["orecast-sqlite"])
    assert len(growth["savers"]["orecast-sqlite"]["growth_per_round"]) == 1


def test_growth_only_runs_the_growth_phase_alone(tmp_path: Path) -> None:
    out = tmp_path / "growth.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.run_bench", "--growth-only", "--savers", "orecast-sqlite",
         "--growth-turns", "6", "--growth-rounds", "1", "--json-out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    growth = json.loads(out.read_text())
    assert sorted(growth["savers"]) == ["floor", "orecast-sqlite"]
    assert len(growth["wall_ms"]) == 1 and len(growth["wall_ms"][0]["orecast-sqlite"]) == 6
    assert math.isfinite(growth["savers"]["orecast-sqlite"]["early_ms"])
    assert all(ms > 0 for ms in growth["wall_ms"][0]["orecast-sqlite"])
    assert "| growth |" in done.stdout
    assert "storage" not in done.stdout  # no other phase ran


def test_growth_only_needs_a_saver_of_ours() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.run_bench", "--growth-only", "--savers", "floor,official-sqlite"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert "--growth-only needs" in done.stderr
