"""The terminal as a user meets it: a real pseudo-terminal for the REPL (Ctrl-C, /commands), a real
process killed mid-answer, a real closed port for an unreachable model server or database. Commands
whose point is their output and exit code run the console script in this process (`inprocess.py`)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.cli import inprocess

PROMPT = "you ›"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (
        "DEEPSEEK_API_KEY", "ORECAST_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
        "ORECAST_DATABASE_URL", "CHECKPOINT_DB", "ORECAST_MCP_CONFIG")}
    env.update({"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                "ORECAST_CHARTS_DIR": str(tmp_path / "charts"), "COLUMNS": "200", **extra})
    return env


def orecast(tmp_path: Path, *args: str, env: dict[str, str] | None = None, stdin: str = "",
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`orecast ARGS` in this process."""
    return inprocess.orecast(list(args), env=env or cli_env(tmp_path), cwd=cwd or tmp_path, stdin=stdin)


@pytest.mark.slow
def test_version_help_and_one_line_usage_errors(tmp_path: Path) -> None:
    assert re.fullmatch(r"orecast \S+\n", orecast(tmp_path, "--version").stdout)
    helped = orecast(tmp_path, "forecast", "-h")
    assert helped.returncode == 0 and "-n, --horizon" in helped.stdout and "[default: auto]" in helped.stdout
    assert "[default: 20; 1<=x<=2147483647]" in " ".join(orecast(tmp_path, "threads", "list", "-h").stdout.split())
    for args, text in ((("forecast", "iron_ore_wb_monthly"), "Missing option '--horizon'"),
                       (("nope",), "No such command 'nope'"),
                       (("threads", "list", "--limit", "x"), "Invalid value for '--limit'")):
        out = orecast(tmp_path, *args)
        assert out.returncode == 2, out
        assert out.stderr.count("\n") == 1 and text in out.stderr, out.stderr
        assert "╭" not in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
def test_default_store_is_in_the_user_data_dir_and_reads_create_nothing(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for args in (("threads", "list"), ("threads", "show", "t1"), ("threads", "history", "t1"),
                 ("db", "status")):
        out = orecast(tmp_path, *args, cwd=elsewhere)
        assert out.returncode == 1, out
        assert out.stderr.count("\n") == 1 and "no orecast store at" in out.stderr
        assert str(tmp_path / "data" / "orecast" / "orecast.sqlite3") in out.stderr
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "data").exists()
    assert orecast(tmp_path, "db", "migrate", cwd=elsewhere).returncode == 0
    assert (tmp_path / "data" / "orecast" / "orecast.sqlite3").is_file()
    listed = orecast(tmp_path, "threads", "list", "--json", cwd=elsewhere)
    assert listed.returncode == 0 and json.loads(listed.stdout)["total"] == 0
    assert list(elsewhere.iterdir()) == []


def test_unreachable_database_is_one_line(tmp_path: Path) -> None:
    url = f"postgresql://nobody@127.0.0.1:{closed_port()}/x"
    for args in (("chat", "hi", "--database-url", url), ("threads", "list", "--database-url", url)):
        out = orecast(tmp_path, *args)
        assert out.returncode == 1, out
        assert out.stderr.count("\n") == 1 and "Connection refused" in out.stderr, out.stderr


