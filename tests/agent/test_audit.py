"""The tool-call audit from real runs of the analyst, on every backend: calls that ran (ok), failed (error),
were rejected or edited by a human, cancelled, and run again after a crash (attempt 2)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime

from orecast.agent import AgentSettings, build_agent, decisions
from orecast.agent.audit import ToolCallAuditor, tool_call_auditing
from orecast.agent.offline import OfflineAnalyst
from orecast.agent.tools import dumps, latest_price
from orecast.checkpoint import open_checkpointer
from tests.agent.conftest import run_turn
from tests.agent.test_crash_resume import ask_and_kill_mid_tools, resume
from tests.checkpoint.conftest import raw_sql

PRICE_QUESTION = "铁矿石现在多少钱？"


def by_tool(rows: list[Any], tool: str) -> list[Any]:
    return [r for r in rows if r.tool == tool]


async def checkpoints(saver: Any, thread_id: str) -> set[tuple[str, str]]:
    return {
        (c.config["configurable"]["checkpoint_ns"], c.config["configurable"]["checkpoint_id"])
        async for c in saver.alist({"configurable": {"thread_id": thread_id}})
    }


async def tool_result_stored(saver: Any, thread_id: str) -> bool:
    """Whether a tool call's result is stored: a ToolMessage written by a task of the latest checkpoint."""
    tup = await saver.aget_tuple({"configurable": {"thread_id": thread_id}})
    written = [v for _task, _channel, value in (tup.pending_writes if tup else [])
               for v in (value if isinstance(value, list) else [value])]
    return any(isinstance(v, ToolMessage) for v in written)


async def test_calls_errors_and_human_decisions(store_url: str, settings: AgentSettings) -> None:
    thread = str(uuid.uuid4())
    async with open_checkpointer(store_url) as saver:
        agent = build_agent(saver, model=OfflineAnalyst(), settings=settings)
        turn = await run_turn(agent, thread, PRICE_QUESTION)
        await run_turn(agent, thread, "backtest iron ore futures from 2010")
        asked = await run_turn(agent, thread, "导出报告")
        await run_turn(agent, thread, decisions({"type": "reject", "message": "not now"}))
        asked_again = await run_turn(agent, thread, "导出报告")
        edited_args = {**asked_again.approvals[0].actions[0]["args"], "title": "Weekly ore note", "filename": "weekly"}
        await run_turn(agent, thread, decisions({"type": "edit", "edited_action": {"name": "export_report", "args": edited_args}}))

        rows = list(reversed(await saver.aaudit_tool_calls(thread_id=thread, limit=None)))
        stored = await checkpoints(saver, thread)

    prices = by_tool(rows, "latest_price")
    assert [(r.call_id, r.args) for r in prices] == [(c.id, c.args) for c in turn.calls if c.name == "latest_price"]
    for row in prices:
        assert row.status == "ok" and row.attempt == 1 and row.error is None
        assert row.result == next(r.content for r in turn.results if r.id == row.call_id)[: len(row.result)]
        assert row.duration_ms > 0 and row.ended_at >= row.started_at
    # Every row names the checkpoint its call ran from.
    assert all((r.checkpoint_ns, r.checkpoint_id) in stored for r in rows)

    (failed,) = [r for r in rows if r.status == "error"]
    assert failed.tool == "backtest_forecast" and "2010" in failed.error and failed.result is None

    rejected, edited = by_tool(rows, "export_report")
    assert rejected.status == "rejected" and rejected.call_id == asked.call("export_report").id
    assert "not now" in rejected.error and rejected.duration_ms == 0
    assert rejected.args == asked.approvals[0].actions[0]["args"]
    assert edited.status == "edited" and edited.call_id == asked_again.call("export_report").id
    assert edited.args == edited_args  # the arguments the call ran with, not the model's
    assert (settings.reports_dir / "weekly.md").exists()
    assert [r.status for r in rows].count("ok") == len(rows) - 3


