"""Runs through the SDK: streaming modes, background runs, interrupts and resume, stateless runs, cancel,
and reconnecting to a run's stream."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from langgraph_sdk.errors import NotFoundError

from tests.service.conftest import ECHO, NESTED, say


def contents(values: dict) -> list[str]:
    return [m["content"] for m in values["messages"]]


async def test_stream_modes(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    parts = [
        p async for p in client.runs.stream(
            tid, ECHO, input=say("hi"),
            stream_mode=["values", "updates", "messages-tuple", "custom", "debug", "messages"],
        )
    ]
    events = [p.event for p in parts]
    assert events[0] == "metadata" and parts[0].data["run_id"]
    assert {"values", "updates", "messages", "custom", "debug"} <= set(events)
    assert next(p.data for p in parts if p.event == "custom") == {"echoing": "hi"}
    assert next(p.data for p in parts if p.event == "updates")["echo"]["messages"][0]["content"] == "echo: hi"
    chunk, metadata = next(p.data for p in parts if p.event == "messages")
    assert chunk["content"] == "echo: hi" and metadata["langgraph_node"] == "echo"
    assert contents([p.data for p in parts if p.event == "values"][-1]) == ["hi", "echo: hi"]


async def test_stream_events_mode(client) -> None:
    """`events` is astream_events v2, beside the other modes, as the Agent Server streams it."""
    tid = (await client.threads.create())["thread_id"]
    parts = [
        p async for p in client.runs.stream(tid, ECHO, input=say("ev"), stream_mode=["events", "values"])
    ]
    events = [p.data for p in parts if p.event == "events"]
    kinds = {e["event"] for e in events}
    assert {"on_chain_start", "on_chain_end", "on_chain_stream"} <= kinds
    assert all({"run_id", "name", "parent_ids", "data", "metadata"} <= e.keys() for e in events)
    root = next(e for e in events if e["event"] == "on_chain_start" and not e["parent_ids"])
    assert root["data"]["input"]["messages"][0]["content"] == "ev"
    node = next(e for e in events if e["event"] == "on_chain_end" and e["name"] == "echo")
    assert node["data"]["output"]["messages"][0]["content"] == "echo: ev"
    assert not any(e["event"] == "on_chain_stream" and not e["parent_ids"] for e in events), "root chunks are modes"
    assert contents([p.data for p in parts if p.event == "values"][-1]) == ["ev", "echo: ev"]
    only = [p.event async for p in client.runs.stream(tid, ECHO, input=say("ev2"), stream_mode="events")]
    assert only[0] == "metadata" and set(only[1:]) == {"events"}


async def test_stream_subgraphs_names_the_namespace(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    parts = [
        p async for p in client.runs.stream(
            tid, NESTED, input=say("deep"), stream_mode=["updates"], stream_subgraphs=True
        )
    ]
    names = [p.event for p in parts]
    assert "updates" in names and any(n.startswith("updates|inner:") for n in names)
    flat = [p.event async for p in client.runs.stream(tid, NESTED, input=say("flat"), stream_mode="updates")]
    assert not any("|" in n for n in flat)


async def test_analyst_streams_tokens(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    parts = [
        p async for p in client.runs.stream(
            tid, "orecast", input=say("铁矿石现在多少钱？"), stream_mode=["messages-tuple", "messages"]
        )
    ]
    tokens = [p.data[0]["content"] for p in parts if p.event == "messages" and p.data[0]["type"] == "AIMessageChunk"]
    assert len(tokens) > 3 and "".join(tokens).strip()
    partial = [p.data[0] for p in parts if p.event == "messages/partial"]
    assert any(p.event == "messages/metadata" for p in parts)
    final = partial[-1]["content"]
    assert final.endswith(tokens[-1]) and len(final) >= len("".join(tokens[-3:])), "partials accumulate"
    # each partial is the message so far as a whole `ai` message, as langgraph-api sends it
    assert {p["type"] for p in partial} == {"ai"} and not any("tool_call_chunks" in p for p in partial)


async def test_background_run_join_list_get_delete(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(tid, ECHO, input=say("bg", delay=0.2), metadata={"k": "v"})
    assert run["status"] == "pending" and run["metadata"] == {"k": "v"}, "as langgraph-api answers a new run"
    assert run["thread_id"] == tid and run["multitask_strategy"] == "enqueue"
    joined = await client.runs.join(tid, run["run_id"])
    assert contents(joined) == ["bg", "echo: bg"]
    done = await client.runs.get(tid, run["run_id"])
    assert done["status"] == "success"
    listed = await client.runs.list(tid)
    assert [r["run_id"] for r in listed] == [run["run_id"]]
    assert await client.runs.list(tid, status="error") == []
    await client.runs.delete(tid, run["run_id"])
    with pytest.raises(NotFoundError):
        await client.runs.get(tid, run["run_id"])
    with pytest.raises(NotFoundError):
        await client.runs.get(tid, "00000000-0000-0000-0000-000000000000")


async def test_interrupt_and_command_resume(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, ECHO, input=say("ask me", ask=True))
    (pending,) = out["__interrupt__"]
    assert pending["value"] == {"question": "really echo 'ask me'?"}
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    assert [i["value"] for v in thread["interrupts"].values() for i in v] == [pending["value"]]
    state = await client.threads.get_state(tid)
    assert state["next"] == ["echo"] and state["interrupts"][0]["id"] == pending["id"]
    resumed = await client.runs.wait(tid, ECHO, command={"resume": "yes"})
    assert contents(resumed)[-1] == "echo: ask me (yes)" and "__interrupt__" not in resumed
    assert (await client.threads.get(tid))["status"] == "idle"
    # command update / goto
    updated = await client.runs.wait(
        tid, ECHO, command={"update": {"messages": [{"role": "user", "content": "via goto"}]}, "goto": "echo"}
    )
    assert contents(updated)[-1] == "echo: via goto"


async def test_analyst_report_needs_approval(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, "orecast", input=say("铁矿石现在多少钱？"))
    out = await client.runs.wait(tid, "orecast", input=say("导出报告"))
    (pending,) = out["__interrupt__"]
    assert pending["value"]["action_requests"][0]["name"] == "export_report"
    assert (await client.threads.get(tid))["status"] == "interrupted"
    done = await client.runs.wait(tid, "orecast", command={"resume": {"decisions": [{"type": "approve"}]}})
    tool_results = [m for m in done["messages"] if m["type"] == "tool" and m["name"] == "export_report"]
    assert tool_results and "__interrupt__" not in done
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_stateless_runs_leave_no_thread(client) -> None:
    before = await client.threads.count()
    out = await client.runs.wait(None, ECHO, input=say("no thread"))
    assert contents(out) == ["no thread", "echo: no thread"]
    parts = [p.event async for p in client.runs.stream(None, ECHO, input=say("s"), stream_mode="values")]
    assert parts[0] == "metadata" and "values" in parts
    assert await client.threads.count() == before


async def test_cancel_interrupts_a_running_run(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(tid, ECHO, input=say("slow", delay=30))
    await asyncio.sleep(0.3)
    await client.runs.cancel(tid, run["run_id"], wait=True)
    assert (await client.runs.get(tid, run["run_id"]))["status"] == "interrupted"
    assert (await client.threads.get(tid))["status"] == "idle"
    # the thread takes new runs at once (delay 0: the cancelled input's delay is in the state)
    assert contents(await client.runs.wait(tid, ECHO, input=say("next", delay=0)))[-1] == "echo: next"

    first = await client.runs.create(tid, ECHO, input=say("a", delay=30))
    second = await client.runs.create(tid, ECHO, input=say("b"), multitask_strategy="enqueue")
    await client.runs.cancel_many(thread_id=tid)
    for run_id in (first["run_id"], second["run_id"]):
        await client.runs.join(tid, run_id)
        assert (await client.runs.get(tid, run_id))["status"] == "interrupted"


async def test_join_stream_resumes_after_a_dropped_connection(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    seen = []
    stream = client.runs.stream(
        tid, ECHO, input=say("resume", delay=0.5), stream_mode=["values", "custom"], stream_resumable=True,
    )  # on_disconnect defaults to "continue", as in langgraph-api
    async for part in stream:
        seen.append(part)
        break  # the connection drops after the first event
    await stream.aclose()
    run_id = seen[0].data["run_id"]
    rest = [p async for p in client.runs.join_stream(tid, run_id, last_event_id="1")]
    assert rest and rest[0].event != "metadata", "events up to the given id are not sent again"
    assert [p.event for p in rest][-1] == "values"
    assert contents(rest[-1].data) == ["resume", "echo: resume"]
    assert (await client.runs.get(tid, run_id))["status"] == "success"
    assert [p async for p in client.runs.join_stream(tid, run_id)] == [], (
        "as langgraph-api: a finished run joined without a Last-Event-ID sends nothing"
    )
    replay = [p.event async for p in client.runs.join_stream(tid, run_id, last_event_id="-1")]
    assert replay[0] == "metadata" and "custom" in replay, "-1: from the first event"


async def test_disconnect_cancels_when_asked(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    stream = client.runs.stream(tid, ECHO, input=say("gone", delay=30), on_disconnect="cancel")
    async for part in stream:
        run_id = part.data["run_id"]
        break
    await stream.aclose()
    run = await client.runs.join(tid, run_id)
    assert (await client.runs.get(tid, run_id))["status"] == "interrupted", run


async def test_interrupt_before_stops_ahead_of_the_node(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, ECHO, input=say("wait"), interrupt_before=["echo"])
    state = await client.threads.get_state(tid)
    assert state["next"] == ["echo"] and contents(state["values"]) == ["wait"]
    assert (await client.threads.get(tid))["status"] == "interrupted"
    resumed = await client.runs.wait(tid, ECHO, input=None)
    assert contents(resumed) == ["wait", "echo: wait"]


async def test_an_interrupt_inside_a_subgraph_pauses_the_run(client) -> None:
    """The run's end sees the subgraph's interrupt: the thread is `interrupted` and the output carries it."""
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, NESTED, input=say("deep ask", ask=True))
    (pending,) = out["__interrupt__"]
    assert pending["value"] == {"question": "really echo 'deep ask'?"}
    assert (await client.threads.get(tid))["status"] == "interrupted"
    resumed = await client.runs.wait(tid, NESTED, command={"resume": "ok"})
    assert contents(resumed)[-1] == "echo: deep ask (ok)" and "__interrupt__" not in resumed
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_a_failed_run_leaves_its_thread_error_until_a_run_succeeds(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(tid, ECHO, input=say("boom", fail=True))
    out = await client.runs.join(tid, run["run_id"])
    # the type and the message apart, as langgraph-api: the SDKs print "{error}: {message}"
    assert out["__error__"] == {"error": "RuntimeError", "message": "asked to fail on 'boom'"}
    assert (await client.runs.get(tid, run["run_id"]))["status"] == "error"
    assert (await client.threads.get(tid))["status"] == "error"
    assert tid in {t["thread_id"] for t in await client.threads.search(status="error", limit=1000)}
    assert tid not in {t["thread_id"] for t in await client.threads.search(status="idle", limit=1000)}
    with pytest.raises(Exception) as raised:  # runs.wait raises the run's error
        await client.runs.wait(tid, ECHO, input=say("boom again"))
    assert str(raised.value) == "RuntimeError: asked to fail on 'boom again'"
    assert (await client.threads.get(tid))["status"] == "error"
    (failed,) = (await client.threads.get_state(tid))["tasks"]
    assert failed["error"] == "RuntimeError(\"asked to fail on 'boom again'\")", "the error's repr, quoted once"

    ok = await client.runs.wait(tid, ECHO, input=say("fine", fail=False))
    assert contents(ok)[-1] == "echo: fine"
    assert (await client.threads.get(tid))["status"] == "idle"
    assert [r["status"] for r in await client.runs.list(tid)] == ["success", "error", "error"]


async def test_run_context_and_config_reach_the_graph(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    said = await client.runs.wait(tid, ECHO, input=say("ctx"), context={"prefix": "said"})
    assert contents(said)[-1] == "said: ctx"
    loud = await client.runs.wait(tid, ECHO, input=say("cfg"), config={"configurable": {"shout": True}})
    assert contents(loud)[-1] == "echo: CFG"
    run = await client.runs.create(
        tid, ECHO, input=say("both"), context={"prefix": "both"}, config={"configurable": {"shout": True}}
    )
    assert contents(await client.runs.join(tid, run["run_id"]))[-1] == "both: BOTH"
    assert run["kwargs"]["context"] == {"prefix": "both"}
    assert run["kwargs"]["config"]["configurable"]["shout"] is True
    plain = await client.runs.wait(tid, ECHO, input=say("plain"))
    assert contents(plain)[-1] == "echo: plain", "a run's context and config are its own"


async def test_durability_exit_stores_only_the_last_checkpoint(client) -> None:
    counts, finals = {}, {}
    for durability in ("exit", "sync", "async"):
        tid = (await client.threads.create())["thread_id"]
        out = await client.runs.wait(tid, NESTED, input=say("keep"), durability=durability)
        finals[durability] = contents(out)
        counts[durability] = len(await client.threads.get_history(tid, limit=1000))
        assert contents((await client.threads.get_state(tid))["values"]) == ["keep", "echo: keep"]
    assert finals["exit"] == finals["sync"] == finals["async"] == ["keep", "echo: keep"]
    assert counts["sync"] == counts["async"] >= 3, counts  # input, after inner, after done
    assert counts["exit"] == 1, counts


async def test_interrupt_after_stops_behind_the_node(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    await client.runs.wait(tid, NESTED, input=say("after"), interrupt_after=["inner"])
    state = await client.threads.get_state(tid)
    assert state["next"] == ["done"] and contents(state["values"]) == ["after", "echo: after"]
    assert (await client.threads.get(tid))["status"] == "interrupted"
    resumed = await client.runs.wait(tid, NESTED, input=None)
    assert contents(resumed) == ["after", "echo: after"]
    assert (await client.threads.get_state(tid))["next"] == []
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_if_not_exists_create_makes_the_thread(client) -> None:
    tid = "00000000-0000-4000-8000-" + uuid.uuid4().hex[:12]
    with pytest.raises(NotFoundError):
        await client.runs.create(tid, ECHO, input=say("nobody"))
    with pytest.raises(NotFoundError):
        await client.threads.get(tid)
    run = await client.runs.create(tid, ECHO, input=say("new"), if_not_exists="create", metadata={"m": 1})
    assert run["thread_id"] == tid
    assert contents(await client.runs.join(tid, run["run_id"])) == ["new", "echo: new"]
    thread = await client.threads.get(tid)
    assert thread["status"] == "idle" and contents(thread["values"]) == ["new", "echo: new"]
    assert thread["metadata"]["graph_id"] == ECHO
    assert [r["run_id"] for r in await client.runs.list(tid)] == [run["run_id"]]
    again = await client.runs.wait(tid, ECHO, input=say("again"), if_not_exists="create")
    assert contents(again) == ["new", "echo: new", "again", "echo: again"], "an existing thread is reused"


async def test_get_state_with_subgraphs_shows_the_interrupted_subgraph(client) -> None:
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, NESTED, input=say("inside", ask=True))
    (pending,) = out["__interrupt__"]

    flat = await client.threads.get_state(tid)
    (task,) = flat["tasks"]
    assert task["name"] == "inner" and task["state"] is None
    assert task["checkpoint"]["thread_id"] == tid and task["checkpoint"]["checkpoint_ns"].startswith("inner:")
    assert "checkpoint_id" not in task["checkpoint"], "as langgraph-api: LangGraph's config, no null id"

    deep = await client.threads.get_state(tid, subgraphs=True)
    (task,) = deep["tasks"]
    assert task["name"] == "inner" and task["checkpoint"] is None, "as langgraph-api: state instead"
    assert [i["id"] for i in task["interrupts"]] == [pending["id"]]
    sub = task["state"]
    assert sub["next"] == ["echo"] and contents(sub["values"]) == ["inside"]
    assert sub["checkpoint"]["thread_id"] == tid
    assert sub["checkpoint"]["checkpoint_ns"] == flat["tasks"][0]["checkpoint"]["checkpoint_ns"]
    assert sub["checkpoint"]["checkpoint_map"][""] == deep["checkpoint"]["checkpoint_id"]
    (inner_task,) = sub["tasks"]
    assert inner_task["name"] == "echo" and [i["value"] for i in inner_task["interrupts"]] == [pending["value"]]
    assert [i["id"] for i in sub["interrupts"]] == [pending["id"]]
    assert {"values", "next", "tasks", "checkpoint", "metadata", "created_at", "parent_checkpoint", "interrupts"} <= (
        sub.keys()
    )

    await client.runs.wait(tid, NESTED, command={"resume": "ok"})
    done = await client.threads.get_state(tid, subgraphs=True)
    assert done["tasks"] == [] and contents(done["values"])[-1] == "echo: inside (ok)"
