"""`orecast serve`: the Agent-Server-compatible HTTP service (see docs/service.md)."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orecast.cli.common import fail

if TYPE_CHECKING:
    from orecast.service import ServiceSettings

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(envvar="PORT", min=1, max=65535, help="TCP port.")] = 8000,
    database_url: Annotated[
        str | None, typer.Option(envvar="ORECAST_DATABASE_URL", help="sqlite:///…, postgresql://… or mysql://…")
    ] = None,
    model: Annotated[
        str | None, typer.Option(envvar="ORECAST_MODEL", help="Analyst model: offline, deepseek:NAME, …")
    ] = None,
    graph: Annotated[
        list[str] | None,
        typer.Option(help="Serve another graph: NAME=module:attr or NAME=./file.py:attr (repeatable)."),
    ] = None,
    config: Annotated[
        str | None, typer.Option(help="A langgraph.json whose `graphs` are served too.")
    ] = None,
    no_analyst: Annotated[bool, typer.Option(help="Do not serve the orecast analyst.")] = False,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes (share the database).")] = 1,
) -> None:
    """Serve the analyst (and other LangGraph graphs) over the LangGraph Agent Server API."""
    import uvicorn
    from pydantic import ValidationError

    from orecast.service import ServiceSettings
    from orecast.service.app import load_custom_auth
    from orecast.service.auth import ApiKeys
    from orecast.service.graphs import GraphLoadError, parse_graph_option

    try:
        graphs = dict(parse_graph_option(g) for g in graph or [])
        settings = ServiceSettings(
            database_url=database_url, model=model, graphs=graphs, config_file=config,
            analyst=not no_analyst, freeze_heap=True,
        )
        keys = ApiKeys.parse(settings.api_keys)
        custom_auth = load_custom_auth(settings)
    except ValidationError as exc:  # a bad ORECAST_* setting: its name and what is wrong, on one line
        first = exc.errors()[0]
        name = f"ORECAST_{str(first['loc'][0]).upper()}" if first["loc"] else "settings"
        fail(f"{name}: {first['msg'].removeprefix('Value error, ')}", 2)
    except (GraphLoadError, ValueError) as exc:
        fail(str(exc), 2)
    if host not in LOOPBACK and not keys.enabled and custom_auth is None:
        fail(f"refusing to listen on {host} without auth: set ORECAST_API_KEYS=user:KEY,… or auth.path", 2)
    _check_model_and_store(settings)
    # Worker processes rebuild the app from the environment, so the settings travel through it.
    os.environ["ORECAST_SERVICE_SETTINGS"] = settings.model_dump_json()
    base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    from orecast.service.routes.page import PACKAGE_STATIC

    if not (PACKAGE_STATIC / "index.html").is_file():
        typer.echo("note: the web page is not built (make web); the API works without it", err=True)
    typer.echo(f"orecast: open {base}/ in your browser  (API docs: {base}/docs; terminal: orecast chat)", err=True)
    uvicorn.run(
        "orecast.service.entry:app_from_env", factory=True, host=host, port=port,
        workers=workers, log_level="warning",
    )


def _check_model_and_store(settings: ServiceSettings) -> None:
    """The model and the store the server opens at startup, checked first: a bad model, URL or an
    unreachable database is one line here, where the server's startup would print a traceback."""
    from orecast.agent import AgentConfigError, select_model
    from orecast.checkpoint.urls import parse_url
    from orecast.cli.common import open_store

    if not (settings.analyst or settings.graphs or settings.config_file):
        fail("no graph to serve: enable the analyst or pass --graph / --config", 2)
    for spec in _graph_specs(settings):
        if why := _missing_graph(spec):
            fail(why, 2)
    if settings.analyst:
        try:
            select_model(settings.model)
        except AgentConfigError as exc:
            fail(str(exc), 2)

    async def reach() -> None:
        async with open_store(settings.database_url):  # creates and migrates it, as the server would
            pass

    url = settings.database_url
    try:
        in_memory = url is not None and parse_url(url).scheme == "memory"
    except ValueError as exc:
        fail(str(exc), 2)
    if not in_memory:
        asyncio.run(reach())


def _graph_specs(settings: ServiceSettings) -> list[str]:
    from orecast.service.graphs import GraphLoadError, graphs_from_config

    specs = list(settings.graphs.values())
    if settings.config_file:
        try:
            specs += graphs_from_config(settings.config_file).values()
        except GraphLoadError as exc:
            fail(str(exc), 2)
    return specs


def _missing_graph(spec: str) -> str | None:
    """Why the module or file a graph spec names cannot be found; found, it is not run here (the server
    imports it: its top level runs once)."""
    target = spec.rpartition(":")[0]
    if target.endswith(".py"):
        return None if Path(target).is_file() else f"graph file {target} does not exist"
    try:
        found = importlib.util.find_spec(target) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"cannot import {target!r}: no such module"


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
