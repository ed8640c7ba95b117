"""`create_app`: the FastAPI application; its lifespan opens and closes everything the routes use."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from langgraph.store.base import BaseStore
from prometheus_client import CollectorRegistry
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orecast.agent import AGENT_NAME, AgentSettings, build_agent
from orecast.checkpoint import OrecastCheckpointer, default_database_url, open_checkpointer
from orecast.checkpoint.store import open_store
from orecast.service.assistants import Assistants
from orecast.service.auth import ApiKeys
from orecast.service.context import Services
from orecast.service.cron_scheduler import CronScheduler
from orecast.service.crons import CronRepo
from orecast.service.custom_auth import CustomAuth
from orecast.service.db import open_db
from orecast.service.errors import error_body, install_error_handlers
from orecast.service.graphs import (
    GraphRegistry,
    ServedGraph,
    auth_from_config,
    graphs_from_config,
    import_target,
    load_graph,
)
from orecast.service.metrics import HttpMetrics, ServiceMetrics
from orecast.service.routes import ROUTERS, TAGS
from orecast.service.runs.manager import RunManager
from orecast.service.runs.records import RunRepo
from orecast.service.runs.recover import run_recovery
from orecast.service.runs.share import run_sharing
from orecast.service.settings import ServiceSettings
from orecast.service.sweeper import Sweeper
from orecast.service.threads import Threads
from orecast.service.tracing import Tracing, provider_from_env
from orecast.service.webhooks import WebhookPolicy, Webhooks

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider


async def build_graphs(
    settings: ServiceSettings,
    saver: OrecastCheckpointer,
    store: BaseStore,
    resources: contextlib.AsyncExitStack,
) -> GraphRegistry:
    graphs: dict[str, ServedGraph] = {}
    if settings.analyst:
        analyst = build_agent(saver, store=store, settings=AgentSettings.from_env(model=settings.model))
        graphs[AGENT_NAME] = ServedGraph(AGENT_NAME, analyst, "orecast.agent:build_agent")
    specs = dict(graphs_from_config(settings.config_file)) if settings.config_file else {}
    specs.update(settings.graphs)
    for name, spec in specs.items():
        graphs[name] = await load_graph(name, spec, saver, store, resources)
    if not graphs:
        raise ValueError("no graph to serve: enable the analyst or pass --graph / --config")
    return GraphRegistry(graphs)


class BodyLimit:
    """413 for a request body above `limit` bytes, whether or not it declares its length."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._reject(send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await self._reject(send)

    async def _reject(self, send: Send) -> None:
        from orecast.service.encode import dumps

        body = dumps(error_body("too_large", f"request body is larger than {self.limit} bytes"))
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


def load_custom_auth(settings: ServiceSettings) -> CustomAuth | None:
    """The custom auth `settings.auth_path` (or the config file's `auth.path`) names; None if none.
    It replaces API keys, so configuring both is refused."""
    spec = settings.auth_path or (auth_from_config(settings.config_file) if settings.config_file else None)
    if spec is None:
        return None
    if settings.api_keys:
        raise ValueError("custom auth (auth.path) and ORECAST_API_KEYS exclude each other; set one")
    try:
        return CustomAuth(import_target(spec))
    except TypeError as exc:
        raise ValueError(str(exc)) from exc


