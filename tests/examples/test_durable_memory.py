"""The README's example runs as documented: memory survives a new process, on both backends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "durable_memory.py"


def run(text: str, url: str) -> str:
    code = (
        f"import asyncio, runpy; mod = runpy.run_path({str(EXAMPLE)!r}); "
        f"print(asyncio.run(mod['main']({text!r}, {url!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
def test_memory_across_processes(store_url: str) -> None:
    assert run("My name is Zhao Liu", store_url) == "Noted. This is message 1 of our conversation."
    assert run("What is my name?", store_url) == "Your name is Zhao Liu."
