"""Stored text and database URLs the CLI must print safely: markup, terminal escapes, passwords."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from typer.testing import CliRunner

from orecast.checkpoint import open_checkpointer
from orecast.cli.main import app
from tests.checkpoint.conftest import raw_sql, stored_time
from tests.cli.inprocess import orecast
from tests.cli.test_ops_cli import LONG_AGO, write

runner = CliRunner()

CLEAR_SCREEN = "\x1b[2J"
OSC_TITLE = "\x1b]0;pwned\x07"
C1_CSI = "\x9b31m"
TITLE = f"[/oops] [bold]not bold[/bold] {CLEAR_SCREEN}"
QUESTION = f"price? [/] {OSC_TITLE} {C1_CSI}"
ANSWER = f"[red]101.5[/red]{CLEAR_SCREEN}"


def run(*args: str):
    # Wide enough that tables do not wrap the text the assertions look for.
    return runner.invoke(app, list(args), env={"COLUMNS": "250"})


def write_hostile_thread(url: str) -> None:
    async def go() -> None:
        async with open_checkpointer(url) as saver:
            cp = empty_checkpoint()
            cp["channel_values"] = {
                "messages": [
                    HumanMessage(QUESTION, id="h1"),
                    AIMessage(
                        "",
                        id="a1",
                        tool_calls=[{"name": "get[/x]", "args": {"q": CLEAR_SCREEN}, "id": "c1"}],
                    ),
                    ToolMessage(f"[/tool] {OSC_TITLE}", tool_call_id="c1", name="get[/x]", id="t1"),
                    AIMessage(ANSWER, id="a2"),
                ]
            }
            cp["channel_versions"] = {"messages": "1"}
            config = {"configurable": {"thread_id": "[/t]", "checkpoint_ns": ""}}
            await saver.aput(config, cp, {"source": "loop", "step": 1}, {"messages": "1"})
            await saver.aupdate_thread("[/t]", title=TITLE)

    asyncio.run(go())


def assert_no_control(output: str) -> None:
    assert "\x1b" not in output and "\x9b" not in output and "\x07" not in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    "command",
    [
        ("threads", "list"),
        ("threads", "show", "[/t]"),
        ("threads", "tools", "[/t]"),
        ("threads", "history", "[/t]"),
    ],
)
def test_stored_text_is_printed_escaped(sqlite_url: str, command: tuple[str, ...]) -> None:
    write_hostile_thread(sqlite_url)
    result = run(*command, "--database-url", sqlite_url)
    assert result.exit_code == 0, result.output
    assert_no_control(result.output)
    if command[1] == "list":
        assert "[/oops] [bold]not bold[/bold] \\x1b[2J" in result.stdout
    if command[1] == "show":
        assert "[/oops] [bold]not bold[/bold]" in result.stdout
        assert "\\x1b]0;pwned\\x07" in result.stdout and "\\x9b31m" in result.stdout
        assert "[red]101.5[/red]\\x1b[2J" in result.stdout
        assert "get[/x]" in result.stdout
    if command[1] == "tools":
        assert "get[/x]" in result.stdout and "[/tool]" in result.stdout


def test_password_in_the_query_is_never_printed() -> None:
    url = "postgresql://someone@127.0.0.1:1/nowhere?password=s3cr@t&connect_timeout=2"
    result = run("db", "status", "--database-url", url)
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "error: cannot connect to postgresql://someone@127.0.0.1:1/nowhere?password=***&connect_timeout=2:"
    )
    assert len(result.stderr.strip().splitlines()) == 1
    assert "s3cr" not in result.output


def test_the_local_servers_url_is_named_as_written(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """`postgresql://` (no host: the local server's Unix socket) was named "postgresql:"."""
    monkeypatch.setenv("PGHOST", str(tmp_path))  # a socket folder with no server in it
    result = run("db", "status", "--database-url", "postgresql://")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot connect to postgresql://: "), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    mysql = run("db", "status", "--database-url", "mysql://")
    assert mysql.exit_code == 2
    assert mysql.stderr == "error: bad MySQL URL mysql://: name the database, mysql://user:pass@host:3306/db\n"


def test_password_with_an_at_sign_in_the_user_part() -> None:
    result = run("db", "status", "--database-url", "postgresql://me:p%40ss@127.0.0.1:1/x?application_name=a@b")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot connect to postgresql://me:***@127.0.0.1:1/x?application_name=a@b:")
    assert "p@ss" not in result.output


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["threads", "list", "--database-url", "sqlite://user:s3cret@x"], "bad SQLite URL 'sqlite://user:***@x'"),
        (["db", "migrate", "--database-url", "sqlite://:s3cret@/tmp/x.db"], "bad SQLite URL 'sqlite://:***@/tmp/x.db'"),
        (["db", "status", "--database-url", "sqlite://s3cret@x"], "bad SQLite URL 'sqlite://***@x'"),
        (["db", "status", "--database-url", "me:s3cret@db.example/x"], "unsupported database URL 'me:***@db.example/x'"),
        (["db", "import", "--format", "langgraph-sqlite", "--from", "sqlite://me:s3cret@x"],
         "bad SQLite URL 'sqlite://me:***@x'"),
    ],
)
def test_a_malformed_url_is_shown_without_its_password(args: list[str], shown: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {shown}: use "), result.stderr
    assert "s3cret" not in result.output and len(result.stderr.strip().splitlines()) == 1


def test_unknown_query_option_is_one_line() -> None:
    result = run("threads", "list", "--database-url", "postgresql://me:s3cret@127.0.0.1:1/x?badopt=1")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: bad PostgreSQL URL postgresql://me:***@127.0.0.1:1/x?badopt=1")
    assert "badopt" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "s3cret" not in result.output and "Traceback" not in result.output


def test_bad_timeout_is_one_line(monkeypatch) -> None:
    monkeypatch.setenv("ORECAST_PG_LOCK_TIMEOUT", "soon")
    result = run("threads", "list", "--database-url", "postgresql://me:s3cret@127.0.0.1:1/x")
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: ORECAST_PG_LOCK_TIMEOUT must be a number of seconds, not 'soon'"
    result = run("threads", "list", "--database-url", "postgresql://me@127.0.0.1:1/x?lock_timeout=-1")
    assert result.exit_code == 2 and "lock_timeout in the database URL" in result.stderr


def test_thread_ids_in_ops_lines_are_escaped(sqlite_url: str, tmp_path) -> None:
    """export, import, archive --dry-run and delete echoed a stored id's escapes to the terminal."""
    hostile = f"t{CLEAR_SCREEN}"
    write(sqlite_url, hostile, 1)
    raw_sql(sqlite_url, "UPDATE threads SET updated_at = ?", (stored_time(sqlite_url, LONG_AGO),))
    archive = tmp_path / "t.orecast-thread.jsonl.gz"
    commands = [
        ["threads", "export", hostile, "--out", str(archive)],
        ["threads", "import", str(archive), "--thread-id", f"u{OSC_TITLE}"],
        ["db", "archive", "--idle-for", "90d", "--out", str(tmp_path / "a"), "--dry-run"],
        ["threads", "delete", hostile, "--yes"],
    ]
    for args in commands:
        result = orecast([*args, "--database-url", sqlite_url])
        assert result.returncode == 0, (args, result.stderr)
        assert_no_control(result.stdout + result.stderr)
        assert "t\\x1b[2J" in result.stdout or "u\\x1b]0;pwned\\x07" in result.stdout, (args, result.stdout)
