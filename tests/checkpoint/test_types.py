"""Which types a stored value comes back as: the graph's data classes yes, anything a crafted row names no."""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import sys
from typing import Any, NamedTuple

import ormsgpack
from langchain_core.prompts import PromptTemplate
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.jsonplus import (
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_CONSTRUCTOR_SINGLE_ARG,
    EXT_PYDANTIC_V2,
)
from pydantic import BaseModel

from tests.checkpoint.conftest import tamper_value

CALLED: list[Any] = []


class Outcome(BaseModel):
    answer: str
    score: float = 0.0


@dataclasses.dataclass
class Step:
    tool: str
    args: dict[str, Any]


class Mood(enum.Enum):
    CALM = "calm"
    WILD = "wild"


class Point(NamedTuple):
    x: int
    y: int


class Trap:
    """A plain class: a row naming it must never call it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        CALLED.append((args, kwargs))


def cfg(thread_id: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **extra}}


async def put_values(saver: Any, thread_id: str, values: dict[str, Any]) -> dict[str, Any]:
    cp = empty_checkpoint()
    cp["channel_values"] = values
    cp["channel_versions"] = {k: saver.get_next_version(None, None) for k in values}
    return await saver.aput(cfg(thread_id), cp, {"source": "loop", "step": 0}, cp["channel_versions"])


STATE = {
    "outcome": Outcome(answer="up", score=0.7),
    "steps": [Step("price", {"q": "iron ore"}), Step("chart", {})],
    "mood": Mood.WILD,
    "point": Point(3, 4),
    "nested": {"by_mood": [Mood.CALM, Point(1, 2)], "outcome": Outcome(answer="flat")},
}


async def test_graph_data_classes_come_back_as_themselves(saver) -> None:
    stored = await put_values(saver, "types", STATE)
    await saver.aput_writes(stored, [("outcome", Outcome(answer="down"))], "task-1")
    saver.items.clear()  # read from the database, as another process would
    tup = await saver.aget_tuple(cfg("types"))
    values = tup.checkpoint["channel_values"]
    assert values == STATE
    assert type(values["outcome"]) is Outcome
    assert [type(s) for s in values["steps"]] == [Step, Step]
    assert values["mood"] is Mood.WILD
    assert type(values["point"]) is Point
    assert type(values["nested"]["by_mood"][1]) is Point
    assert tup.pending_writes[0][2] == Outcome(answer="down")


async def test_strict_mode_rebuilds_only_the_allowlist(strict_saver) -> None:
    await put_values(strict_saver, "strict", STATE)
    strict_saver.items.clear()
    values = (await strict_saver.aget_tuple(cfg("strict"))).checkpoint["channel_values"]
    assert values["outcome"] == {"answer": "up", "score": 0.7}
    assert values["mood"] == "wild"
    allowed = strict_saver.with_allowlist([Outcome, Mood])
    allowed.items.clear()
    values = (await allowed.aget_tuple(cfg("strict"))).checkpoint["channel_values"]
    assert values["outcome"] == Outcome(answer="up", score=0.7)
    assert values["mood"] is Mood.WILD
    assert values["steps"][0] == {"tool": "price", "args": {"q": "iron ore"}}


def crafted(code: int, module: str, name: str, args: Any) -> str:
    """A stored value whose serializer payload names `module.name`, as an attacker could write it."""
    payload = ormsgpack.packb(ormsgpack.Ext(code, ormsgpack.packb((module, name, args))))
    return json.dumps({"$t": "serde", "type": "msgpack", "b64": base64.b64encode(payload).decode()})


async def test_crafted_rows_call_and_import_nothing(saver, store_url: str, tmp_path) -> None:
    marker = tmp_path / "pwned"
    rows = {
        "popen": crafted(EXT_CONSTRUCTOR_POS_ARGS, "subprocess", "Popen", [["touch", str(marker)]]),
        "system": crafted(EXT_CONSTRUCTOR_SINGLE_ARG, "os", "system", f"touch {marker}"),
        "eval": crafted(EXT_CONSTRUCTOR_SINGLE_ARG, "builtins", "eval", "1 + 1"),
        "trap": crafted(EXT_CONSTRUCTOR_KW_ARGS, __name__, "Trap", {"a": 1}),
        "runnable": crafted(EXT_PYDANTIC_V2, PromptTemplate.__module__, "PromptTemplate", {}),
        "unimported": crafted(EXT_CONSTRUCTOR_KW_ARGS, "antigravity", "Fly", {"up": True}),
        "alias": crafted(EXT_CONSTRUCTOR_KW_ARGS, __name__, "dataclasses", {}),
    }
    await put_values(saver, "evil", {name: 0 for name in rows})
    for name, value in rows.items():
        tamper_value(store_url, name, value)
    CALLED.clear()
    saver.items.clear()
    values = (await saver.aget_tuple(cfg("evil"))).checkpoint["channel_values"]
    assert values == {
        "popen": [["touch", str(marker)]],
        "system": f"touch {marker}",
        "eval": "1 + 1",
        "trap": {"a": 1},
        "runnable": {},
        "unimported": {"up": True},
        "alias": {},
    }
    assert not marker.exists()
    assert CALLED == []
    assert "antigravity" not in sys.modules
