"""`orecast db …` and `orecast threads …` on real stores: a conversation written by a graph, read back."""

from __future__ import annotations

import asyncio
import json

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.migrations import latest
from orecast.cli.main import app
from tests.checkpoint.graphs import TOOL_NAME, delta_graph, human, tool_loop
from tests.cli import inprocess

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def stats_version(url: str) -> int:
    return latest(next(d for d in ("sqlite", "postgres", "mysql") if url.startswith(d)))


def write_conversation(url: str, thread_id: str, turns: int, title: str | None = None) -> None:
    async def go() -> None:
        async with open_checkpointer(url) as saver:
            graph = tool_loop(saver)
            for turn in range(turns):
                await graph.ainvoke({"messages": [human(turn)]}, {"configurable": {"thread_id": thread_id}})
            if title:
                await saver.aupdate_thread(thread_id, title=title)

    asyncio.run(go())


def test_db_migrate_and_status(new_store_url: str) -> None:
    store_url = new_store_url  # `db migrate` makes the store
    migrated = run("db", "migrate", "--database-url", store_url)
    assert migrated.exit_code == 0, migrated.output
    assert f"schema version {stats_version(store_url)}" in migrated.stdout
    write_conversation(store_url, "t-status", 2)
    status = run("db", "status", "--database-url", store_url, "--json")
    assert status.exit_code == 0, status.output
    stats = json.loads(status.stdout)
    assert stats["schema_version"] == stats["latest_schema_version"] >= 2
    assert stats["tables"]["threads"]["rows"] == 1
    assert stats["tables"]["items"]["rows"] == 8  # 2 turns × 4 messages, each stored once
    assert stats["bytes"] > 0
    assert all(info["bytes"] > 0 for info in stats["tables"].values())
    table = run("db", "status", "--database-url", store_url)
    assert "checkpoints" in table.stdout and f"schema version {stats['schema_version']}" in table.stdout


def test_history_counts_the_messages_of_a_delta_channel(store_url: str) -> None:
    """deepagents (the analyst) keeps `messages` in a DeltaChannel: the count was 0 at every step."""

    async def go() -> None:
        async with open_checkpointer(store_url) as saver:
            graph = delta_graph(saver)
            for turn in range(4):
                await graph.ainvoke({"messages": [human(turn)]}, {"configurable": {"thread_id": "t-delta"}})

    asyncio.run(go())
    history = inprocess.orecast(["threads", "history", "t-delta", "--database-url", store_url, "--json", "--limit", "100"])
    assert history.returncode == 0, history.stderr
    # Newest first; each turn is an input step (the messages so far), the question, the answer.
    assert [s["messages"] for s in json.loads(history.stdout)] == [8, 7, 6, 6, 5, 4, 4, 3, 2, 2, 1, 0]
    table = inprocess.orecast(["threads", "history", "t-delta", "--database-url", store_url], env={"COLUMNS": "200"})
    newest = table.stdout.splitlines()[3].split()  # date, time, step, source, msgs, writes, checkpoint
    assert newest[4] == "8" and newest[6] == json.loads(history.stdout)[0]["checkpoint_id"]


def test_history_shows_whole_checkpoint_ids_in_80_columns(sqlite_url: str) -> None:
    """Each id was folded over two lines (`1f1f22ca-fa2d-6582-801` / `0-0458040a0e0d`) in a standard
    terminal, so it could not be copied into `orecast chat --from`."""
    write_conversation(sqlite_url, "t-80", 2)
    history = inprocess.orecast(["threads", "history", "t-80", "--database-url", sqlite_url, "--json"])
    ids = [step["checkpoint_id"] for step in json.loads(history.stdout)]
    table = inprocess.orecast(["threads", "history", "t-80", "--database-url", sqlite_url], env={"COLUMNS": "80"})
    assert table.returncode == 0, table.stderr
    assert ids and all(checkpoint_id in table.stdout for checkpoint_id in ids)
    assert max(len(line) for line in table.stdout.splitlines()) <= 80


def test_list_shows_whole_thread_ids_in_80_columns(sqlite_url: str) -> None:
    """The id was cut to `01a24d74-d978-7b67…` in a standard terminal, so it could not be continued."""
    thread_id = "01a24d74-d978-7b67-b341-4d7814a1a489"
    write_conversation(sqlite_url, thread_id, 1, title="铁矿石未来6个月走势？ " * 4)
    listed = inprocess.orecast(["threads", "list", "--database-url", sqlite_url], env={"COLUMNS": "80"})
    assert listed.returncode == 0, listed.stderr
    assert thread_id in listed.stdout
    assert max(len(line) for line in listed.stdout.splitlines()) <= 80


