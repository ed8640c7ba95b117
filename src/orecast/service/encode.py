"""Graph values to JSON the SDK reads: messages as their dicts, interrupts as {value, id}, snapshots as ThreadState."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum
from typing import Any
from uuid import UUID

import orjson
from langchain_core.messages import BaseMessage
from langgraph.types import Interrupt, StateSnapshot
from pydantic import BaseModel


def _default(obj: Any) -> Any:
    if isinstance(obj, BaseMessage | BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, Interrupt):
        return {"value": obj.value, "id": obj.id}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, datetime | date):
        return obj.isoformat()
    if isinstance(obj, UUID):
        return str(obj)
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if isinstance(obj, bytes):
        return base64.b64encode(obj).decode()
    if hasattr(obj, "_asdict"):
        return obj._asdict()
    return repr(obj)


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj, default=_default, option=orjson.OPT_NON_STR_KEYS)


def jsonable(obj: Any) -> Any:
    """`obj` as plain JSON types."""
    return orjson.loads(dumps(obj))


def checkpoint_of(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not config:
        return None
    conf = config.get("configurable", {})
    checkpoint = {
        "thread_id": conf.get("thread_id"),
        "checkpoint_ns": conf.get("checkpoint_ns", ""),
        "checkpoint_id": conf.get("checkpoint_id"),
    }
    if conf.get("checkpoint_map"):
        checkpoint["checkpoint_map"] = conf["checkpoint_map"]
    return checkpoint


def interrupts_of(snapshot: StateSnapshot) -> list[dict[str, Any]]:
    return [{"value": i.value, "id": i.id} for i in snapshot.interrupts]


def _task_error(error: Any) -> str | None:
    if not error:
        return None
    return error if isinstance(error, str) else repr(error)


def thread_state(snapshot: StateSnapshot) -> dict[str, Any]:
    """A `StateSnapshot` as the SDK's `ThreadState`."""
    return jsonable(_thread_state(snapshot))


def _thread_state(snapshot: StateSnapshot) -> dict[str, Any]:
    """`thread_state` before it is made plain JSON: the graph's objects still in it."""
    tasks = []
    for task in snapshot.tasks:
        state = task.state
        tasks.append(
            {
                "id": task.id,
                "name": task.name,
                "path": list(task.path),
                # the store keeps a task's error as its repr (JSON, never pickled): it comes back a string
                "error": _task_error(task.error),
                "interrupts": [{"value": i.value, "id": i.id} for i in task.interrupts],
                # a subgraph not expanded: where its state is (thread_id, checkpoint_ns), as
                # langgraph-api passes LangGraph's config on; no checkpoint_id, LangGraph has none
                "checkpoint": dict(state.get("configurable") or {}) if isinstance(state, Mapping) else None,
                "state": _thread_state(state) if isinstance(state, StateSnapshot) else None,
                "result": task.result,
            }
        )
    checkpoint, parent = checkpoint_of(snapshot.config), checkpoint_of(snapshot.parent_config)
    return {
        "values": snapshot.values,
        "next": list(snapshot.next),
        "tasks": tasks,
        "checkpoint": checkpoint,
        # the flat ids older SDK versions (and langgraph-api) still send
        "checkpoint_id": checkpoint["checkpoint_id"] if checkpoint else None,
        "parent_checkpoint_id": parent["checkpoint_id"] if parent else None,
        "metadata": snapshot.metadata or {},
        "created_at": snapshot.created_at,
        "parent_checkpoint": parent,
        "interrupts": interrupts_of(snapshot),
    }


# The key of the stand-in for a message in a shared history (`History(shared=True)`): the page puts the
# message back in its place (web/src/lib/sharedHistory.ts).
SHARED_MESSAGE = "__orecast_shared_message__"


class History:
    """A thread's history as JSON bytes, the `thread_state` of each snapshot added.

    Every checkpoint's values hold the whole message list, and the saver hands out one object per
    stored message for all the checkpoints that have it: a message object's JSON is made once per
    answer and put in as it is (an `orjson.Fragment`) wherever that object is again. The answer is
    serialised once, straight to bytes: no walk of the parsed JSON (500 checkpoints of a
    60-question conversation are 153 MB of JSON).

    `shared`: the answer is `{"messages": [...], "states": [...]}` instead, each message once in
    `messages` and, wherever it is in a state, `{SHARED_MESSAGE: its index}`: those 153 MB are 3.6 MB,
    which a browser reads in a fraction of the time (the page's own read, `/history/shared`)."""

    def __init__(self, *, shared: bool = False) -> None:
        self.shared = shared
        # each snapshot's JSON as it is read, as the walk goes on
        self._states: list[orjson.Fragment] = []
        # by id(): the message (kept, so that its id is not another object's while this lives) and what
        # goes in its place: its JSON, or (shared) its stand-in
        self._messages: dict[int, tuple[BaseMessage, Any]] = {}
        # (shared) each message's JSON, at its stand-in's index
        self._shared: list[orjson.Fragment] = []

    def add(self, snapshot: StateSnapshot) -> None:
        self._states.append(orjson.Fragment(self.dumps(_thread_state(snapshot))))

    def _default(self, obj: Any) -> Any:
        if isinstance(obj, BaseMessage):
            made = self._messages.get(id(obj))
            if made is None:
                text = orjson.Fragment(self.dumps(_default(obj)))
                if self.shared:
                    self._shared.append(text)
                    made = (obj, {SHARED_MESSAGE: len(self._shared) - 1})
                else:
                    made = (obj, text)
                self._messages[id(obj)] = made
            return made[1]
        return _default(obj)

    def dumps(self, obj: Any) -> bytes:
        return orjson.dumps(obj, default=self._default, option=orjson.OPT_NON_STR_KEYS)

    def json(self) -> bytes:
        """The answer: `thread_state` of each snapshot added, in order, as a JSON list (or, `shared`,
        with the messages apart)."""
        if self.shared:
            return self.dumps({"messages": self._shared, "states": self._states})
        return self.dumps(self._states)
