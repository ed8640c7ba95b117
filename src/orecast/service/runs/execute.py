"""`execute_run`: one graph run streamed into a run's event log. Nothing else streams a graph."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessageChunk, message_chunk_to_message
from langgraph.pregel import Pregel
from langgraph.types import Command, Send
from langgraph_sdk.auth.types import BaseUser

from orecast.service.graphs import GraphFactory

INTERRUPT = "__interrupt__"  # the key LangGraph streams a graph's pending interrupts under
# Modes the graph streams natively; `messages-tuple` and `messages` both come from its `messages`.
NATIVE_MODES = ("values", "updates", "custom", "debug", "tasks", "checkpoints", "messages")

# An event's data as the graph streamed it: the event log encodes it to JSON when it is read.
Emit = Callable[[str, Any], Awaitable[None]]


@dataclass
class RunInput:
    graph: Pregel
    config: dict[str, Any]
    context: dict[str, Any] | None
    input: Any
    command: dict[str, Any] | None
    stream_modes: list[str]
    subgraphs: bool
    interrupt_before: Any
    interrupt_after: Any
    durability: str | None
    # the served graph's factory, if any: the run builds its own graph with it (`graph` is the one
    # built at startup, which answers the reads after the run)
    factory: GraphFactory | None = None
    # for a factory's ServerRuntime: the user custom auth authenticated
    user: BaseUser | None = None


def command_of(spec: dict[str, Any]) -> Command:
    """A request's `command` (`resume`, `update`, `goto` with `Send`s as `{node, input}`) as LangGraph's."""
    goto = spec.get("goto")
    if isinstance(goto, dict):
        goto = Send(goto["node"], goto.get("input"))
    elif isinstance(goto, list):
        goto = [Send(g["node"], g.get("input")) if isinstance(g, dict) else g for g in goto]
    return Command(resume=spec.get("resume"), update=spec.get("update"), goto=goto or ())


def _native(modes: list[str]) -> list[str]:
    native = {"values"}  # always: the final values are the run's output
    for mode in modes:
        native.add("messages" if mode in ("messages", "messages-tuple") else mode)
    return [m for m in NATIVE_MODES if m in native]


def _checkpoint_of(config: dict[str, Any] | None) -> dict[str, Any] | None:
    configurable = (config or {}).get("configurable") or {}
    if not configurable.get("thread_id") or not configurable.get("checkpoint_id"):
        return None
    checkpoint = {"thread_id": configurable["thread_id"], "checkpoint_id": configurable["checkpoint_id"],
                  "checkpoint_ns": configurable.get("checkpoint_ns") or ""}
    if "checkpoint_map" in configurable:
        checkpoint["checkpoint_map"] = configurable["checkpoint_map"]
    return checkpoint


def _debug_checkpoint(payload: dict[str, Any]) -> dict[str, Any]:
    """A `debug` checkpoint event's payload as langgraph-api sends it: with `checkpoint` and
    `parent_checkpoint` (what the SDKs' `ThreadState` calls them) next to LangGraph's configs, and a
    subgraph task's `state` config as its `checkpoint`."""
    tasks = []
    for task in payload.get("tasks") or ():
        state = task.get("state")
        if isinstance(state, dict) and state.get("configurable"):
            task = {**{k: v for k, v in task.items() if k != "state"}, "checkpoint": state["configurable"]}
        tasks.append(task)
    return {**payload, "checkpoint": _checkpoint_of(payload.get("config")),
            "parent_checkpoint": _checkpoint_of(payload.get("parent_config")), "tasks": tasks}


class _Messages:
    """Turns LangGraph's (chunk, metadata) pairs into the SDK's `messages` / `messages-tuple` events."""

    def __init__(self, modes: list[str]) -> None:
        self.tuples = "messages-tuple" in modes
        self.partial = "messages" in modes
        self.seen: dict[str, Any] = {}

    async def emit(self, emit: Emit, suffix: str, chunk: Any, metadata: dict[str, Any]) -> None:
        message, meta = chunk, metadata
        if self.tuples:
            await emit("messages" + suffix, [message, meta])
        # as langgraph-api: the legacy mode accumulates a model's streamed chunks per message
        # (`messages/partial`) and sends a whole message once (`messages/complete`)
        if not self.partial:
            return
        key = message.id or ""
        previous = self.seen.get(key)
        if previous is None:
            await emit("messages/metadata" + suffix, {key: {"metadata": meta}})
        if not isinstance(message, BaseMessageChunk):
            self.seen[key] = message
            await emit("messages/complete" + suffix, [message])
            return
        self.seen[key] = message if previous is None else previous + message
        # the message so far as a whole one (`ai`, not `AIMessageChunk`), as langgraph-api sends it
        await emit("messages/partial" + suffix, [message_chunk_to_message(self.seen[key])])


async def _parts(run: RunInput, payload: Any) -> AsyncIterator[tuple[tuple[str, ...], str, Any]]:
    """The graph's (namespace, mode, chunk) parts; with `events` requested, through `astream_events` v2
    as langgraph-api does: the root's `on_chain_stream` events carry the parts, every other event is
    itself an `events` part."""
    kwargs: dict[str, Any] = {
        "context": run.context, "stream_mode": _native(run.stream_modes),
        "interrupt_before": run.interrupt_before, "interrupt_after": run.interrupt_after,
        "durability": run.durability,
    }
    if "events" not in run.stream_modes:
        if not run.subgraphs:  # the root's parts only: subgraphs' are not even streamed
            async for mode, chunk in run.graph.astream(payload, run.config, subgraphs=False, **kwargs):
                yield (), mode, chunk
            return
        async for namespace, mode, chunk in run.graph.astream(payload, run.config, subgraphs=True, **kwargs):
            yield namespace, mode, chunk
        return
    kwargs["subgraphs"] = True
    async for event in run.graph.astream_events(payload, run.config, version="v2", **kwargs):
        if "langsmith:hidden" in (event.get("tags") or ()):
            continue
        if event["event"] == "on_chain_stream" and not event["parent_ids"]:
            yield event["data"]["chunk"]
        else:
            yield (), "events", event


@dataclass
class RunOutcome:
    """What the run streamed so far, kept up to date as it goes (a failed run's last values too)."""

    values: Any = None  # the last `values` of the root graph (None if it streamed none)
    interrupted: bool = False  # the root graph stopped at an `interrupt()`, its own or a subgraph's


async def execute_run(run: RunInput, emit: Emit, outcome: RunOutcome | None = None) -> RunOutcome:
    """Stream the graph, emitting each part as its SSE event; return its last `values` and whether it
    stopped at an interrupt (LangGraph streams the root's `values` with `__interrupt__` then)."""
    payload = command_of(run.command) if run.command else run.input
    messages = _Messages(run.stream_modes)
    outcome = outcome or RunOutcome()
    async for namespace, mode, chunk in _parts(run, payload):
        if not namespace and mode in ("values", "updates") and isinstance(chunk, dict) and INTERRUPT in chunk:
            outcome.interrupted = True
        if namespace and not run.subgraphs:
            continue
        suffix = "|" + "|".join(namespace) if namespace else ""
        if mode == "values" and not namespace:
            outcome.values = chunk
        if mode == "messages":
            message, metadata = chunk
            await messages.emit(emit, suffix, message, metadata)
        elif mode == "debug" and mode in run.stream_modes and chunk.get("type") == "checkpoint":
            await emit(mode + suffix, {**chunk, "payload": _debug_checkpoint(chunk["payload"])})
        elif mode in run.stream_modes:
            await emit(mode + suffix, chunk)
    return outcome
