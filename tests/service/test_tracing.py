"""OpenTelemetry: a real run through the service, exported to memory, is one trace: the run, its graph
nodes, the tool call under the node that made it, the checkpoint operations and their SQL statements."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from orecast.service.tracing import exporter_names, provider_from_env
from tests.service.conftest import ECHO, Server, say, settings_for


@pytest.fixture(scope="module")
def exported(db_url: str) -> Iterator[tuple[Server, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    running = Server.start(settings_for(db_url), tracer_provider=provider)
    yield running, exporter
    running.stop()
    provider.shutdown()


def by_id(spans: list[ReadableSpan]) -> dict[int, ReadableSpan]:
    return {span.context.span_id: span for span in spans}


def ancestors(span: ReadableSpan, index: dict[int, ReadableSpan]) -> list[str]:
    names = []
    while span.parent is not None and span.parent.span_id in index:
        span = index[span.parent.span_id]
        names.append(span.name)
    return names


async def test_a_run_is_one_trace_down_to_sql(exported, db_url: str) -> None:
    server, exporter = exported
    client = server.client()
    tid = (await client.threads.create())["thread_id"]
    exporter.clear()
    answer = await client.runs.wait(tid, "orecast", input=say("铁矿石现在多少钱？"))
    tools = [m["name"] for m in answer["messages"] if m["type"] == "tool"]
    assert tools, "the analyst answers a price question with a tool"

    spans = exporter.get_finished_spans()
    runs = [s for s in spans if s.name == "run"]
    assert len(runs) == 1
    run = runs[0]
    assert run.parent is None
    assert run.attributes["orecast.thread_id"] == tid
    assert run.attributes["orecast.assistant_id"]
    assert run.attributes["orecast.status"] == "success"
    trace_id = run.context.trace_id
    traced = [s for s in spans if s.context.trace_id == trace_id]
    index = by_id(traced)

    nodes = [s for s in traced if s.name.startswith("node ")]
    assert nodes and all("run" in ancestors(s, index) for s in nodes)
    assert any(s.parent.span_id == run.context.span_id for s in nodes)

    tool_spans = [s for s in traced if s.name.startswith("tool ")]
    assert sorted(s.attributes["orecast.tool"] for s in tool_spans) == sorted(tools)
    for span in tool_spans:
        chain = ancestors(span, index)
        assert chain[0].startswith("node ") and chain[-1] == "run", chain  # run → node → tool

    puts = [s for s in traced if s.name == "checkpoint put"]
    assert puts and all(ancestors(s, index)[-1] == "run" for s in puts)
    statements = [s for s in traced if s.name.startswith("SQL ")]
    dialect = "sqlite" if db_url.startswith("sqlite") else "postgresql"
    assert statements and {s.attributes["db.system"] for s in statements} == {dialect}
    assert not any(index[s.parent.span_id].name.startswith("SQL ") for s in statements)
    under_put = [s for s in statements if index[s.parent.span_id].name == "checkpoint put"]
    assert under_put and all(ancestors(s, index)[-1] == "run" for s in under_put)  # run → put → SQL
    assert all("INSERT" in s.attributes["db.statement"].upper() or "SELECT" in s.attributes["db.statement"].upper()
               or "UPDATE" in s.attributes["db.statement"].upper() for s in under_put)
    # each span ended, within its run
    assert all(s.end_time is not None and s.start_time >= run.start_time for s in traced)


async def test_a_failed_run_is_an_error_span(exported) -> None:
    server, exporter = exported
    client = server.client()
    tid = (await client.threads.create())["thread_id"]
    exporter.clear()
    await client.runs.wait(tid, ECHO, input=say("x", delay="soon"), raise_error=False)
    run = next(s for s in exporter.get_finished_spans() if s.name == "run")
    assert run.attributes["orecast.status"] == "error"
    assert not run.status.is_ok


async def test_work_outside_runs_makes_no_spans(exported) -> None:
    server, exporter = exported
    client = server.client()
    exporter.clear()
    tid = (await client.threads.create())["thread_id"]
    await client.threads.get_history(tid)
    assert exporter.get_finished_spans() == ()


def test_the_standard_variables_turn_tracing_on() -> None:
    assert exporter_names({}) == []
    assert exporter_names({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}) == ["otlp"]
    assert exporter_names({"OTEL_TRACES_EXPORTER": "console,otlp"}) == ["console", "otlp"]
    assert exporter_names({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}) == []
    assert exporter_names({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"}) == []
    assert provider_from_env({}) is None
    provider = provider_from_env({"OTEL_TRACES_EXPORTER": "console"})
    assert provider is not None and provider.resource.attributes["service.name"] == "orecast"
    provider.shutdown()
    with pytest.raises(ValueError, match="unknown exporter 'zipkin'"):
        provider_from_env({"OTEL_TRACES_EXPORTER": "zipkin"})