def create_app(
    settings: ServiceSettings | None = None, *, tracer_provider: TracerProvider | None = None
) -> FastAPI:
    """The service. Nothing is opened until the lifespan starts (uvicorn, or a TestClient).

    Runs are traced with `tracer_provider`, else with the one the `OTEL_*` variables ask for, if any."""
    settings = settings or ServiceSettings()
    api_keys = ApiKeys.parse(settings.api_keys)
    custom_auth = load_custom_auth(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Open order: checkpointer → store → service tables → graphs → assistants → run manager.
        # Close order is the reverse: runs stop first, so nothing writes to a closed store.
        url = settings.database_url or default_database_url()
        async with (
            open_checkpointer(url) as saver,
            open_store(url) as store,
            open_db(url) as db,
            # what graph factories opened: closed before the store they write to
            contextlib.AsyncExitStack() as graph_resources,
        ):
            if not isinstance(saver, OrecastCheckpointer):
                raise ValueError("the service needs a sqlite, postgresql or mysql database, not memory")
            graphs = await build_graphs(settings, saver, store, graph_resources)
            assistants = Assistants(db, graphs)
            await assistants.seed()
            if settings.freeze_heap:
                # Startup built a large heap (modules, graphs, the analyst's tools and data) that lives
                # as long as the process; the collector's full scans walked all of it every ~150 turns
                # of a busy server (~100 ms each). Frozen, a scan walks only what requests allocate.
                # Done before the metrics exist: under PROMETHEUS_MULTIPROC_DIR their files are what
                # says a worker is (almost) ready.
                gc.collect()
                gc.freeze()
            repo = RunRepo(db, saver.thread_status_statement, saver.thread_lock_statement)
            metrics = app.state.metrics = ServiceMetrics(
                CollectorRegistry(), saver, database_seconds=settings.metrics_database_seconds
            )
            provider = tracer_provider or provider_from_env()
            tracing = None if provider is None else Tracing(provider)
            if tracing is not None:
                tracing.instrument(saver)
            webhooks = Webhooks(WebhookPolicy(allow_private=settings.webhook_allow_private))
            runs = RunManager(
                repo, saver, metrics, poll_seconds=settings.cancel_poll_seconds,
                stale_seconds=settings.stale_run_seconds, tracing=tracing, webhooks=webhooks,
                jobs=settings.jobs_per_worker,
            )
            sweeper = app.state.sweeper = Sweeper(saver, metrics, settings.ttl_policy(), settings.sweep_every())
            await runs.erase_rollbacks_left()
            services = app.state.services = Services(
                settings=settings, saver=saver, store=store, db=db, graphs=graphs,
                assistants=assistants, threads=Threads(
                    saver, graphs, graphs.ids()[0], reserve_owner=custom_auth is None,
                    ttl_policy=settings.ttl_policy(),
                ),
                repo=repo, runs=runs, metrics=metrics, crons=CronRepo(db), webhooks=webhooks,
            )
            cron_scheduler = app.state.cron_scheduler = CronScheduler(
                services, services.crons, api_keys, custom_auth, settings.cron_poll_seconds
            )
            # a run whose process died goes on here (runs/recover.py), looked for as often as runs beat
            recovery = app.state.recovery = run_recovery(services, runs.heartbeat_seconds)
            # a run another process queued starts here when this one has a free slot (runs/share.py)
            sharing = run_sharing(services, runs.poll_seconds)
            sweeper.start()
            cron_scheduler.start()
            recovery.start()
            sharing.start()
            try:
                yield
            finally:
                await cron_scheduler.close()  # before the runs stop: both start runs
                await recovery.close()
                await sharing.close()
                await sweeper.close()
                await runs.close()
                await webhooks.close()
                app.state.services = None
                app.state.metrics = None
                app.state.sweeper = None
                app.state.cron_scheduler = None
                app.state.recovery = None
                if tracing is not None and tracer_provider is None:
                    tracing.shutdown()

    app = FastAPI(
        title="orecast",
        description="The orecast analyst (and any LangGraph graph) behind the LangGraph Agent Server API.",
        version="0.1.0",
        lifespan=lifespan,
        openapi_tags=TAGS,
    )
    app.state.api_keys = api_keys
    app.state.custom_auth = custom_auth
    app.state.services = None
    app.state.metrics = None
    app.state.sweeper = None
    app.state.cron_scheduler = None
    app.state.recovery = None
    app.state.web_dir = settings.web_dir
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(HttpMetrics)  # outermost but CORS: a 413 is counted too
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
            # the SDKs read the run id from Content-Location, reconnect to Location and page a
            # search with X-Pagination-Next (as langgraph-api exposes them)
            expose_headers=["Content-Location", "Location", "X-Pagination-Total", "X-Pagination-Next"],
        )
    return app
