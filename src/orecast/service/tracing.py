"""OpenTelemetry traces of the service's runs, off unless the standard `OTEL_*` variables ask for them
(see docs/operations.md, "Tracing").

A run is one span; under it a span per graph node (subagents' nodes included) and per tool call, from
LangChain callbacks, and a span per checkpoint operation with a span per SQL statement under it, from
the saver's observer hooks (`orecast.checkpoint.observe`). opentelemetry is imported only here and
only when tracing is on: `pip install 'orecast[otel]'` brings the SDK and the OTLP exporter.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphInterrupt

from orecast.checkpoint import OrecastCheckpointer
from orecast.checkpoint.observe import observe

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

log = logging.getLogger(__name__)

SERVICE_NAME = "orecast"
INSTRUMENTATION = "orecast.service"
# Node and tool arguments can hold a user's text: spans carry names and ids, not values.
RUN_ATTRIBUTES = ("thread_id", "run_id", "assistant_id", "graph_id")


def exporter_names(environ: Mapping[str, str]) -> list[str]:
    """The exporters the standard variables ask for: `OTEL_TRACES_EXPORTER` (`otlp`, `console`, `none`,
    comma separated), or `otlp` when only an OTLP endpoint is set; none when `OTEL_SDK_DISABLED=true`."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = environ.get("OTEL_TRACES_EXPORTER")
    if names is None:
        endpoint = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        return ["otlp"] if endpoint else []
    return [n for n in (name.strip().lower() for name in names.split(",")) if n and n != "none"]


def provider_from_env(environ: Mapping[str, str] | None = None) -> TracerProvider | None:
    """A tracer provider exporting where the `OTEL_*` variables say, or None when they ask for no
    traces. The SDK itself reads the rest: `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
    `OTEL_TRACES_SAMPLER`, `OTEL_EXPORTER_OTLP_*` (endpoint, headers, timeout), `OTEL_BSP_*`."""
    environ = os.environ if environ is None else environ
    names = exporter_names(environ)
    if not names:
        return None
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        log.warning("OTEL_* variables ask for traces but opentelemetry-sdk is missing: pip install 'orecast[otel]'")
        return None
    defaults = {} if environ.get("OTEL_SERVICE_NAME") else {"service.name": SERVICE_NAME}
    provider = TracerProvider(resource=Resource.create(defaults))
    for name in names:
        if name == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            provider.add_span_processor(BatchSpanProcessor(_otlp_exporter(environ)))
        else:
            raise ValueError(f"OTEL_TRACES_EXPORTER: unknown exporter {name!r} (otlp, console or none)")
    return provider


def _otlp_exporter(environ: Mapping[str, str]) -> Any:
    protocol = (
        environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    )
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise ValueError(
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs opentelemetry-exporter-otlp-proto-grpc; "
                "orecast[otel] ships http/protobuf"
            ) from None
        return OTLPSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


