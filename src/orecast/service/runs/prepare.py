"""From a `RunCreate` body to an admitted run and its `RunInput` (assistant, thread, config, owner)."""

from __future__ import annotations

import uuid
from typing import Any
from uuid import UUID

from orecast.agent.memories import IDENTITY_KEYS
from orecast.checkpoint.ids import new_thread_id
from orecast.service.assistants import version_of
from orecast.service.auth import Principal
from orecast.service.context import Services
from orecast.service.errors import NotFound
from orecast.service.runs.execute import RunInput
from orecast.service.runs.records import RunRecord, Stale
from orecast.service.schemas import RunCreate
from orecast.service.threads import require_uuid_id


def _merge_config(assistant: dict[str, Any], body: RunCreate) -> dict[str, Any]:
    base, extra = assistant.get("config") or {}, body.config or {}
    config = {**base, **extra}
    config["configurable"] = {**(base.get("configurable") or {}), **(extra.get("configurable") or {})}
    return config


async def start_run(
    svc: Services, user: Principal, body: RunCreate, thread_id: str | None
) -> tuple[RunRecord, bool]:
    """Admit and start a run; (its record, whether its thread is temporary). 404/409 as the SDK expects."""
    await svc.webhooks.check(body.webhook)
    try:
        return await _start_run(svc, user, body, thread_id, remembered=True)
    except Stale:  # another process changed the assistant or the thread since this one read them
        svc.assistants.forget(body.assistant_id)
        if thread_id is not None:
            svc.threads.forget(thread_id)
        return await _start_run(svc, user, body, thread_id, remembered=False)


