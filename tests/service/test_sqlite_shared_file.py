"""The service on a SQLite file that other processes open too (`orecast` commands beside `orecast
serve`): nothing the service does at startup or in a run may cost it SQLite's locks on the file (see
docs/checkpoint.md, "One SQLite file, many processes")."""

from __future__ import annotations

from pathlib import Path

from tests.checkpoint.test_store import OPEN_AND_CLOSE, in_another_process
from tests.service.conftest import ECHO, Server, say, settings_for

COUNT_RUNS = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
print(conn.execute("SELECT COUNT(*) FROM service_runs").fetchone()[0])
print(conn.execute("PRAGMA integrity_check").fetchone()[0])
conn.close()
"""


async def test_another_process_opening_the_file_leaves_the_service_its_wal(tmp_path: Path) -> None:
    path = tmp_path / "orecast.sqlite3"
    server = Server.start(settings_for(f"sqlite:///{path}"))
    try:
        client = server.client()
        tid = (await client.threads.create())["thread_id"]
        for turn in range(3):
            await client.runs.wait(tid, ECHO, input=say(f"turn {turn}"))
            in_another_process(OPEN_AND_CLOSE, str(path))
            assert Path(f"{path}-wal").exists(), "another process took the file for unused"
        state = await client.threads.get_state(tid)
        assert [m["content"] for m in state["values"]["messages"]][-2:] == ["turn 2", "echo: turn 2"]
    finally:
        server.stop()
    assert in_another_process(COUNT_RUNS, str(path)).split() == ["3", "ok"]