def test_list_is_one_line_a_thread_in_80_columns(sqlite_url: str) -> None:
    """At 80 columns a row took four lines: the title wrapped word by word beside a cut date (`2026-12-…`)."""
    ids = ["01a24d74-d978-7b67-b341-4d7814a1a489", "01a24d74-d978-7b67-b341-4d7814a1a48a"]
    for thread_id in ids:
        write_conversation(sqlite_url, thread_id, 1, title="What will iron ore cost in six months? 铁矿石未来6个月走势？")
    listed = inprocess.orecast(["threads", "list", "--database-url", sqlite_url], env={"COLUMNS": "80"})
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert all(cell_len(line) <= 80 for line in lines), listed.stdout
    rows = [line for line in lines if any(t in line for t in ids)]
    assert len(rows) == 2 and all("What will iron ore cost" in row and "idle" in row for row in rows), listed.stdout
    assert lines[-2:] == ["(updated, msgs: hidden at this width; --json has every field)", "2 of 2 threads"]


def test_rename_echoes_the_title_without_its_escapes(sqlite_url: str) -> None:
    write_conversation(sqlite_url, "t-r", 1)
    renamed = inprocess.orecast(["threads", "rename", "t-r", "[/oops] \x1b[2J title", "--database-url", sqlite_url])
    assert renamed.returncode == 0, renamed.stderr
    assert renamed.stdout == "renamed t-r: [/oops] \\x1b[2J title\n"


