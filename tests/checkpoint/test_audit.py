"""The tool-call audit on every backend: the `tool_call_audit` table (attempts, timings, statuses, filters,
percentiles, delete/copy/prune/archive) and the calls read from the messages (`tool_calls` view, `atool_calls`)."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph

from orecast.checkpoint import ToolCallRecord, open_checkpointer
from orecast.checkpoint.archive import export_thread, import_archive, read_archive
from orecast.checkpoint.audit import RESULT_LIMIT, percentile
from orecast.checkpoint.stats import store_stats
from tests.checkpoint.conftest import dialect_of, raw_sql
from tests.checkpoint.graphs import TOOL_NAME, human, tool_loop


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def test_tool_calls_of_a_tool_loop(saver) -> None:
    graph = tool_loop(saver)
    for turn in range(3):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("audit"))
    state = (await graph.aget_state(cfg("audit"))).values["messages"]
    expected = [
        (call["id"], call["name"], call["args"])
        for message in state
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    ]
    results = {m.tool_call_id: m.content for m in state if isinstance(m, ToolMessage)}

    calls = await saver.atool_calls("audit")
    assert [(c.call_id, c.tool, c.args) for c in calls] == expected
    assert all(isinstance(c, ToolCallRecord) and c.tool == TOOL_NAME for c in calls)
    assert [c.result for c in calls] == [results[c.call_id] for c in calls]
    assert {c.status for c in calls} == {"success"}
    assert await saver.atool_calls("no-such-thread") == []


def _calls_graph(saver, messages_by_turn: list[list[Any]]):
    """A graph whose single node appends the given messages: tool calls without the tool loop."""
    turns = iter(messages_by_turn)

    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": next(turns)}

    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    return builder.compile(checkpointer=saver)


async def test_pending_error_and_ordered_parallel_calls(saver, store_url: str) -> None:
    parallel = AIMessage(
        "",
        id="ai-1",
        tool_calls=[
            {"name": "forecast_price", "args": {"series": "dce_iron_ore_daily", "horizon": 5}, "id": "c-b"},
            {"name": "describe_series", "args": {"series": "铁矿石", "to": 1, "from": 0}, "id": "c-a"},
            {"name": "make_chart", "args": {}, "id": "c-c"},
        ],
    )
    answers = [
        ToolMessage('{"mean": [101.5]}', tool_call_id="c-b", id="t-1"),
        ToolMessage("unknown series", tool_call_id="c-a", status="error", id="t-2"),
    ]
    graph = _calls_graph(saver, [[parallel], answers])
    await graph.ainvoke({"messages": [HumanMessage("forecast", id="h-1")]}, cfg("parallel"))
    await graph.ainvoke({"messages": [HumanMessage("go on", id="h-2")]}, cfg("parallel"))

    calls = await saver.atool_calls("parallel")
    # In the order the model wrote them, not sorted by id.
    assert [c.call_id for c in calls] == ["c-b", "c-a", "c-c"]
    assert [c.status for c in calls] == ["success", "error", "pending"]
    assert calls[0].result == '{"mean": [101.5]}'
    assert calls[1].result == "unknown series"
    assert calls[2].result is None and calls[2].args == {}
    # Arguments come back exactly, key order included (JSONB sorts keys; the store keeps the order).
    assert list(calls[1].args) == ["series", "to", "from"]
    assert calls[1].args["series"] == "铁矿石"

    # The view is plain SQL: the same audit without orecast.
    rows = raw_sql(store_url, "SELECT tool, status FROM tool_calls ORDER BY item_no, position")
    assert rows == [("forecast_price", "success"), ("describe_series", "error"), ("make_chart", "pending")]


# -- the audit table ---------------------------------------------------------------------------------


async def _call(saver, thread_id: str, call_id: str, tool: str, status: str, ms: float, **extra: Any) -> str:
    audit_id = await saver.abegin_tool_call(thread_id=thread_id, call_id=call_id, tool=tool, args=extra.pop("args", {}),
                                            **{k: extra.pop(k) for k in ("checkpoint_ns", "checkpoint_id", "run_id", "started_at") if k in extra})
    await saver.aend_tool_call(audit_id, status=status, duration_ms=ms, **extra)
    return audit_id


async def test_attempts_statuses_and_filters(saver, store_url: str) -> None:
    t0 = datetime.now(UTC) - timedelta(hours=2)
    running = await saver.abegin_tool_call(
        thread_id="a", call_id="c1", tool="latest_price", args={"series": "铁矿石", "n": 3}, checkpoint_ns="tools:x",
        checkpoint_id="cp-1", run_id="run-1", started_at=t0,
    )
    await _call(saver, "a", "c1", "latest_price", "ok", 12.5, result="x" * 5000)  # the re-run: attempt 2
    await _call(saver, "a", "c2", "export_report", "edited", 4.0, args={"title": "model"}, result="done")
    await _call(saver, "b", "c1", "latest_price", "error", 30.0, error="boom\x00")
    assert await saver.arecord_tool_call(thread_id="a", call_id="c3", tool="export_report", args={}, status="rejected",
                                         error="not now", once=True)
    # The same decision seen again (a restart re-runs the hook) is not a second row.
    assert await saver.arecord_tool_call(thread_id="a", call_id="c3", tool="export_report", args={}, status="rejected",
                                         once=True) is None

    rows = await saver.aaudit_tool_calls(thread_id="a")
    assert [(r.call_id, r.status, r.attempt) for r in rows] == [
        ("c3", "rejected", 1), ("c2", "edited", 1), ("c1", "ok", 2), ("c1", "running", 1)]
    first = rows[-1]
    assert first.audit_id == running and first.ended_at is None and first.duration_ms is None
    assert (first.checkpoint_ns, first.checkpoint_id, first.run_id) == ("tools:x", "cp-1", "run-1")
    assert first.args == {"series": "铁矿石", "n": 3} and first.started_at == t0
    rerun = rows[-2]
    assert len(rerun.result.encode()) <= RESULT_LIMIT and rerun.result.endswith("…")  # capped, marked
    assert rerun.duration_ms == 12.5 and rerun.ended_at >= rerun.started_at
    assert rows[0].error == "not now" and rows[0].duration_ms == 0

    # Filters: thread, tool, status, since, limit.
    assert [r.thread_id for r in await saver.aaudit_tool_calls(status="error")] == ["b"]
    assert (await saver.aaudit_tool_calls(status="error"))[0].error == "boom\ufffd"  # NUL kept out of the store
    assert {r.call_id for r in await saver.aaudit_tool_calls(tool="export_report")} == {"c2", "c3"}
    recent = await saver.aaudit_tool_calls(since=datetime.now(UTC) - timedelta(hours=1))
    assert len(recent) == 4 and running not in {r.audit_id for r in recent}
    assert len(await saver.aaudit_tool_calls(limit=2)) == 2
    with pytest.raises(ValueError, match="unknown tool-call status"):
        await saver.aaudit_tool_calls(status="pending")

    # Plain SQL sees the same rows.
    counted = raw_sql(store_url, "SELECT status, COUNT(*) FROM tool_call_audit GROUP BY status ORDER BY status")
    assert [(s, int(n)) for s, n in counted] == [
        ("edited", 1), ("error", 1), ("ok", 1), ("rejected", 1), ("running", 1)]


async def test_summary_percentiles_and_recent_failures(saver, store_url: str) -> None:
    durations = [5.0, 1.0, 9.0, 3.0, 7.0, 100.0, 2.0, 4.0, 6.0, 8.0]
    for n, ms in enumerate(durations):
        await _call(saver, "p", f"c{n}", "slow_tool", "error" if n < 2 else "ok", ms, error="bad" if n < 2 else None)
    await saver.abegin_tool_call(thread_id="p", call_id="c-run", tool="slow_tool", args={})
    await saver.arecord_tool_call(thread_id="p", call_id="c-rej", tool="slow_tool", args={}, status="rejected")
    await _call(saver, "q", "k", "fast_tool", "cancelled", 50.0, error="cancelled")

    summary = {s.tool: s for s in await saver.aaudit_summary()}
    slow = summary["slow_tool"]
    assert (slow.calls, slow.errors, slow.pending) == (12, 2, 1)
    ordered = sorted(durations)  # the running and the rejected call have no duration that counts
    assert slow.p50_ms == pytest.approx(percentile(ordered, 0.5)) == pytest.approx(5.5)
    assert slow.p95_ms == pytest.approx(percentile(ordered, 0.95)) == pytest.approx(59.05)
    if dialect_of(store_url) == "postgresql":  # the same figures as PostgreSQL's own percentile_cont
        ((p50, p95),) = raw_sql(store_url, """
            SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms),
                   percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms)
            FROM tool_call_audit WHERE tool = 'slow_tool' AND status NOT IN ('rejected', 'running')""")
        assert (slow.p50_ms, slow.p95_ms) == (pytest.approx(p50), pytest.approx(p95))
    assert slow.error_rate == pytest.approx(2 / 12)
    assert summary["fast_tool"].to_dict() == {
        "tool": "fast_tool", "calls": 1, "errors": 0, "pending": 0, "p50_ms": 50.0, "p95_ms": 50.0, "error_rate": 0.0}
    assert await saver.aaudit_summary(since=datetime.now(UTC) + timedelta(minutes=1)) == []

    # `db stats`: the contract the web operations page reads.
    stats = (await store_stats(saver, now=datetime.now(UTC))).to_dict()
    assert [t["tool"] for t in stats["tools"]] == ["slow_tool", "fast_tool"]
    assert set(stats["tools"][0]) == {"tool", "calls", "errors", "pending", "error_rate", "p50_ms", "p95_ms"}
    assert stats["tools"][0]["p95_ms"] == pytest.approx(59.05)
    failures = stats["recent_failures"]
    assert [f["status"] for f in failures] == ["cancelled", "error", "error"]  # newest first
    assert set(failures[0]) == {"thread_id", "checkpoint_ns", "checkpoint_id", "run_id", "tool", "status", "error", "started_at"}
    assert failures[0]["thread_id"] == "q" and datetime.fromisoformat(failures[0]["started_at"]).tzinfo is not None
    assert stats["tables"]["tool_call_audit"]["rows"] == 13


async def test_delete_copy_and_prune_of_a_thread(saver) -> None:
    graph = tool_loop(saver)
    for turn in range(3):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("kept"))
    await graph.ainvoke({"messages": [human(0)]}, cfg("gone"))
    for thread in ("kept", "gone"):
        await _call(saver, thread, "call-1", TOOL_NAME, "ok", 1.0)
        await _call(saver, thread, "call-2", TOOL_NAME, "ok", 2.0)

    await saver.acopy_thread("kept", "copy")
    copied = await saver.aaudit_tool_calls(thread_id="copy")
    assert [(r.call_id, r.duration_ms) for r in copied] == [
        (r.call_id, r.duration_ms) for r in await saver.aaudit_tool_calls(thread_id="kept")]
    assert len({r.audit_id for r in await saver.aaudit_tool_calls()}) == 6  # the copies have ids of their own

    await saver.adelete_thread("gone")
    assert await saver.aaudit_tool_calls(thread_id="gone") == []
    # Prune drops old checkpoints, not the record of what the agent did.
    (result,) = await saver.aprune(["kept"], keep_last=1)
    assert result.checkpoints_deleted > 0
    assert len(await saver.aaudit_tool_calls(thread_id="kept")) == 2


async def test_export_import_keeps_audit_rows(saver, tmp_path: Path) -> None:
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("arch"))
    await saver.abegin_tool_call(thread_id="arch", call_id="call-1-1", tool=TOOL_NAME, args={"turn": 0})
    await _call(saver, "arch", "call-1-1", TOOL_NAME, "ok", 3.25, args={"turn": 0}, result="101.5", checkpoint_ns="")
    await saver.arecord_tool_call(thread_id="arch", call_id="r", tool="export_report", args={"t": "x"}, status="rejected",
                                  error="no")
    summary = await export_thread(saver, "arch", tmp_path / "arch.gz")
    assert summary.tool_calls == 3
    with gzip.open(tmp_path / "arch.gz", "rt") as f:
        lines = [json.loads(line) for line in f]
    assert lines[0]["version"] == 2
    await import_archive(saver, read_archive(saver, tmp_path / "arch.gz"), thread_id="arch-2")

    def shape(rows):
        return [(r.call_id, r.tool, r.args, r.result, r.status, r.error, r.started_at, r.ended_at, r.duration_ms, r.attempt)
                for r in rows]

    source = await saver.aaudit_tool_calls(thread_id="arch")
    assert shape(await saver.aaudit_tool_calls(thread_id="arch-2")) == shape(source)
    # Into another dialect, times and all (SQLite from PostgreSQL and MySQL; SQLite into itself).
    async with open_checkpointer(f"sqlite:///{tmp_path / 'other.sqlite3'}") as other:
        await import_archive(other, read_archive(other, tmp_path / "arch.gz"))
        assert shape(await other.aaudit_tool_calls(thread_id="arch")) == shape(source)
    assert [r.attempt for r in source if r.call_id == "call-1-1"] == [2, 1]
    # Replacing a thread by its archive keeps the archive's rows (staged, copied, then swapped in).
    await _call(saver, "arch", "extra", TOOL_NAME, "ok", 1.0)
    await import_archive(saver, read_archive(saver, tmp_path / "arch.gz"), replace=True)
    assert shape(await saver.aaudit_tool_calls(thread_id="arch")) == shape(source)

    # A version 1 archive (its `tool_call` records read from the messages) still imports.
    old = [{**lines[0], "version": 1}]
    view_rows = [c.to_dict() for c in await saver.atool_calls("arch")]
    old += [ln for ln in lines[1:] if ln.get("type") not in ("tool_call", "end")]
    old += [{"type": "tool_call", **row} for row in view_rows]
    old.append({**lines[-1], "counts": {**lines[-1]["counts"], "tool_calls": len(view_rows)}})
    with gzip.open(tmp_path / "v1.gz", "wt") as f:
        f.writelines(json.dumps(line) + "\n" for line in old)
    await import_archive(saver, read_archive(saver, tmp_path / "v1.gz"), thread_id="from-v1")
    assert await saver.atool_calls("from-v1") == await saver.atool_calls("arch")
    assert await saver.aaudit_tool_calls(thread_id="from-v1") == []