class Tracing:
    """The spans of one app, from its own tracer provider (not OpenTelemetry's global one)."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.tracer: Tracer = provider.get_tracer(INSTRUMENTATION)

    def instrument(self, saver: OrecastCheckpointer) -> None:
        """Checkpoint operations and SQL statements as spans, inside a traced run only: the store's
        other work (sweeps, thread listings) would otherwise be a stream of parentless spans."""
        observe(saver, span=self._operation, statement=self._statement)

    @contextlib.contextmanager
    def _operation(self, name: str) -> Iterator[None]:
        from opentelemetry import trace

        if not trace.get_current_span().is_recording():
            yield
            return
        if name == "list":
            # a listing spans the caller's work between items: not made current, so nothing the
            # caller does meanwhile nests under it
            span = self.tracer.start_span(f"checkpoint {name}")
            try:
                yield
            finally:
                span.end()
            return
        with self.tracer.start_as_current_span(f"checkpoint {name}"):
            yield

    @contextlib.contextmanager
    def _statement(self, dialect: str, sql: str) -> Iterator[None]:
        from opentelemetry import trace

        if not trace.get_current_span().is_recording():
            yield
            return
        words = sql.split(None, 1)
        attributes = {"db.system": dialect, "db.statement": sql}  # the text only: parameters are bound
        with self.tracer.start_as_current_span(
            f"SQL {words[0].upper() if words else ''}".strip(), kind=trace.SpanKind.CLIENT, attributes=attributes
        ):
            yield

    def start_run(self, configurable: Mapping[str, Any]) -> Span:
        """The span of one run, to end with `end_run`; `current` makes it the parent of what follows."""
        attributes = {
            f"orecast.{key}": str(configurable[key]) for key in RUN_ATTRIBUTES if configurable.get(key) is not None
        }
        return self.tracer.start_span("run", attributes=attributes)

    @staticmethod
    def current(span: Span) -> contextlib.AbstractContextManager[Any]:
        """`span` is the current span inside the block, and of the tasks created there."""
        from opentelemetry import trace

        return trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False)

    @staticmethod
    def end_run(span: Span, status: str, error: str | None) -> None:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("orecast.status", status)
        if status == "error":
            span.set_status(Status(StatusCode.ERROR, (error or "")[:200]))
        span.end()

    def callbacks(self, run_span: Span) -> SpanCallbacks:
        return SpanCallbacks(self.tracer, run_span)

    def shutdown(self) -> None:
        self.provider.shutdown()  # flushes the spans still queued


class SpanCallbacks(BaseCallbackHandler):
    """Spans for a run's graph nodes and tool calls, each under its nearest traced ancestor (a node
    under the run or a subgraph's node, a tool call under the node that called it)."""

    run_inline = True

    def __init__(self, tracer: Tracer, run_span: Span) -> None:
        self.tracer = tracer
        self.run_span = run_span
        self._parents: dict[UUID, UUID | None] = {}
        self._spans: dict[UUID, Span] = {}

    def _parent_span(self, parent_run_id: UUID | None) -> Span:
        while parent_run_id is not None:
            if parent_run_id in self._spans:
                return self._spans[parent_run_id]
            parent_run_id = self._parents.get(parent_run_id)
        return self.run_span

    def _start(self, name: str, run_id: UUID, parent_run_id: UUID | None, attributes: dict[str, Any]) -> None:
        from opentelemetry import trace

        context = trace.set_span_in_context(self._parent_span(parent_run_id))
        self._spans[run_id] = self.tracer.start_span(name, context=context, attributes=attributes)

    def _end(self, run_id: UUID, error: BaseException | None = None, status: str | None = None) -> None:
        self._parents.pop(run_id, None)
        span = self._spans.pop(run_id, None)
        if span is None:
            return
        from opentelemetry.trace import Status, StatusCode

        if isinstance(error, GraphInterrupt):
            span.set_attribute("orecast.status", "interrupted")
        elif error is not None:
            span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
        elif status == "error":
            span.set_status(Status(StatusCode.ERROR, "the tool answered an error"))
        span.end()

    def on_chain_start(
        self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
        parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None, **kwargs: Any,
    ) -> None:
        self._parents[run_id] = parent_run_id
        node = (metadata or {}).get("langgraph_node")
        # a node's own run is named after it; the runnables inside it inherit its metadata
        if node is not None and kwargs.get("name") == node:
            attributes = {"langgraph.node": str(node)}
            if (step := (metadata or {}).get("langgraph_step")) is not None:
                attributes["langgraph.step"] = int(step)
            if ns := (metadata or {}).get("langgraph_checkpoint_ns"):
                attributes["langgraph.checkpoint_ns"] = str(ns)
            self._start(f"node {node}", run_id, parent_run_id, attributes)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)

    def on_tool_start(
        self, serialized: dict[str, Any] | None, input_str: str, *, run_id: UUID,
        parent_run_id: UUID | None = None, **kwargs: Any,
    ) -> None:
        self._parents[run_id] = parent_run_id
        name = str((serialized or {}).get("name") or kwargs.get("name") or "unknown")
        self._start(f"tool {name}", run_id, parent_run_id, {"orecast.tool": name})

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, status=output.status if isinstance(output, ToolMessage) else None)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)
