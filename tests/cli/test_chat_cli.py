"""`orecast chat` as a user runs it: one SQLite file, stdin for approvals. A second process continues a
thread; the other tests run the console script in this process (`inprocess.py`)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from orecast import market
from tests.cli import inprocess

ROOT = Path(__file__).resolve().parents[2]


def chat_env(tmp_path: Path, env_extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DEEPSEEK_API_KEY", "ORECAST_MODEL", "OPENAI_API_KEY", "ORECAST_MCP_CONFIG")}
    env.update({"ORECAST_CHARTS_DIR": str(tmp_path / "charts"),
                "ORECAST_REPORTS_DIR": str(tmp_path / "reports"),
                "COLUMNS": "200", **(env_extra or {})})
    return env


def orecast(tmp_path: Path, *args: str, stdin: str = "", env_extra: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """`orecast chat ARGS` in this process."""
    return inprocess.orecast(["chat", *args], env=chat_env(tmp_path, env_extra), cwd=tmp_path, stdin=stdin)


def orecast_process(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`orecast chat ARGS` in a new process."""
    return subprocess.run(
        [sys.executable, "-m", "orecast.cli.main", "chat", *args],
        cwd=tmp_path, env=chat_env(tmp_path), capture_output=True, text=True, timeout=120,
    )


def thread_of(out: str) -> str:
    m = re.search(r"thread ([0-9a-f-]{36})", out)
    assert m, out
    return m.group(1)


@pytest.mark.slow
def test_second_process_continues_the_thread(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    first = orecast_process(tmp_path, "我叫赵六，铁矿石现在多少钱？", "--database-url", db)
    assert first.returncode == 0, first.stderr
    thread = thread_of(first.stdout)
    assert "→ latest_price" in first.stdout
    assert f"{market.load_series('iron_ore_wb_monthly').iloc[-1]:.2f}" in first.stdout
    second = orecast_process(tmp_path, "我叫什么？", "--thread", thread, "--database-url", db)
    assert second.returncode == 0, second.stderr
    assert "赵六" in second.stdout
    third = orecast_process(tmp_path, "what did I ask before?", "--thread", thread, "--database-url", db)
    assert "铁矿石现在多少钱" in third.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("answers", "written"), [
    ("a\n", True),
    ("e\nMy ore note\n\nmy-note\n", True),
    ("r\nnot today\n", False),
])
def test_report_approval_at_the_terminal(tmp_path: Path, answers: str, written: bool) -> None:
    db = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    first = orecast(tmp_path, "Plot iron ore since 2020", "--database-url", db)
    assert "saved" in first.stdout
    png = re.search(r"chart saved / 图表已保存: (\S+\.png)", first.stdout)
    assert png and Path(png.group(1)).is_file()
    thread = thread_of(first.stdout)
    out = orecast(tmp_path, "export a report", "--thread", thread, "--database-url", db,
                  stdin=answers)
    assert out.returncode == 0, out.stderr
    assert "approval needed" in out.stdout
    reports = list((tmp_path / "reports").glob("*.md"))
    assert bool(reports) is written
    if answers.startswith("e"):
        assert reports[0].name == "my-note.md"
        assert reports[0].read_text(encoding="utf-8").startswith("# My ore note")
    if not written:
        assert "not today" in out.stdout


