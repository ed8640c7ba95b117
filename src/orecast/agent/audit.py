"""The tool-call audit, written where the facts are exact: around each tool call of the agent.

`AuditMiddleware` is a LangChain agent middleware (`create_agent`, deepagents) that records every
tool call through the graph's checkpointer — thread, namespace, the checkpoint it ran from, run id,
arguments, a capped result, status, error, start, end and duration — and the analyst's decisions on
`export_report`: a call rejected by a human shows as `rejected`, one edited as `edited` with the
arguments it ran with. A plain `ToolNode` graph gets the same with `ToolNode(tools,
**tool_call_auditing())`.

The store is the running graph's checkpointer (or the saver given), so a graph built before the
store exists — one served by `orecast serve --graph` — is audited in whichever store serves it. A
checkpointer without the audit (another saver, none) leaves the calls as they are. Writing the audit
never breaks a tool call: a failure is logged and the call goes on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from datetime import UTC, datetime
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

log = logging.getLogger(__name__)

# How the approval middleware (HumanInTheLoopMiddleware) marks the message a decision put in place of
# a tool's result, and where it keeps the calls a human edited (read only, never written).
HITL_SOURCE = "hitl_interrupt_decision"
EDITED_CALLS = "hitl_edited_tool_calls"
CHECKPOINTER = "__pregel_checkpointer"
CHECKPOINT_MAP = "checkpoint_map"

Handler = Callable[[ToolCallRequest], Any]
AsyncHandler = Callable[[ToolCallRequest], Awaitable[Any]]


def _has_audit(saver: Any) -> bool:
    return saver is not None and callable(getattr(saver, "abegin_tool_call", None))


class ToolCallAuditor:
    """Records tool calls in `saver`, or in the running graph's checkpointer when `saver` is None."""

    def __init__(self, saver: Any = None) -> None:
        self.saver = saver
        # End-of-call writes that outlive a cancelled task, held until they finish.
        self._writes: set[asyncio.Task[Any]] = set()

    def store_for(self, config: Mapping[str, Any] | None) -> Any:
        saver = self.saver
        if saver is None and config:
            saver = (config.get("configurable") or {}).get(CHECKPOINTER)
        return saver if _has_audit(saver) else None

    # -- around one call ---------------------------------------------------------------------------

    async def arun(self, request: ToolCallRequest, handler: AsyncHandler) -> Any:
        config = _config_of(request)
        saver = self.store_for(config)
        facts = _facts(request, config) if saver is not None else None
        if saver is None or facts is None:
            return await handler(request)
        started = time.perf_counter()
        begin = self._detached(saver.abegin_tool_call(**facts))
        try:
            audit_id = await asyncio.shield(begin)
        except asyncio.CancelledError:
            # Cancelled while the `running` row is written: it may be stored all the same (a commit
            # whose answer had not come back), so it is finished as cancelled once written.
            self._detached(_cancel_when_begun(saver, begin, started))
            raise
        started = time.perf_counter()
        try:
            result = await handler(request)
        except GraphBubbleUp:
            # Stopped for a human's answer (an interrupt): the call starts again on resume, as itself.
            if audit_id:
                await self._finish(saver.adiscard_tool_call(audit_id))
            raise
        except asyncio.CancelledError:
            if audit_id:
                await self._finish(saver.aend_tool_call(audit_id, **_ended(started, "cancelled", error="cancelled")))
            raise
        except Exception as exc:
            if audit_id:
                await self._finish(saver.aend_tool_call(audit_id, **_ended(started, "error", error=_error_text(exc))))
            raise
        if audit_id:
            await self._finish(saver.aend_tool_call(audit_id, **_outcome(request, result, started)))
        return result

    def _detached(self, write: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """`write` in a task of its own, which a cancellation of the call does not reach."""
        task = asyncio.ensure_future(_quietly(write))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return task

    async def _finish(self, write: Coroutine[Any, Any, Any]) -> None:
        """Write how a call ended even if the task is cancelled meanwhile: LangGraph cancels a call's
        siblings when one of them fails, and a run is cancelled as a whole. A cancellation that comes
        during the write is raised once the row is written (a call that succeeded returned its result
        as if nobody had cancelled it, and its run went on)."""
        task = self._detached(write)
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            await asyncio.wait([task])  # a second cancellation stops this wait, never the write
            raise

    def run(self, request: ToolCallRequest, handler: Handler) -> Any:
        """The sync twin, for `graph.invoke`: the saver's async methods run on the saver's loop."""
        config = _config_of(request)
        saver = self.store_for(config)
        facts = _facts(request, config) if saver is not None else None
        bridge = getattr(saver, "_run", None)
        if saver is None or facts is None or bridge is None:
            return handler(request)
        audit_id = _quietly_sync(bridge, saver.abegin_tool_call(**facts))
        started = time.perf_counter()
        try:
            result = handler(request)
        except GraphBubbleUp:
            if audit_id:
                _quietly_sync(bridge, saver.adiscard_tool_call(audit_id))
            raise
        except Exception as exc:
            if audit_id:
                _quietly_sync(bridge, saver.aend_tool_call(audit_id, **_ended(started, "error", error=_error_text(exc))))
            raise
        if audit_id:
            _quietly_sync(bridge, saver.aend_tool_call(audit_id, **_outcome(request, result, started)))
        return result

    # -- decisions that replace a call -------------------------------------------------------------

    async def arecord_rejections(self, messages: list[Any], config: Mapping[str, Any] | None, info: Any) -> None:
        saver = self.store_for(config)
        if saver is None:
            return
        for facts in _rejections(messages, config or {}, info):
            await _quietly(saver.arecord_tool_call(**facts, once=True))

    def record_rejections(self, messages: list[Any], config: Mapping[str, Any] | None, info: Any) -> None:
        saver = self.store_for(config)
        bridge = getattr(saver, "_run", None)
        if saver is None or bridge is None:
            return
        for facts in _rejections(messages, config or {}, info):
            _quietly_sync(bridge, saver.arecord_tool_call(**facts, once=True))


class AuditMiddleware(AgentMiddleware):
    """Agent middleware auditing each tool call in the graph's checkpointer (or in `saver`).

        agent = create_agent(model, tools, middleware=[AuditMiddleware()], checkpointer=saver)

    Put it before `HumanInTheLoopMiddleware` (deepagents does, for `middleware=`): it then sees the
    call as the model made it and the arguments a human's edit replaced them with.
    """

    def __init__(self, saver: Any = None) -> None:
        super().__init__()
        self.auditor = ToolCallAuditor(saver)

    async def awrap_tool_call(self, request: ToolCallRequest, handler: AsyncHandler) -> Any:
        return await self.auditor.arun(request, handler)

    def wrap_tool_call(self, request: ToolCallRequest, handler: Handler) -> Any:
        return self.auditor.run(request, handler)

    # A rejected call never reaches the tools: the approval middleware answers it with a message right
    # after the model. The next model call is where that answer is first seen, whatever the order of
    # the middleware.
    # Rejections are recorded as the next model call starts, inside it: a `before_model` hook would be
    # a graph node of its own, one more checkpoint for every model call of every thread.
    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]) -> Any:
        info = getattr(request.runtime, "execution_info", None)
        await self.auditor.arecord_rejections(_messages(request.state), _current_config(), info)
        return await handler(request)

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        info = getattr(request.runtime, "execution_info", None)
        self.auditor.record_rejections(_messages(request.state), _current_config(), info)
        return handler(request)


