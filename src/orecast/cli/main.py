"""Entry point of the `orecast` console script.

Each part of the product registers its commands from its own module, so a newcomer finds
`orecast threads …` in `cli/threads.py`, `orecast forecast …` in `cli/market.py` and so on.
"""

from __future__ import annotations

import importlib
import sys
from importlib import metadata

import typer

try:  # typer ≥ 0.20 vendors its own copy of click
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - older typer on the real click
    from click import exceptions as click_errors


# -h is help everywhere; defaults are printed in every command's help.
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "show_default": True}

# Which module registers each top-level command. `main` imports only the one invoked: the chat
# pulls in LangGraph, the model SDKs and the agent (seconds), which `orecast forecast` never needs.
COMMAND_MODULES: dict[str, str] = {
    "chat": "orecast.cli.chat",
    "series": "orecast.cli.market",
    "forecast": "orecast.cli.market",
    "backtest": "orecast.cli.market",
    "data": "orecast.cli.data",
    "threads": "orecast.cli.threads",
    "db": "orecast.cli.db",
    "audit": "orecast.cli.audit",
    "eval": "orecast.cli.eval",
    "serve": "orecast.cli.serve",
}


def make_app(command: str | None = None) -> typer.Typer:
    """The `orecast` app with every command, or only the module of `command` when it is known."""
    app = typer.Typer(
        name="orecast",
        help="Iron-ore price forecasting agent with durable conversations / 铁矿石价格预测智能体",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Plain help and errors: a usage error is one line (see `main`), never a boxed panel.
        rich_markup_mode=None,
        context_settings=CONTEXT_SETTINGS,
    )
    app.callback()(_root)
    wanted = [COMMAND_MODULES[command]] if command in COMMAND_MODULES else COMMAND_MODULES.values()
    for name in dict.fromkeys(wanted):
        importlib.import_module(name).register(app)
    return app


def __getattr__(name: str) -> typer.Typer:
    # `from orecast.cli.main import app` (tests, embedding) gets the whole app, built on first use.
    if name == "app":
        return make_app()
    raise AttributeError(name)


def version() -> str:
    try:
        return metadata.version("orecast")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"orecast {version()}")
        raise typer.Exit()


def _root(
    show_version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", is_eager=True,
        callback=_print_version,
    ),
) -> None:
    """Iron-ore price forecasting agent with durable conversations / 铁矿石价格预测智能体"""


def main() -> None:
    """Run the command; a usage error is one line on stderr with exit code 2."""
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    try:
        code = make_app(command)(prog_name="orecast", standalone_mode=False)
    except click_errors.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help() if exc.ctx else "orecast -h", err=True)
        sys.exit(2)
    except click_errors.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx else "orecast"
        typer.echo(f"error: {exc.format_message()} (see: {where} -h)", err=True)
        sys.exit(2)
    except typer.Abort:  # typer's own class: its vendored click has no `exceptions.Abort`
        typer.echo("aborted", err=True)
        sys.exit(130)
    except click_errors.ClickException as exc:
        typer.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except ImportError as exc:  # a command's module (or a library it needs) is missing: a broken install
        where = f"orecast {command}" if command in COMMAND_MODULES else "orecast"
        typer.echo(f"error: cannot load {where}: {exc} (reinstall orecast)", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