async def _start_run(
    svc: Services, user: Principal, body: RunCreate, thread_id: str | None, *, remembered: bool
) -> tuple[RunRecord, bool]:
    """`start_run`; with `remembered`, a run on an existing thread takes its thread's row and its
    assistant from memory and its admission checks that they did not change (Stale if they did:
    nothing of the run is written then)."""
    temporary = thread_id is None
    existing, same_thread = None, None
    if not temporary:
        existing = svc.threads.known(thread_id) if remembered else None
        if existing is not None:
            same_thread = svc.saver.same_thread_condition(thread_id, existing.metadata)
        if same_thread is None:
            existing = await svc.saver.aget_thread(thread_id)
            # not before its first run's checkpoint seeds graph_id and assistant_id into its metadata
            # (below): the next run's check would fail on them
            if existing is not None and "graph_id" in existing.metadata:
                svc.threads.remember(existing)
    # a new thread is written before the admission: its assistant is read first, as always
    remembered = remembered and existing is not None
    assistant = await svc.assistants.for_run(body.assistant_id, user, remembered=remembered)
    served = svc.graphs.get(assistant["graph_id"])
    assert served is not None
    thread_id = thread_id or new_thread_id()
    run_id = str(uuid.uuid4())
    requested = body.model_dump(mode="json", exclude_none=True, exclude={"assistant_id", "metadata"})
    # what langgraph-api shows the `threads` `create_run` handler; it may add to `metadata`
    value: dict[str, Any] = {
        "thread_id": thread_id, "assistant_id": assistant["assistant_id"], "run_id": run_id,
        "status": "pending", "metadata": dict(body.metadata or {}),
        "prevent_insert_if_inflight": body.multitask_strategy == "reject",
        "multitask_strategy": body.multitask_strategy, "if_not_exists": body.if_not_exists,
        "after_seconds": body.after_seconds, "kwargs": requested,
    }
    if existing is None:
        if not temporary and body.if_not_exists != "create":
            raise NotFound(f"thread {thread_id} not found (pass if_not_exists='create' to create it)")
        if not temporary:
            require_uuid_id(thread_id, user)
        await user.authorize("threads", "create_run", value)
        info = await svc.threads.create_for_run(user, thread_id, value["metadata"])
    else:
        info = await svc.threads.check(existing, user, "create_run", value)
    run_metadata = value["metadata"]
    graph_meta = {"graph_id": assistant["graph_id"], "assistant_id": assistant["assistant_id"]}
    # The run's first checkpoint adds these to a thread's metadata that lacks them (the store seeds
    # a thread's metadata from the `configurable` values LangGraph copies into checkpoint metadata);
    # only a thread moving to another graph or assistant needs a write of its own, before the run.
    if any(k in info.metadata and info.metadata[k] != v for k, v in graph_meta.items()):
        if remembered:  # a write before the admission: only with the assistant and thread as they are now
            raise Stale(assistant["assistant_id"])
        await svc.saver.aupdate_thread(thread_id, metadata=graph_meta)
    if temporary and body.on_completion == "keep":
        temporary = False

    config = _merge_config(assistant, body)
    configurable = config["configurable"]
    configurable.update(
        thread_id=thread_id, run_id=run_id, assistant_id=assistant["assistant_id"],
        graph_id=assistant["graph_id"],
    )
    for key in IDENTITY_KEYS:  # who runs is the server's to say: the analyst's memories go by it
        configurable.pop(key, None)
    if user.user_id is not None:
        configurable["user_id"] = user.user_id
    if user.access is not None:  # as langgraph-api hands the authenticated user to the graph
        configurable.update(
            langgraph_auth_user=user.access.user.dict(),
            langgraph_auth_user_id=user.access.user.identity,
            langgraph_auth_permissions=list(user.access.permissions),
        )
    checkpoint_id = body.checkpoint_id or (body.checkpoint.checkpoint_id if body.checkpoint else None)
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
        if body.checkpoint and body.checkpoint.checkpoint_ns:
            configurable["checkpoint_ns"] = body.checkpoint.checkpoint_ns
        await svc.threads.require_checkpoint(thread_id, {"checkpoint_id": checkpoint_id})
    config["metadata"] = {**(config.get("metadata") or {}), **run_metadata, "run_id": run_id}
    # `{}` when none is given, as langgraph-api passes it: a graph's context schema (a dataclass, a
    # pydantic model) is then made from it with its defaults
    context = {**(assistant.get("context") or {}), **(body.context or {})}
    command = body.command.model_dump(exclude_none=True) if body.command else None
    # the run's `kwargs` as langgraph-api shows them; stored, so its user without the fields beyond
    # identity and permissions (a process that takes the run over rebuilds the user from them)
    stored_config = config
    if user.access is not None:
        stored_config = {**config, "configurable": {
            **configurable, "langgraph_auth_user": user.access.user.identity_only()}}
    kwargs = {
        "input": body.input, "command": command, "config": stored_config, "context": context,
        "stream_mode": body.modes(), "interrupt_before": body.interrupt_before,
        "interrupt_after": body.interrupt_after, "webhook": body.webhook, "feedback_keys": None,
        "temporary": temporary, "subgraphs": body.stream_subgraphs, "resumable": body.stream_resumable,
        "checkpoint_during": body.durability != "exit", "durability": body.durability or "async",
    }
    config = {**config, "run_id": UUID(run_id)}

    # A slot of this process's (runs/slots.py) taken now lets the admission claim the run at once; with
    # none free (or runs waiting for one) it is admitted `pending` and waits for one, oldest first. A run
    # with `after_seconds` is `pending` until then (as langgraph-api), and takes no slot before.
    delay = float(body.after_seconds or 0)
    slot = delay <= 0 and svc.runs.slots.try_take()
    try:
        run, _cancelled = await svc.repo.admit(
            run_id=run_id,
            thread_id=thread_id,
            assistant_id=assistant["assistant_id"],
            metadata=run_metadata,
            kwargs=kwargs,
            strategy=body.multitask_strategy,
            owner=user.user_id,
            assistant_version=version_of(assistant) if remembered else None,
            same_thread=same_thread,
            claim=slot,
            delay_seconds=delay,
        )
    except BaseException:
        if slot:
            svc.runs.slots.give_back()
        raise
    if slot and run.status != "running":  # its thread is busy: the slot waits for no one meanwhile
        svc.runs.slots.give_back()
    for other in _cancelled:
        await svc.runs.cancel_local(other, body.multitask_strategy)
    prepared = RunInput(
        graph=served.graph,
        factory=served.factory,
        user=user.access.user if user.access is not None else None,
        config=config,
        context=context,
        input=body.input,
        command=command,
        stream_modes=body.modes(),
        subgraphs=body.stream_subgraphs,
        interrupt_before=body.interrupt_before,
        interrupt_after=body.interrupt_after,
        durability=body.durability,
    )
    svc.runs.start(
        run, prepared, temporary=temporary, resumable=body.stream_resumable, slot=run.status == "running"
    )
    return run, temporary


async def visible_run(
    svc: Services, user: Principal, thread_id: str, run_id: str, action: str = "read"
) -> RunRecord:
    """The run, if `user` may do `action` on its thread (runs are a thread's, as in langgraph-api)."""
    await svc.threads.info(thread_id, user, action, {"thread_id": thread_id, "run_id": run_id})
    run = await svc.repo.require(run_id, thread_id)
    if not user.may_see(run.owner):
        raise NotFound(f"run {run_id} not found")
    return run


async def may_use_run(svc: Services, user: Principal, run: RunRecord, action: str) -> bool:
    """Whether `user` may do `action` on a run found by id alone (no thread in the path)."""
    if not user.may_see(run.owner):
        return False
    if user.access is None:
        return True
    try:  # custom auth decides by the run's thread; a run whose thread is gone is nobody's
        await svc.threads.info(run.thread_id, user, action, {"thread_id": run.thread_id, "run_id": run.run_id})
    except NotFound:
        return False
    return True

