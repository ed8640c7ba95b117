"""`bench.check_cost` times the whole-list checks of real turns and the same check warm."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.check_cost", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_times_the_checks_of_the_last_turns_and_warm() -> None:
    done = _run("orecast-sqlite", "--turns", "4", "--window", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    inside = re.search(r"turns 3-4: ([\d.]+) checks a turn of (\d+) items", done.stdout)
    assert inside is not None, done.stdout
    assert float(inside.group(1)) > 0 and int(inside.group(2)) > 4  # each list holds every earlier turn's messages
    assert re.search(r"warm, on a list of \d+ items: \d+ ns an item", done.stdout), done.stdout


def test_a_window_longer_than_the_run_is_refused() -> None:
    done = _run("orecast-sqlite", "--turns", "3", "--window", "5")
    assert done.returncode == 2
    assert "--window must be between 1 and --turns" in done.stderr


def test_only_our_savers_have_the_check() -> None:
    done = _run("floor")
    assert done.returncode == 2
    assert "invalid choice: 'floor'" in done.stderr
