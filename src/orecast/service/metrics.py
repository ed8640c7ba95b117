"""Prometheus metrics of one service: HTTP requests, runs, time to first token, tool calls, checkpoint
operations' latency, the connection pool's use and the database's size, served at `GET /metrics` (see docs/service.md, "Metrics").

Every metric lives in the `CollectorRegistry` the lifespan makes for its app, never in prometheus_client's
global one, so two apps in one process (tests) count apart. With `PROMETHEUS_MULTIPROC_DIR` set before
the process starts, prometheus_client keeps the values in files there and a scrape merges every
worker's files (`MultiProcessCollector`), so any worker answers for all.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphInterrupt
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orecast.checkpoint import OrecastCheckpointer
from orecast.checkpoint.observe import observe, pool_usage
from orecast.checkpoint.sweep import SweepResult, sweep_status

# Runs and tool calls last from milliseconds (the offline analyst) to minutes (a model's long answer).
RUN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600)
TOOL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
# A checkpoint put or read takes a fraction of a millisecond (SQLite) to tens of milliseconds.
CHECKPOINT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
DATABASE_CACHE_SECONDS = 30.0


class DatabaseSize(Collector):
    """The store's rows and bytes per table as gauges, from `saver.astats()` (what `orecast db status`
    prints). Counting rows is a scan, so the figures are refreshed at most every `ttl` seconds."""

    def __init__(self, saver: OrecastCheckpointer, ttl: float = DATABASE_CACHE_SECONDS) -> None:
        self.saver = saver
        self.ttl = ttl
        self._stats: dict[str, Any] | None = None
        self._at = float("-inf")

    async def refresh(self) -> None:
        if time.monotonic() - self._at >= self.ttl:
            self._stats = await self.saver.astats()
            self._at = time.monotonic()

    def collect(self) -> Iterator[Metric]:
        if self._stats is None:
            return
        rows = GaugeMetricFamily("orecast_database_rows", "Rows per table of the store", labels=["table"])
        size = GaugeMetricFamily(
            "orecast_database_table_bytes", "Bytes per table, where the dialect tells", labels=["table"]
        )
        for table, info in self._stats["tables"].items():
            rows.add_metric([table], info["rows"])
            if "bytes" in info:
                size.add_metric([table], info["bytes"])
        yield rows
        yield size
        if "bytes" in self._stats:
            yield GaugeMetricFamily(
                "orecast_database_bytes", "Size of the store on disk", value=self._stats["bytes"]
            )


class SweepStatus(Collector):
    """When a thread sweep last succeeded, from the store's record of sweeps (`sweep_runs`): whichever
    replica swept, every one reports it, so an alert sees the deployment's sweep, not one process's.
    Read at most every `ttl` seconds; absent until a sweep has succeeded."""

    def __init__(self, saver: OrecastCheckpointer, ttl: float = DATABASE_CACHE_SECONDS) -> None:
        self.saver = saver
        self.ttl = ttl
        self._last_success: float | None = None
        self._at = float("-inf")

    async def refresh(self) -> None:
        if time.monotonic() - self._at >= self.ttl:
            success = (await sweep_status(self.saver))["last_success_at"]
            self._last_success = None if success is None else success.timestamp()
            self._at = time.monotonic()

    def forget(self) -> None:
        """Read the record again at the next scrape (a sweep of this process just ended)."""
        self._at = float("-inf")

    def collect(self) -> Iterator[Metric]:
        if self._last_success is not None:
            yield GaugeMetricFamily(
                "orecast_sweep_last_success_timestamp_seconds",
                "Unix time the last successful thread sweep (any replica, or `orecast db sweep`) ended",
                value=self._last_success,
            )


class ServiceMetrics:
    """The metrics one app records, in its own `registry`."""

    def __init__(
        self, registry: CollectorRegistry, saver: OrecastCheckpointer, *,
        database_seconds: float = DATABASE_CACHE_SECONDS,
    ) -> None:
        self.registry = registry
        self.saver = saver
        self.database = DatabaseSize(saver, database_seconds)
        registry.register(self.database)
        self.sweep = SweepStatus(saver, database_seconds)
        registry.register(self.sweep)
        self.requests = Counter(
            "orecast_http_requests", "HTTP requests answered", ["method", "route", "status"],
            registry=registry,
        )
        self.request_seconds = Histogram(
            "orecast_http_request_duration_seconds", "Time to answer a request, to its last byte",
            ["method", "route"], registry=registry,
        )
        self.runs = Counter("orecast_runs", "Runs ended, by final status", ["status"], registry=registry)
        self.runs_taken_over = Counter(
            "orecast_runs_taken_over", "Runs whose process died that this process took over and went on with",
            registry=registry,
        )
        self.run_seconds = Histogram(
            "orecast_run_duration_seconds", "Runs from admission to end", ["status"],
            buckets=RUN_BUCKETS, registry=registry,
        )
        self.first_token_seconds = Histogram(
            "orecast_run_first_token_seconds",
            "From a run's admission to its model's first token (or whole answer, when it does not stream)",
            buckets=RUN_BUCKETS, registry=registry,
        )
        self.tool_calls = Counter(
            "orecast_tool_calls", "Tool calls ended, by tool and status", ["tool", "status"],
            registry=registry,
        )
        self.tool_seconds = Histogram(
            "orecast_tool_call_duration_seconds", "Tool calls' duration", ["tool", "status"],
            buckets=TOOL_BUCKETS, registry=registry,
        )
        self.checkpoint_seconds = Histogram(
            "orecast_checkpoint_operation_duration_seconds",
            "The checkpointer's LangGraph operations (put, put_writes, get_tuple, list), in the saver",
            ["operation"], buckets=CHECKPOINT_BUCKETS, registry=registry,
        )
        # Per process; with PROMETHEUS_MULTIPROC_DIR the live workers' values are summed.
        self.pool_connections = Gauge(
            "orecast_database_pool_connections", "The store's connections by state (in_use, idle)",
            ["state"], multiprocess_mode="livesum", registry=registry,
        )
        self.pool_max = Gauge(
            "orecast_database_pool_max_connections", "Connections the store's pool may open",
            multiprocess_mode="livesum", registry=registry,
        )
        self.pool_waiting = Gauge(
            "orecast_database_pool_waiting", "Callers waiting for a connection of the store",
            multiprocess_mode="livesum", registry=registry,
        )
        # Runs of this process holding one of its `jobs_per_worker` slots, and waiting for one (pending):
        # a queue that stays long asks for more replicas (or slots).
        self.runs_in_process = Gauge(
            "orecast_runs_in_process",
            "Runs executing (each holds one of its process's slots) and queued (pending until one is free)",
            ["state"], multiprocess_mode="livesum", registry=registry,
        )
        self._runs_executing = self.runs_in_process.labels("executing")
        self._runs_queued = self.runs_in_process.labels("queued")
        self.threads_expired = Counter(
            "orecast_sweep_threads_expired", "Threads this process's sweeps expired, by strategy",
            ["strategy"], registry=registry,
        )
        # A metric's child per label values, looked up once: `labels()` takes a lock and checks its
        # arguments, several microseconds a call, and a turn records a dozen figures.
        self._checkpoint_children: dict[str, Any] = {}
        self._request_children: dict[tuple[str, str, str], tuple[Any, Any]] = {}
        self._pool_in_use = self.pool_connections.labels("in_use")
        self._pool_idle = self.pool_connections.labels("idle")
        self._pool_last: dict[str, int] | None = None
        self.update_pool()
        observe(saver, timing=self.checkpoint_operation)

    def checkpoint_operation(self, operation: str, seconds: float) -> None:
        child = self._checkpoint_children.get(operation)
        if child is None:
            child = self._checkpoint_children[operation] = self.checkpoint_seconds.labels(operation)
        child.observe(seconds)
        self.update_pool()

    def request_answered(self, method: str, route: str, status: str, seconds: float) -> None:
        """An HTTP request answered (`route` is its template: a bounded set of label values)."""
        key = (method, route, status)
        children = self._request_children.get(key)
        if children is None:
            children = self._request_children[key] = (
                self.requests.labels(method, route, status), self.request_seconds.labels(method, route)
            )
        children[0].inc()
        children[1].observe(seconds)

    def update_pool(self) -> None:
        """Set the pool gauges from the saver's pool: on each scrape, and after each checkpoint
        operation so an idle worker's files (multi-worker) still hold its last figures. Unchanged
        figures are not set again."""
        usage = pool_usage(self.saver)
        if usage is None or usage == self._pool_last:
            return
        self._pool_last = usage
        self._pool_in_use.set(usage["in_use"])
        self._pool_idle.set(usage["idle"])
        self.pool_max.set(usage["max"])
        self.pool_waiting.set(usage["waiting"])

    async def exposition(self) -> bytes:
        """The text a scrape gets: this process's registry, or every worker's files under
        `PROMETHEUS_MULTIPROC_DIR`, plus the database gauges."""
        await self.database.refresh()
        self.update_pool()
        await self.sweep.refresh()
        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        MultiProcessCollector(merged)
        merged.register(self.database)
        merged.register(self.sweep)
        return generate_latest(merged)

    def sweep_done(self, result: SweepResult) -> None:
        """A sweep of this process ended: count what it expired, and read the record afresh."""
        self.threads_expired.labels("delete").inc(len(result.deleted))
        self.threads_expired.labels("keep_latest").inc(len(result.pruned))
        self.sweep.forget()

    def run_slots_changed(self, executing: int, waiting: int) -> None:
        self._runs_executing.set(executing)
        self._runs_queued.set(waiting)

    def run_ended(self, status: str, seconds: float | None) -> None:
        """A run ended with `status`; `seconds` since its admission (None: it never ran)."""
        self.runs.labels(status).inc()
        if seconds is not None:
            self.run_seconds.labels(status).observe(seconds)

    def observer(self, started: float) -> RunObserver:
        return RunObserver(self, started)


class RunObserver(BaseCallbackHandler):
    """A LangChain callback on one run: its tool calls and its model's first token. Added to the run's
    config, it is inherited by every model and tool the graph calls, subagents included."""

    run_inline = True  # called in the event loop, not a thread: it only records numbers
    # Every node of a graph is a chain: told nothing of them (LangChain calls tools' events "agent"
    # events, so those stay on), a run's nodes cost no callback of this handler.
    ignore_chain = True
    ignore_retriever = True
    ignore_custom_event = True
    ignore_retry = True

    def __init__(self, metrics: ServiceMetrics, started: float) -> None:
        self.metrics = metrics
        self.started = started
        self.first_token: float | None = None
        self._tools: dict[UUID, tuple[str, float]] = {}

    def _token(self) -> None:
        if self.first_token is None:
            self.first_token = time.perf_counter() - self.started
            self.metrics.first_token_seconds.observe(self.first_token)

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self._token()

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self._token()

    def on_tool_start(
        self, serialized: dict[str, Any], input_str: str, *, run_id: UUID, **kwargs: Any
    ) -> None:
        name = (serialized or {}).get("name") or kwargs.get("name") or "unknown"
        self._tools[run_id] = (str(name), time.perf_counter())

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        # a tool may answer its own failure as a ToolMessage(status="error") instead of raising
        status = output.status if isinstance(output, ToolMessage) else "success"
        self._tool_done(run_id, status)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        # an interrupt asks a human; the call runs again once answered
        self._tool_done(run_id, "interrupted" if isinstance(error, GraphInterrupt) else "error")

    def _tool_done(self, run_id: UUID, status: str) -> None:
        started = self._tools.pop(run_id, None)
        if started is None:
            return
        tool, at = started
        self.metrics.tool_calls.labels(tool, status).inc()
        self.metrics.tool_seconds.labels(tool, status).observe(time.perf_counter() - at)


class HttpMetrics:
    """Counts every HTTP request by method, route template (`/threads/{thread_id}`, not the raw path:
    bounded label values) and status, and times it to its last byte. Records nothing before the
    lifespan has made the app's metrics."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # an exception before the response started is answered 500 by the server

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            metrics: ServiceMetrics | None = getattr(scope["app"].state, "metrics", None)
            if metrics is not None:
                # FastAPI's router puts the matched route in the (shared) scope
                route = getattr(scope.get("route"), "path", None) or "unmatched"
                metrics.request_answered(scope["method"], route, str(status), time.perf_counter() - started)
