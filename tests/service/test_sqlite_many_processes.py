"""One SQLite file shared by `orecast serve` and the `orecast` commands people run beside it: while
conversations go on in the server, other processes open the file, read it and close it again. No
turn may be lost or hidden, and the file stays sound."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from tests.service.conftest import ECHO, say
from tests.service.test_cross_process import serve_process

READ_EVERY_THREAD = """
import asyncio, json, sqlite3, sys
from orecast.checkpoint import open_checkpointer

async def main():
    out = {}
    async with open_checkpointer(sys.argv[1]) as saver:
        for tid in sys.argv[2:]:
            tup = await saver.aget_tuple({"configurable": {"thread_id": tid, "checkpoint_ns": ""}})
            out[tid] = [m.content for m in tup.checkpoint["channel_values"]["messages"]]
    conn = sqlite3.connect(sys.argv[1].removeprefix("sqlite:///"))
    out["integrity"] = conn.execute("PRAGMA integrity_check").fetchone()[0]
    conn.close()
    print(json.dumps(out))

asyncio.run(main())
"""
# Readers, and writers: a writer closing its last connection checkpoints the WAL and deletes it when
# it finds the file unused, which it must never find while the server has it open.
COMMANDS = [["threads", "list"], ["db", "migrate"], ["chat", "铁矿石价格最近怎么样？", "--model", "offline"], ["db", "stats"]]
THREADS, TURNS = 4, 4


@pytest.mark.slow
async def test_commands_beside_the_server_lose_no_turn(tmp_path: Path) -> None:
    path = tmp_path / "orecast.sqlite3"
    url = f"sqlite:///{path}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "200"}
    with serve_process(url) as base:
        client = get_client(url=base)
        tids = [(await client.threads.create())["thread_id"] for _ in range(THREADS)]

        async def converse(tid: str) -> None:
            for turn in range(TURNS):
                await client.runs.wait(tid, ECHO, input=say(f"{tid[:4]} {turn}"))

        async def run_commands(until: asyncio.Task) -> int:
            ran = 0
            while not until.done() or ran < len(COMMANDS):
                args = COMMANDS[ran % len(COMMANDS)]
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "orecast.cli.main", *args,
                    "--database-url", url,
                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                )
                _, err = await proc.communicate()
                assert proc.returncode == 0, err.decode()
                assert Path(f"{path}-wal").exists(), f"orecast {args[0]} took the file for unused"
                ran += 1
            return ran

        talks = asyncio.ensure_future(asyncio.gather(*(converse(t) for t in tids)))
        ran = await run_commands(talks)
        await talks
        assert ran >= len(COMMANDS)
    done = subprocess.run([sys.executable, "-c", READ_EVERY_THREAD, url, *tids], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen.pop("integrity") == "ok"
    for tid in tids:
        said = [f"{tid[:4]} {turn}" for turn in range(TURNS)]
        assert seen[tid] == [m for s in said for m in (s, f"echo: {s}")]