async def test_a_raising_tool_is_an_error_and_the_run_fails(store_url: str, settings: AgentSettings) -> None:
    def broken_latest_price(series: str) -> str:
        raise RuntimeError(f"price feed down for {series}")

    tool = StructuredTool.from_function(broken_latest_price, name="latest_price", description="latest price")
    thread = str(uuid.uuid4())
    async with open_checkpointer(store_url) as saver:
        agent = build_agent(saver, model=OfflineAnalyst(), extra_tools=[tool], settings=settings)
        with pytest.raises(RuntimeError, match="price feed down"):
            await run_turn(agent, thread, PRICE_QUESTION)
        for _ in range(100):  # a cancelled sibling's row is finished by a shielded write of its own
            rows = await saver.aaudit_tool_calls(thread_id=thread)
            if "running" not in {r.status for r in rows}:
                break
            await asyncio.sleep(0.05)
    # The analyst may ask for several prices at once: when one call raises, LangGraph cancels the
    # others, and one that had not raised yet by then is recorded as cancelled.
    assert "error" in {r.status for r in rows} and {r.status for r in rows} <= {"error", "cancelled"}
    assert all(r.error.startswith("RuntimeError: price feed down for ") for r in rows if r.status == "error")


async def test_cancelled_call_then_attempt_two(store_url: str, settings: AgentSettings) -> None:
    slow = {"series": "iron_ore_wb_monthly"}
    runs: list[str] = []

    async def gated_latest_price(series: str) -> str:
        runs.append(series)
        if slow.get("series") == series:
            await asyncio.sleep(120)
        return dumps(latest_price(series))

    tool = StructuredTool.from_function(coroutine=gated_latest_price, name="latest_price", description="latest price")
    thread = str(uuid.uuid4())
    async with open_checkpointer(store_url) as saver:
        agent = build_agent(saver, model=OfflineAnalyst(), extra_tools=[tool], settings=settings)
        task = asyncio.create_task(run_turn(agent, thread, PRICE_QUESTION))
        for _ in range(300):
            # The fast call's result is stored (its task's write, a ToolMessage, pending on the latest
            # stored checkpoint) and the slow call is running. The fast call's `ok` row alone is not
            # enough: it is written before the call's task ends, and a task cancelled before it ended
            # runs again. Nor is a task with a result in the state: with async durability the latest
            # stored checkpoint may still be the turn's input, whose `__start__` task has one.
            rows = await saver.aaudit_tool_calls(thread_id=thread)
            if {r.status for r in rows} == {"ok", "running"} and await tool_result_stored(saver, thread):
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail(f"the slow call never got going: {rows}")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(100):  # the cancelled call's row is finished by a shielded write
            (running,) = [r for r in await saver.aaudit_tool_calls(thread_id=thread) if r.args == slow]
            if running.status == "cancelled":
                break
            await asyncio.sleep(0.05)
        assert running.status == "cancelled" and running.attempt == 1 and running.duration_ms > 0

        slow.clear()
        await run_turn(agent, thread, None)  # resume the unfinished turn
        rows = list(reversed(await saver.aaudit_tool_calls(thread_id=thread)))
    again = [r for r in rows if r.call_id == running.call_id]
    assert [(r.status, r.attempt) for r in again] == [("cancelled", 1), ("ok", 2)]
    assert runs.count("iron_ore_wb_monthly") == 2 and runs.count("dce_iron_ore_daily") == 1
    finished = [r for r in rows if r.call_id != running.call_id]
    assert [(r.status, r.attempt) for r in finished] == [("ok", 1)]  # the finished call did not run again