def tool_call_auditing(saver: Any = None) -> dict[str, Any]:
    """`wrap_tool_call` and `awrap_tool_call` for a plain LangGraph `ToolNode`:

        ToolNode(tools, **tool_call_auditing())
    """
    auditor = ToolCallAuditor(saver)
    return {"wrap_tool_call": auditor.run, "awrap_tool_call": auditor.arun}


# -- the facts of a call -----------------------------------------------------------------------------


def _config_of(request: ToolCallRequest) -> Mapping[str, Any] | None:
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None)
    return config if isinstance(config, Mapping) else _current_config()


def _current_config() -> Mapping[str, Any] | None:
    try:
        return get_config()
    except RuntimeError:  # outside a graph run
        return None


def _where(config: Mapping[str, Any], info: Any) -> dict[str, Any] | None:
    """thread, namespace, checkpoint and run of the task running now; None outside a stored thread."""
    configurable = config.get("configurable") or {}
    thread_id = getattr(info, "thread_id", None) or configurable.get("thread_id")
    if thread_id is None:
        return None
    task_ns = getattr(info, "checkpoint_ns", None)
    if task_ns is None:
        task_ns = configurable.get("checkpoint_ns") or ""
    # The task's namespace ends with the task itself; its checkpoints are the enclosing graph's.
    ns = task_ns.rpartition("|")[0] if "|" in task_ns else ("" if ":" in task_ns else task_ns)
    checkpoint_id = getattr(info, "checkpoint_id", None) or (configurable.get(CHECKPOINT_MAP) or {}).get(ns)
    run_id = getattr(info, "run_id", None) or (config.get("metadata") or {}).get("run_id") or config.get("run_id")
    return {
        "thread_id": str(thread_id),
        "checkpoint_ns": ns,
        "checkpoint_id": checkpoint_id,
        "run_id": str(run_id) if run_id is not None else None,
    }


