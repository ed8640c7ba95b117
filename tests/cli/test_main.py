"""`main`: how the console script reports what goes wrong around the commands themselves."""

from __future__ import annotations

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