async def test_subagent_calls_carry_their_namespace_and_run_id(tmp_path: Path, settings: AgentSettings) -> None:
    thread, run_id = str(uuid.uuid4()), uuid.uuid4()
    async with open_checkpointer(f"sqlite:///{tmp_path / 'a.sqlite3'}") as saver:
        agent = build_agent(saver, model=OfflineAnalyst(), settings=settings)
        # As the service starts a run: its id as the run's and in the metadata its subgraphs inherit.
        config = {"configurable": {"thread_id": thread}, "run_id": run_id, "metadata": {"run_id": str(run_id)}}
        await agent.ainvoke({"messages": [{"role": "user", "content": "哪种方法预测铁矿石最好？"}]}, config)
        rows = await saver.aaudit_tool_calls(thread_id=thread)
        stored = await checkpoints(saver, thread)
    (task,) = by_tool(rows, "task")
    assert task.checkpoint_ns == "" and task.args["subagent_type"] == "quant"
    quant = by_tool(rows, "backtest_forecast")
    assert len(quant) == 7 and {r.status for r in quant} == {"ok"}
    assert {r.checkpoint_ns for r in quant} == {next(iter({r.checkpoint_ns for r in quant}))}
    assert quant[0].checkpoint_ns.startswith("tools:")
    assert all((r.checkpoint_ns, r.checkpoint_id) in stored for r in rows)
    assert {r.run_id for r in rows} == {str(run_id)}
    # The subagent ran inside the `task` call: its calls fall within it.
    assert all(task.started_at <= r.started_at and r.ended_at <= task.ended_at for r in quant)