def test_resume_of_an_unknown_thread_and_an_empty_message_are_errors(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite3'}"
    out = orecast(tmp_path, "chat", "--thread", "nope", "--resume", "--database-url", db)
    assert out.returncode == 2 and "no thread 'nope' to resume" in out.stderr
    empty = orecast(tmp_path, "chat", "  ", "--database-url", db)
    assert empty.returncode == 2 and "empty" in empty.stderr
    listed = orecast(tmp_path, "threads", "list", "--json", "--database-url", db)
    assert json.loads(listed.stdout)["total"] == 0


@pytest.mark.slow
def test_unreachable_model_server_leaves_the_repl_up_and_the_turn_retriable(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite3'}"
    base = f"http://127.0.0.1:{closed_port()}/v1"
    env = cli_env(tmp_path, OPENAI_BASE_URL=base, OPENAI_API_KEY="sk-test-not-a-key")
    out = orecast(tmp_path, "chat", "--model", "openai:qwen", "--database-url", db, env=env,
                  stdin="铁矿石现在多少钱？\n/retry\n/exit\n")
    assert out.returncode == 0, out.stderr
    errors = out.stderr.strip().splitlines()
    assert len(errors) == 2 and all(f"the model server at {base} cannot be reached" in e for e in errors)
    assert "Traceback" not in out.stdout + out.stderr and "sk-test" not in out.stdout + out.stderr
    assert out.stdout.count("/retry") >= 2  # the hint after each failure
    # DeepSeek with a made-up key against a closed endpoint: one line, exit code 1.
    env = cli_env(tmp_path, DEEPSEEK_API_KEY="sk-fake-0123456789", DEEPSEEK_API_BASE=base)
    one = orecast(tmp_path, "chat", "hi", "--database-url", db, env=env)
    assert one.returncode == 1 and one.stderr.count("\n") == 1 and "cannot be reached" in one.stderr
    listed = orecast(tmp_path, "threads", "list", "--database-url", db)
    assert "failed" in listed.stdout


LONG_TURN = "回测铁矿石期货从2016年开始的预测准确度"

@pytest.mark.slow
def test_repl_in_a_pty_commands_cancel_and_leave(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite3'}"
    child = pexpect.spawn(sys.executable, ["-m", "orecast.cli.main", "chat", "--database-url", db],
                          env=cli_env(tmp_path), cwd=str(tmp_path), encoding="utf-8", timeout=120)
    try:
        child.expect(PROMPT)
        child.sendintr()  # before any turn (asyncio.run's own handler once swallowed this one)
        child.expect(r"quit\? \[y/N\]")
        child.sendline("n")
        child.expect(PROMPT)
        child.sendline("/help")
        child.expect("/retry")
        child.expect(PROMPT)
        child.sendline("/weather")  # not sent to the analyst
        child.expect("unknown command /weather")
        child.expect(PROMPT)
        child.sendline("")
        child.expect("type a question")
        child.expect(PROMPT)
        # A long turn to cancel: an `auto` backtest of DCE iron ore from 2016 fits ~2,600 origins
        # (about 35 s of CPU; a cold `auto` forecast now takes only ~2 s, too short to interrupt).
        child.sendline(LONG_TURN)
        child.expect("backtest_forecast")
        time.sleep(0.5)
        started = time.monotonic()
        child.sendintr()
        child.expect("cancelled", timeout=10)
        child.expect(PROMPT, timeout=10)
        cancelled_after = time.monotonic() - started
        child.sendintr()  # at the idle prompt, at once: asks first
        child.expect(r"quit\? \[y/N\]")
        child.sendline("n")
        child.expect(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert cancelled_after < 3, cancelled_after  # well inside a second when the box is idle
    listed = orecast(tmp_path, "threads", "list", "--json", "--database-url", db)
    threads = json.loads(listed.stdout)["threads"]
    assert len(threads) == 1 and threads[0]["title"] == LONG_TURN
    assert "cancelled" in orecast(tmp_path, "threads", "list", "--database-url", db).stdout


@pytest.mark.slow
def test_a_killed_chat_shows_as_crashed_and_threads_can_be_renamed_and_deleted(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite3'}"
    proc = subprocess.Popen([sys.executable, "-m", "orecast.cli.main", "chat", LONG_TURN,
                             "--database-url", db], env=cli_env(tmp_path), cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if "backtest_forecast" in line or not line:
                break
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    listed = json.loads(orecast(tmp_path, "threads", "list", "--json", "--database-url", db).stdout)
    thread = listed["threads"][0]["thread_id"]
    assert re.search(rf"{thread}.*crashed", orecast(tmp_path, "threads", "list", "--database-url", db).stdout)

    renamed = orecast(tmp_path, "threads", "rename", thread, "Ore outlook", "--database-url", db)
    assert renamed.returncode == 0
    assert json.loads(orecast(tmp_path, "threads", "list", "--json", "--database-url", db).stdout
                      )["threads"][0]["title"] == "Ore outlook"
    kept = orecast(tmp_path, "threads", "delete", thread, "--database-url", db, stdin="n\n")
    assert kept.returncode == 1 and "not deleted" in kept.stderr
    no_tty = orecast(tmp_path, "threads", "delete", thread, "--database-url", db)  # closed stdin
    assert no_tty.returncode == 1
    gone = orecast(tmp_path, "threads", "delete", thread, "--yes", "--database-url", db)
    assert gone.returncode == 0
    assert json.loads(orecast(tmp_path, "threads", "list", "--json", "--database-url", db).stdout
                      )["total"] == 0
