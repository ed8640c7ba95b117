"""`open_checkpointer_sync`: a plain sync program (`graph.invoke`, no event loop) on both backends."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import sys
    from orecast.checkpoint import open_checkpointer_sync
    from tests.checkpoint.graphs import human, tool_loop

    url, first, turns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    config = {"configurable": {"thread_id": "sync"}}
    with open_checkpointer_sync(url) as saver:
        graph = tool_loop(saver)
        for turn in range(first, first + turns):
            graph.invoke({"messages": [human(turn)]}, config)
        state = graph.get_state(config)
        history = list(graph.get_state_history(config))
        listed = list(saver.list(config, limit=3))
        print(len(state.values["messages"]), len(history), len(listed))
    """
)


def run(url: str, first: int, turns: int) -> list[int]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, url, str(first), str(turns)],
        cwd=ROOT, env={"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [int(x) for x in done.stdout.split()]


@pytest.mark.slow
def test_sync_program_keeps_memory_across_processes(store_url: str) -> None:
    messages, history, listed = run(store_url, 0, 2)
    assert messages == 8 and listed == 3 and history >= 8
    messages, history_after, _ = run(store_url, 2, 1)  # a new process continues the thread
    assert messages == 12 and history_after > history


def test_errors_inside_the_block_propagate_and_close_the_store(sqlite_url: str) -> None:
    from orecast.checkpoint import open_checkpointer_sync

    with pytest.raises(KeyError), open_checkpointer_sync(sqlite_url) as saver:
        assert saver.get_tuple({"configurable": {"thread_id": "none"}}) is None
        raise KeyError("boom")
    with open_checkpointer_sync(sqlite_url) as saver:  # the file was closed cleanly and opens again
        assert list(saver.list(None)) == []
