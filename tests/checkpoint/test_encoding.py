"""Property tests: any JSON-ish value or message list survives a real saver unchanged.

Hypothesis drives the saver's sync API from a worker thread (the async saver runs on the test loop),
so these also exercise the sync bridges.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint.encoding import from_ranges, to_ranges

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)

text = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\x00", "$", "t", "\\", '"', "é", "中", "🙂", "\u2028", "%"]),
    ),
    max_size=20,
)
special_floats = st.sampled_from(
    [0.0, -0.0, math.inf, -math.inf, math.nan, 1e300, -1e-300, 5e-324, 0.1, 1.0]
)
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**100), max_value=2**100),
    st.floats(allow_nan=True, allow_infinity=True),
    special_floats,
    text,
)
keys = st.one_of(text, st.sampled_from(["$t", "v", "type", "b64", "msg", "lc"]))
jsonish = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(keys, children, max_size=4),
    ),
    max_leaves=12,
)
json_args = st.dictionaries(
    st.text(min_size=1, max_size=8),
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), text, st.floats(allow_nan=False)),
        lambda c: st.one_of(
            st.lists(c, max_size=3), st.dictionaries(st.text(max_size=5), c, max_size=3)
        ),
        max_leaves=6,
    ),
    max_size=3,
)
ids = st.one_of(st.none(), st.text(min_size=1, max_size=12))


@st.composite
def messages(draw: Any) -> BaseMessage:
    kind = draw(st.sampled_from(["human", "ai", "tool", "system"]))
    content = draw(
        st.one_of(
            text,
            st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": text}), max_size=2),
        )
    )
    msg_id = draw(ids)
    if kind == "human":
        return HumanMessage(content=content, id=msg_id)
    if kind == "system":
        return SystemMessage(content=content, id=msg_id)
    if kind == "tool":
        return ToolMessage(
            content=content,
            tool_call_id=draw(st.text(min_size=1, max_size=10)),
            id=msg_id,
            status=draw(st.sampled_from(["success", "error"])),
        )
    calls = draw(
        st.lists(
            st.builds(
                lambda name, args, cid: {
                    "name": name,
                    "args": args,
                    "id": cid,
                    "type": "tool_call",
                },
                st.text(min_size=1, max_size=10),
                json_args,
                st.text(min_size=1, max_size=10),
            ),
            max_size=2,
        )
    )
    return AIMessage(content=content, id=msg_id, tool_calls=calls)


def same(a: Any, b: Any) -> bool:
    """Exact equality: same types, NaN equals NaN, -0.0 differs from 0.0, tuples stay tuples."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        # Key order is checked separately (test_dict_key_order_preserved).
        return set(a) == set(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, BaseMessage):
        return same(a.model_dump(), b.model_dump())
    return a == b


_threads = itertools.count()


def round_trip(saver: Any, value: Any) -> tuple[Any, Any, Any, Any]:
    """Store `value` as a channel value and as a write; read both back (warm cache, then cold)."""
    thread_id = f"enc-{next(_threads)}"
    cp = empty_checkpoint()
    cp["channel_values"] = {"v": value}
    cp["channel_versions"] = {"v": "1"}
    config = saver.put(
        {"configurable": {"thread_id": thread_id}}, cp, {"source": "loop", "step": 0}, {"v": "1"}
    )
    saver.put_writes(config, [("v", value), ("w", [value])], "task")
    warm = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    saver.items.drop(thread_id)
    cold = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    return (
        warm.checkpoint["channel_values"]["v"],
        warm.pending_writes[0][2],
        cold.checkpoint["channel_values"]["v"],
        (cold.pending_writes[0][2], cold.pending_writes[1][2]),
    )