def test_threads_list_show_delete(store_url: str) -> None:
    write_conversation(store_url, "t-one", 2, title="Iron ore outlook")
    write_conversation(store_url, "t-two", 1)

    listed = run("threads", "list", "--database-url", store_url, "--json")
    assert listed.exit_code == 0, listed.output
    data = json.loads(listed.stdout)
    assert data["total"] == 2
    assert [t["thread_id"] for t in data["threads"]] == ["t-two", "t-one"]  # most recent first
    assert data["threads"][1]["title"] == "Iron ore outlook"
    assert data["threads"][1]["message_count"] == 8
    only_titled = run("threads", "list", "--database-url", store_url, "--title", "OUTLOOK", "--json")
    assert [t["thread_id"] for t in json.loads(only_titled.stdout)["threads"]] == ["t-one"]
    assert "Iron ore outlook" in run("threads", "list", "--database-url", store_url).stdout

    shown = run("threads", "show", "t-one", "--database-url", store_url, "--json")
    assert shown.exit_code == 0, shown.output
    messages = json.loads(shown.stdout)["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "tool", "ai"] * 2
    assert messages[0]["content"] == human(0).content
    assert messages[1]["tool_calls"][0]["name"] == TOOL_NAME
    text = run("threads", "show", "t-one", "--database-url", store_url).stdout
    assert human(1).content in text and TOOL_NAME in text

    history = run("threads", "history", "t-one", "--database-url", store_url, "--json", "--limit", "3")
    assert history.exit_code == 0, history.output
    steps = json.loads(history.stdout)
    assert len(steps) == 3
    assert steps[0]["checkpoint_id"] > steps[1]["checkpoint_id"] > steps[2]["checkpoint_id"]
    assert steps[0]["parent_checkpoint_id"] == steps[1]["checkpoint_id"]
    assert steps[0]["messages"] == 8 and steps[0]["source"] == "loop"
    assert "of 10 checkpoints" in run("threads", "history", "t-one", "--database-url", store_url).stdout

    tools = run("threads", "tools", "t-one", "--database-url", store_url, "--json")
    assert tools.exit_code == 0, tools.output
    calls = json.loads(tools.stdout)
    assert [c["tool"] for c in calls] == [TOOL_NAME, TOOL_NAME]
    assert [c["status"] for c in calls] == ["success", "success"]
    assert "2 tool calls" in run("threads", "tools", "t-one", "--database-url", store_url).stdout

    kept = runner.invoke(app, ["threads", "delete", "t-one", "--database-url", store_url], input="n\n")
    assert kept.exit_code == 1 and "not deleted" in kept.stderr
    deleted = runner.invoke(app, ["threads", "delete", "t-one", "--database-url", store_url], input="y\n")
    assert deleted.exit_code == 0 and "deleted t-one" in deleted.stdout
    assert json.loads(run("threads", "list", "--database-url", store_url, "--json").stdout)["total"] == 1


def test_unknown_thread_and_bad_input_are_one_line_errors(sqlite_url: str) -> None:
    assert run("db", "migrate", "--database-url", sqlite_url).exit_code == 0
    for command in ("show", "delete", "tools", "history", "rename"):
        args = ("threads", command, "nope") + (("title",) if command == "rename" else ())
        result = run(*args, "--database-url", sqlite_url)
        assert result.exit_code == 1
        assert result.stderr.strip() == "error: no thread 'nope'"
    bad_status = run("threads", "list", "--database-url", sqlite_url, "--status", "sleeping")
    assert bad_status.exit_code == 2 and "unknown thread status" in bad_status.stderr
    bad_url = run("threads", "list", "--database-url", "oracle://x/y")
    assert bad_url.exit_code == 2 and "unsupported database URL" in bad_url.stderr
    assert "Traceback" not in bad_url.output


def test_unreachable_postgres_is_one_line_without_the_password() -> None:
    result = run("db", "status", "--database-url", "postgresql://someone:s3cret@127.0.0.1:1/nowhere")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot connect to postgresql://someone:***@127.0.0.1:1/nowhere")
    assert "s3cret" not in result.output


def test_unreachable_mysql_is_one_line_without_the_password() -> None:
    result = run("db", "status", "--database-url", "mysql://someone:s3cret@127.0.0.1:1/nowhere")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: database unavailable: "), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "s3cret" not in result.output


def test_thread_id_the_store_cannot_keep_is_one_line(sqlite_url: str) -> None:
    too_long = "x" * 1100
    assert run("db", "migrate", "--database-url", sqlite_url).exit_code == 0
    for command in (["show"], ["history"], ["tools"], ["delete", "--yes"]):
        result = run("threads", *command, too_long, "--database-url", sqlite_url)
        assert result.exit_code == 2, result.output
        assert result.output.startswith("error: thread_id 'xxxx")
        assert "at most 1024" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["threads", "list", "--limit"], ["threads", "list", "--offset"], ["threads", "history", "t", "--limit"],
        ["audit", "tools", "--limit"], ["audit", "summary", "--top"], ["db", "stats", "--top"],
        ["db", "sweep", "--dry-run", "--limit"], ["db", "prune", "--dry-run", "--keep-last"],
        ["db", "migrate-state", "--dry-run", "--batch"],
    ],
)
def test_a_count_too_large_for_the_database_is_a_usage_error(args: list[str], tmp_path) -> None:
    """10**20 was a traceback from SQLite or MySQL, and `cannot connect … bigint out of range` from PostgreSQL."""
    url = f"sqlite:///{tmp_path / 'orecast.sqlite3'}"
    assert inprocess.orecast(["db", "migrate", "--database-url", url]).returncode == 0
    result = inprocess.orecast([*args, str(10**20), "--database-url", url])
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: Invalid value for ") and "less than or equal to 2147483647" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_the_largest_count_works_on_every_database(store_url: str) -> None:
    assert inprocess.orecast(["db", "migrate", "--database-url", store_url]).returncode == 0
    top = str(2**31 - 1)
    for args in (["threads", "list", "--limit", top, "--offset", top], ["audit", "tools", "--limit", top],
                 ["db", "stats", "--top", top]):
        result = inprocess.orecast([*args, "--database-url", store_url])
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("args", [["db", "migrate"], ["threads", "list"], ["db", "stats"],
                                  ["chat", "铁矿石价格最近怎么样？", "--model", "offline"]])
def test_a_folder_as_the_sqlite_store_is_one_clear_line(args: list[str], tmp_path) -> None:
    """`threads list` said "no orecast store at DIR yet (`orecast db migrate` creates it)"; that failed.
    `chat` said "cannot open the store …: unable to open database file"."""
    result = inprocess.orecast([*args, "--database-url", f"sqlite:///{tmp_path}"], cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (f"error: {tmp_path} is a folder, not a SQLite file: name a file in it, "
                             f"e.g. sqlite:///{tmp_path / 'orecast.sqlite3'}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["db", "migrate"], ["threads", "list"], ["db", "sweep"]])
def test_a_sqlite_file_name_too_long_is_one_line(args: list[str], tmp_path) -> None:
    """It was a traceback (OSError: File name too long, from the check for a folder)."""
    name = "铁" * 100 + ".sqlite3"  # 300 bytes in UTF-8: more than a file name may have
    result = inprocess.orecast([*args, "--database-url", f"sqlite:///{tmp_path / name}"])
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(f"error: cannot open {tmp_path / name}: ") and "File name too long" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
