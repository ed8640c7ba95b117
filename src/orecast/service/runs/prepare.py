"""From a `RunCreate` body to an admitted run and its `RunInput` (assistant, thread, config, owner)."""

from __future__ import annotations

import uuid
from typing import Any
from uuid import UUID

from orecast.service.auth import Principal
from orecast.service.context import Services
from orecast.service.errors import NotFound
from orecast.service.runs.execute import RunInput
from orecast.service.runs.records import RunRecord
from orecast.service.schemas import RunCreate


def _merge_config(assistant: dict[str, Any], body: RunCreate) -> dict[str, Any]:
    base, extra = assistant.get("config") or {}, body.config or {}
    config = {**base, **extra}
    config["configurable"] = {**(base.get("configurable") or {}), **(extra.get("configurable") or {})}
    return config


async def start_run(
    svc: Services, user: Principal, body: RunCreate, thread_id: str | None
) -> tuple[RunRecord, bool]:
    """Admit and start a run; (its record, whether its thread is temporary). 404/409 as the SDK expects."""
    assistant = await svc.assistants.get(body.assistant_id, user)
    served = svc.graphs.get(assistant["graph_id"])
    assert served is not None
    temporary = thread_id is None
    if thread_id is None:
        thread_id = str(uuid.uuid4())
        info = await svc.threads.create(user, thread_id=thread_id, metadata={}, if_exists=None)
    elif await svc.saver.aget_thread(thread_id) is None:
        if body.if_not_exists != "create":
            raise NotFound(f"thread {thread_id} not found (pass if_not_exists='create' to create it)")
        info = await svc.threads.create(user, thread_id=thread_id, metadata={}, if_exists="do_nothing")
    else:
        info = await svc.threads.info(thread_id, user)
    graph_meta = {"graph_id": assistant["graph_id"], "assistant_id": assistant["assistant_id"]}
    if any(info.metadata.get(k) != v for k, v in graph_meta.items()):
        await svc.saver.aupdate_thread(thread_id, metadata=graph_meta)
    if temporary and body.on_completion == "keep":
        temporary = False

    run_id = str(uuid.uuid4())
    config = _merge_config(assistant, body)
    configurable = config["configurable"]
    configurable.update(
        thread_id=thread_id, run_id=run_id, assistant_id=assistant["assistant_id"],
        graph_id=assistant["graph_id"],
    )
    if user.user_id is not None:
        configurable["user_id"] = user.user_id
    checkpoint_id = body.checkpoint_id or (body.checkpoint.checkpoint_id if body.checkpoint else None)
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
        if body.checkpoint and body.checkpoint.checkpoint_ns:
            configurable["checkpoint_ns"] = body.checkpoint.checkpoint_ns
        await svc.threads.require_checkpoint(thread_id, {"checkpoint_id": checkpoint_id})
    config["run_id"] = UUID(run_id)
    config["metadata"] = {**(config.get("metadata") or {}), **(body.metadata or {}), "run_id": run_id}
    context = {**(assistant.get("context") or {}), **(body.context or {})} or None

    kwargs = body.model_dump(mode="json", exclude_none=True, exclude={"assistant_id", "metadata"})
    run, _cancelled = await svc.repo.admit(
        run_id=run_id,
        thread_id=thread_id,
        assistant_id=assistant["assistant_id"],
        metadata=body.metadata or {},
        kwargs=kwargs,
        strategy=body.multitask_strategy,
        owner=user.user_id,
    )
    for other in _cancelled:
        await svc.runs.cancel_local(other, body.multitask_strategy)
    prepared = RunInput(
        graph=served.graph,
        config=config,
        context=context,
        input=body.input,
        command=body.command.model_dump(exclude_none=True) if body.command else None,
        stream_modes=body.modes(),
        subgraphs=body.stream_subgraphs,
        interrupt_before=body.interrupt_before,
        interrupt_after=body.interrupt_after,
        durability=body.durability,
    )
    svc.runs.start(run, prepared, temporary=temporary)
    return run, temporary


async def visible_run(svc: Services, user: Principal, thread_id: str, run_id: str) -> RunRecord:
    await svc.threads.info(thread_id, user)
    run = await svc.repo.require(run_id, thread_id)
    if not user.may_see(run.owner):
        raise NotFound(f"run {run_id} not found")
    return run

