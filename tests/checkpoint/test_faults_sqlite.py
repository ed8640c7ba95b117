"""SQLite under faults: writes cancelled while another process holds the lock, URLs that cannot be
put in WAL mode, read-only files."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint import ReadOnlyStoreError, open_checkpointer
from tests.checkpoint.graphs import human, tool_loop

HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
"""

WRITE_ONCE = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
conn.execute("BEGIN IMMEDIATE")
conn.execute("CREATE TABLE IF NOT EXISTS other_process (x)")
conn.execute("COMMIT")
"""


def cfg(thread_id: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **extra}}


@contextmanager
def write_lock_held_elsewhere(path: Path) -> Iterator[None]:
    """Another process holds the database's write lock until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        assert holder.wait(timeout=10) == 0


def another_process_can_write(path: Path) -> bool:
    done = subprocess.run([sys.executable, "-c", WRITE_ONCE, str(path)], capture_output=True, text=True)
    return done.returncode == 0


def a_checkpoint(text: str) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [HumanMessage(text, id=text)]}
    cp["channel_versions"] = {"messages": "1"}
    return cp


WRITES: dict[str, Callable[[Any], Awaitable[Any]]] = {
    "aput": lambda s: s.aput(cfg("new"), a_checkpoint("blocked"), {"source": "input", "step": -1}, {"messages": "1"}),
    "aput_writes": lambda s: s.aput_writes(cfg("a", checkpoint_id="c-1"), [("messages", [human(9)])], "task"),
    "adelete_thread": lambda s: s.adelete_thread("a"),
    "acopy_thread": lambda s: s.acopy_thread("a", "copy"),
    "aprune": lambda s: s.aprune(["a"]),
    "aupdate_thread": lambda s: s.aupdate_thread("a", title="blocked"),
}


@pytest.mark.parametrize("write", list(WRITES))
async def test_cancelled_write_leaves_the_store_usable(tmp_path: Path, write: str) -> None:
    path = tmp_path / "store.sqlite3"
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(0)]}, cfg("a"))
        with write_lock_held_elsewhere(path):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(WRITES[write](saver), 1)
        # The cancelled write took no lock after its caller was gone: other processes write …
        assert another_process_can_write(path)
        # … and so does this saver, with nothing of the cancelled write stored.
        await graph.ainvoke({"messages": [human(1)]}, cfg("a"))
        state = (await graph.aget_state(cfg("a"))).values
        assert [m.content for m in state["messages"] if isinstance(m, HumanMessage)] == [
            human(0).content,
            human(1).content,
        ]
        await saver.aput(cfg("new"), a_checkpoint("after"), {"source": "input", "step": -1}, {"messages": "1"})
        assert (await saver.aget_tuple(cfg("new"))).checkpoint["channel_values"]["messages"][0].content == "after"
        assert (await saver.aget_thread("a")).metadata.get("title") is None
    assert another_process_can_write(path)


# -- URLs that cannot be put in WAL mode -----------------------------------------------------------

ROUND_TRIP = """
import asyncio, sys
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from orecast.checkpoint import ReadOnlyStoreError, open_checkpointer

async def main(url):
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [HumanMessage("kept", id="m1")]}
    cp["channel_versions"] = {"messages": "1"}
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    async with open_checkpointer(url) as saver:
        await saver.aput(config, cp, {"source": "input", "step": -1}, {"messages": "1"})
        tup = await saver.aget_tuple(config)
        mode = saver._writer.execute("PRAGMA journal_mode").fetchone()[0]
        print(tup.checkpoint["channel_values"]["messages"][0].content, mode, flush=True)

for url in sys.argv[1:]:
    asyncio.run(main(url))
"""


def test_urls_that_cannot_be_wal_work_in_their_own_mode(tmp_path: Path) -> None:
    urls = {
        "sqlite:///file::memory:?cache=shared": "memory",
        "sqlite:///file::memory:": "memory",
        "sqlite:///:memory:": "memory",
        # a VFS without shared memory: a real file that cannot be WAL, in its rollback-journal mode
        f"sqlite:///file:{tmp_path}/dotfile.db?vfs=unix-dotfile": "delete",
    }
    # In a subprocess: the bug was an endless loop at 100 % CPU, which a timeout turns into a failure.
    done = subprocess.run(
        [sys.executable, "-c", ROUND_TRIP, *urls], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"kept {mode}" for mode in urls.values()]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dotfile.db"]  # no file named after a URI


