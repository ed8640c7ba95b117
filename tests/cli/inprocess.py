"""`orecast …` run inside the test process, for tests whose point is not a process boundary.

`orecast(args, env=…, cwd=…, stdin=…)` goes through the console script's own `main()` (one-line usage
errors, exit codes) with that environment, working directory and standard input, and returns what
`subprocess.run(…, capture_output=True, text=True)` would. It saves the seconds a new Python spends
importing LangGraph, pandas and the agent; tests about processes (a second process continuing a thread,
kill -9, Ctrl-C in a real terminal, dropped capabilities) keep starting real ones.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from orecast.cli.main import main


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def orecast(args: list[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None,
            stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m orecast.cli.main ARGS`, in this process."""
    out, err = io.StringIO(), io.StringIO()
    code: int | str | None = 0
    with contextlib.ExitStack() as stack:
        stack.enter_context(_environment(os.environ if env is None else env))
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        saved_argv, saved_stdin = sys.argv, sys.stdin
        sys.argv, sys.stdin = ["orecast", *args], io.StringIO(stdin)
        try:
            main()
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.argv, sys.stdin = saved_argv, saved_stdin
    returncode = code if isinstance(code, int) else (0 if code is None else 1)
    return subprocess.CompletedProcess(["orecast", *args], returncode, out.getvalue(), err.getvalue())
