"""`orecast serve` with bad flags: one line and an exit code before it listens, not a startup traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import inprocess


def serve_env() -> dict[str, str]:
    drop = ("ORECAST_API_KEYS", "ORECAST_MODEL", "DEEPSEEK_API_KEY", "ORECAST_DATABASE_URL", "PORT")
    return {k: v for k, v in os.environ.items() if k not in drop}


@pytest.mark.parametrize(
    ("args", "code", "line"),
    [
        (["--model", "nope"], 2, "error: unknown model 'nope'"),
        (["--database-url", "junk://x"], 2, "error: unsupported database URL 'junk://…'"),
        (["--database-url", "postgresql://u:SECRET@127.0.0.1:1/x"], 1,
         "error: cannot connect to postgresql://u:***@127.0.0.1:1/x: "),
        (["--no-analyst"], 2, "error: no graph to serve: enable the analyst or pass --graph / --config"),
        (["--graph", "g=./nowhere.py:graph"], 2, "error: graph file ./nowhere.py does not exist"),
        (["--graph", "g=no_such_package.graphs:graph"], 2, "error: cannot import 'no_such_package.graphs': no such"),
    ],
)
def test_what_the_server_would_fail_on_at_startup_is_one_line(
    tmp_path: Path, args: list[str], code: int, line: str
) -> None:
    store = f"sqlite:///{tmp_path / 'serve.sqlite3'}"
    result = inprocess.orecast(["serve", "--port", "1", "--database-url", store, *args], env=serve_env())
    assert result.returncode == code, result.stderr
    assert result.stderr.startswith(line) and len(result.stderr.splitlines()) == 1, result.stderr
    assert "SECRET" not in result.stderr and "Traceback" not in result.stderr


def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    """Port 99999 printed the page's address and then hung, listening nowhere."""
    result = subprocess.run(
        [sys.executable, "-m", "orecast.cli.main", "serve", "--port", "99999",
         "--database-url", f"sqlite:///{tmp_path / 'serve.sqlite3'}"],
        env=serve_env(), capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: Invalid value for '--port'") and "65535" in result.stderr
    assert not (tmp_path / "serve.sqlite3").exists()