def check(saver: Any, value: Any) -> None:
    warm_v, warm_w, cold_v, (cold_w, cold_wrapped) = round_trip(saver, value)
    assert same(warm_v, value), (warm_v, value)
    assert same(warm_w, value), (warm_w, value)
    assert same(cold_v, value), (cold_v, value)
    assert same(cold_w, value), (cold_w, value)
    assert same(cold_wrapped, [value]), (cold_wrapped, value)


async def test_jsonish_values_round_trip(saver) -> None:
    @SETTINGS
    @given(jsonish)
    def prop(value: Any) -> None:
        check(saver, value)

    await asyncio.to_thread(prop)


async def test_message_lists_round_trip(saver) -> None:
    @SETTINGS
    @given(st.lists(messages(), min_size=1, max_size=5))
    def prop(value: list[BaseMessage]) -> None:
        check(saver, value)

    await asyncio.to_thread(prop)


async def test_dict_lists_round_trip(saver) -> None:
    # Lists of dicts are stored as items too.
    @settings(SETTINGS, max_examples=30)
    @given(st.lists(st.dictionaries(keys, jsonish, max_size=3), min_size=1, max_size=4))
    def prop(value: list[dict[str, Any]]) -> None:
        check(saver, value)

    await asyncio.to_thread(prop)


async def test_appended_lists_share_items(saver) -> None:
    """Growing a message list across puts reuses the stored items and reads back each version."""

    @settings(SETTINGS, max_examples=12)
    @given(st.lists(messages(), min_size=2, max_size=8))
    def prop(msgs: list[BaseMessage]) -> None:
        thread_id = f"grow-{next(_threads)}"
        config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
        stored_ids = []
        for n in range(1, len(msgs) + 1):
            cp = empty_checkpoint()
            cp["channel_values"] = {"messages": msgs[:n]}
            cp["channel_versions"] = {"messages": str(n)}
            config = saver.put(config, cp, {"source": "loop", "step": n}, {"messages": str(n)})
            stored_ids.append(cp["id"])
        saver.items.drop(thread_id)
        for n, cid in enumerate(stored_ids, start=1):
            tup = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_id": cid}})
            assert same(tup.checkpoint["channel_values"]["messages"], msgs[:n])

    await asyncio.to_thread(prop)


@given(st.lists(st.integers(min_value=0, max_value=50)))
def test_ranges_round_trip(numbers: list[int]) -> None:
    assert from_ranges(to_ranges(numbers)) == numbers
    # A consecutive run collapses into one range.
    assert len(to_ranges(list(range(5, 5 + len(numbers))))) == (1 if numbers else 0)


# -- pinned cases found by the properties above --------------------------------------------------


async def test_dict_key_order_preserved(saver) -> None:
    """Python dicts are ordered (tool-call args are re-sent to the model in this order)."""
    value = {"zeta": 1, "alpha": {"b": 2, "a": 1}, "": 0, "mid": [{"y": 1, "x": 2}]}
    warm_v, _w, cold_v, (cold_w, _wrapped) = await asyncio.to_thread(round_trip, saver, value)
    assert list(cold_v) == list(value)
    assert list(cold_v["alpha"]) == ["b", "a"]
    assert list(cold_w["mid"][0]) == ["y", "x"]
    call = AIMessage(
        "", id="k", tool_calls=[{"name": "f", "args": {"to": 1, "from": 0}, "id": "c"}]
    )
    _v, _w, cold_v, _ = await asyncio.to_thread(round_trip, saver, [call])
    assert list(cold_v[0].tool_calls[0]["args"]) == ["to", "from"]


async def test_tuple_survives_beside_reserved_key_or_nul(saver) -> None:
    for value in ({"$t": (1, 2)}, ["a\x00b", (1,)], [{"k": "\x00", "t": ("x",)}]):
        await asyncio.to_thread(check, saver, value)


async def test_big_int_beside_reserved_key_or_nul(saver) -> None:
    for value in ({"$t": 2**70}, ["nul\x00", -(2**64)], [{"k": "\x00", "n": 2**100}]):
        await asyncio.to_thread(check, saver, value)