def test_db_status_on_a_shared_memory_url(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "orecast.cli.main", "db", "status", "--json", "--database-url",
         "sqlite:///file::memory:?cache=shared"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert '"dialect": "sqlite"' in done.stdout


# -- read-only files ---------------------------------------------------------------------------------


async def make_store(path: Path) -> None:
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        await tool_loop(saver).ainvoke({"messages": [human(0)]}, cfg("a"))
        await saver.aupdate_thread("a", title="read me")


async def test_explicit_read_only_url_reads_and_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    await make_store(path)
    before = path.read_bytes()
    async with open_checkpointer(f"sqlite:///file:{path}?mode=ro") as saver:
        assert saver.read_only == "the URL asks for mode=ro"
        assert (await saver.aget_thread("a")).title == "read me"
        state = (await tool_loop(saver).aget_state(cfg("a"))).values
        assert state["messages"][0].content == human(0).content
        for write in (
            lambda: tool_loop(saver).ainvoke({"messages": [human(1)]}, cfg("a")),
            lambda: saver.aupdate_thread("a", title="changed"),
            lambda: saver.adelete_thread("a"),
        ):
            with pytest.raises(ReadOnlyStoreError, match="read-only"):
                await write()
    assert path.read_bytes() == before


NO_DAC_OVERRIDE = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def without_dac_override(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run as this user without CAP_DAC_OVERRIDE: file modes then bind even root (tests run as root)."""
    return subprocess.run([*NO_DAC_OVERRIDE, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def cli(url: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return without_dac_override(sys.executable, "-m", "orecast.cli.main", *args, "--database-url", url, cwd=cwd)


@pytest.mark.slow
async def test_cli_reads_a_store_it_may_not_write(tmp_path: Path) -> None:
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is not installed")
    await make_store(tmp_path / "original.sqlite3")
    ro_file = tmp_path / "ro-file" / "store.sqlite3"  # the file is read-only, its folder is not
    ro_folder = tmp_path / "ro-folder" / "store.sqlite3"  # the folder is read-only, the file is not
    ro_both = tmp_path / "ro-both" / "store.sqlite3"
    for path, file_mode, dir_mode in ((ro_file, 0o444, 0o755), (ro_folder, 0o644, 0o555), (ro_both, 0o444, 0o555)):
        path.parent.mkdir()
        shutil.copy(tmp_path / "original.sqlite3", path)
        path.chmod(file_mode)
        path.parent.chmod(dir_mode)
    probe = without_dac_override(sys.executable, "-c", f"open({str(ro_both)!r}, 'ab')", cwd=tmp_path)
    if probe.returncode == 0:
        pytest.skip("cannot drop CAP_DAC_OVERRIDE here: file modes do not bind this process")
    try:
        for path in (ro_file, ro_folder, ro_both):
            before = path.read_bytes()
            url = f"sqlite:///{path}"
            listed = cli(url, "threads", "list", "--json", cwd=tmp_path)
            assert listed.returncode == 0, listed.stderr
            assert '"title": "read me"' in listed.stdout
            assert listed.stderr.startswith(f"warning: {path} is open read-only")
            assert len(listed.stderr.splitlines()) == 1
            deleted = cli(url, "threads", "delete", "a", "--yes", cwd=tmp_path)
            assert deleted.returncode == 1
            assert deleted.stderr.splitlines()[-1].startswith(f"error: the SQLite store {path} is open read-only")
            assert len(deleted.stderr.splitlines()) == 2  # the warning, then the error: no traceback
            assert path.read_bytes() == before
    finally:
        for path in (ro_file, ro_folder, ro_both):
            path.parent.chmod(0o755)


async def test_an_item_number_taken_fails_the_write_and_keeps_nothing_of_it(tmp_path: Path) -> None:
    # The saver inserts items with OR IGNORE (no statement journal): an insert ignored because its number
    # is taken, not because its content is stored, must still fail the write rather than lose the item.
    path = tmp_path / "store.sqlite3"
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    async with open_checkpointer(f"sqlite:///{path}") as saver:
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(0)]}, config)
        before = await graph.aget_state(config)
        with sqlite3.connect(path) as conn:  # a stray item under the number the thread gives next
            conn.execute(
                "INSERT INTO items (thread_id, item_no, hash, value) "
                "SELECT thread_id, next_item, 'stray', '{}' FROM threads WHERE thread_id = 't'"
            )
        with pytest.raises(sqlite3.IntegrityError, match="taken"):
            await graph.ainvoke({"messages": [human(1)]}, config)
        after = await graph.aget_state(config)
        assert after.config == before.config and after.values["messages"] == before.values["messages"]
        assert not saver._writer.in_transaction
        await graph.ainvoke({"messages": [human(2)]}, {"configurable": {"thread_id": "other"}})