@pytest.mark.slow
def test_closed_stdin_leaves_the_approval_waiting_then_resume_approves(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    first = orecast(tmp_path, "导出报告", "--database-url", db, stdin="")
    assert "--resume" in first.stdout
    thread = thread_of(first.stdout)
    resumed = orecast(tmp_path, "--thread", thread, "--resume", "--database-url", db, stdin="a\n")
    assert resumed.returncode == 0, resumed.stderr
    assert list((tmp_path / "reports").glob("*.md"))


def test_bad_model_is_one_line_without_traceback(tmp_path: Path) -> None:
    out = orecast(tmp_path, "hi", "--model", "claude", "--database-url", "memory://")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0
    assert "unknown model" in out.stderr and "Traceback" not in out.stderr


def test_deepseek_without_key_is_one_line(tmp_path: Path) -> None:
    out = orecast(tmp_path, "hi", "--database-url", "memory://",
                  env_extra={"ORECAST_MODEL": "deepseek:deepseek-chat"})
    assert out.returncode == 2
    assert "DEEPSEEK_API_KEY" in out.stderr and "Traceback" not in out.stderr


def test_repl_answers_until_exit(tmp_path: Path) -> None:
    out = orecast(tmp_path, "--database-url", "memory://",
                  stdin="My name is Ada\nwhat's my name?\n/exit\n")
    assert out.returncode == 0, out.stderr
    assert "Your name is Ada." in out.stdout
    assert "you ›" in out.stdout


@pytest.mark.slow
def test_branch_from_an_earlier_step(tmp_path: Path) -> None:
    """Time travel: answer again from the end of turn 1; the branch forgets turn 2, the thread follows it."""
    db = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    first = orecast(tmp_path, "我叫赵六", "--database-url", db)
    thread = thread_of(first.stdout)
    assert orecast(tmp_path, "我叫李四", "--thread", thread, "--database-url", db).returncode == 0
    assert "李四" in orecast(tmp_path, "我叫什么？", "--thread", thread, "--database-url", db).stdout

    history = inprocess.orecast(["threads", "history", thread, "--database-url", db, "--json", "--limit", "100"],
                                cwd=tmp_path)
    assert history.returncode == 0, history.stderr
    inputs = [s for s in json.loads(history.stdout) if s["source"] == "input"]  # newest first
    end_of_turn_1 = inputs[-2]["parent_checkpoint_id"]  # turn 2 started from it

    branch = orecast(tmp_path, "我叫什么？", "--thread", thread, "--from", end_of_turn_1, "--database-url", db)
    assert branch.returncode == 0, branch.stderr
    assert "赵六" in branch.stdout and "李四" not in branch.stdout
    # The thread now continues the branch.
    after = orecast(tmp_path, "我叫什么？", "--thread", thread, "--database-url", db)
    assert "赵六" in after.stdout

    missing = orecast(tmp_path, "hi", "--thread", thread, "--from", "no-such-checkpoint", "--database-url", db)
    assert missing.returncode == 2
    assert "no checkpoint no-such-checkpoint" in missing.stderr


def test_a_note_outlives_the_thread(tmp_path: Path) -> None:
    """The chat opens LangGraph's store on its database, as the service does: /memories/ is shared."""
    db = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    noted = orecast(tmp_path, "记住：我关注62%品位的CFR青岛价格", "--database-url", db)
    assert noted.returncode == 0, noted.stderr
    assert "→ write_file" in noted.stdout
    recall = orecast(tmp_path, "你记得我的偏好吗？", "--new", "--database-url", db)
    assert recall.returncode == 0, recall.stderr
    assert thread_of(recall.stdout) != thread_of(noted.stdout)
    assert "我关注62%品位的CFR青岛价格" in recall.stdout


@pytest.mark.parametrize("thread", ["[/oops]", "[red]t", "t\x1b[2J"])
def test_a_thread_id_is_printed_as_typed(tmp_path: Path, thread: str) -> None:
    """The thread id is the user's text: no markup parsed (a `[/…]` crashed the chat), no escape sent."""
    db = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    out = orecast(tmp_path, "what is my name?", "--thread", thread, "--database-url", db)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "\x1b" not in out.stdout
    shown = thread.replace("\x1b", "\\x1b")
    assert f"thread {shown}  model offline" in out.stdout
    assert f"continue with: orecast chat --thread '{shown}'" in out.stdout


def test_the_command_to_continue_can_be_pasted_into_a_shell(tmp_path: Path) -> None:
    """`continue with: orecast chat --thread 铁矿 问答 1` split the id at its space when pasted."""
    db = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    first = orecast(tmp_path, "铁矿石现在多少钱？", "--thread", "铁矿 问答 'v1'", "--database-url", db)
    assert first.returncode == 0, first.stderr
    hint = first.stdout.strip().splitlines()[-1]
    assert hint == """continue with: orecast chat --thread '铁矿 问答 '"'"'v1'"'"''"""
    pasted = shlex.split(hint.removeprefix("continue with: orecast chat "))
    again = orecast(tmp_path, "那未来3个月呢？", *pasted, "--database-url", db)
    assert again.returncode == 0, again.stderr
    assert "thread 铁矿 问答 'v1'  model offline" in again.stdout
    listed = inprocess.orecast(["threads", "list", "--json", "--database-url", db])
    assert [t["thread_id"] for t in json.loads(listed.stdout)["threads"]] == ["铁矿 问答 'v1'"]


IN_PROCESS_BESIDE_A_TOOL_THREAD = """
import sys, threading, time
from tests.cli import inprocess

# Another chat's tool thread, still busy in this process (a test before, in the same pytest worker).
threading.Thread(target=time.sleep, args=(5,), name="orecast-tool_9", daemon=True).start()
done = inprocess.orecast(["chat", "铁矿石现在多少钱？", "--database-url", sys.argv[1]], env=None)
print("still here", done.returncode, flush=True)
"""


def test_a_chat_in_process_ends_without_ending_the_process_for_threads_not_its_own(tmp_path: Path) -> None:
    """A chat that ended saw a thread named like its tool threads still alive and left with os._exit:
    run in-process (as these tests do), it ended the pytest worker (CI: "worker 'gw2' crashed")."""
    db = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    out = subprocess.run(
        [sys.executable, "-c", IN_PROCESS_BESIDE_A_TOOL_THREAD, db],
        cwd=ROOT, env={**chat_env(tmp_path), "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=120,
    )
    assert out.stdout.strip().splitlines()[-1:] == ["still here 0"], (out.stdout[-500:], out.stderr[-2000:])


def test_a_thread_id_the_store_cannot_keep_fails_before_the_chat_starts(tmp_path: Path) -> None:
    """A 3000-character id was printed in the chat's header, then refused by the store."""
    db = f"sqlite:///{tmp_path / 'chat.sqlite3'}"
    out = orecast(tmp_path, "hi", "--thread", "a" * 3000, "--database-url", db)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.startswith("error: thread_id 'aaaa") and "at most 1024" in out.stderr
    assert len(out.stderr.splitlines()) == 1