def _facts(request: ToolCallRequest, config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    call = request.tool_call
    if not config or not call.get("id"):
        return None
    where = _where(config, getattr(request.runtime, "execution_info", None))
    if where is None:
        return None
    return {**where, "call_id": call["id"], "tool": call["name"], "args": call.get("args") or {}}


def _edit_of(request: ToolCallRequest) -> dict[str, Any] | None:
    """The call a human's `edit` decision put in place of this one (approval middleware, batched mode)."""
    state = request.state
    edited = state.get(EDITED_CALLS) if isinstance(state, Mapping) else getattr(state, EDITED_CALLS, None)
    action = (edited or {}).get(request.tool_call.get("id")) if isinstance(edited, Mapping) else None
    return action if isinstance(action, Mapping) else None


def _tool_message(result: Any, call_id: str | None) -> ToolMessage | None:
    if isinstance(result, ToolMessage):
        return result
    if isinstance(result, Command) and isinstance(result.update, Mapping):
        for message in result.update.get("messages") or ():
            if isinstance(message, ToolMessage) and message.tool_call_id == call_id:
                return message
    return None


def _decision(message: ToolMessage) -> str | None:
    kwargs = message.additional_kwargs or {}
    if kwargs.get("lc_source") != HITL_SOURCE:
        return None
    data = kwargs.get("lc_data")
    return data.get("decision") if isinstance(data, Mapping) else None


def _outcome(request: ToolCallRequest, result: Any, started: float) -> dict[str, Any]:
    message = _tool_message(result, request.tool_call.get("id"))
    text = message.text if message is not None else None
    if message is not None and _decision(message) in ("reject", "respond"):
        # The approval middleware answered instead of the tool (its per-call mode).
        return _ended(started, "rejected", error=text)
    edit = _edit_of(request)
    if message is not None and message.status == "error":
        return _ended(started, "error", error=text, args=edit.get("args") if edit else None)
    if edit is not None:
        return _ended(started, "edited", result=text, args=edit.get("args") or {})
    return _ended(started, "ok", result=text)


def _ended(started: float, status: str, **fields: Any) -> dict[str, Any]:
    return {"status": status, "duration_ms": (time.perf_counter() - started) * 1000, **fields}


def _error_text(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _messages(state: Any) -> list[Any]:
    messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    return list(messages) if isinstance(messages, list | tuple) else []


def _rejections(messages: list[Any], config: Mapping[str, Any], info: Any) -> list[dict[str, Any]]:
    """Rows for the calls of the last model message that a human's decision answered instead of the tool."""
    answers: dict[str, ToolMessage] = {}
    asked: AIMessage | None = None
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            asked = message
            break
        if isinstance(message, ToolMessage) and _decision(message) in ("reject", "respond"):
            answers[message.tool_call_id] = message
    if asked is None or not answers:
        return []
    where = _where(config, info)
    if where is None:
        return []
    now = datetime.now(UTC)
    return [
        {
            **where,
            "call_id": call["id"],
            "tool": call["name"],
            "args": call.get("args") or {},
            "status": "rejected",
            "error": answers[call["id"]].text,
            "started_at": now,
        }
        for call in asked.tool_calls
        if call.get("id") in answers
    ]


# -- writing without breaking the call ---------------------------------------------------------------


async def _cancel_when_begun(saver: Any, begin: asyncio.Task[Any], started: float) -> None:
    """Finish as cancelled the row of a call cancelled before its row's id came back."""
    audit_id = await begin
    if audit_id:
        await saver.aend_tool_call(audit_id, **_ended(started, "cancelled", error="cancelled"))


async def _quietly(write: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await write
    except Exception:
        log.warning("tool-call audit: could not write a row; the call goes on", exc_info=True)
        return None


def _quietly_sync(bridge: Callable[[Any], Any], write: Coroutine[Any, Any, Any]) -> Any:
    try:
        return bridge(write)
    except Exception:
        log.warning("tool-call audit: could not write a row; the call goes on", exc_info=True)
        return None
