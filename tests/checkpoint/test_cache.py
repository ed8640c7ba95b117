"""The item cache never lets an object edited in place pass for what is stored."""

from __future__ import annotations

import copy
import operator
import sys
from typing import Annotated, Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from orecast.checkpoint import cache, open_checkpointer
from orecast.checkpoint.cache import ItemCache
from tests.checkpoint.graphs import human, tool_loop


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def tool_args(messages: list[Any]) -> list[Any]:
    return [m.tool_calls[0]["args"] for m in messages if isinstance(m, AIMessage) and m.tool_calls]


async def test_editing_what_was_read_does_not_change_the_store(saver) -> None:
    graph = tool_loop(saver)
    await graph.ainvoke({"messages": [human(0)]}, cfg("read"))
    stored = copy.deepcopy(tool_args((await graph.aget_state(cfg("read"))).values["messages"]))
    read = (await graph.aget_state(cfg("read"))).values["messages"]
    read[1].tool_calls[0]["args"]["edited"] = True
    read[0].content = "edited in place"
    again = (await graph.aget_state(cfg("read"))).values["messages"]
    assert tool_args(again) == stored
    assert again[0].content == human(0).content
    history = [s.values async for s in graph.aget_state_history(cfg("read")) if s.values]
    assert all(m.content != "edited in place" for v in history for m in v["messages"])


async def test_message_edited_in_place_is_stored_with_its_new_content(store_url: str) -> None:
    async with open_checkpointer(store_url) as saver:
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(0)]}, cfg("edit"))
        await graph.ainvoke({"messages": [human(1)]}, cfg("edit"))
        last_call = [m for m in (await graph.aget_state(cfg("edit"))).values["messages"]
                     if isinstance(m, AIMessage) and m.tool_calls][-1]
        last_call.tool_calls[0]["args"] = {"query": "a different query"}
        await graph.aupdate_state(cfg("edit"), {"messages": last_call})
        here = (await graph.aget_state(cfg("edit"))).values["messages"]
    async with open_checkpointer(store_url) as fresh:  # what the database holds
        there = (await tool_loop(fresh).aget_state(cfg("edit"))).values["messages"]
    assert tool_args(there)[-1] == {"query": "a different query"}
    assert there == here


async def test_a_runs_read_takes_the_compared_states_its_last_put_remembered(saver, monkeypatch) -> None:
    # A turn's read returns the list the thread's last put stored: its check reuses that put's columns
    # of compared states rather than gathering them item by item (a pass over the whole list), and
    # still finds an object a reader edited in place (the next turn gets the stored content).
    graph = tool_loop(saver)
    for turn in range(3):
        await graph.ainvoke({"messages": [human(turn)]}, cfg("columns"))
    gathered: list[int] = []
    of = cache.Pristine.of.__func__
    monkeypatch.setattr(cache.Pristine, "of", classmethod(lambda cls, states: gathered.append(len(states)) or of(cls, states)))
    read = (await graph.aget_state(cfg("columns"))).values["messages"]
    assert len(read) == 12 and 12 not in gathered
    read[1].tool_calls[0]["args"]["edited"] = True
    await graph.ainvoke({"messages": [human(3)]}, cfg("columns"))
    assert 12 not in gathered
    saver.items.clear()
    stored = (await graph.aget_state(cfg("columns"))).values["messages"]
    assert "edited" not in tool_args(stored)[0] and tool_args(read)[0]["edited"] is True


async def test_object_edited_after_a_put_is_stored_again(saver) -> None:
    graph = tool_loop(saver)
    question = human(0)
    await graph.ainvoke({"messages": [question]}, cfg("put"))
    # The same object, changed and sent again: add_messages replaces by id.
    question.content = "changed after the put"
    await graph.aupdate_state(cfg("put"), {"messages": [question]})
    saver.items.clear()
    messages = (await graph.aget_state(cfg("put"))).values["messages"]
    assert messages[0].content == "changed after the put"


async def test_extra_attribute_set_in_place_is_stored(store_url: str) -> None:
    # A message's extra attributes live beside its fields: the check compares them too.
    async with open_checkpointer(store_url) as saver:
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [human(0)]}, cfg("extra"))
        last = (await graph.aget_state(cfg("extra"))).values["messages"][-1]
        last.reviewed_by = "analyst"
        await graph.aupdate_state(cfg("extra"), {"messages": last})
    async with open_checkpointer(store_url) as fresh:
        there = (await tool_loop(fresh).aget_state(cfg("extra"))).values["messages"]
    assert there[-1].reviewed_by == "analyst"


class Mixed(TypedDict):
    entries: Annotated[list[Any], operator.add]


def note(state: Mixed) -> dict[str, Any]:
    entries = state["entries"]
    if len(entries) > 2:
        entries[1]["note"] = "edited in place"  # the channel's own object, as a node may do
    return {"entries": [{"note": len(entries)}]}


