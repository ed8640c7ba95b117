"""`main`: how the console script reports what goes wrong around the commands themselves."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer

from orecast.cli import main as cli_main
from tests.cli.inprocess import orecast


def test_a_command_that_fails_to_import_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(cli_main.COMMAND_MODULES, "chat", "orecast.cli.no_such_module")
    done = orecast(["chat"])
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: cannot load orecast chat:") and "no_such_module" in lines[0]


def test_an_abort_is_one_line_and_exit_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def aborting(app: typer.Typer) -> None:
        @app.command("chat")
        def chat() -> None:
            raise typer.Abort()

    monkeypatch.setattr("orecast.cli.chat.register", aborting)
    done = orecast(["chat"])
    assert (done.returncode, done.stderr) == (130, "aborted\n")


def test_other_commands_still_work_when_one_cannot_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(cli_main.COMMAND_MODULES, "chat", "orecast.cli.no_such_module")
    done = orecast(["series", "-h"])
    assert done.returncode == 0 and "series" in done.stdout


@pytest.mark.parametrize("command", ["db", "threads"])
def test_store_commands_load_neither_the_service_nor_langgraphs_graphs(command: str) -> None:
    """`orecast db …` loaded the service's app (FastAPI, the agent, pandas) and all of langgraph.graph,
    ~1.5 s of CPU before any work, in every archive, sweep or import process; `orecast threads …`
    loaded langgraph.graph."""
    heavy = ("orecast.service.app", "orecast.agent", "pandas", "langgraph.graph", "fastapi")
    loaded = subprocess.run(
        [sys.executable, "-c", f"import sys, orecast.cli.main as m; m.make_app({command!r});"
                               f" print([n for n in {heavy!r} if n in sys.modules])"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, capture_output=True, text=True, timeout=120,
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout == "[]\n"