def _plain_graph(saver: Any) -> Any:
    """A hand-written LangGraph graph with a ToolNode (what `orecast serve --graph` serves)."""

    def lookup(benchmark: str) -> str:
        """The benchmark's price."""
        if benchmark == "bad":
            raise ValueError("no such benchmark")
        return f"{benchmark}: 101.5 USD/dmt"

    def model(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        if isinstance(last, HumanMessage):
            call = {"name": "lookup", "args": {"benchmark": last.content}, "id": f"call-{len(state['messages'])}"}
            return {"messages": [AIMessage("", tool_calls=[call])]}
        return {"messages": [AIMessage(f"done: {last.content}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([lookup], handle_tool_errors=True, **tool_call_auditing()))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=saver)


async def test_a_call_cancelled_while_its_row_is_written_is_cancelled(store_url: str) -> None:
    """LangGraph cancels a failing call's siblings; one cancelled while its `running` row is being
    written (stored, a commit whose answer had not come back yet) is finished as cancelled too, not
    left `running` for ever."""
    async with open_checkpointer(store_url) as saver:
        begin, stored, release = saver.abegin_tool_call, asyncio.Event(), asyncio.Event()

        async def slow_to_answer(**facts: Any) -> str:
            audit_id = await begin(**facts)
            stored.set()
            await release.wait()  # the row is stored; its answer is still on the way
            return audit_id

        saver.abegin_tool_call = slow_to_answer
        graph = _plain_graph(saver)
        run = asyncio.create_task(graph.ainvoke({"messages": [HumanMessage("62% Fe")]}, {"configurable": {"thread_id": "cut"}}))
        await asyncio.wait_for(stored.wait(), 30)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        release.set()
        for _ in range(200):
            (row,) = await saver.aaudit_tool_calls(thread_id="cut")
            if row.status != "running":
                break
            await asyncio.sleep(0.05)
    assert (row.tool, row.status, row.error, row.attempt) == ("lookup", "cancelled", "cancelled", 1)
    assert row.ended_at is not None and row.duration_ms > 0


async def test_a_call_cancelled_while_its_end_is_written_is_cancelled(store_url: str) -> None:
    """A call that succeeded, cancelled while its row's end is written: the row is finished (`ok`) and
    then the call's task gets its cancellation. The audit swallowed it: the call returned its result
    as if nobody had cancelled it (a run cancelled as a whole saw it only because LangGraph's own
    task around the call was cancelled too)."""
    async with open_checkpointer(store_url) as saver:
        end, writing, release = saver.aend_tool_call, asyncio.Event(), asyncio.Event()

        async def slow_to_end(audit_id: str, **fields: Any) -> None:
            writing.set()
            await release.wait()
            await end(audit_id, **fields)

        saver.aend_tool_call = slow_to_end
        config = {"configurable": {"thread_id": "cut-at-end"}}
        call = ToolCall(name="lookup", args={"benchmark": "62% Fe"}, id="call-1")
        runtime = ToolRuntime(
            state={}, context=None, config=config, stream_writer=lambda _: None, tool_call_id="call-1", store=None
        )
        request = ToolCallRequest(tool_call=call, tool=None, state={}, runtime=runtime)

        async def handler(_: ToolCallRequest) -> ToolMessage:
            return ToolMessage("62% Fe: 101.5 USD/dmt", tool_call_id="call-1")

        task = asyncio.create_task(ToolCallAuditor(saver).arun(request, handler))
        await asyncio.wait_for(writing.wait(), 30)
        task.cancel()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 30)
        (row,) = await saver.aaudit_tool_calls(thread_id="cut-at-end")  # written before the task ended
    assert (row.tool, row.status, row.result) == ("lookup", "ok", "62% Fe: 101.5 USD/dmt")


async def test_a_plain_tool_node_graph_is_audited(store_url: str) -> None:
    async with open_checkpointer(store_url) as saver:
        graph = _plain_graph(saver)
        config = {"configurable": {"thread_id": "plain"}}
        await graph.ainvoke({"messages": [HumanMessage("62% Fe")]}, config)
        await graph.ainvoke({"messages": [HumanMessage("bad")]}, config)
        rows = list(reversed(await saver.aaudit_tool_calls(thread_id="plain")))
    assert [(r.tool, r.args, r.status) for r in rows] == [
        ("lookup", {"benchmark": "62% Fe"}, "ok"), ("lookup", {"benchmark": "bad"}, "error")]
    assert rows[0].result == "62% Fe: 101.5 USD/dmt" and "no such benchmark" in rows[1].error


def test_the_sync_path_is_audited_too(tmp_path: Path) -> None:
    """`graph.invoke` from a worker thread, the saver's loop elsewhere: the sync wrapper writes the rows."""

    async def main() -> list[Any]:
        async with open_checkpointer(f"sqlite:///{tmp_path / 's.sqlite3'}") as saver:
            graph = _plain_graph(saver)
            config = {"configurable": {"thread_id": "sync"}}
            await asyncio.to_thread(graph.invoke, {"messages": [HumanMessage("62% Fe")]}, config)
            return await saver.aaudit_tool_calls(thread_id="sync")

    (row,) = asyncio.run(main())
    assert (row.tool, row.status, row.result) == ("lookup", "ok", "62% Fe: 101.5 USD/dmt")


async def test_an_audit_failure_never_breaks_the_call(
    sqlite_url: str, settings: AgentSettings, caplog: pytest.LogCaptureFixture
) -> None:
    thread = str(uuid.uuid4())
    async with open_checkpointer(sqlite_url) as saver:
        raw_sql(sqlite_url, "DROP TABLE tool_call_audit")  # every audit write now fails
        agent = build_agent(saver, model=OfflineAnalyst(), settings=settings)
        with caplog.at_level(logging.WARNING, logger="orecast.agent.audit"):
            turn = await run_turn(agent, thread, PRICE_QUESTION)
    assert turn.results and all(r.ok for r in turn.results)
    assert "108" in turn.text or "US$" in turn.text or turn.text
    assert "tool-call audit: could not write a row" in caplog.text


@pytest.mark.slow
def test_a_call_run_again_after_a_crash_is_attempt_two(store_url: str, tmp_path: Path) -> None:
    thread, log = str(uuid.uuid4()), tmp_path / "calls.log"
    ask_and_kill_mid_tools(store_url, thread, log)
    done = resume(store_url, thread, log)
    assert done.returncode == 0, done.stderr

    async def rows() -> list[Any]:
        async with open_checkpointer(store_url) as saver:
            return list(reversed(await saver.aaudit_tool_calls(thread_id=thread)))

    audited = asyncio.run(rows())
    rebar = [r for r in audited if r.args == {"series": "shfe_rebar_daily"}]
    # The killed attempt stays `running` (its process never came back); the re-run is attempt 2.
    assert [(r.status, r.attempt) for r in rebar] == [("running", 1), ("ok", 2)]
    assert rebar[0].call_id == rebar[1].call_id and rebar[0].ended_at is None
    ore = [r for r in audited if r.args == {"series": "iron_ore_wb_monthly"}]
    assert [(r.status, r.attempt) for r in ore] == [("ok", 1)]
