"""Kill the process during a slow tool, resume: the tool that had finished does not run again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from orecast import market
from orecast.checkpoint import open_checkpointer_sync

ROOT = Path(__file__).resolve().parents[2]


def runner(*args: str) -> list[str]:
    return [sys.executable, "-m", "tests.agent.crash_runner", *args]


def runner_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
    env.pop("DEEPSEEK_API_KEY", None)
    return env


def ask_and_kill_mid_tools(url: str, thread: str, log: Path) -> None:
    """Ask for two prices in a child process and kill it (-9) once one call finished and the other
    (slowed down) has started."""
    env = {**runner_env(), "ORECAST_TEST_SLOW": "shfe_rebar_daily"}
    proc = subprocess.Popen(runner(url, thread, str(log), "ask", "铁矿石和螺纹钢的最新价格"),
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            text = log.read_text() if log.exists() else ""
            if "done iron_ore_wb_monthly" in text and "start shfe_rebar_daily" in text:
                break
            assert proc.poll() is None, proc.communicate()[0].decode()
            time.sleep(0.1)
        else:
            pytest.fail("the two tool calls never got going")
        wait_until_stored(url, thread, deadline)  # the finished call's result, before the kill
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()


def wait_until_stored(url: str, thread: str, deadline: float) -> None:
    """Until the finished call's result is in the store: its task's write (a ToolMessage) pending on
    the thread's latest checkpoint. The call's audit row is finished before its task returns, so it
    is stored by then too."""
    with open_checkpointer_sync(url) as saver:
        while time.monotonic() < deadline:
            tup = saver.get_tuple({"configurable": {"thread_id": thread}})
            written = [v for _task, _channel, value in (tup.pending_writes if tup else [])
                       for v in (value if isinstance(value, list) else [value])]
            if any(isinstance(v, ToolMessage) for v in written):
                return
            time.sleep(0.05)
    pytest.fail("the finished call's result never reached the store")


def resume(url: str, thread: str, log: Path) -> subprocess.CompletedProcess[str]:
    """Finish the killed run in a new child process (nothing slowed down)."""
    return subprocess.run(runner(url, thread, str(log), "resume"), cwd=ROOT, env=runner_env(),
                          capture_output=True, text=True, timeout=180)


@pytest.mark.slow
def test_resume_after_kill_does_not_rerun_finished_tools(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'crash.sqlite3'}"
    thread, log = str(uuid.uuid4()), tmp_path / "calls.log"
    ask_and_kill_mid_tools(url, thread, log)
    assert sorted(log.read_text().splitlines()) == [
        "done iron_ore_wb_monthly", "start iron_ore_wb_monthly", "start shfe_rebar_daily"]

    done = resume(url, thread, log)
    assert done.returncode == 0, done.stderr
    calls = log.read_text().splitlines()
    assert calls.count("start iron_ore_wb_monthly") == 1, calls
    assert calls.count("done iron_ore_wb_monthly") == 1, calls
    assert calls.count("start shfe_rebar_daily") == 2 and calls.count("done shfe_rebar_daily") == 1
    for series in ("iron_ore_wb_monthly", "shfe_rebar_daily"):
        assert f"{market.load_series(series).iloc[-1]:,.2f}" in done.stdout