def mixed_graph(saver: Any) -> Any:
    graph = StateGraph(Mixed)
    graph.add_node("note", note)
    graph.add_edge(START, "note")
    graph.add_edge("note", END)
    return graph.compile(checkpointer=saver)


async def test_dict_edited_in_place_in_a_list_with_messages_is_stored(store_url: str) -> None:
    # A list of dicts and messages is checked item by item against its pristine copies.
    async with open_checkpointer(store_url) as saver:
        graph = mixed_graph(saver)
        await graph.ainvoke({"entries": [human(0)]}, cfg("mixed"))
        await graph.ainvoke({"entries": [human(1)]}, cfg("mixed"))
        here = (await graph.aget_state(cfg("mixed"))).values["entries"]
    async with open_checkpointer(store_url) as fresh:
        there = (await mixed_graph(fresh).aget_state(cfg("mixed"))).values["entries"]
    assert [type(e).__name__ for e in there] == ["HumanMessage", "dict", "HumanMessage", "dict"]
    assert there[1] == {"note": "edited in place"}
    assert there == here


def fill(entry: Any, numbers: range) -> None:
    for n in numbers:
        entry.stored(n, {"n": n}, f"digest-{n}")


def test_the_cache_keeps_its_bound_by_a_running_count_of_items() -> None:
    cache = ItemCache(max_items=10)
    fill(cache.get("a", "1"), range(1, 5))
    fill(cache.get("b", "1"), range(1, 5))
    assert cache.total() == 8
    held = cache.get("a", "1")  # a write holds a's entry ...
    cache.drop("a")
    fill(held, range(5, 9))  # ... and goes on adding to it after the drop: nothing counts
    assert cache.total() == 4
    fill(cache.get("b", "2"), range(1, 3))  # a new incarnation replaces b's entry
    assert cache.total() == 2
    fill(cache.get("c", "1"), range(1, 10))
    assert cache.total() == 11
    cache.get("c", "1")  # over the bound: the least recently used thread goes
    assert cache.peek("b") is None and cache.peek("c") is not None
    assert cache.total() == 9
    cache.clear()
    assert cache.total() == 0


class Tagged(AIMessage):
    """A message class with a slot of its own: the collector lists one part more for it."""

    __slots__ = ("tag",)


def checked(messages: list[Any]) -> tuple[list[Any], cache.Pristine]:
    """Objects handed out for `messages` and the compared states of their pristine copies."""
    pristine = [cache.pristine_copy(m) for m in messages]
    return [cache.pristine_copy(p) for p in pristine], cache.Pristine.of(list(map(cache.compared_state, pristine)))


def with_tool_call(n: int) -> AIMessage:
    call = {"name": "lookup", "args": {"fields": ["open", "close"], "n": n}, "id": f"call_{n}", "type": "tool_call"}
    return AIMessage(content=f"answer {n}", id=f"ai-{n}", tool_calls=[call], usage_metadata={
        "input_tokens": 300 + n, "output_tokens": 20, "total_tokens": 320 + n})


EDITS = {
    "a field": lambda m: setattr(m, "content", "edited"),
    "a nested list": lambda m: m.tool_calls[0]["args"]["fields"].append("volume"),
    "a nested dict": lambda m: m.usage_metadata.update(output_tokens=21),
    "a field's dict, emptied": lambda m: m.additional_kwargs.update(refusal=None),
    "an extra attribute": lambda m: setattr(m, "reviewed_by", "analyst"),
    "the private attributes": lambda m: object.__setattr__(m, "__pydantic_private__", {"_seen": True}),
    "the fields dict, replaced": lambda m: object.__setattr__(m, "__dict__", {**m.__dict__, "id": "other"}),
    "the fields dict, a key renamed": lambda m: m.__dict__.update(tag=m.__dict__.pop("usage_metadata")),
}


def test_a_whole_list_check_finds_every_kind_of_edit_in_place() -> None:
    # The check of a list of messages takes their parts from the collector's list of referents, at
    # fixed offsets: every part a message is stored with is still compared, at every position.
    for make in (with_tool_call, lambda n: Tagged(**with_tool_call(n).__dict__)):
        messages, pristine = checked([make(n) for n in range(6)])
        assert pristine.listed is (make is with_tool_call and sys.version_info < (3, 14))
        assert cache.all_unchanged(messages, pristine)
        for name, edit in EDITS.items():
            for at in (0, 3, 5):
                objs, pristine = checked([make(n) for n in range(6)])
                edit(objs[at])
                assert not cache.all_unchanged(objs, pristine), (name, at, make)


def test_a_message_missing_a_part_is_checked_attribute_by_attribute() -> None:
    # An instance whose slot holds nothing lists a part fewer, which would shift every later message's
    # parts: the check then fetches them attribute by attribute, and still tells an edit from none.
    for edit in (False, True):
        messages, pristine = checked([with_tool_call(n) for n in range(4)])
        object.__delattr__(messages[1], "__pydantic_private__")
        if edit:
            messages[2].tool_calls[0]["args"]["n"] = 99
        assert cache.all_unchanged(messages, pristine, private=False) is not edit
